"""Sweep outcomes tell the truth (issue 22): incomplete runs are stored and counted apart (exit 3), invalid or failed
runs exit 1 beside results and 2 when nothing ran, and an unreachable Dask scheduler is one line and exit 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabricsim.cli import main
from fabricsim.sweep import CONNECT_TIMEOUT_S, SchedulerUnreachable, Store, SweepSpec, load_sweep, run_sweep
from fabricsim.sweep.tasks import INCOMPLETE_REASON

ROOT = Path(__file__).resolve().parents[1]
DROPTAIL = ROOT / "experiments" / "engine_checks" / "droptail.toml"
FABRICSIM = [sys.executable, "-m", "fabricsim.cli"]

# The droptail closed form (experiments/engine_checks/droptail.toml): a 20-packet burst into a DropTail queue of
# B packets drops max(0, 11 - B), and a message with a dropped packet is never delivered (the base turns
# retransmission off: `[retransmit] max_retries = 0`).
DROPS = {2: 9, 5: 6, 8: 3, 11: 0}


def reason(drops: int) -> str:
    """RunRecord.incomplete_reason for the droptail message `m` after `drops` drops."""
    return (f"the workload did not complete: 1 message(s) never delivered (m); {drops} packet(s) were dropped and 1 "
            "message(s) gave up after [retransmit] max_retries timeouts without progress (a host cut off by a "
            "failure, or a path that kept losing; max_retries = 0 turns retransmission off): bring the link back "
            "(link_up), add paths, or raise retransmit.max_retries")


def droptail(tmp_path: Path, limits: list) -> Path:
    """A copy of the droptail sweep with the queue limits `limits` (the base by absolute path)."""
    p = tmp_path / "droptail.toml"
    p.write_text(f'name = "droptail"\nbase = {json.dumps(str(DROPTAIL.parent / "droptail_base.toml"))}\n'
                 f'[grid]\n"queue.limit_packets" = {json.dumps(limits)}\n')
    return p


def sweep(capsys, *args: str) -> tuple[int, str, list[str]]:
    """`fabricsim sweep ARGS` in this process: (exit code, stdout, stderr lines)."""
    rc = main(["sweep", *args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err.splitlines()


def test_incomplete_runs_are_stored_apart_with_their_metrics_and_exit_3(tmp_path, capsys):
    store = tmp_path / "store"
    rc, out, err = sweep(capsys, str(DROPTAIL), "--store", str(store), "--workers", "0", "--json")
    assert rc == 3
    summary = json.loads(out)
    assert {k: summary[k] for k in ("total", "ran", "skipped", "ok", "incomplete", "invalid", "failed")} == \
        {"total": 4, "ran": 4, "skipped": 0, "ok": 1, "incomplete": 3, "invalid": 0, "failed": 0}
    assert summary["incomplete_reasons"] == [reason(9), reason(6), reason(3)], "grid order: B = 2, 5, 8"
    assert [(p["params"]["queue.limit_packets"], p["n"], p["incomplete"], p["metrics"]["dropped_packets"]["mean"])
            for p in summary["points"]] == [(2, 1, 1, 9), (5, 1, 1, 6), (8, 1, 1, 3), (11, 1, 0, 0)]
    assert err == [f"fabricsim sweep: droptail: 3 of 4 runs incomplete; the first (queue.limit_packets = 2, seed 1): "
                   f"{reason(9)}"]

    with Store(store) as st:
        df = st.frame("droptail").sort_values("queue.limit_packets")
        assert len(st.hashes(status="incomplete")) == 3 and len(st.hashes(status="ok")) == 1
    assert list(df["status"]) == ["incomplete", "incomplete", "incomplete", "ok"]
    assert list(df["dropped_packets"]) == [DROPS[b] for b in (2, 5, 8, 11)]
    assert list(df["rx_packets"]) == [20 - DROPS[b] for b in (2, 5, 8, 11)]
    assert df["completion_time_s"].isna().tolist() == [True, True, True, False]
    assert list(df["incomplete_reason"][:3]) == [reason(9), reason(6), reason(3)]
    assert "complete" not in df.columns, "the outcome is the status, not a metric"

    # A deterministic outcome: a re-run runs nothing, and says the same in text form.
    rc, out, err = sweep(capsys, str(DROPTAIL), "--store", str(store), "--workers", "0")
    assert rc == 3
    assert "droptail: 4 runs (4 already stored, 0 ran): 1 ok, 3 incomplete, 0 invalid, 0 failed in" in out
    assert "queue.limit_packets = 2 (incomplete)" in out and "queue.limit_packets = 11 " in out
    assert err[0].startswith("fabricsim sweep: droptail: 3 of 4 runs incomplete;") and len(err) == 1


def test_the_api_keeps_incomplete_runs_in_the_frame(tmp_path):
    """run_sweep does not raise for incomplete runs (a study reads their metrics), not even when all are."""
    spec, base = load_sweep(DROPTAIL)
    spec = spec.model_copy(update={"grid": {"queue.limit_packets": [2, 8]}})
    res = run_sweep(spec, base, tmp_path, workers=0, quiet=True)
    assert (res.ok, len(res.incomplete), res.ran) == (0, 2, 2)
    assert [t.params["queue.limit_packets"] for t, _ in res.incomplete] == [2, 8]
    assert [r for _, r in res.incomplete] == [reason(9), reason(3)]
    assert sorted(res.frame()["dropped_packets"]) == [3, 9]


def outcome_task(payload: dict, seed: int) -> dict:
    """A custom task: x = 1 completes (saying so), x = 2 does not (with a reason), x = 3 does not (no reason),
    x = 4 returns plain metrics."""
    x = payload["x"]
    out = {"x": x, "y": 10 * x}
    if x == 1:
        out["complete"] = True
    elif x == 2:
        out.update(complete=False, incomplete_reason="barrier b\nnever met")
    elif x == 3:
        out["complete"] = False
    return out


def failing_task(payload: dict, seed: int) -> dict:
    """A custom task that raises for x = 2 (a failed run, retried, never stored) and echoes otherwise."""
    if payload["x"] == 2:
        raise RuntimeError(f"deliberate failure (x = 2, seed {seed})")
    return {"x": payload["x"]}


def test_a_custom_task_is_incomplete_only_when_it_says_complete_false(tmp_path):
    spec = SweepSpec(name="custom", base={}, task=f"{__file__}:outcome_task", grid={"x": [1, 2, 3, 4]})
    res = run_sweep(spec, {}, tmp_path, workers=0, quiet=True)
    assert res.ok == 2 and [(t.params["x"], r) for t, r in res.incomplete] == [(2, "barrier b never met"),
                                                                               (3, INCOMPLETE_REASON)]
    df = res.frame().sort_values("x")
    assert list(df["status"]) == ["ok", "incomplete", "incomplete", "ok"]
    assert list(df["y"]) == [10, 20, 30, 40], "an incomplete run keeps its metrics"
    assert "complete" not in df.columns


def test_every_run_invalid_exits_2_with_one_line_every_time(tmp_path, capsys):
    path = droptail(tmp_path, [0, -1, -2, -3])
    want = [f"fabricsim sweep: sweep 'droptail': all 4 runs invalid; the first: {path}: queue.limit_packets: "
            "Input should be greater than 0"]
    for _ in range(2):  # stored invalid runs are not run again, and are reported again
        rc, out, err = sweep(capsys, str(path), "--store", str(tmp_path / "s"), "--workers", "0", "--json")
        assert (rc, out, err) == (2, "", want)
    with Store(tmp_path / "s") as st:
        assert len(st.hashes(status="invalid")) == 4


def test_some_runs_invalid_exits_1_after_the_summary(tmp_path, capsys):
    path = droptail(tmp_path, [0, 11])
    rc, out, err = sweep(capsys, str(path), "--store", str(tmp_path / "s"), "--workers", "0", "--json")
    assert rc == 1
    s = json.loads(out)
    assert (s["ok"], s["incomplete"], s["invalid"], s["failed"]) == (1, 0, 1, 0)
    assert s["points"][1]["metrics"]["rx_packets"]["mean"] == 20
    assert err == [f"fabricsim sweep: droptail: 1 of 2 runs invalid; the first (queue.limit_packets = 0, seed 1): "
                   f"{path}: queue.limit_packets: Input should be greater than 0"]
    # Invalid, incomplete and ok together: a line for each trouble, and the invalid run decides the code.
    path = droptail(tmp_path, [0, 2, 11])
    rc, out, err = sweep(capsys, str(path), "--store", str(tmp_path / "s"), "--workers", "0")
    assert rc == 1
    assert "droptail: 3 runs (2 already stored, 1 ran): 1 ok, 1 incomplete, 1 invalid, 0 failed in" in out
    assert [e.split(";")[0] for e in err] == ["fabricsim sweep: droptail: 1 of 3 runs invalid",
                                              "fabricsim sweep: droptail: 1 of 3 runs incomplete"]


def test_a_failed_run_exits_1_and_is_tried_again(tmp_path, capsys):
    sw = tmp_path / "f.toml"
    sw.write_text(f'name = "f"\ntask = "{__file__}:failing_task"\nbase = {{}}\n[grid]\nx = [1, 2, 3]\n')
    args = [str(sw), "--store", str(tmp_path / "s"), "--workers", "0", "--retries", "1", "--json"]
    for ran in (3, 1):  # the failed run is not stored: the second invocation runs it (and only it) again
        rc, out, err = sweep(capsys, *args)
        s = json.loads(out)
        assert rc == 1 and (s["ran"], s["ok"], s["failed"]) == (ran - 1, 2, 1)
        assert err == ["fabricsim sweep: f: 1 of 3 runs failed; the first (x = 2, seed 1): RuntimeError: "
                       "deliberate failure (x = 2, seed 1)"]


def unreachable(addr: str) -> str:
    """The line for a refused connection, as a regex: the refusal is named when distributed's last attempt saw it
    (the timeout may cancel that attempt first)."""
    return (re.escape(f"cannot reach the Dask scheduler at {addr}: no connection within {CONNECT_TIMEOUT_S:g} s")
            + "(" + re.escape(" (ConnectionRefusedError: [Errno 111] Connection refused)") + ")?")


def test_an_unreachable_scheduler_is_one_line_and_exit_2(tmp_path):
    addr = "tcp://127.0.0.1:1"  # nothing listens on port 1: the connection is refused
    t0 = time.monotonic()
    r = subprocess.run([*FABRICSIM, "sweep", str(DROPTAIL), "--store", str(tmp_path / "s"), "--scheduler", addr],
                       capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t0
    assert r.returncode == 2 and r.stdout == ""
    line, = r.stderr.splitlines()
    assert re.fullmatch(f"fabricsim sweep: {unreachable(addr)}", line), line
    assert CONNECT_TIMEOUT_S <= took < CONNECT_TIMEOUT_S + 15, f"gave up after {took:.1f} s, not distributed's 30 s"
    helptext = subprocess.run([*FABRICSIM, "sweep", "--help"], capture_output=True, text=True).stdout
    assert f"Connecting gives up after {CONNECT_TIMEOUT_S:g} s" in " ".join(helptext.split())

    # A malformed address fails at once, with the same one line.
    r = subprocess.run([*FABRICSIM, "sweep", str(DROPTAIL), "--store", str(tmp_path / "s"), "--scheduler", "foo"],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (2, "fabricsim sweep: cannot reach the Dask scheduler at foo: missing port "
                                           "number in address 'foo'\n")

    # A sweep with every run stored needs no cluster: it reports (exit 3, not 2) without connecting.
    run_sweep(*load_sweep(DROPTAIL), tmp_path / "done", workers=0, quiet=True)
    r = subprocess.run([*FABRICSIM, "sweep", str(DROPTAIL), "--store", str(tmp_path / "done"), "--scheduler", addr,
                        "--json"], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip(), f"exit {r.returncode}, no JSON; stderr: {r.stderr}"
    s = json.loads(r.stdout)
    assert r.returncode == 3 and (s["skipped"], s["ran"], s["ok"], s["incomplete"]) == (4, 0, 1, 3)

    # The API raises it, a FabricsimError and a ConnectionError.
    spec, base = load_sweep(DROPTAIL)
    with pytest.raises(SchedulerUnreachable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:1") as e:
        run_sweep(spec, base, tmp_path / "api", scheduler=addr, quiet=True)
    assert isinstance(e.value, ConnectionError) and e.value.address == addr


def test_reproduce_on_an_unreachable_scheduler_is_the_same_one_line(tmp_path):
    addr = "tcp://127.0.0.1:1"
    r = subprocess.run([*FABRICSIM, "reproduce", "engine_checks", "--quick", "--quiet", "--scheduler", addr,
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    line, = r.stderr.splitlines()
    assert re.fullmatch(unreachable(addr), line), line
