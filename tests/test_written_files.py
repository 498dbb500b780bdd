"""Every command that writes a file says what it wrote (one line on stderr: the path), and JSON counts stay
integers. (`fors schedule --out`, `fors export-opensm`, `locality trace --out` and `ina --plan` are checked in
tests/test_fors.py, tests/test_cpo.py and tests/test_ina.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SWEEP_TWO_HOSTS
from fabricsim.cli import main

ROOT = Path(__file__).resolve().parents[1]

SWEEP = SWEEP_TWO_HOSTS + '[grid]\n"messages[0].size" = [65536, 131072]\n'


def message_s(size: int) -> float:
    """Store-and-forward over 2 hops (docs/guide/packet-engine.md, "Model semantics"): (P + 1)·819.2 ns + 2·1 us + 500 ns."""
    return ((size // 1024 + 1) * 819.2 + 2500) * 1e-9


def test_sweep_export_says_what_it_wrote_and_counts_stay_integers(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two.toml").write_text(SWEEP)
    assert main(["sweep", "two.toml", "--workers", "0", "--export", "runs.csv", "--json"]) == 0
    cap = capsys.readouterr()
    assert cap.err == "wrote the runs of two to runs.csv\n"
    assert len((tmp_path / "runs.csv").read_text().strip().splitlines()) == 1 + 4  # header + 2 points x 2 seeds
    out = json.loads(cap.out)
    assert out["export"] == "runs.csv" and out["store"] == str(tmp_path / "fabricsim-outputs" / "two")
    for point, size in zip(out["points"], (65536, 131072)):
        m = point["metrics"]
        assert point["n"] == 2 and m["rx_packets"]["mean"] == size // 1024 and type(m["rx_packets"]["mean"]) is int
        assert m["completion_time_s"]["mean"] == pytest.approx(message_s(size), rel=1e-12)
    # A wrong suffix is refused before anything runs.
    assert main(["sweep", "two.toml", "--workers", "0", "--export", "runs.xlsx"]) == 2
    err = capsys.readouterr().err
    assert err == "fabricsim sweep: --export: 'runs.xlsx' must end in .csv or .parquet\n"


def test_trace_run_says_where_the_timeline_and_the_perfetto_trace_went(tmp_path, capsys):
    step = tmp_path / "step"
    assert main(["trace", "synth", "dp", "--ranks", "2", "--layers", "1", "--hidden", "64", "--seq-len", "16",
                 "--out", str(step)]) == 0
    capsys.readouterr()
    png, pf = tmp_path / "t.png", tmp_path / "t.json"
    assert main(["trace", "run", str(step), "--fabric", str(ROOT / "examples/leaf_spine_16.toml"), "--fidelity",
                 "flow", "--timeline", str(png), "--perfetto", str(pf), "--json"]) == 0
    cap = capsys.readouterr()
    json.loads(cap.out)  # stdout stays one JSON object
    lines = cap.err.splitlines()
    assert len(lines) == 2 and lines[0] == f"wrote the timeline to {png}"
    assert lines[1].startswith(f"wrote the Perfetto trace to {pf} (") and lines[1].endswith("open it in ui.perfetto.dev)")
    assert f"{len(json.loads(pf.read_text())['traceEvents']):,} events" in lines[1]
    assert png.read_bytes()[:4] == b"\x89PNG" and json.loads(pf.read_text())["traceEvents"]
