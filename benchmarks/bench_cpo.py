"""Study 003 speed: the design calculator, best-fit packing, and the Fig. 2 grid on the lossless packet engine.

Fig. 2 is 6 (VNIC, stack) settings × 8 message sizes × 5 packet sizes = 240 cells, each simulated under one
switch and spread over two (480 packet-engine runs of 552 messages), here in-process on one core.
Usage: python benchmarks/bench_cpo.py
"""

from __future__ import annotations

import time

from fabricsim.cpo import load
from fabricsim.cpo.locality import pack, synthetic_trace
from fabricsim.cpo.locality_sim import MSG_SIZES, PKT_SIZES, STACKS, overhead, scenario
from fabricsim.engine import run


def main() -> None:
    t0 = time.perf_counter()
    for _ in range(1000):
        load("baseline").to_json()
        load("motion").to_json()
    print(f"design calculator: {(time.perf_counter() - t0) / 2000 * 1e6:.0f} us per design")
    sizes = synthetic_trace(1)
    t0 = time.perf_counter()
    for name in ("baseline", "motion"):
        pack(load(name), sizes)
    print(f"best-fit packing of {len(sizes)} applications on both designs: {(time.perf_counter() - t0) * 1e3:.1f} ms")
    sc = scenario(32768, 256, 70, 1.25, leaves=2)
    t0 = time.perf_counter()
    rec = run(sc)
    dt = time.perf_counter() - t0
    ev = rec.events
    rate = f", {ev / dt / 1e6:.2f} M events/s including Python" if ev else ""
    print(f"largest cell (32 KiB messages in 256 B packets, spread): {dt * 1e3:.0f} ms{rate}")
    t0 = time.perf_counter()
    n = 0
    for v, pair in STACKS.items():
        for s in pair:
            for m in MSG_SIZES:
                for p in PKT_SIZES:
                    overhead(m, p, v, s)
                    n += 2
    dt = time.perf_counter() - t0
    print(f"Fig. 2 grid: {n} packet-engine runs in {dt:.1f} s ({dt / n * 1e3:.1f} ms per run, one core)")


if __name__ == "__main__":
    main()
