"""ASTRA-sim's example Chakra traces side by side: ASTRA-sim's own finish times (analytical backend, stored in
shared/data/chakra/astra-sim-results.json) against fabricsim on the equivalent fabrics, both engines.

Fabrics (ASTRA-sim's configs in shared/data/chakra/astra-sim-configs):
- Ring_4chunks + Ring_{4,8}npus: NPUs in a bidirectional ring, 50 GB/s (400 Gb/s) and 500 ns per link, 4 chunks
  with 1 in flight. Here: a ring of switches with 400 Gb/s, 500 ns links, each NPU on its own switch through a
  100 Tb/s, zero-delay link (fast enough not to matter).
- HGX-H100-validated: one switch, 400 GB/s (3.2 Tb/s) and 936.25 ns per link, 4 chunks with 2 in flight. Here:
  one switch, 3.2 Tb/s NPU links of 936.25 ns.
Each fabric is run twice at packet fidelity: with the configured rates read as decimal GB/s, and in ASTRA-sim's
own units (its analytical backend at 518bd51 takes 1 GB = 2^30 B, 7.37% more bandwidth).
Collectives are rings (as configured; the all-to-all ring relays blocks hop by hop); an all-gather's comm_size is each rank's block (ASTRA-sim's reading);
1 KiB packets; unlimited (lossless) queues; --chunks 4 --chunks-in-flight 1 or 2.
Usage: python benchmarks/astra_sim_compare.py [--json]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import fabricsim
from fabricsim.chakra import load, lower

SHARED = Path(os.environ.get("FABRICSIM_SHARED") or Path(__file__).resolve().parents[2] / "shared") / "data" / "chakra"


GIB = 2**30 / 1e9
"""ASTRA-sim's analytical backend at 518bd51 reads a configured "GB/s" as 2^30 B/s (`bw_GBps_to_Bpns`:
"1 GB is 2^30 B"; later versions changed it to 10^9 B, calling the old reading a 7.37% bandwidth inflation)."""


def ring_fabric(n: int, units: float = 1.0):
    nodes = [{"name": f"h{i}", "kind": "host"} for i in range(n)] + [{"name": f"s{i}", "kind": "switch"} for i in range(n)]
    links = [{"a": f"h{i}", "b": f"s{i}", "rate": "100Tbps"} for i in range(n)]
    links += [{"a": f"s{i}", "b": f"s{(i + 1) % n}", "rate": f"{round(400e9 * units)}bps", "delay": "500ns"}
              for i in range(n)]
    return fabricsim.scenario_from_dict({"topology": {"kind": "custom", "nodes": nodes, "links": links},
                                        "queue": {"limit_packets": "unlimited"}})


def hgx_fabric(n: int, units: float = 1.0):
    nodes = [{"name": f"h{i}", "kind": "host"} for i in range(n)] + [{"name": "nvswitch", "kind": "switch"}]
    links = [{"a": f"h{i}", "b": "nvswitch", "rate": f"{round(3.2e12 * units)}bps", "delay": "936.25ns"}
             for i in range(n)]
    return fabricsim.scenario_from_dict({"topology": {"kind": "custom", "nodes": nodes, "links": links},
                                        "queue": {"limit_packets": "unlimited"}})


CONFIGS = {"Ring_4chunks": (ring_fabric, 4, 1), "HGX-H100-validated": (hgx_fabric, 4, 2)}


def main() -> None:
    peer = json.loads((SHARED / "astra-sim-results.json").read_text())
    rows = []
    for r in peer:
        if r["backend"] != "congestion_aware":
            continue
        fabric, chunks, in_flight = CONFIGS[r["config"]]
        n = r["npus"]
        pfx = SHARED / "astra-sim-examples" / r["workload"] / f"{n}npus_1MB" / r["workload"]
        unaware = next(x["finish_ns"] for x in peer if x["backend"] == "congestion_unaware" and
                       (x["workload"], x["npus"], x["config"]) == (r["workload"], n, r["config"]))
        row = {"workload": r["workload"], "npus": n, "config": r["config"], "astra_aware_ns": r["finish_ns"],
               "astra_unaware_ns": unaware}
        for fid, units, key in (("packet", 1.0, "packet"), ("flow", 1.0, "flow"), ("packet", GIB, "packet_gib")):
            sc = fabric(n, units)
            t0 = time.perf_counter()
            low = lower(load(pfx), sc, chunks=chunks, chunks_in_flight=in_flight, all_gather_size="block")
            rec = fabricsim.run(sc, workload=low.workload, fidelity=fid)
            row[f"{key}_ns"] = rec.completion_time_s * 1e9
            row[f"{key}_wall_s"] = time.perf_counter() - t0
        row["diff_packet_pct"] = 100 * (row["packet_ns"] / r["finish_ns"] - 1)
        row["diff_packet_gib_pct"] = 100 * (row["packet_gib_ns"] / r["finish_ns"] - 1)
        rows.append(row)
    if "--json" in sys.argv:
        print(json.dumps(rows))
        return
    print("| workload | NPUs | config | ASTRA-sim aware | unaware | fabricsim packet | flow | packet vs aware "
          "| packet, GB = 2^30 B | vs aware |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for x in rows:
        print(f"| {x['workload']} | {x['npus']} | {x['config']} | {x['astra_aware_ns'] / 1e3:.1f} µs | "
              f"{x['astra_unaware_ns'] / 1e3:.1f} µs | {x['packet_ns'] / 1e3:.1f} µs | {x['flow_ns'] / 1e3:.1f} µs | "
              f"{x['diff_packet_pct']:+.1f}% | {x['packet_gib_ns'] / 1e3:.1f} µs | {x['diff_packet_gib_pct']:+.1f}% |")


if __name__ == "__main__":
    main()
