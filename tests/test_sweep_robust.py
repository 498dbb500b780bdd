"""Sweeps that never crash or linger (issue 33): a --store that is not a sweep store is one line and exit 2 (an
earlier store, folder or its results.sqlite, is resumed); workers die with their sweep, even SIGKILLed; the summary
of 10,000 runs is vectorised and its table says how many points it leaves out; RoCE runs store their metrics."""

from __future__ import annotations

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

from fabricsim.cli import main
from fabricsim.sweep import Store, StoreError, load_sweep, run_sweep
from fabricsim.sweep.runner import points_summary
from fabricsim.sweep.tasks import ROCE_METRICS

ROOT = Path(__file__).resolve().parents[1]
ROCE_INCAST = ROOT / "examples" / "roce_incast.toml"
FABRICSIM = [sys.executable, "-m", "fabricsim.cli"]


def echo_sweep(tmp_path: Path, seeds: int = 2) -> Path:
    p = tmp_path / "echo.toml"
    p.write_text(f'name = "echo"\ntask = "fabricsim.sweep.testing:echo"\nseeds = {seeds}\nbase = {{}}\n'
                 '[grid]\nx = [1, 2]\n')
    return p


def sweep(capsys, *args: str) -> tuple[int, str, list[str]]:
    rc = main(["sweep", *args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err.splitlines()


# ---- --store -----------------------------------------------------------------------------------------------------

def test_a_store_that_is_not_a_sweep_store_is_one_line_and_exit_2(tmp_path, capsys):
    spec = echo_sweep(tmp_path)
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as con:
        con.execute("CREATE TABLE t (a)")
        con.commit()
    cases = {
        str(text): f"fabricsim sweep: --store: sweep store {text}: not a sweep store (the file is not an SQLite "
                   "database); give a folder, or the results.sqlite of an earlier sweep",
        str(text / "sub"): f"fabricsim sweep: --store: sweep store {text / 'sub'}: cannot make the folder: {text} "
                           "is a file",
        str(other): f"fabricsim sweep: --store: sweep store {other}: not a sweep store (an SQLite database that has "
                    "no 'runs' table); give a folder, or the results.sqlite of an earlier sweep",
    }
    for store, line in cases.items():
        rc, out, err = sweep(capsys, str(spec), "--store", store, "--workers", "0", "--json")
        assert (rc, out, err) == (2, "", [line])
    assert text.read_text() == "not a database\n", "a refused file is left as it was"
    # a folder whose results.sqlite is not a database: refused, naming that file
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.sqlite").write_bytes(b"\x00garbage" * 10)
    rc, out, err = sweep(capsys, str(spec), "--store", str(tmp_path / "bad"), "--workers", "0", "--json")
    assert rc == 2 and len(err) == 1 and f"sweep store {tmp_path / 'bad' / 'results.sqlite'}: not a sweep store" in err[0]
    with pytest.raises(StoreError):
        Store(text)


def test_an_earlier_store_is_resumed_by_folder_or_by_its_database_file(tmp_path, capsys):
    spec = echo_sweep(tmp_path)
    store = tmp_path / "store"
    rc, out, _ = sweep(capsys, str(spec), "--store", str(store), "--workers", "0", "--json")
    assert rc == 0 and json.loads(out)["ran"] == 4
    for again in (store, store / "results.sqlite"):
        rc, out, _ = sweep(capsys, str(spec), "--store", str(again), "--workers", "0", "--json")
        doc = json.loads(out)
        assert rc == 0 and (doc["skipped"], doc["ran"]) == (4, 0), again
    # a bigger sweep appends to it: the 4 stored runs skipped, the 2 new seeds' 4 runs added
    rc, out, _ = sweep(capsys, str(echo_sweep(tmp_path, seeds=4)), "--store", str(store / "results.sqlite"),
                       "--workers", "0", "--json")
    doc = json.loads(out)
    assert rc == 0 and (doc["skipped"], doc["ran"]) == (4, 4)
    with closing(sqlite3.connect(store / "results.sqlite")) as con:
        assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 8


# ---- workers die with the sweep -------------------------------------------------------------------------------

def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids of every live (not zombie) process, from /proc."""
    out: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in (b"Z", b"X"):
            out.setdefault(int(fields[1]), []).append(int(d))
    return out


def _descendants(pid: int) -> set[int]:
    kids, found, todo = _children(), set(), [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            found.add(c)
            todo.append(c)
    return found


def _alive(pids: set[int]) -> set[int]:
    live = {p for ps in _children().values() for p in ps}
    return pids & live


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc (Linux)")
def test_workers_and_forkserver_die_with_a_sigkilled_sweep(tmp_path):
    """SIGKILL a sweep whose one worker is inside a task that holds the GIL (as the engine does, so no Python
    thread of the worker can run): the forkserver, the worker and the resource tracker are gone within seconds
    (before issue 33 they lived on for minutes and kept the sweep's stdout open)."""
    spec = tmp_path / "gil.toml"
    spec.write_text('name = "gil"\ntask = "fabricsim.sweep.testing:hold_gil"\nseeds = 3\n[base]\nn = 40\n')
    cmd = [*FABRICSIM, "sweep", str(spec), "--store", str(tmp_path / "store"), "--workers", "1", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # start-up on a loaded machine
        while True:  # the sweep -> forkserver -> worker chain, the worker busy in its task
            tree = _descendants(proc.pid)
            workers = {p for p in tree if _descendants(p) == set() and p not in _children().get(proc.pid, [])}
            if workers:
                break
            assert proc.poll() is None and time.monotonic() < deadline, "no worker started"
            time.sleep(0.1)
        time.sleep(1.0)  # inside the task
        tree = _descendants(proc.pid)
        assert len(tree) >= 3, tree  # resource tracker, forkserver, worker
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 30  # generous: it takes a few hundredths of a second
        while _alive(tree) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(tree), f"still alive 30 s after the sweep was killed: {_alive(tree)}"
        # and nothing holds the sweep's stdout open: reading it reaches the end
        assert proc.stdout.read() == b""
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.stdout.close()


# ---- the summary ----------------------------------------------------------------------------------------------

def test_points_summary_against_a_hand_calculation():
    """Point a: x = 1..5 → mean 3, s = √2.5, half-width t(0.975, 4)·s/√5 = 2.7764451051977934·1.5811388/2.2360680
    = 1.963243; y counted 1 and 3 (a bool and a text value are not numbers) → mean 2 (an int: integral),
    s = √((1 + 1)/1) = √2, half-width t(0.975, 1)·√2/√2 = 12.706204736174694; point b: one run → ci95 None; point c: no run."""
    params = {"a": {"p": 1}, "b": {"p": 2}, "c": {"p": 3}}
    metrics = [{"x": 1, "y": 1}, {"x": 2, "y": True}, {"x": 3, "y": "n/a"}, {"x": 4.0, "y": 3}, {"x": 5},
               {"x": 7.5, "z": "text only"}]
    s = points_summary(params, ["a"] * 5 + ["b"], metrics, ["b"])
    assert s["metrics"] == ["x", "y"]
    a, b, c = s["points"]
    assert (a["n"], a["incomplete"], b["n"], b["incomplete"], c["n"]) == (5, 0, 1, 1, 0)
    assert a["metrics"]["x"]["mean"] == 3 and isinstance(a["metrics"]["x"]["mean"], int) and a["metrics"]["x"]["n"] == 5
    assert math.isclose(a["metrics"]["x"]["ci95"], 2.7764451051977934 * math.sqrt(2.5) / math.sqrt(5), rel_tol=1e-12)
    assert math.isclose(a["metrics"]["x"]["ci95"], 1.963243, rel_tol=1e-6)
    assert a["metrics"]["y"] == {"mean": 2, "ci95": pytest.approx(12.706204736174694, rel=1e-12), "n": 2}
    assert b["metrics"] == {"x": {"mean": 7.5, "ci95": None, "n": 1}} and c["metrics"] == {}


def test_the_table_of_a_large_sweep_says_how_many_points_it_leaves_out(tmp_path, capsys):
    spec = tmp_path / "many.toml"
    spec.write_text('name = "many"\ntask = "fabricsim.sweep.testing:echo"\nseeds = 1\nbase = {}\n'
                    f"[grid]\nx = {list(range(30))}\n")
    rc, out, _ = sweep(capsys, str(spec), "--store", str(tmp_path / "s"), "--workers", "0")
    assert rc == 0
    lines = out.splitlines()
    assert "... 5 more points not shown (of 30; --json prints every point, --export FILE.csv every run)" in lines
    assert sum(line.startswith("│ x = ") for line in lines) == 25  # points x = 0..24, one labelled row each
    rc, out, _ = sweep(capsys, str(spec), "--store", str(tmp_path / "s"), "--workers", "0", "--json")
    assert len(json.loads(out)["points"]) == 30


# ---- RoCE metrics ------------------------------------------------------------------------------------------------

def test_sweeps_store_the_roce_metrics(tmp_path):
    """The shipped RoCE incast in a one-point sweep: the stored PFC, ECN, CNP and peak-queue metrics are the
    record's own (fabricsim.run of the same scenario and seed); a sweep of a non-RoCE scenario has none of them."""
    import fabricsim
    from fabricsim.spec import load_scenario

    spec = tmp_path / "roce.toml"
    spec.write_text(f'name = "roce"\nbase = {json.dumps(str(ROCE_INCAST))}\nseeds = [3]\n')
    sp, base = load_sweep(spec)
    res = run_sweep(sp, base, tmp_path / "store", workers=0, quiet=True)
    row = res.rows()[0]
    rec = fabricsim.run(load_scenario(str(ROCE_INCAST)), seed=3)
    queues = rec.queues(only_active=False)
    want = {"pfc_pauses": rec.pfc_pauses, "pfc_paused_s": rec.pfc_paused_s, "ecn_marks": rec.ecn_marks,
            "cnps": rec.cnps, "peak_queue_bytes": max(q["peak_bytes"] for q in queues),
            "peak_queue_packets": max(q["peak_packets"] for q in queues)}
    assert {k: row[k] for k in ROCE_METRICS} == want
    assert want["ecn_marks"] > 0 and want["peak_queue_bytes"] > 0, "the incast marks and queues"
    assert set(ROCE_METRICS) <= set(res.point_summary()["metrics"])
    plain = tmp_path / "plain.toml"
    plain.write_text(f'name = "plain"\nbase = {json.dumps(str(ROOT / "experiments/engine_checks/droptail_base.toml"))}\n')
    sp, base = load_sweep(plain)
    rows = run_sweep(sp, base, tmp_path / "store2", workers=0, quiet=True).rows()
    assert not set(ROCE_METRICS) & set(rows[0])
