"""Cluster simulator speed: 1,000 jobs on study 003's 6,144-server fabric for each placement policy, one process.

Each policy runs the `fabricsim cluster` defaults on cpo_baseline (sizes from study 003's synthetic trace, ring
all-reduce of 10 MiB x 100 iterations, offered load 0.7) with a fresh solo-profile cache, so each time includes
loading the fabric, calibrating the load and every flow-engine solo run the policy needs (target: 5 minutes).
Usage: python benchmarks/bench_cluster.py [--jobs N] [--fabric NAME] [--policy P ...] [--pattern P] [--sizes DIST]
"""

from __future__ import annotations

import argparse
import sys
import time

from fabricsim.cluster import POLICIES, ClusterConfig, simulate


TARGET_S = 300.0
"""1,000 jobs on the 6,144-server fabric in at most 5 minutes (issue 20)."""


def measure(jobs: int = 1000, fabric: str = "cpo_baseline", policies=POLICIES, pattern: str = "ring-all-reduce",
            sizes: str = "cpo", seed: int = 1) -> list[tuple[str, float, dict]]:
    """(policy, wall seconds, metrics) of one whole simulation per policy, each with a fresh solo-profile cache."""
    rows = []
    for p in policies:
        cfg = ClusterConfig(policy=p, fabric=fabric, jobs=jobs, sizes=sizes, pattern=pattern, seed=seed)
        t0 = time.perf_counter()
        m = simulate(cfg).metrics()
        rows.append((p, time.perf_counter() - t0, m))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--fabric", default="cpo_baseline")
    ap.add_argument("--policy", action="append", choices=POLICIES)
    ap.add_argument("--pattern", default="ring-all-reduce")
    ap.add_argument("--sizes", default="cpo")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rows = measure(args.jobs, args.fabric, args.policy or POLICIES, args.pattern, args.sizes, args.seed)
    print(f"{args.jobs} jobs ({args.sizes} sizes, {args.pattern}) on {args.fabric}, seed {args.seed}, one process:")
    print(f"{'policy':<10} {'wall s':>8} {'engine s':>9} {'solo runs':>10} {'cache hits':>11} {'mean slowdown':>14} "
          f"{'mean JCT s':>11}")
    for p, wall, m in rows:
        print(f"{p:<10} {wall:>8.1f} {m['engine_s']:>9.1f} {m['solo_runs']:>10} {m['solo_hits']:>11} "
              f"{m['mean_slowdown']:>14.3f} {m['mean_jct_s']:>11.4f}")
    met = all(w <= TARGET_S for _, w, _ in rows)
    print(f"target <= {TARGET_S:g} s per policy: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
