"""Issue 34's acceptance "oblivious spraying on a k = 8 fat-tree permutation reaches >= 95% of bisection, where
per-flow ECMP loses to collisions (state both figures)".

Workload and fabric (htsim_uec's, benchmarks/vs_uet_htsim.py): the permutation of uet-htsim's
benchmarks/data/uet_htsim/perm_128n_2MiB_seed1.cm (128 connections, every host sends one and receives one; 3 stay
under one edge switch, 12 more inside one pod, 113 cross the core), each message 4 MiB instead of the file's 2 MiB
so that the steady window below holds 31 bins; fat_tree3 k = 8, every link 100 Gb/s and 1 us, output-queued
switches of 178,450 B per port (htsim_uec's 1 BDP) and packet limit off; the UEC MTU 4,150 B with a 64 B header.

The ideal, by hand. A k-ary fat tree (k = 8: k^3/4 = 128 hosts, k^2/4 = 16 cores) has full bisection bandwidth:
every layer (edge up, aggregation up, core down, aggregation down) has k^3/4 x 100 Gb/s, so there is a routing of any
permutation that runs every flow at its NIC's 100 Gb/s at once. That is 128 x 100 Gb/s = 12.8 Tb/s on the wire, and
with 4,086 B of payload in every 4,150 B packet, I = 12,800 x 4,086 / 4,150 = 12,602.6 Gb/s of payload delivered.
(ACKs of 64 B run the other way on the same full-duplex links, under 1% of the data's bytes; the ideal ignores
them, so it is a little generous.)

The measured rate. `measure.throughput_interval = "10us"` bins the payload delivered at the receivers; "steady" is
the mean of the bins from 20 us (the first windows are in flight) to the first message's completion (after it the
offered load falls). A 4 MiB message at line rate takes 4,194,304 x 4,150 / 4,086 x 8 / 100 Gb/s = 340.8 us, so the
window holds about 31 full bins.

Figures (fabricsim, seed 1; the same runs at the brief's 16 MiB per flow in brackets):
- the transport out of the way (`cc = "none"`, a fixed window of 525,852 B = 3 BDP, so only the routing limits):
  oblivious spraying over 4,096 entropies 96.2% of I [97.4%]; over 64 entropies 91.6% [91.6%]; per-flow ECMP
  (`spray = "ecmp"`) 44.5% [44.8%].
- htsim_uec's defaults (NSCC, 64 entropies, max window 1.5 BDP): oblivious 87.3% [87.3%], ECMP 50.7% [51.8%],
  REPS 91.2% [91.1%] (REPS is not run here), and its default balancer MIXED (fabricsim's default `spray` too:
  EVs that came back unmarked first, else the bitmap's cycle that skips penalised ones) 93.4% [93.6%]. At 16 MiB
  with oblivious spraying htsim_uec itself finishes its flows between 1,375 and 2,044 us, median 1,512 us;
  fabricsim 1,373 / 2,142 / 1,536 us.

Why ECMP loses, roughly: the 4 hosts under an edge switch hash their flows onto its 4 uplinks independently, so
they use on average 4 x (1 - (3/4)^4) = 2.73 of them: the edge layer alone caps a hash-placed permutation at about
68% of I, and the aggregation and core layers (4 x 4 paths between pods) collide again, so the steady mean lands
well under that.

Why the defaults fall below the even spray (recorded, not derived): the 64 entropies are hashed onto the 4 x 4
inter-pod paths (and 4 intra-pod ones), about 4 per path but unevenly (a binomial count, so some paths carry twice
the mean), and the heavier paths queue; NSCC's window is capped at 1.5 BDP, so once the queues along a flow's path
add half a base RTT the window, not the NIC, limits the flow. The test bounds the default run from both sides by
runs it can be compared with: above per-flow ECMP at the same defaults (spraying over 64 entropies must beat one
path per flow), and below the same 64 entropies with the window out of the way (91.6%; a 1.5-BDP window that NSCC
can only shrink does not let a flow send faster than a 3-BDP fixed one). Both inequalities hold with margins of
several points, so the band is not tuned to the figure. MIXED, which steers away from the paths that marked or
trimmed a packet, beats oblivious at the same transport, and stays below the even spray over 4,096 entropies with
the transport out of the way (it has 64 entropies and NSCC's window).
"""

import re

import numpy as np
import pytest

import fabricsim as fs
from benchmarks_path import ROOT

CM = ROOT / "benchmarks" / "data" / "uet_htsim" / "perm_128n_2MiB_seed1.cm"
K = 8
SIZE = 4 << 20  # bytes per message (the .cm file's own size is 2 MiB)
MTU, HEADER = 4150, 64
IDEAL_GBPS = 128 * 100 * (MTU - HEADER) / MTU  # 12,602.6 Gb/s of payload
BIN_US = 10
OUT_OF_THE_WAY = {"cc": "none", "max_window": 525_852}  # 3 BDP: 3 x 175,284 B (tests/test_vs_uet_htsim.py's BDP)


def host(i: int) -> str:
    """htsim's host i on fabricsim's fat_tree3 names: pod i // 16, edge (i // 4) % 4, port i % 4."""
    half = K // 2
    return f"p{i // (half * half)}.e{i // half % half}.h{i % half}"


def permutation() -> list[tuple[int, int]]:
    pat = re.compile(r"^(\d+)->(\d+) id \d+ start 0 size \d+$")
    return [(int(m[1]), int(m[2])) for m in map(pat.match, CM.read_text().splitlines()) if m]


def scenario(uec: dict) -> fs.Scenario:
    return fs.scenario_from_dict({
        "seed": 1,
        "transport": "uec",
        "topology": {"kind": "fat_tree3", "k": K, "rate": "100Gbps", "delay": "1us"},
        "queue": {"limit_bytes": 178_450, "limit_packets": "unlimited"},
        "uec": uec,
        "measure": {"throughput_interval": f"{BIN_US}us"},
        "messages": [{"name": f"f{s}_{d}", "src": host(s), "dst": host(d), "size": SIZE} for s, d in permutation()],
    })


def steady_share(uec: dict) -> float:
    """The steady delivered payload rate as a share of the ideal (see the module docstring)."""
    rec = fs.run(scenario(uec))
    assert rec.complete
    done = rec.message_completion_s()
    assert done.size == 128 and np.isfinite(done).all()
    t = rec.throughput()
    first = done.min()
    steady = t[(t.t_s >= 20e-6) & (t.t_s + BIN_US * 1e-6 <= first)]
    assert len(steady) >= 30  # the window is meaningful: 20 us to ~345 us in 10 us bins
    return float(steady.gbps.mean() / IDEAL_GBPS)


def test_the_workload_is_a_permutation_that_crosses_the_core():
    p = permutation()
    assert sorted(s for s, _ in p) == list(range(128)) == sorted(d for _, d in p)
    assert all(s != d for s, d in p)
    # Inter-pod flows have k/2 x k/2 = 16 paths, intra-pod ones 4, same-edge ones 1.
    assert sum(s // 16 != d // 16 for s, d in p) == 113
    assert sum(s // 4 == d // 4 for s, d in p) == 3
    assert IDEAL_GBPS == pytest.approx(12_602.6, abs=0.05)


def test_oblivious_spraying_reaches_95_percent_of_bisection_where_ecmp_collides():
    sprayed = steady_share(dict(OUT_OF_THE_WAY, spray="oblivious", entropies=4096))
    ecmp = steady_share(dict(OUT_OF_THE_WAY, spray="ecmp"))
    assert sprayed >= 0.95, f"sprayed {sprayed:.1%} of bisection"  # measured 96.2% (97.4% at 16 MiB)
    assert ecmp < 0.60, f"per-flow ECMP {ecmp:.1%} of bisection"  # measured 44.5% (44.8% at 16 MiB)


def test_htsim_uec_defaults_lie_between_ecmp_and_the_unhindered_spray():
    ecmp_default = steady_share({"spray": "ecmp"})  # measured 50.7%
    oblivious = steady_share({"spray": "oblivious"})  # NSCC, 64 entropies, window 1.5 BDP: measured 87.3%
    unhindered_64 = steady_share(dict(OUT_OF_THE_WAY, spray="oblivious", entropies=64))  # measured 91.6%
    assert ecmp_default < oblivious < unhindered_64
    mixed = steady_share({})  # the default balancer, htsim_uec's MIXED: measured 93.4%
    unhindered_4096 = steady_share(dict(OUT_OF_THE_WAY, spray="oblivious", entropies=4096))  # measured 96.2%
    assert oblivious < mixed < unhindered_4096
