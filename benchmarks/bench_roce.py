"""RoCE speed: the 8-to-1 DCQCN incast of 10 MB per sender at 100 Gb/s (examples/roce_incast.toml) as a whole
`fabricsim run --json` process, median of --repeat runs; target <= 1 s (issue 19).

Usage: python benchmarks/bench_roce.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "roce_incast.toml"
TARGET_S = 1.0


def whole_process() -> tuple[float, dict]:
    """(wall seconds, the JSON record) of one `fabricsim run examples/roce_incast.toml --json`."""
    exe = Path(sys.executable).parent / "fabricsim"
    t0 = time.perf_counter()
    out = subprocess.run([str(exe), "run", str(EXAMPLE), "--json"], check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, json.loads(out)


def measure(repeat: int = 5) -> dict:
    runs = [whole_process() for _ in range(repeat)]
    rec = runs[0][1]
    return {"wall_s": statistics.median(w for w, _ in runs), "engine_s": statistics.median(r["wall_s"] for _, r in runs),
            "events": rec["events"], "completion_s": rec["completion_time_s"], "ecn_marks": rec["ecn_marks"],
            "cnps": rec["cnps"], "pfc_pauses": rec["pfc_pauses"], "repeat": repeat}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    m = measure(args.repeat)
    met = m["wall_s"] <= TARGET_S
    print(f"roce_incast (8 x 10 MB DCQCN, 100 Gb/s): {m['wall_s']:.3f} s whole process (median of {m['repeat']}; "
          f"engine {m['engine_s']:.3f} s, {m['events']:,} events, {m['events'] / m['engine_s'] / 1e6:.1f} M events/s), "
          f"completion {m['completion_s'] * 1e3:.3f} ms, {m['ecn_marks']:,} ECN marks, {m['cnps']:,} CNPs; "
          f"target <= {TARGET_S:g} s: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
