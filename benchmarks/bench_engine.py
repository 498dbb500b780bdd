"""Engine throughput: events per second of the packet engine on the micro-benchmark and two study-sized cases.

micro: leaf-spine with 2 leaves of 64 hosts (100 Gb/s) and 8 spines (800 Gb/s links, 1 us), per-flow ECMP,
DropTail FIFO egress queues, full per-flow statistics; host i on leaf 0 sends one message of 100 000 x 1 KiB
packets (+64 B header) to host i on leaf 1. Every packet crosses 4 links; a link crossing is one event when the port
is idle (the arrival; the transmitter decides again only when something waits) and two when it is backlogged.
ft-a2a: the phased all-to-all of 64 KiB on FT(2;20,18) (360 hosts, 129,240 messages, a barrier between
phases), lossless input-buffered switches with credit returns, per-message ECMP.
s3: the incast study's heavy burst (8 OnOff senders at 200 Mb/s into a 100 Mb/s bottleneck for 60 s, 5.66 M
packets sent, most dropped at the bottleneck).
bare: the Rust example runs the micro-benchmark and then, in the same process, a bare event loop (the event queue
alone, as many pops and pending events) on the radix heap and on the binary heap it replaced.
Usage: python benchmarks/bench_engine.py [--packets N] [--repeat R] [--case micro|ft-a2a|s3|bare ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics

import fabricsim
from fabricsim import scenario_from_dict


def scenario(packets: int) -> fabricsim.Scenario:
    hosts = 64
    return scenario_from_dict({
        "seed": 1,
        "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": hosts, "spines": 8,
                     "host_rate": "100Gbps", "fabric_rate": "800Gbps", "host_delay": "1us", "fabric_delay": "1us"},
        "queue": {"limit_packets": 1_000_000},
        "routing": {"ecmp": "per_flow"},
        "messages": [{"name": f"m{i}", "src": f"h{i}", "dst": f"h{hosts + i}", "size": packets * 1024,
                      "packet_size": 1024, "header": 64} for i in range(hosts)],
    })


def ft_a2a() -> tuple[fabricsim.Scenario, "fabricsim.Workload"]:
    """The FT(2;20,18) phased all-to-all of 64 KiB (default packet size), lossless, per-message ECMP."""
    import numpy as np

    sc = scenario_from_dict({"topology": {"kind": "fat_tree", "m0": 20, "m1": 18, "rate": "200Gbps",
                                          "switch_model": "input_buffered"}, "routing": {"ecmp": "per_message"}})
    wl = fabricsim.Workload(sc)
    hosts = np.arange(360, dtype=np.uint32)
    prev = None
    for k in range(1, 360):
        prev = wl.barrier(wl.messages(hosts, (hosts + k) % 360, 65536, after=prev))
    return sc, wl


def s3() -> fabricsim.Scenario:
    """The incast study's S3 (heavy burst, FIFO bottleneck, 60 s)."""
    from fabricsim.studies.incast import IncastParams, build_scenario

    return build_scenario(IncastParams(transport="udp", rate_mbps=200.0, qdisc="fifo", duration_s=60.0))


def measure(case: str, repeat: int, packets: int = 100_000) -> dict:
    """Run one case `repeat` times: events, engine seconds (median), events/s (median, min, max) and, for the
    lossless cases, events per packet-hop (every delivered packet crosses switches + 1 links)."""
    if case == "micro":
        args, kw = (scenario(packets),), {}
    elif case == "ft-a2a":
        sc, wl = ft_a2a()
        args, kw = (sc,), {"workload": wl, "fidelity": "packet"}
    elif case == "s3":
        args, kw = (s3(),), {}
    else:
        raise ValueError(f"unknown case {case!r}")
    recs = [fabricsim.run(*args, **kw) for _ in range(repeat)]
    rates = [r.events / r.wall_s for r in recs]
    r = recs[0]
    hops = sum((s + 1) * n for s, n in r.hops.items())
    return {"case": case, "events": r.events, "engine_s": statistics.median(x.wall_s for x in recs),
            "rate": statistics.median(rates), "min": min(rates), "max": max(rates), "packets": r.packets,
            "crossings": hops, "crossings_rate": statistics.median(hops / x.wall_s for x in recs),
            "per_hop": r.events / hops if r.packets["dropped"] == 0 and hops else None}


def bare_loop(packets: int = 100_000) -> dict:
    """The Rust example `bench_engine`: the micro-benchmark, then in the same process the bare event loop on the
    engine's radix heap and on the binary heap it replaced (same pops, as many pending events, no queues, packets or
    statistics). Returns the three rates in events/s."""
    import re
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "fabricsim-des", "--example", "bench_engine"], cwd=root,
                   check=True)
    out = subprocess.run([str(root / "target" / "release" / "examples" / "bench_engine"), str(packets)],
                         capture_output=True, text=True, check=True).stdout
    engine = float(re.search(r"= ([\d.]+) M events/s", out).group(1)) * 1e6
    crossings = float(re.search(r"= ([\d.]+) M crossings/s", out).group(1)) * 1e6
    radix, heap = (float(x) * 1e6 for x in re.search(r"radix heap ([\d.]+) M events/s, binary heap ([\d.]+) M", out)
                   .groups())
    return {"engine": engine, "crossings": crossings, "radix": radix, "heap": heap}


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packets", type=int, default=100_000, help="micro: packets per flow (default 100000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the median is reported (default 3)")
    ap.add_argument("--case", action="append", choices=["micro", "ft-a2a", "s3", "bare"],
                    help="a case to run (repeatable; default all four; bare = the Rust example's engine run beside a "
                         "bare event loop)")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}, one core used")
    for case in args.case or ["micro", "ft-a2a", "s3", "bare"]:
        if case == "bare":
            b = bare_loop(args.packets)
            print(f"bare event loop beside the engine (Rust, one process): engine {b['engine'] / 1e6:.2f} M events/s and "
                  f"{b['crossings'] / 1e6:.2f} M link crossings/s; bare radix-heap loop {b['radix'] / 1e6:.2f} M pops/s, "
                  f"bare binary-heap loop {b['heap'] / 1e6:.2f} M pops/s: crossings/s = "
                  f"{b['crossings'] / b['heap']:.2f}x the binary-heap loop (issue 29's target: >= 1.4x)")
            continue
        m = measure(case, args.repeat, args.packets)
        pk = m["packets"]
        hop = f", {m['per_hop']:.2f} events per packet-hop" if m["per_hop"] else ""
        print(f"{case}: {m['events']:,} events ({pk['rx']:,} packets delivered, {pk['dropped']:,} dropped{hop}); "
              f"{m['rate'] / 1e6:.2f} M events/s (median of {args.repeat}; min {m['min'] / 1e6:.2f}, "
              f"max {m['max'] / 1e6:.2f}), {m['crossings_rate'] / 1e6:.2f} M link crossings/s, "
              f"engine {m['engine_s']:.2f} s")


if __name__ == "__main__":
    main()
