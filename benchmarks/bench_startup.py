"""Command-line startup, as whole processes, side by side in one run: `python -c pass`, `fabricsim --version`,
`fabricsim --help` and `fabricsim validate examples/leaf_spine_incast.toml`.

Each command runs `--runs` times (default 10) after two warm-up runs, round-robin so that any load on the
machine falls on all of them alike; the table gives the median and the fastest run in seconds and the median as a
ratio to `python -c pass` (the interpreter's own start). Target (issue 17): `--version` and `validate` ≤ 0.12 s.
Bytecode caching is on (PYTHONDONTWRITEBYTECODE is dropped for the children), as for a user: without it every
module of an editable install is compiled from source at each start. Usage: python benchmarks/bench_startup.py
[--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TARGET_S = 0.12
SCENARIO = "examples/leaf_spine_incast.toml"


def commands() -> list[tuple[str, list[str], float | None]]:
    """(label, argv, target seconds or None)."""
    fs = str(BIN / "fabricsim")
    return [("python -c pass", [sys.executable, "-c", "pass"], None),
            ("fabricsim --version", [fs, "--version"], TARGET_S),
            ("fabricsim --help", [fs, "--help"], None),
            (f"fabricsim validate {SCENARIO}", [fs, "validate", SCENARIO], TARGET_S)]


def once(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true", help="Print one JSON object instead of the table.")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmds = commands()
    times: dict[str, list[float]] = {label: [] for label, _, _ in cmds}
    for i in range(args.runs + 2):
        for label, argv, _ in cmds:
            t = once(argv, env)
            if i >= 2:
                times[label].append(t)
    base = statistics.median(times[cmds[0][0]])
    rows = [{"command": label, "median_s": statistics.median(times[label]), "min_s": min(times[label]),
             "ratio": statistics.median(times[label]) / base, "target_s": target} for label, _, target in cmds]
    if args.json:
        print(json.dumps({"runs": args.runs, "rows": rows}))
    else:
        print(f"startup, whole processes, median of {args.runs} runs (cpus: {os.cpu_count()})")
        print(f"{'command':<58} {'median':>8} {'fastest':>8} {'× python':>9}  target")
        for r in rows:
            verdict = "" if r["target_s"] is None else \
                f"≤ {r['target_s']:.2f} s: {'met' if r['median_s'] <= r['target_s'] else 'MISSED'}"
            print(f"{r['command']:<58} {r['median_s']:>7.3f}s {r['min_s']:>7.3f}s {r['ratio']:>8.1f}×  {verdict}")
    return 0 if all(r["target_s"] is None or r["median_s"] <= r["target_s"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
