"""`fabricsim place` on the command line: the --json contract, the human ranking, --figure, traces, and bad input as
one line with exit code 2."""

from __future__ import annotations

import json

import pytest

from conftest import CHAKRA_TRACES
from fabricsim.cli import main

TRACE = CHAKRA_TRACES / "astra-sim-examples" / "all_reduce" / "4npus_1MB" / "all_reduce"


@pytest.mark.parametrize("confirm", [None, "packet"])
def test_json_ranks_placements_best_first(capsys, confirm):
    # Four nodes on the empty Vela-like fabric: every single-rack placement runs the All-Reduce at the NIC bound,
    # 2·(N−1)·10 MiB·8 / 100 Gb/s = 5.033 ms plus a few microseconds of pipeline latency, on every seed; the
    # confirming runs are hybrid by default (issue 30), packet on request, and both meet the bound.
    extra = ["--confirm-with", confirm] if confirm else []
    assert main(["place", "--nodes", "4", "--per-server", "1", "--seeds", "2", "--json", *extra]) == 0
    out = json.loads(capsys.readouterr().out)
    ps = out["placements"]
    fid = confirm or "hybrid"
    assert [p["fidelity"] for p in ps[:2]] == [fid, fid] and all(p["fidelity"] == "flow" for p in ps[2:])
    best = ps[0]
    assert set(best) >= {"servers", "completion_ms", "ci95_ms", "fidelity"}
    assert len(best["servers"]) == 4 and len({(s - 1) // 6 for s in best["servers"]}) == 1
    assert 5.033 < best["completion_ms"] < 5.04 and best["ci95_ms"] == 0.0
    assert [p["completion_ms"] for p in ps[:2]] == sorted(p["completion_ms"] for p in ps[:2])
    assert out["why"].endswith(".") and out["bottlenecks"][0]["utilization"] > 0.99


def test_human_output_and_figure(tmp_path, capsys):
    fig = tmp_path / "rank.png"
    assert main(["place", "--nodes", "6", "--pattern", "all-to-all", "--no-confirm", "--evals", "30",
                 "--figure", str(fig)]) == 0
    text = capsys.readouterr().out
    assert "Best first:" in text and "Why: " in text and "Busiest links" in text
    assert fig.stat().st_size > 10_000


def test_background_job_on_the_command_line(tmp_path, capsys):
    busy = tmp_path / "busy.csv"
    busy.write_text("server,nic,job,pattern,msg_mb\n1,,,,\n7,,bg,all-to-all,4\n8,,bg,,\n")
    assert main(["place", "--nodes", "4", "--busy", str(busy), "--no-confirm", "--evals", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert 1 not in out["placements"][0]["servers"]
    assert "beside 1 background job" in out["why"]


@pytest.mark.shared
def test_a_chakra_trace_sets_the_nodes(capsys):
    assert main(["place", "--trace", str(TRACE), "--no-confirm", "--evals", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["job"] == "Chakra trace of 4 ranks" and len(out["placements"][0]["servers"]) == 4


@pytest.mark.parametrize("args, words", [
    (["--nodes", "25", "--per-server", "1"], "fabricsim place: --nodes: 25 nodes of 1 NIC(s) do not fit"),
    (["--nodes", "4", "--fabric", "nope"],
     "Invalid value for '--fabric': 'nope' is neither a built-in fabric (vela, a100_roce_2x8, cpo_baseline, h100_ib_2x8, p4de_efa_2x8, p5_efa_2x8) nor a fabric file"),
    (["--nodes", "4", "--fabric", "missing.toml"], "missing.toml"),
    (["--nodes", "4", "--size", "10Mb"], "--size"),
    pytest.param(["--nodes", "4", "--interfaces", "2", "--trace", str(TRACE)], "--interfaces", marks=pytest.mark.shared),
    (["--nodes", "4", "--figure", "x.nope"], "--figure"),
])
def test_bad_input_is_one_line_exit_2(capsys, args, words):
    assert main(["place", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and words in err, err


def test_busy_file_naming_a_missing_server(tmp_path, capsys):
    busy = tmp_path / "busy.csv"
    busy.write_text("server\n3\n31\n")
    assert main(["place", "--nodes", "4", "--busy", str(busy)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"{busy}: row 3: server: '31' does not exist (servers are 1..24 on vela)"


def test_help_explains_the_search_and_busy_file(capsys):
    assert main(["place", "--help"]) == 0
    text = capsys.readouterr().out
    for words in ("Chic-sched", "BUSY.csv", "--per-server", "packet engine", "completion_ms"):
        assert words in text
