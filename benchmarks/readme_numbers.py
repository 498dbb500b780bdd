"""Regenerate the measured figures the README quotes, between its `<!-- generated: NAME -->` … `<!-- end: NAME -->`
markers, so no number in it is typed by hand.

Each region has a generator here. Deterministic regions (simulation results: the same code and seed give the
same text) are checked by tests/test_readme_numbers.py; timing regions are rewritten only by `--write` and
carry the machine they were measured on.

Usage:
    python benchmarks/readme_numbers.py                 # show which regions differ from a fresh run
    python benchmarks/readme_numbers.py --write         # rewrite them in README.md
    python benchmarks/readme_numbers.py --only astra    # one region (repeatable)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README = ROOT / "README.md"
REGION = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(\n<!-- end: (?P=name) -->)", re.S)


@dataclass(frozen=True)
class Generator:
    fn: Callable[[], str]
    deterministic: bool
    """Whether the same code gives the same text (a test checks it), or a timing (rewritten by --write only)."""
    seconds: float
    """About how long it takes on the development machine."""


def machine() -> str:
    """One line naming the machine a timing was measured on."""
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def astra() -> str:
    """ASTRA-sim's finish times beside fabricsim's on the same traces (benchmarks/astra_sim_compare.py)."""
    out = subprocess.run([sys.executable, str(HERE / "astra_sim_compare.py"), "--json"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    rows = json.loads(out)
    order = {"Ring_4chunks": 0, "HGX-H100-validated": 1}
    kinds = {"all_reduce": 0, "reduce_scatter": 1, "all_gather": 2, "all_to_all": 3}
    rows.sort(key=lambda r: (order[r["config"]], kinds[r["workload"]], r["npus"]))
    lines = ["| workload | NPUs | config | ASTRA-sim (congestion-aware) | fabricsim packet | flow | packet vs ASTRA-sim "
             "| packet, 1 GB = 2^30 B | vs ASTRA-sim |", "|---|---|---|---|---|---|---|---|---|"]

    def pct(x: float) -> str:
        return f"{x:+.1f}%".replace("-", "−")

    for r in rows:
        cfg = "Ring" if r["config"] == "Ring_4chunks" else "HGX"
        lines.append(f"| {r['workload']} | {r['npus']} | {cfg} | {r['astra_aware_ns'] / 1e3:.1f} µs | "
                     f"{r['packet_ns'] / 1e3:.1f} µs | {r['flow_ns'] / 1e3:.1f} µs | {pct(r['diff_packet_pct'])} | "
                     f"{r['packet_gib_ns'] / 1e3:.1f} µs | {pct(r['diff_packet_gib_pct'])} |")
    return "\n".join(lines)


def collective_example() -> str:
    """The README's collective example on study 000's fabric: 4n_2r all-reduce of 10 MiB, 30 seeds."""
    cmd = ["fabricsim", "collective", "--placement", "4n_2r", "--pattern", "all-reduce", "--msg-mib", "10",
           "--seeds", "30", "--json"]
    out = json.loads(subprocess.run([str(Path(sys.executable).parent / cmd[0]), *cmd[1:]], capture_output=True,
                                    text=True, check=True, cwd=ROOT).stdout)
    ct = out["completion_time_ms"]
    mean, ci = ct["mean"], ct["ci95"]
    return (f"`{' '.join(cmd)}` gives a completion time of {mean:.3f} ± {ci:.3f} ms (mean ± 95% CI over 30 seeds; "
            f"the paper's Table IV: 5.67 ms).")


GENERATORS: dict[str, Generator] = {
    "astra": Generator(astra, deterministic=True, seconds=1),
    "collective-example": Generator(collective_example, deterministic=True, seconds=45),
}


def regions(text: str) -> dict[str, str]:
    """Region name → its current body in `text`."""
    return {m.group("name"): m.group("body") for m in REGION.finditer(text)}


def rewrite(text: str, bodies: dict[str, str]) -> str:
    """`text` with the named regions' bodies replaced."""
    return REGION.sub(lambda m: m.group(1) + bodies.get(m.group("name"), m.group("body")) + m.group(4), text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite the regions in README.md")
    ap.add_argument("--only", action="append", choices=sorted(GENERATORS), help="only this region (repeatable)")
    args = ap.parse_args()
    text = README.read_text()
    have = regions(text)
    missing = sorted(set(GENERATORS) - set(have))
    if missing:
        print(f"README.md: no region for {', '.join(missing)}", file=sys.stderr)
        return 2
    fresh = {name: GENERATORS[name].fn() for name in (args.only or GENERATORS)}
    changed = [n for n, body in fresh.items() if body != have[n]]
    for n in fresh:
        print(f"{n}: {'differs' if n in changed else 'unchanged'}")
    if args.write and changed:
        README.write_text(rewrite(text, fresh))
        print(f"wrote {README} ({len(changed)} regions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
