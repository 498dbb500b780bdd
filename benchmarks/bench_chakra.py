"""Chakra trace speed: parsing and lowering a 1,000,000-node trace, and a synthesized 64-rank data-parallel step.

Cases (issue 16's targets):
1. a synthesized 1,000,000-node trace (data parallel, 2 ranks, many layers) parses and lowers in ≤ 3 s with
   ≤ 1 GB peak RSS;
2. a 64-rank data-parallel step (24 layers, per-layer gradient all-reduce overlapping the backward compute)
   on a 2-level fat-tree FT(2;8,8) of 100 Gb/s runs in ≤ 30 s at packet fidelity and ≤ 1 s at flow fidelity, and
   (issue 30) in ≤ 3 s at hybrid fidelity, load + lower + run.
3. (issue 33) the 256-GPU TP8 x DP32 step (`trace synth dp-tp --ranks 256 --tp 8 --layers 40 --hidden 5120
   --seq-len 2048` on a rail-optimized fabric of 2 SUs x 16 servers x 8 GPUs, 8 spines, 400 Gb/s, lossless) at
   flow fidelity as whole `fabricsim trace run --json` processes, without and with `--perfetto --timeline` (the
   default aggregated detail): the Perfetto JSON ≤ 50 MB and the exports add ≤ 20% to the wall time.
Each case runs in its own process (peak RSS is its own). Usage: python benchmarks/bench_chakra.py [--only exports]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from _cases import child, out


def big() -> None:
    import fabricsim
    from fabricsim.chakra import load, lower
    from fabricsim.chakra.synth import Model, data_parallel, write

    with tempfile.TemporaryDirectory() as d:
        # 2 ranks × (2·L compute + L all-reduce + 1) nodes = 1,000,000 with L = 166,666 layers (+ rounding).
        traces = data_parallel(Model(layers=166_666, hidden=1024, seq_len=512, forward_us=10.0), 2)
        nodes = sum(len(t["id"]) for t in traces)
        write(f"{d}/big", traces)
        sc = fabricsim.scenario_from_dict({"topology": {"kind": "leaf_spine", "racks": 1, "hosts_per_rack": 2, "spines": 1,
                                                        "host_rate": "100Gbps", "fabric_rate": "100Gbps"}})
        t0 = time.perf_counter()
        tr = load(f"{d}/big")
        t1 = time.perf_counter()
        lower(tr, sc)
        t2 = time.perf_counter()
    out(case="big", nodes=nodes, parse_s=t1 - t0, lower_s=t2 - t1)


def dp64(fidelity: str) -> None:
    import fabricsim
    from fabricsim.chakra import load, lower
    from fabricsim.chakra.synth import Model, data_parallel, write

    with tempfile.TemporaryDirectory() as d:
        write(f"{d}/dp", data_parallel(Model(layers=24, hidden=4096, seq_len=2048), 64))
        sc = fabricsim.scenario_from_dict({"topology": {"kind": "fat_tree", "m0": 8, "m1": 8, "rate": "100Gbps"},
                                           "routing": {"ecmp": "per_message"}, "queue": {"limit_packets": "unlimited"}})
        t0 = time.perf_counter()
        low = lower(load(f"{d}/dp"), sc, packet_size=4096)
        rec = fabricsim.run(sc, workload=low.workload, fidelity=fidelity)
        dt = time.perf_counter() - t0
    out(case=f"dp64_{fidelity}", total_s=dt, engine_s=rec.wall_s, events=rec.events, step_ms=rec.completion_time_s * 1e3,
        messages=low.workload.n_messages)


RAIL256 = """[topology]
kind = "rail_optimized"
sus = 2
servers_per_su = 16
gpus_per_server = 8
spines = 8
rate = "400Gbps"
switch_model = "input_buffered"
"""


def _cli(args: list[str]) -> tuple[float, float]:
    """Run `fabricsim ARGS` as a whole process: (wall s, peak RSS MB)."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "fabricsim.cli", *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"fabricsim {' '.join(args)} failed"
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def exports_split(d: str) -> None:
    """In a child: the 256-GPU step loaded, lowered and run at flow fidelity, then each export timed in the same
    process (a split that the machine's load disturbs less than two whole processes do)."""
    import fabricsim
    from fabricsim.chakra import load, lower
    from fabricsim.chakra import timeline as tl
    from fabricsim.chakra.synth import read_comm_groups
    from fabricsim.spec import load_scenario

    t0 = time.perf_counter()
    sc = load_scenario(f"{d}/rail.toml")
    low = lower(load(f"{d}/step"), sc, comm_groups=read_comm_groups(f"{d}/step"))
    rec = fabricsim.run(sc, workload=low.workload, fidelity="flow")
    t1 = time.perf_counter()
    got = tl.perfetto(low, rec, f"{d}/p2.json")
    t2 = time.perf_counter()
    tl.gantt(low, rec, f"{d}/t2.png")
    t3 = time.perf_counter()
    out(case="exports_split", run_s=t1 - t0, perfetto_s=t2 - t1, timeline_s=t3 - t2, events=got["events"],
        bytes=got["bytes"], messages=low.workload.n_messages)


def exports() -> None:
    """Case 3: the 256-GPU step's trace run with and without the exports, alternating, twice each; then the
    in-process split."""
    with tempfile.TemporaryDirectory() as d:
        _cli(["trace", "synth", "dp-tp", "--ranks", "256", "--tp", "8", "--layers", "40", "--hidden", "5120",
              "--seq-len", "2048", "--out", f"{d}/step"])
        with open(f"{d}/rail.toml", "w") as f:
            f.write(RAIL256)
        run = ["trace", "run", f"{d}/step", "--fabric", f"{d}/rail.toml", "--fidelity", "flow", "--json", "--quiet"]
        plain, full = [], []
        for _ in range(2):
            plain.append(_cli(run))
            full.append(_cli([*run, "--perfetto", f"{d}/p.json", "--timeline", f"{d}/t.png"]))
        size = os.path.getsize(f"{d}/p.json")
        r = subprocess.run([sys.executable, __file__, "exports_split", d], capture_output=True, text=True, check=True)
        x = json.loads(r.stdout.strip().splitlines()[-1])
    best = lambda xs: min(x[0] for x in xs)  # noqa: E731  the least-disturbed run of each
    print(f"3. 256-GPU TP8 x DP32 step, flow, trace run --json: {best(plain):.1f} s without exports, {best(full):.1f} s "
          f"with --perfetto and --timeline (+{(best(full) / best(plain) - 1) * 100:.0f}%, target <= 20%); Perfetto JSON "
          f"{size / 1e6:.1f} MB (target <= 50 MB); peak RSS {max(x[1] for x in plain):.0f} MB / "
          f"{max(x[1] for x in full):.0f} MB")
    exp = x["perfetto_s"] + x["timeline_s"]
    print(f"   in one process: load + lower + run {x['run_s']:.1f} s ({x['messages']:,} messages), then the Perfetto "
          f"trace {x['perfetto_s']:.2f} s ({x['events']:,} events, {x['bytes'] / 1e6:.1f} MB) and the timeline "
          f"{x['timeline_s']:.2f} s: {exp:.2f} s, +{exp / best(plain) * 100:.0f}% of the command's wall time "
          f"(+{exp / x['run_s'] * 100:.0f}% of load + lower + run alone)")


def main() -> None:
    if sys.argv[1:] == ["--only", "exports"]:
        exports()
        return
    b = child(__file__, "big")
    print(f"1. {b['nodes']:,}-node trace: parse {b['parse_s']:.2f} s + lower {b['lower_s']:.2f} s = "
          f"{b['parse_s'] + b['lower_s']:.2f} s (target <= 3 s), peak RSS {b['peak_rss_mb']:.0f} MB (target <= 1024)")
    for fid, target in (("flow", 1), ("packet", 30), ("hybrid", 3)):
        x = child(__file__, f"dp64_{fid}")
        print(f"2. 64-rank DP step, 24 layers, FT(2;8,8), {fid}: {x['total_s']:.2f} s (engine {x['engine_s']:.2f} s, "
              f"{x['events']:,} events, {x['messages']:,} messages; target <= {target} s), step {x['step_ms']:.2f} ms")
    exports()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "exports_split":
        exports_split(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] != "--only":
        {"big": big, "dp64_flow": lambda: dp64("flow"), "dp64_packet": lambda: dp64("packet"),
         "dp64_hybrid": lambda: dp64("hybrid")}[sys.argv[1]]()
    else:
        main()
