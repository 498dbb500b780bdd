"""Placement advisor speed: `fabricsim place` decisions as whole processes on the 24-server Vela-like fabric and on
study 003's 6,144-server baseline, defaults (flow-engine search, the best two confirmed by the packet engine over
three seeds); targets <= 10 s per decision on 24 servers, <= 60 s on 6,144 (issue 20).

Usage: python benchmarks/bench_place.py [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

CASES = [("vela", 4, []), ("vela", 8, []), ("vela", 12, []), ("vela", 8, ["--per-server", "1"]),
         ("vela", 12, ["--per-server", "1"]), ("cpo_baseline", 16, []), ("cpo_baseline", 32, [])]
"""(fabric, nodes, extra options): an all-reduce of 10 MiB per message, one NIC per node."""
TARGET_S = {"vela": 10.0, "cpo_baseline": 60.0}


def decide(fabric: str, nodes: int, extra: list[str]) -> dict:
    """One `fabricsim place --json` as a whole process: its wall time and what it chose."""
    exe = Path(sys.executable).parent / "fabricsim"
    t0 = time.perf_counter()
    out = subprocess.run([str(exe), "place", "--fabric", fabric, "--nodes", str(nodes), *extra, "--json"], check=True,
                         capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    res = json.loads(out)
    best = res["placements"][0]
    return {"fabric": fabric, "nodes": nodes, "options": " ".join(extra), "wall_s": wall, "runs": res["evaluations"],
            "completion_ms": best["completion_ms"], "racks": best["racks"], "target_s": TARGET_S[fabric],
            "met": wall <= TARGET_S[fabric]}


def measure() -> list[dict]:
    return [decide(*c) for c in CASES]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = measure()
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(f"place {r['fabric']:12} {r['nodes']:>3} nodes {r['options']:15} {r['wall_s']:6.1f} s "
                  f"({r['runs']:,} engine runs; best {r['completion_ms']:.2f} ms in {r['racks']} rack(s)); "
                  f"target <= {r['target_s']:g} s: {'met' if r['met'] else 'MISSED'}")
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
