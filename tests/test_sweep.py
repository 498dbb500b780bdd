"""Sweeps: expansion and hashing, the crash-safe store, local and Dask executors, crashes, invalid points, CIs."""

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from fabricsim.report.stats import ci95, summarize
from fabricsim.sweep import Store, SweepSpec, expand, run_sweep
from fabricsim.sweep.params import apply_params

ROOT = Path(__file__).parents[1]
DROPTAIL = ROOT / "experiments" / "engine_checks" / "droptail.toml"


def test_params_apply_to_paths_and_every_element():
    base = {"a": {"b": 1}, "msgs": [{"size": 1}, {"size": 2}]}
    out = apply_params(base, {"a.b": 5, "msgs[*].size": 9, "msgs[1].x": 3, "new.key": True})
    assert out == {"a": {"b": 5}, "msgs": [{"size": 9}, {"size": 9, "x": 3}], "new": {"key": True}}
    assert base["msgs"][0]["size"] == 1, "the base is not modified"
    with pytest.raises(ValueError):
        apply_params(base, {"msgs[7].size": 1})


def test_expansion_order_and_stable_hashes():
    spec = SweepSpec(name="s", base={}, task="fabricsim.sweep.testing:echo", seeds=2, grid={"x": [1, 2], "y": ["a", "b"]})
    tasks = expand(spec, {"z": 0})
    assert [(t.params["x"], t.params["y"], t.seed) for t in tasks][:5] == [(1, "a", 1), (1, "a", 2), (1, "b", 1), (1, "b", 2), (2, "a", 1)]
    assert len(tasks) == 8 and len({t.hash for t in tasks}) == 8
    again = expand(spec, {"z": 0})
    assert [t.hash for t in tasks] == [t.hash for t in again], "hashes are a function of content only"
    changed = expand(spec, {"z": 1})
    assert not {t.hash for t in tasks} & {t.hash for t in changed}


def test_ci95_against_a_hand_computation():
    # [1..5]: mean 3, sample std sqrt(2.5) = 1.58114, t(0.975, 4) = 2.776445 -> half-width 1.963243.
    mean, std, half, n = ci95([1, 2, 3, 4, 5])
    assert (mean, n) == (3.0, 5)
    assert abs(std - math.sqrt(2.5)) < 1e-12
    assert abs(half - 2.776445105 * math.sqrt(2.5) / math.sqrt(5)) < 1e-6
    assert math.isnan(ci95([4.0])[2])
    import pandas as pd

    s = summarize(pd.DataFrame({"g": ["a"] * 3 + ["b"] * 2, "v": [1, 2, 3, 10, 10]}), ["g"], ["v"])
    assert list(s["v_mean"]) == [2.0, 10.0] and list(s["n"]) == [3, 2]
    assert abs(s["v_ci95"][0] - 4.302653 * 1 / math.sqrt(3)) < 1e-5 and s["v_ci95"][1] == 0


def test_local_sweep_matches_the_closed_form_and_resumes(tmp_path):
    from fabricsim.sweep import load_sweep

    spec, base = load_sweep(DROPTAIL)
    res = run_sweep(spec, base, tmp_path, workers=2, quiet=True)
    assert (res.total, res.ran, res.skipped, res.failed, res.invalid) == (4, 4, 0, [], [])
    df = res.frame().sort_values("queue.limit_packets")
    assert list(df["dropped_packets"]) == [9, 6, 3, 0], "max(0, 11 - B)"
    again = run_sweep(spec, base, tmp_path, workers=2, quiet=True)
    assert (again.ran, again.skipped) == (0, 4)
    with Store(tmp_path) as st:
        csv = st.export(tmp_path / "runs.csv", "droptail")
        pq = st.export(tmp_path / "runs.parquet", "droptail")
    import pandas as pd

    assert len(pd.read_csv(csv)) == 4 and len(pd.read_parquet(pq)) == 4


def test_a_run_shared_by_two_sweeps_appears_in_both_frames(tmp_path):
    """A run is stored once (under the first sweep); the second sweep skips it but its frame still has it."""
    a = SweepSpec(name="a", base={}, task="fabricsim.sweep.testing:echo", seeds=1, grid={"x": [1, 2]})
    b = SweepSpec(name="b", base={}, task="fabricsim.sweep.testing:echo", seeds=1, grid={"x": [2, 3]})
    run_sweep(a, {}, tmp_path, workers=0, quiet=True)
    rb = run_sweep(b, {}, tmp_path, workers=0, quiet=True)
    assert (rb.total, rb.skipped, rb.ran) == (2, 1, 1)
    fb = rb.frame()
    assert sorted(fb["x"]) == [2, 3] and set(fb["sweep"]) == {"b"}


def test_invalid_point_is_stored_once_and_others_finish(tmp_path):
    from fabricsim.sweep import load_sweep

    spec, base = load_sweep(DROPTAIL)
    spec = spec.model_copy(update={"grid": {"queue.limit_packets": [5, 0, 8]}})
    res = run_sweep(spec, base, tmp_path, workers=2, quiet=True)
    assert len(res.invalid) == 1 and res.ran == 3
    assert "queue.limit_packets" in res.invalid[0][1]
    again = run_sweep(spec, base, tmp_path, workers=2, quiet=True)
    assert again.ran == 0, "an invalid point is stored and never retried"
    assert [e for _, e in again.invalid] == [e for _, e in res.invalid], "and every invocation reports it"
    assert sorted(res.frame()["dropped_packets"]) == [3, 6]


def test_failing_task_is_retried_then_reported_not_stored(tmp_path):
    spec = SweepSpec(name="f", base={}, task="fabricsim.sweep.testing:fail_always", seeds=2)
    from fabricsim.sweep import SweepFailed

    with pytest.raises(SweepFailed, match="all 2 runs failed; the first: RuntimeError: deliberate failure") as e:
        run_sweep(spec, {}, tmp_path, workers=0, retries=1, quiet=True)
    res = e.value.result
    assert len(res.failed) == 2 and "deliberate failure" in res.failed[0][1]
    with Store(tmp_path) as st:
        assert st.hashes() == set()


def crash_spec(tmp_path, seeds=6):
    return SweepSpec(name="c", base={}, task="fabricsim.sweep.testing:crash_once", seeds=seeds), {
        "marker": str(tmp_path / "crashed"), "crash_seed": 2, "sleep_s": 0}


def test_local_worker_killed_mid_sweep_loses_nothing(tmp_path):
    spec, base = crash_spec(tmp_path)
    res = run_sweep(spec, base, tmp_path / "store", workers=2, quiet=True)
    assert (tmp_path / "crashed").exists(), "a worker really was killed"
    assert res.failed == [] and res.ran == 6
    assert sorted(res.frame()["seed_seen"]) == [1, 2, 3, 4, 5, 6]


@pytest.fixture(scope="module")
def dask_cluster():
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=50)
    yield cluster
    cluster.close()


def test_dask_gives_the_same_rows_as_local(tmp_path, dask_cluster):
    from fabricsim.sweep import load_sweep

    spec, base = load_sweep(DROPTAIL)
    spec = spec.model_copy(update={"seeds": 2, "grid": {"queue.limit_packets": [2, 5, 8], "routing.ecmp": ["per_flow", "per_packet"]}})
    local = run_sweep(spec, base, tmp_path / "local", workers=2, quiet=True)
    dask = run_sweep(spec, base, tmp_path / "dask", scheduler=dask_cluster.scheduler_address, quiet=True)
    assert dask.executor == "dask" and dask.ran == local.ran == 12
    key = ["hash"]
    cols = ["hash", "seed", "dropped_packets", "rx_packets", "completion_time_s", "end_time_s", "events"]
    a = local.frame()[cols].sort_values(key).reset_index(drop=True)
    b = dask.frame()[cols].sort_values(key).reset_index(drop=True)
    assert a.equals(b)


def test_dask_worker_killed_mid_sweep_loses_nothing(tmp_path, dask_cluster):
    spec, base = crash_spec(tmp_path)
    res = run_sweep(spec, base, tmp_path / "store", scheduler=dask_cluster.scheduler_address, quiet=True)
    assert (tmp_path / "crashed").exists()
    assert res.failed == [] and sorted(res.frame()["seed_seen"]) == [1, 2, 3, 4, 5, 6]


def _stored_runs(db: Path) -> int:
    """Rows in the store's `runs` table; 0 while the database or the table does not exist yet."""
    if not db.exists():
        return 0
    try:
        with closing(sqlite3.connect(db)) as con:
            return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet, or briefly locked by the writer
        return 0


def test_sigkill_of_the_driver_then_rerun_is_complete_and_duplicate_free(tmp_path):
    """SIGKILL the driver (and its workers) once the store holds K runs, then rerun: it skips exactly the stored
    runs and runs the rest, each seed stored once. The kill provably lands mid-sweep: seeds 1..K return at once,
    seeds K+1..24 wait for a gate file created only after the kill, so when K rows are seen the sweep can neither
    have finished nor store anything more; the store then holds exactly K of the 24 runs."""
    k, total = 4, 24
    gate = tmp_path / "gate"
    sweep = tmp_path / "gated.toml"
    sweep.write_text(f'name = "gated"\ntask = "fabricsim.sweep.testing:gated"\nseeds = {total}\n[base]\n'
                     f"open_seeds = {k}\ngate = {json.dumps(str(gate))}\n")
    store = tmp_path / "store"
    db = store / "results.sqlite"
    cmd = [sys.executable, "-m", "fabricsim.cli", "sweep", str(sweep), "--store", str(store), "--workers", "2", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # worker start-up and K instant runs take seconds, even on a loaded machine
        while (done := _stored_runs(db)) < k:
            assert proc.poll() is None, f"the sweep exited (status {proc.returncode}) with {done} of {k} runs stored"
            assert time.monotonic() < deadline, f"only {done} of {k} runs stored after 120 s: the sweep is stuck"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, at once
        proc.wait()
    partial = _stored_runs(db)
    assert partial == k, f"the gated seeds cannot finish before the gate opens ({partial} of {total} stored)"
    gate.touch()
    out = subprocess.run(cmd[:-1] + ["--json"], capture_output=True, text=True, check=True)
    summary = json.loads(out.stdout)
    assert summary["skipped"] == partial and summary["ran"] == total - partial
    with closing(sqlite3.connect(db)) as con:
        rows = con.execute("SELECT seed, COUNT(*) FROM runs GROUP BY seed").fetchall()
    assert sorted(s for s, _ in rows) == list(range(1, total + 1)) and all(n == 1 for _, n in rows)


def test_cli_sweep_errors_are_one_line(tmp_path, capsys):
    from fabricsim.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nbase = "missing.toml"\n')
    assert main(["sweep", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "base: cannot read 'missing.toml'" in err
    bad.write_text('name = "x"\nbase = {}\nseedz = 3\n')
    assert main(["sweep", str(bad)]) == 2
    assert "seedz: unknown key" in capsys.readouterr().err
