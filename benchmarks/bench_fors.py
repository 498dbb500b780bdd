"""FORS scheduling and routing speed on FT(2;20,18): every named failure scenario plus random failure sets, all
phases, as whole processes (`fabricsim fors route`, so interpreter start and imports count) and in-process.

Target (issue 7): routing of any failure scenario, all phases, in ≤ 3 s on this 2-core machine. The study's
Gurobi ILP took 27–37 s on 8 threads; for reference the per-phase CP-SAT ILP (`fors_route(method="cpsat")`) is
timed on one scenario. Usage: python benchmarks/bench_fors.py [--ilp]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from fabricsim.routing import fors_route
from fabricsim.schedule import fors_schedule
from fabricsim.schedule.verify import verify
from fabricsim.studies.fors import SCENARIOS, scenario
from fabricsim.topology.fattree import random_failures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ilp", action="store_true", help="also time the CP-SAT ILP on every phase of 3F_SW0_5_11")
    args = ap.parse_args()
    cases = [(name, scenario(name)) for name in SCENARIOS]
    cases += [(f"random {k} links (seed {s})", random_failures(20, 18, k, seed=s)) for k in (5, 20, 80) for s in (0, 1)]
    print(f"{'scenario':28s} {'f':>2s} {'m':>2s} {'phases':>6s} {'method':>11s} {'schedule s':>10s} {'route s':>8s} "
          f"{'process s':>9s}  verified")
    worst = 0.0
    for name, ft in cases:
        t0 = time.perf_counter()
        sched = fors_schedule(ft)
        t1 = time.perf_counter()
        stats: dict = {}
        routing = fors_route(ft, sched, stats=stats)
        t2 = time.perf_counter()
        ok = not verify(ft, [[(s, d) for s, d, _ in ph] for ph in routing], routing, limit=1)
        failed = ",".join(f"{a}:{b}" for a, b in sorted(ft.failed))
        cmd = [sys.executable, "-m", "fabricsim.cli", "fors", "route", "--out", "/dev/null"]
        if failed:
            cmd += ["--failed", failed]
        t3 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        proc = time.perf_counter() - t3
        worst = max(worst, proc)
        print(f"{name:28s} {ft.f:2d} {ft.m:2d} {len(routing):6d} {stats['method']:>11s} {t1 - t0:10.3f} {t2 - t1:8.3f} "
              f"{proc:9.2f}  {'yes' if ok else 'NO'}")
    print(f"worst whole process (schedule + route + JSON out): {worst:.2f} s (target ≤ 3 s)")
    if args.ilp:
        ft = scenario("3F_SW0_5_11")
        sched = fors_schedule(ft)
        t0 = time.perf_counter()
        fors_route(ft, sched, method="cpsat")
        print(f"CP-SAT ILP, every phase of 3F_SW0_5_11 ({len(sched)} phases): {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
