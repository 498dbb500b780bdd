"""Hybrid fidelity at the size of a training job (issue 30's speed targets), each case a whole process:

1. rail256: one step of a 256-GPU TP8 x DP32 job (`trace synth dp-tp --ranks 256 --tp 8 --layers 40 --hidden 5120
   --seq-len 2048`) on a rail-optimized fabric (2 SUs x 16 servers x 8 GPUs, 8 spines, 400 Gb/s, input-buffered:
   lossless). Target: hybrid <= 60 s and <= 4 GB peak RSS.
2. rail8192: the 8,192-GPU rail cluster's hierarchical all-reduce of 1 GiB (bench_fabrics.py's rail8192, NVLink
   rings in servers, trees across them). Target: hybrid <= 60 s.

Each case runs at hybrid fidelity under a wall-clock cap (--max-wall, default 60 s: the target) and reports
whether it finished, the simulated time it reached, its jumps and peak RSS; the flow engine's completion time of
the same workload is printed beside it as the scale of the whole run (a prediction of another engine, not a
reference for the hybrid's error). Usage: python benchmarks/hybrid_scale.py [--max-wall S] [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

from _cases import out

CASES = ("rail256", "rail8192")
TARGET_S = 60.0
TARGET_RSS_MB = {"rail256": 4096.0}


def _rail256(fidelity: str, max_wall: float) -> dict:
    import fabricsim
    from fabricsim.chakra import load, lower
    from fabricsim.chakra.synth import Model, data_tensor_parallel, read_comm_groups, write

    sc = fabricsim.scenario_from_dict({"topology": {"kind": "rail_optimized", "sus": 2, "servers_per_su": 16,
                                                    "gpus_per_server": 8, "spines": 8, "rate": "400Gbps",
                                                    "switch_model": "input_buffered"}})
    with tempfile.TemporaryDirectory() as d:
        traces, groups = data_tensor_parallel(Model(layers=40, hidden=5120, seq_len=2048), 32, 8)
        write(f"{d}/step", traces, groups)
        t0 = time.perf_counter()
        low = lower(load(f"{d}/step"), sc, comm_groups=read_comm_groups(f"{d}/step"))
        rec = fabricsim.run(sc, workload=low.workload, fidelity=fidelity, max_wall_s=max_wall)
    return {"wall_s": time.perf_counter() - t0, "rec": rec, "messages": low.workload.n_messages}


def _rail8192(fidelity: str, max_wall: float) -> dict:
    import fabricsim

    sc = fabricsim.Scenario.model_validate({"topology": {"kind": "rail_optimized", "sus": 32, "servers_per_su": 32,
                                                         "spines": 32}})
    w = sc.workload()
    w.collective("all_reduce", sc.topology.gpus(), 2**30, algorithm="hierarchical", packet_size=4096, local=8,
                 inter="tree")
    t0 = time.perf_counter()
    rec = fabricsim.run(sc, workload=w, fidelity=fidelity, max_wall_s=max_wall)
    return {"wall_s": time.perf_counter() - t0, "rec": rec, "messages": w.n_messages}


def case(name: str, fidelity: str, max_wall: float) -> None:
    """In a child process: run one case and print its figures as one JSON line."""
    r = {"rail256": _rail256, "rail8192": _rail8192}[name](fidelity, max_wall)
    rec = r["rec"]
    ff = rec.fast_forward or {}
    out(case=name, fidelity=fidelity, wall_s=r["wall_s"], engine_s=rec.wall_s, events=rec.events,
        finished=rec.halted is None, completion_s=rec.completion_time_s, end_s=rec.end_time_s,
        jumps=ff.get("jumps", 0), skipped_s=ff.get("skipped_s", 0.0), messages=r["messages"])


def measure(names=CASES, max_wall: float = TARGET_S) -> list[dict]:
    """Each case at hybrid (capped at `max_wall`) and at flow fidelity, each in its own process."""
    rows = []
    for name in names:
        got = {}
        for fid in ("hybrid", "flow"):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, __file__, "--case", name, "--fidelity", fid, "--max-wall", str(max_wall)],
                               capture_output=True, text=True, check=True)
            got[fid] = json.loads(p.stdout.strip().splitlines()[-1])
            got[fid]["whole_s"] = time.perf_counter() - t0
        h = got["hybrid"]
        h["flow_completion_s"] = got["flow"]["completion_s"]
        h["met"] = h["finished"] and h["whole_s"] <= TARGET_S and h["peak_rss_mb"] <= TARGET_RSS_MB.get(name, 1e18)
        rows.append(h)
    return rows


def line(r: dict) -> str:
    flow_ms = r["flow_completion_s"] * 1e3
    if r["finished"]:
        got = f"finished in {r['whole_s']:.1f} s (completion {r['completion_s'] * 1e3:.3f} ms)"
    else:
        got = (f"unfinished after {r['whole_s']:.0f} s: {r['end_s'] * 1e3:.3f} ms simulated of the flow engine's "
               f"{flow_ms:.1f} ms")
    return (f"{r['case']}: hybrid {got}, {r['jumps']} jumps, {r['events'] / 1e6:.0f} M events, "
            f"{r['peak_rss_mb']:.0f} MB peak; target <= {TARGET_S:g} s" + ("" if r["met"] else ": MISSED"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-wall", type=float, default=TARGET_S, help="wall-clock cap per hybrid run (s)")
    ap.add_argument("--only", choices=CASES, default=None)
    ap.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)
    ap.add_argument("--fidelity", default="hybrid", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.case:
        case(a.case, a.fidelity, a.max_wall)
        return
    for r in measure([a.only] if a.only else CASES, a.max_wall):
        print(line(r), flush=True)


if __name__ == "__main__":
    main()
