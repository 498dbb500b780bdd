"""Sweep executor overhead: runs/s of a trivial scenario (one 1 KiB message over one link), local vs Dask; and the
wall time of `fabricsim sweep` printing the summary of a sweep whose 10,000 runs are all stored.

Each executor runs the same N runs (N seeds of one point) into a fresh store, so the figure includes
expansion, dispatch, the simulation itself (~50 us), and one SQLite commit per run. The summary's store is
written directly (10,000 points of one seed, 12 numeric metrics each, under their real run hashes), so the
command runs nothing: it expands, finds every run stored, summarizes and prints (issue 33: 65 s before, most
of it the table of 120,000 rows).
Usage: python benchmarks/bench_sweep.py [--runs N] [--workers W] [--summary-runs N]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fabricsim.sweep import SweepSpec, run_sweep

BASE = {
    "topology": {"kind": "custom", "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
                 "links": [{"a": "a", "b": "b", "rate": "10Gbps", "delay": "1us"}]},
    "messages": [{"name": "m", "src": "a", "dst": "b", "size": "1KiB"}],
}


def timed(runs: int, **kw) -> tuple[float, str]:
    spec = SweepSpec(name="trivial", base=BASE, seeds=runs)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        res = run_sweep(spec, BASE, d, quiet=True, **kw)
        wall = time.perf_counter() - t0
        assert res.ran == runs and not res.failed, res.summary()
    return runs / wall, res.executor


def summary_wall(runs: int = 10_000) -> float:
    """Seconds for `fabricsim sweep` (a whole process, --workers 0) to print the summary of `runs` stored runs."""
    from fabricsim import __version__
    from fabricsim.sweep import Store, expand, load_sweep

    with tempfile.TemporaryDirectory() as d:
        spec_file = Path(d) / "big.toml"
        spec_file.write_text(f'name = "big"\ntask = "fabricsim.sweep.testing:echo"\nseeds = 1\nbase = {{}}\n'
                             f"[grid]\nx = {list(range(runs))}\n")
        spec, base = load_sweep(spec_file)
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        with Store(Path(d) / "store") as st:
            st.db.executemany("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?)", [
                (t.hash, t.sweep, t.point_key, json.dumps(t.params), t.seed, "ok",
                 json.dumps({"x": t.params["x"], "seed_seen": t.seed, **{k: float(i) for i, k in enumerate("abcdefghij")}}),
                 None, 0.001, __version__, now) for t in expand(spec, base)])
            st.db.commit()
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "fabricsim.cli", "sweep", str(spec_file), "--store",
                              str(Path(d) / "store"), "--workers", "0"], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        assert f"({runs} already stored, 0 ran)" in out.stdout, out.stdout[-500:]
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--summary-runs", type=int, default=10_000)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores; {args.runs} trivial runs per executor, {args.workers} workers")
    rate, _ = timed(args.runs, workers=0)
    print(f"inline (this process):        {rate:8.1f} runs/s  ({1e3 / rate:.2f} ms per run)")
    rate, _ = timed(args.runs, workers=args.workers)
    print(f"local processes (forkserver): {rate:8.1f} runs/s  ({1e3 / rate:.2f} ms per run, pool start included)")
    from distributed import LocalCluster

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=50) as cluster:
        timed(8, scheduler=cluster.scheduler_address)  # warm the workers' imports
        rate, _ = timed(args.runs, scheduler=cluster.scheduler_address)
    print(f"Dask LocalCluster:            {rate:8.1f} runs/s  ({1e3 / rate:.2f} ms per run, cluster already up)")
    print(f"summary of {args.summary_runs:,} stored runs: {summary_wall(args.summary_runs):.1f} s "
          "(fabricsim sweep as a whole process, nothing to run; issue 33's target: seconds, not 65 s)")


if __name__ == "__main__":
    main()
