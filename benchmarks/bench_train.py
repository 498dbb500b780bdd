"""`fabricsim train` at scale, each run a whole process (wall time and peak RSS of the process), against issue 32's
targets, beside SimAI_analytical on the same machine:

1. gpt3-175b: `fabricsim train --model gpt3-175b --tp 8 --pp 8 --dp 16` on 1,024 GPUs (a rail-optimized fabric of
   4 SUs × 32 servers × 8 H100s, 400 Gb/s NICs, 16 spines, lossless input-buffered switches), the default batch (8 micro-batches per pipeline), at
   flow fidelity (target ≤ 15 s) and at hybrid fidelity (target ≤ 10 min; stopped at --max-wall, default 600 s,
   and reported unfinished then).
2. moe9216: SimAI's 9,216-GPU MoE example (TP2 PP12 EP16, GA24; benchmarks/data/simai/workloads/
   simai_example_9216_moe.txt) through `fabricsim train --aicb` at flow fidelity on the fabric benchmarks/
   vs_simai.py builds for it (SimAI's rates, 36 SUs of 32 servers; targets ≤ 2 min and ≤ 8 GB peak RSS), and
   SimAI_analytical on the same file (`-g 9216 -nv 360 -nic 48.5 -n_p_s 8 -g_p_s 8`) when SimAI is built
   (--simai, else $SIMAI_ROOT, else /work/peers/simai/SimAI; skipped with the reason otherwise).

The targets are reported, not enforced. fabricsim's own --json gives how the time splits (lowering, engine).
Usage: python benchmarks/bench_train.py [--only gpt3-175b|moe9216] [--max-wall 600] [--json F]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

CASES = ("gpt3-175b", "moe9216")
TARGETS = {("gpt3-175b", "flow"): (15.0, None), ("gpt3-175b", "hybrid"): (600.0, None),
           ("moe9216", "flow"): (120.0, 8 * 1024.0)}
"""(wall seconds, peak RSS MiB) targets of issue 32."""
RAIL1024 = ('[topology]\nkind = "rail_optimized"\nsus = 4\nservers_per_su = 32\ngpus_per_server = 8\nspines = 16\n'
            'rate = "400Gbps"\nswitch_model = "input_buffered"\n')
"""Lossless (input-buffered) switches: packets are never dropped, so the hybrid run needs no retransmission (the
flow engine is lossless anyway)."""


def whole(argv: list, cwd: Path | None = None) -> dict:
    """Run a command as a whole process through readme_numbers' launcher: wall s, peak RSS MiB, exit code, stdout.
    Exit codes 0 and 3 (stopped by --max-wall) are results; anything else raises with its last stderr line."""
    from readme_numbers import LAUNCHER

    r = subprocess.run([sys.executable, "-c", LAUNCHER, *map(str, argv)], cwd=cwd, capture_output=True, text=True)
    *err, last = r.stderr.strip().splitlines() or [""]
    wall, rss_kib, code = json.loads(last)
    if code not in (0, 3):
        raise RuntimeError(f"`{' '.join(map(str, argv))}` exited {code}: {(err or [''])[-1]}")
    return {"wall_s": wall, "rss_mb": rss_kib / 1024, "code": code, "stdout": r.stdout, "why": (err or [""])[-1]}


def fabricsim(args: list, max_wall: float | None = None) -> dict:
    from readme_numbers import BIN

    argv = [BIN / "fabricsim", "train", *args, "--json", "--quiet"]
    if max_wall:
        argv += ["--max-wall", max_wall, "--partial"]
    r = whole(argv)
    d = json.loads(r["stdout"]) if r["stdout"].strip() else {}
    run = d.get("run") or {}
    return {"wall_s": r["wall_s"], "rss_mb": r["rss_mb"], "finished": r["code"] == 0,
            "step_time_s": d.get("step_time_s"), "lower_s": run.get("lower_s"), "engine_s": run.get("engine_s"),
            "flows": run.get("flows"), "compute_steps": run.get("compute_steps"), "why": r["why"]}


def measure(only=CASES, max_wall: float = 600.0, simai: str | None = None) -> list[dict]:
    import vs_simai as vs

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if "gpt3-175b" in only:
            fab = Path(tmp) / "rail1024.toml"
            fab.write_text(RAIL1024)
            job = ["--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "16", "--fabric", fab]
            for fid in ("flow", "hybrid"):
                r = fabricsim([*job, "--fidelity", fid], max_wall if fid == "hybrid" else None)
                rows.append({"case": "gpt3-175b", "tool": "fabricsim", "fidelity": fid, **r})
        if "moe9216" in only:
            rec = vs.records()["simai_example_9216_moe"]
            fab = Path(tmp) / "simai9216.toml"
            fab.write_text(vs.fabric_doc(rec["gpus"], *vs.rates(rec)))
            r = fabricsim(["--aicb", vs.DATA / rec["workload_copy"], "--fabric", fab])
            rows.append({"case": "moe9216", "tool": "fabricsim", "fidelity": "flow", **r})
            root = vs.simai_root(simai)
            if root is None:
                rows.append({"case": "moe9216", "tool": "SimAI_analytical", "skipped": "SimAI is not built at "
                             f"{simai or vs.DEFAULT_SIMAI} (benchmarks/SIMAI.md says how it was built)"})
            else:
                s = vs.run_simai(root, "simai_example_9216_moe", rec)
                rows.append({"case": "moe9216", "tool": "SimAI_analytical", "fidelity": "analytical", "finished": True,
                             "wall_s": s["wall_s"], "rss_mb": s["rss_mb"], "step_time_s": s["iteration_time_s"]})
    for r in rows:
        target = TARGETS.get((r["case"], r.get("fidelity")))
        if r["tool"] == "fabricsim" and target:
            wall, rss = target
            r["target"] = f"≤ {wall:g} s" + (f", ≤ {rss / 1024:g} GB" if rss else "")
            r["met"] = r["finished"] and r["wall_s"] <= wall and (rss is None or r["rss_mb"] <= rss)
    return rows


def line(r: dict) -> str:
    if "skipped" in r:
        return f"{r['case']}: {r['tool']}: skipped: {r['skipped']}"
    what = (f"step {r['step_time_s'] * 1e3:,.1f} ms" if r["finished"] and r.get("step_time_s")
            else f"unfinished ({r['why'].removeprefix('fabricsim train: ')})")
    parts = [f"{r['case']}: {r['tool']} {r['fidelity']}: {r['wall_s']:.1f} s wall, {r['rss_mb']:,.0f} MiB peak, {what}"]
    if r.get("flows") is not None:
        eng = f"{r['engine_s']:.1f} s" if r.get("engine_s") is not None else "—"
        parts.append(f"{r['flows']:,} flows, lowered in {r['lower_s']:.1f} s, engine {eng}")
    if "target" in r:
        parts.append(f"target {r['target']}: " + ("met" if r["met"] else "MISSED"))
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=CASES, default=None)
    ap.add_argument("--max-wall", type=float, default=600.0, help="wall-clock cap of the hybrid run (s)")
    ap.add_argument("--simai", default=None, help="SimAI's folder")
    ap.add_argument("--json", default=None, help="also write the rows as JSON to this file")
    a = ap.parse_args(argv)
    rows = measure((a.only,) if a.only else CASES, a.max_wall, a.simai)
    for r in rows:
        print(line(r), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
