"""Front-door speed: workloads built as numpy columns or generated in Rust, handed to the engine in one call.

Cases (issue 15's targets, on this machine):
1. phased all-to-all on FT(2;20,18), 360 hosts, 129,240 messages of 1 MB, flow fidelity: `fabricsim.run` from
   Python (workload built from numpy, phase barriers) against the engine's own time; target ≤ 2.5×.
2. the same as a `[[collectives]]` TOML scenario: `fabricsim run --fidelity flow --json`, whole process;
   target ≤ 0.6 s.
3. a 1,000-host direct all-to-all (999,000 messages) built, validated and handed to the engine (no run);
   target ≤ 1.0 s and ≤ 400 MB RSS.
4. peak RSS of the FT(2;20,18) 64 KiB phased all-to-all at packet fidelity (lossless, per-message ECMP);
   target ≤ 200 MB.
Each case runs in a fresh process so that peak RSS is its own. Usage: python benchmarks/bench_frontdoor.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _cases import child, out

FT_TOPOLOGY = {"kind": "fat_tree", "m0": 20, "m1": 18, "rate": "200Gbps"}


def ft_a2a(size: int, fidelity: str, lossless: bool = False) -> None:
    import numpy as np

    import fabricsim

    t0 = time.perf_counter()
    topo = dict(FT_TOPOLOGY, **({"switch_model": "input_buffered"} if lossless else {}))
    sc = fabricsim.scenario_from_dict({"topology": topo, "routing": {"ecmp": "per_message" if lossless else "per_flow"}})
    wl = fabricsim.Workload(sc)
    hosts = np.arange(360, dtype=np.uint32)
    prev = None
    for k in range(1, 360):
        refs = wl.messages(hosts, (hosts + k) % 360, size, packet_size=4096, after=prev)
        prev = wl.barrier(refs)
    t1 = time.perf_counter()
    rec = fabricsim.run(sc, workload=wl, fidelity=fidelity)
    t2 = time.perf_counter()
    out(case=f"ft_a2a_{fidelity}", messages=wl.n_messages, build_s=t1 - t0, run_s=t2 - t1, total_s=t2 - t0,
        engine_s=rec.wall_s, completion_ms=rec.completion_time_s * 1e3)


def direct_a2a_1000() -> None:
    import fabricsim

    t0 = time.perf_counter()
    sc = fabricsim.scenario_from_dict({"topology": {"kind": "leaf_spine", "racks": 25, "hosts_per_rack": 40, "spines": 8,
                                                    "host_rate": "100Gbps", "fabric_rate": "400Gbps"}})
    wl = fabricsim.Workload(sc)
    wl.collective("all_to_all", [f"h{i}" for i in range(1000)], 1 << 20, algorithm="direct")
    t1 = time.perf_counter()
    n = fabricsim.validate(sc, workload=wl, fidelity="flow")
    t2 = time.perf_counter()
    out(case="direct_a2a_1000", messages=n, build_s=t1 - t0, validate_s=t2 - t1, total_s=t2 - t0)


def main() -> None:
    print(f"front door on {os.cpu_count()} cores, one process per case")
    a = child(__file__, "ft_flow")
    print(f"1. phased a2a FT(2;20,18), {a['messages']:,} x 1 MB, flow: build {a['build_s']:.2f} s + run {a['run_s']:.2f} s "
          f"= {a['total_s']:.2f} s; engine {a['engine_s']:.3f} s; ratio {a['total_s'] / a['engine_s']:.1f}x (target <= 2.5x); "
          f"peak RSS {a['peak_rss_mb']:.0f} MB")
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "a2a.toml"
        p.write_text('seed = 1\nfidelity = "flow"\n[topology]\nkind = "fat_tree"\nm0 = 20\nm1 = 18\nrate = "200Gbps"\n'
                     '[[collectives]]\nkind = "all_to_all"\nalgorithm = "shift"\nranks = "all"\nsize = "1MB"\n'
                     'packet_size = 4096\nbarrier = true\n')
        exe = Path(sys.executable).parent / "fabricsim"
        t0 = time.perf_counter()
        r = subprocess.run([str(exe), "run", str(p), "--fidelity", "flow", "--json"], capture_output=True, text=True)
        dt = time.perf_counter() - t0
        ok = r.returncode == 0
        n = len(json.loads(r.stdout)["flows"]) if ok else 0
        print(f"2. the same as [[collectives]] TOML, `fabricsim run --fidelity flow --json` whole process: {dt:.2f} s "
              f"({n:,} flow rows; target <= 0.6 s)" + ("" if ok else f" FAILED: {r.stderr.strip()[:200]}"))
    c = child(__file__, "direct1000")
    print(f"3. 1,000-host direct all-to-all, {c['messages']:,} messages built + validated: {c['total_s']:.2f} s "
          f"(build {c['build_s']:.2f}, validate {c['validate_s']:.2f}; target <= 1.0 s), peak RSS {c['peak_rss_mb']:.0f} MB "
          f"(target <= 400)")
    b = child(__file__, "ft_packet")
    print(f"4. phased a2a FT(2;20,18), 64 KiB, packet, lossless: total {b['total_s']:.1f} s, engine {b['engine_s']:.1f} s, "
          f"peak RSS {b['peak_rss_mb']:.0f} MB (target <= 200)")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        {"ft_flow": lambda: ft_a2a(1_000_000, "flow"), "ft_packet": lambda: ft_a2a(65536, "packet", lossless=True),
         "direct1000": direct_a2a_1000}[sys.argv[1]]()
    else:
        main()
