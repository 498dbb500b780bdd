"""Engine throughput: packet-hop events per second on a fixed scenario (64 flows x 100 000 packets x 4 hops).

Leaf-spine with 2 leaves of 64 hosts (100 Gb/s) and 8 spines (800 Gb/s links, 1 us), per-flow ECMP, DropTail
FIFO egress queues, full per-flow statistics; host i on leaf 0 sends one message of 100 000 x 1 KiB packets
(+64 B header) to host i on leaf 1. Every packet crosses 4 links; each link hop is 2 events (serialisation
end, arrival). Usage: python benchmarks/bench_engine.py [--packets N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

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
    ap.add_argument("--packets", type=int, default=100_000, help="packets per flow (default 100000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the median is reported (default 3)")
    args = ap.parse_args()
    sc = scenario(args.packets)
    rates, walls = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        r = fabricsim.run(sc)
        walls.append(time.perf_counter() - t0)
        rates.append(r.events / r.wall_s)
    pk = r.packets
    print(f"machine: {os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}, one core used")
    print(f"scenario: 64 flows x {args.packets} packets x 4 hops; {r.events:,} events, {pk['rx']:,} packets delivered, "
          f"{pk['dropped']} dropped, completion {r.completion_time_s * 1e3:.3f} ms simulated")
    print(f"engine: {statistics.median(rates) / 1e6:.2f} M events/s (median of {args.repeat}; "
          f"min {min(rates) / 1e6:.2f}, max {max(rates) / 1e6:.2f})")
    print(f"whole call incl. spec conversion and record: {statistics.median(walls):.3f} s")


if __name__ == "__main__":
    main()
