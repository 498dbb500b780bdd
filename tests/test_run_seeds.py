"""`--seeds K` on `run` and `trace run` (issue 33, deliverable 4): seeds S..S+K-1, the completion time's mean and
95% CI (Student t) checked against a hand calculation on the records' own completion times, the per-seed records
in --json, the native fast path declining so the Python path answers, and Ctrl-C keeping the finished seeds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fabricsim import _core
from fabricsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
INCAST = str(ROOT / "examples" / "leaf_spine_incast.toml")
ROCE = str(ROOT / "examples" / "roce_incast.toml")
"""DCQCN's random rate increase makes its completion time differ by seed (10.7 ms ± 0.35 ms over seeds 1..3)."""
LS16 = str(ROOT / "examples" / "leaf_spine_16.toml")
T975 = {2: 4.302652729749462, 3: 3.1824463052837078}
"""t(0.975, df) for df = 2, 3 (any Student-t table: 4.303, 3.182; these digits are scipy.stats.t.ppf's)."""


def hand_ci(xs: list[float]) -> tuple[float, float]:
    """Mean and 95% CI half-width by hand: s² = Σ(x − mean)²/(n − 1), half = t(0.975, n − 1)·s/√n."""
    n = len(xs)
    mean = sum(xs) / n
    s = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, T975[n - 1] * s / math.sqrt(n)


def call(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_t_quantiles_are_scipys():
    from scipy import stats

    assert all(stats.t.ppf(0.975, df) == t for df, t in T975.items())


def test_run_seeds_json_mean_and_ci_against_a_hand_calculation(capsys):
    code, out, err = call(capsys, "run", ROCE, "--seed", "5", "--seeds", "4", "--json", "-q")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["seeds"] == [5, 6, 7, 8] and [r["seed"] for r in doc["runs"]] == [5, 6, 7, 8]
    assert doc["complete"] is True and all(r["complete"] for r in doc["runs"])
    times = [r["completion_time_s"] for r in doc["runs"]]
    assert len(set(times)) > 1, "the RoCE incast's seeds differ, so the CI is not zero"
    mean, half = hand_ci(times)
    st = doc["completion_time_s"]
    assert st["n"] == 4
    assert math.isclose(st["mean"], mean, rel_tol=1e-12) and math.isclose(st["ci95"], half, rel_tol=1e-12)
    # every run is a full record (flows, packets, queues), as `run --json` prints for one seed
    assert {"flows", "packets", "queues", "events"} <= set(doc["runs"][0])


def test_run_seeds_text_is_the_same_numbers(capsys):
    code, out, _ = call(capsys, "run", ROCE, "--seeds", "3", "-q")
    assert code == 0
    _, js, _ = call(capsys, "run", ROCE, "--seeds", "3", "--json", "-q")
    times = [r["completion_time_s"] for r in json.loads(js)["runs"]]
    mean, half = hand_ci(times)
    last = out.splitlines()[-1]
    assert last.startswith("completion over seeds 1..3: ") and last.endswith("(mean ± 95% CI of 3 complete runs)")
    from fabricsim.units import format_duration

    assert f"{format_duration(mean * 1e12)} ± {format_duration(half * 1e12)}" in last


def test_trace_run_seeds_against_a_hand_calculation(capsys, tmp_path):
    code, _, err = call(capsys, "trace", "synth", "dp", "--ranks", "4", "--layers", "2", "--hidden", "256",
                        "--seq-len", "64", "--out", str(tmp_path))
    assert code == 0, err
    code, out, err = call(capsys, "trace", "run", str(tmp_path), "--fabric", LS16, "--seed", "2", "--seeds", "3",
                          "--json", "-q")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["seeds"] == [2, 3, 4] and [r["seed"] for r in doc["runs"]] == [2, 3, 4]
    times = [r["completion_time_s"] for r in doc["runs"]]
    st = doc["completion_time_s"]
    if len(set(times)) == 1:  # every seed the same: the CI is exactly 0
        assert st["mean"] == times[0] and st["ci95"] == 0.0
    else:
        mean, half = hand_ci(times)
        assert math.isclose(st["mean"], mean, rel_tol=1e-12) and math.isclose(st["ci95"], half, rel_tol=1e-12)


def test_the_native_fast_path_declines_seeds():
    """`run --json` starts natively, but `--seeds` is not its flag: it hands the command to the click CLI."""
    assert _core.fast_cli(["run", INCAST, "--json"], None) is not None
    assert _core.fast_cli(["run", INCAST, "--seeds", "3", "--json"], None) is None
    assert _core.fast_cli(["run", INCAST, "--seeds=3", "--json"], None) is None


@pytest.mark.parametrize("partial", [False, True])
def test_ctrl_c_keeps_the_finished_seeds(capsys, monkeypatch, partial):
    """Ctrl-C during the third of four seeds: the two finished seeds are printed (and their mean), exit 130; with
    --partial the interrupted run's record so far too. The interruption is the engine's own (RunInterrupted with
    the run's record), raised for seed 3."""
    import fabricsim.engine as engine
    from fabricsim.errors import RunInterrupted

    real = engine.run

    def run(sc, *, seed=None, **kw):
        rec = real(sc, seed=seed, **kw)
        if seed == 3:
            raise RunInterrupted(rec)
        return rec

    monkeypatch.setattr(engine, "run", run)
    args = ["run", INCAST, "--seeds", "4", "--json", "-q"] + (["--partial"] if partial else [])
    code, out, err = call(capsys, *args)
    assert code == 130
    doc = json.loads(out)
    assert doc["seeds"] == ([1, 2, 3] if partial else [1, 2])
    times = [r["completion_time_s"] for r in doc["runs"]]
    assert doc["completion_time_s"]["n"] == len(times)  # seed 3's record ran to its end here, so it counts
    assert math.isclose(doc["completion_time_s"]["mean"], sum(times) / len(times), rel_tol=1e-12)
    assert err.count("\n") == 1 and "in seed 3 (3 of 4)" in err
    assert "the 2 finished seeds are shown" in err and ("--partial prints" in err) == (not partial)


def test_one_progress_bar_across_the_seeds(monkeypatch):
    """The bar appears once the seeds together have taken 2 s (PROGRESS_AFTER_S), not each run alone, and names
    the seed it is on. Clock: seed 1 starts at t = 0 and reports 1.5 s (no bar); seed 2 starts at t = 1.6 and
    reports 0.5 s: 2.1 s in all, so the bar shows, labelled with seed 2; seed 3 relabels it."""
    import time

    from fabricsim.cli._common import PROGRESS_AFTER_S, SeedsProgress

    clock = iter([0.0, 1.6, 3.0])
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    bar = SeedsProgress("simulating x.toml")
    bar.enabled = True  # as on a terminal
    assert PROGRESS_AFTER_S == 2.0
    bar.seed(7, 1, 3)
    bar(500, 1000, 10, 0, 0, 1.5)
    assert bar.bar is None
    bar.seed(8, 2, 3)
    bar(500, 1000, 10, 0, 0, 0.5)
    try:
        assert bar.bar is not None and bar.bar.tasks[0].description == "simulating x.toml, seed 8 (2/3)"
        bar.seed(9, 3, 3)
        assert bar.bar.tasks[0].description == "simulating x.toml, seed 9 (3/3)"
        # the engine hands a progress_bytes callable the messages' bytes too: with no stop, the bar counts them
        assert bar.progress_bytes
        bar(0, None, 10, 1, 4, 0.5, bytes_done=250, bytes_total=1000)
        assert (bar.bar.tasks[0].completed, bar.bar.tasks[0].total) == (250, 1000)
    finally:
        bar.close()


def test_seeds_beyond_what_a_scenario_holds_are_one_line(capsys):
    """A scenario holds its seed as a signed 64-bit TOML integer: --seed above 2**63 - 1, or a --seeds range that
    runs past it, is refused in one line with exit 2 (it used to reach the reader: "u64 value was too large")."""
    scenario = INCAST
    assert main(["run", scenario, "--seed", str(2**63)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"fabricsim: Invalid value for '--seed': {2**63} is not in the range 0<=x<={2**63 - 1}.")
    assert main(["run", scenario, "--seed", str(2**63 - 1), "--seeds", "3", "-q"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"fabricsim: --seed {2**63 - 1} --seeds 3: the last seed, {2**63 + 1}, is more than a scenario's seed can "
        f"be ({2**63 - 1})")
