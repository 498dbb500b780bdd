"""Command-line startup, as whole processes, side by side in one run: `python -c pass`, `fabricsim --version`,
`fabricsim --help`, `fabricsim validate examples/leaf_spine_incast.toml` and the native start (issue 29):
`fabricsim run benchmarks/one_packet.toml --json` and `fabricsim validate benchmarks/one_packet.toml`.

Each command runs `--runs` times (default 10) after two warm-up runs, round-robin so that any load on the
machine falls on all of them alike; the table gives the median and the fastest run in seconds and the median as a
ratio to `python -c pass` (the interpreter's own start). Targets: `--version` and `validate` ≤ 0.12 s (issue 17);
the one-packet `run --json` ≤ 0.05 s and ≤ 3× `python -c pass` (issue 29).
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
ONE_PACKET = "benchmarks/one_packet.toml"
NATIVE_TARGET_S = 0.05
NATIVE_TARGET_RATIO = 3.0


def commands() -> list[tuple[str, list[str], float | None, float | None]]:
    """(label, argv, target seconds or None, target ratio to `python -c pass` or None)."""
    fs = str(BIN / "fabricsim")
    return [("python -c pass", [sys.executable, "-c", "pass"], None, None),
            ("fabricsim --version", [fs, "--version"], TARGET_S, None),
            ("fabricsim --help", [fs, "--help"], None, None),
            (f"fabricsim validate {SCENARIO}", [fs, "validate", SCENARIO], TARGET_S, None),
            (f"fabricsim run {ONE_PACKET} --json", [fs, "run", ONE_PACKET, "--json"], NATIVE_TARGET_S, NATIVE_TARGET_RATIO),
            (f"fabricsim validate {ONE_PACKET}", [fs, "validate", ONE_PACKET], TARGET_S, None)]


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
    times: dict[str, list[float]] = {label: [] for label, _, _, _ in cmds}
    for i in range(args.runs + 2):
        for label, argv, _, _ in cmds:
            t = once(argv, env)
            if i >= 2:
                times[label].append(t)
    base = statistics.median(times[cmds[0][0]])
    rows = [{"command": label, "median_s": statistics.median(times[label]), "min_s": min(times[label]),
             "ratio": statistics.median(times[label]) / base, "target_s": target, "target_ratio": ratio}
            for label, _, target, ratio in cmds]
    for r in rows:
        r["met"] = (r["target_s"] is None or r["median_s"] <= r["target_s"]) and \
            (r["target_ratio"] is None or r["ratio"] <= r["target_ratio"])
    if args.json:
        print(json.dumps({"runs": args.runs, "rows": rows}))
    else:
        print(f"startup, whole processes, median of {args.runs} runs (cpus: {os.cpu_count()})")
        print(f"{'command':<58} {'median':>8} {'fastest':>8} {'× python':>9}  target")
        for r in rows:
            target = " and ".join(([f"≤ {r['target_s']:.2f} s"] if r["target_s"] is not None else []) +
                                  ([f"≤ {r['target_ratio']:g}×"] if r["target_ratio"] is not None else []))
            verdict = f"{target}: {'met' if r['met'] else 'MISSED'}" if target else ""
            print(f"{r['command']:<58} {r['median_s']:>7.3f}s {r['min_s']:>7.3f}s {r['ratio']:>8.2f}×  {verdict}")
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
