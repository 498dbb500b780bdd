"""ATRO solve times to proven optimality (HiGHS, one thread) on the study's instances, the baselines' run times, and
the flow-level simulation of the default ATRO plan.

Targets: the default instance (90 workers, 20 switches × 24 ports, 4 aggregators, L = 5) proven optimal in
≤ 10 s on this 2-core machine (issue 8; the study reports 2–330 s with Gurobi), and its plan simulated
(`fabricsim.ina.simulate`, 64 chunks of 1 MiB, with and without the broadcast) in < 10 s. Each ATRO case is also
timed as a whole process (`fabricsim ina --json`, interpreter start and imports included).
Usage: python benchmarks/bench_ina.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from fabricsim.ina import Instance, atro, solve
from fabricsim.ina.simulate import simulate


def main() -> None:
    cases = [("default (90 w, 4 agg)", Instance()), ("60 workers", Instance(workers=60)),
             ("80 workers", Instance(workers=80)), ("89 workers", Instance(workers=89)),
             ("2 aggregators", Instance(aggregators=2)), ("3 aggregators", Instance(aggregators=3)),
             ("6 aggregators", Instance(aggregators=6)), ("8 aggregators", Instance(aggregators=8))]
    print(f"{'ATRO instance':24s} {'Gb/s':>6s} {'proven':>6s} {'levels tried':24s} {'solve s':>8s} {'process s':>9s}")
    worst = 0.0
    for name, inst in cases:
        t0 = time.perf_counter()
        sol = atro(inst)
        dt = time.perf_counter() - t0
        worst = max(worst, dt)
        cmd = [sys.executable, "-m", "fabricsim.cli", "ina", "--json", "--workers", str(inst.workers),
               "--aggregators", str(inst.aggregators)]
        t1 = time.perf_counter()
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        proc = time.perf_counter() - t1
        assert out["throughput_gbps"] == sol.throughput_gbps
        tried = " ".join(f"{t}:{s[:3]}" for t, s in sol.extra["levels_tried"])
        print(f"{name:24s} {sol.throughput_gbps:6.1f} {str(sol.optimal):>6s} {tried:24s} {dt:8.2f} {proc:9.2f}")
    print(f"slowest ATRO solve: {worst:.2f} s (target ≤ 10 s for the default instance)")
    plan = atro(Instance()).plan
    for broadcast in (False, True):
        t0 = time.perf_counter()
        r = simulate(plan, broadcast=broadcast)
        dt = time.perf_counter() - t0
        print(f"simulate() of the default ATRO plan, broadcast={broadcast}: {dt:.2f} s wall "
              f"(engine {r.engine_wall_s:.2f} s, {r.messages} messages, {r.rate_gbps:.1f} Gb/s; target < 10 s)")
    print("\nbeyond the study: 2× and 3× the cluster; load 1 holds exactly up to A·(η − 2) + 1 workers")
    for w, sw, a in ((177, 40, 8), (178, 40, 8), (265, 60, 12), (266, 60, 12), (400, 60, 12)):
        t0 = time.perf_counter()
        sol = atro(Instance(workers=w, switches=sw, aggregators=a), time_limit_s=300)
        print(f"{w} workers, {sw} switches, {a} aggregators (A(η−2)+1 = {a * 22 + 1}): {sol.throughput_gbps:.1f} Gb/s, "
              f"proven {sol.optimal}, {time.perf_counter() - t0:.2f} s")
    for obj in ("min-load",):
        t0 = time.perf_counter()
        sol = atro(Instance(), objective=obj)
        print(f"default instance, objective {obj}: {sol.throughput_gbps:.1f} Gb/s, proven {sol.optimal}, "
              f"{time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    sol = atro(Instance(), rate_levels=100)
    print(f"default instance, QSR N = 100: {sol.throughput_gbps:.1f} Gb/s, {time.perf_counter() - t0:.2f} s")
    print(f"\n{'baseline (30 seeds)':24s} {'mean Gb/s':>9s} {'proven':>6s} {'total s':>8s} {'per run s':>9s}")
    for scheme in ("aro", "paring", "spar"):
        for topo in ("leaf-spine", "fat-tree"):
            t0 = time.perf_counter()
            sols = [solve(scheme, topo, s) for s in range(1, 31)]
            dt = time.perf_counter() - t0
            mean = sum(x.throughput_gbps for x in sols) / len(sols)
            proven = f"{sum(x.optimal for x in sols)}/30" if scheme == "aro" else "-"
            print(f"{scheme + ' ' + topo:24s} {mean:9.2f} {proven:>6s} {dt:8.2f} {dt / 30:9.3f}")


if __name__ == "__main__":
    main()
