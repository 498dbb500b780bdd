"""Sweep executor overhead: runs/s of a trivial scenario (one 1 KiB message over one link), local vs Dask.

Each executor runs the same N runs (N seeds of one point) into a fresh store, so the figure includes
expansion, dispatch, the simulation itself (~50 us), and one SQLite commit per run.
Usage: python benchmarks/bench_sweep.py [--runs N] [--workers W]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
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


if __name__ == "__main__":
    main()
