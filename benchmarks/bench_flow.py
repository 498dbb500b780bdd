"""Flow-engine speed at scale, as whole processes (the Rust example `bench_flow`, built in release mode), plus the
same phased all-to-all through the Python API.

Cases (1 MB messages, 100 Gb/s, per-flow ECMP hashing): one synchronized all-to-all phase on FT(2;100,100)
(10 000 hosts, 10 000 concurrent flows) as a shift permutation and as a random permutation, and the full phased
all-to-all on FT(2;20,18) (360 hosts, 129 240 flows, a barrier between phases). Targets (issue 6): ≤ 0.15 s per
10 000-host phase and ≤ 0.5 s for the FT(2;20,18) all-to-all, one core, whole process; SimGrid 4.1 takes 0.46 s
and 1.4 s on this machine kind. Usage: python benchmarks/bench_flow.py [--repeat R]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = [("shift", 100, 100, 0.15), ("random", 100, 100, 0.15), ("a2a", 20, 18, 0.5)]


def whole_process(binary: Path, mode: str, m0: int, m1: int) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, the example's own line) of one run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    out = subprocess.run([str(binary), mode, str(m0), str(m1)], check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(rss, before) / 1024, out.strip()


def python_api() -> str:
    import fabricsim
    from fabricsim import Workload, scenario_from_dict

    t0 = time.perf_counter()
    sc = scenario_from_dict({"topology": {"kind": "fat_tree", "m0": 20, "m1": 18, "rate": "100Gbps"}})
    wl = Workload(sc)
    wl.collective("all_to_all", [(f"h{i}", 0) for i in range(360)], 1_000_000, algorithm="shift", barrier=True,
                  order="parallel")
    t1 = time.perf_counter()
    rec = fabricsim.run(sc, workload=wl, fidelity="flow")
    t2 = time.perf_counter()
    return (f"Python API, phased all-to-all FT(2;20,18): build + validate {t1 - t0:.2f} s, run {t2 - t1:.2f} s "
            f"(engine {rec.wall_s:.3f} s), completion {rec.completion_time_s * 1e3:.2f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "fabricsim-flow", "--example", "bench_flow"], cwd=ROOT, check=True)
    binary = ROOT / "target" / "release" / "examples" / "bench_flow"
    ok = True
    for mode, m0, m1, target in CASES:
        runs = [whole_process(binary, mode, m0, m1) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        ok &= wall <= target
        print(f"{mode:6s} FT(2;{m0},{m1}): whole process {wall:.3f} s (median of {args.repeat}; target ≤ {target} s), "
              f"peak RSS {rss:.0f} MiB\n    {runs[0][2]}")
    print(python_api())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
