"""Hierarchical all-reduce on a rail-optimized cluster (NCCL's shape), against its closed form; ring and tree across servers."""

from __future__ import annotations

import pytest

import fabricsim

S, P = 16 * 2**20, 4096  # all-reduce size per GPU, packet payload (no header)
C_NV, C_G, C_R = 3600e9, 4000e9, 400e9  # NVLink port, GPU-to-NIC link (NVLink + NIC, never the bottleneck), NIC


def scenario(servers: int, inter: str, barrier: bool = False) -> fabricsim.Scenario:
    """`servers` servers of 8 GPUs in one scalable unit, no delays or latencies (the closed form's terms are
    serialisations only), lossless switches (the NIC switch feeds the 3.6 Tb/s NVLink from a 4 Tb/s GPU link), ranks
    in rank order, 8 per server."""
    gpus = [f"su0.s{s}.g{g}" for s in range(servers) for g in range(8)]
    return fabricsim.Scenario.model_validate({
        "topology": {"kind": "rail_optimized", "sus": 1, "servers_per_su": servers, "spines": 1, "delay": 0,
                     "nvlink_latency": 0, "switch_model": "input_buffered"},
        "collectives": [{"kind": "all_reduce", "algorithm": "hierarchical", "ranks": gpus, "size": S,
                         "packet_size": P, "local": 8, "inter": inter, "barrier": barrier}],
    })


def step(m: float, bottleneck: float, others: list[float]) -> float:
    """One message of m bytes over a path: the bottleneck serialises it whole, every other link one packet
    more (store and forward)."""
    return m * 8 / bottleneck + sum(P * 8 / c for c in others)


def test_two_servers_of_eight_match_the_closed_form():
    # In-server phases: GPU -> NIC -> NVSwitch -> NIC -> GPU, the two NVLink hops at C_NV (one is the bottleneck,
    # the other adds a packet) and the two GPU links at C_G. Reduce-scatter: 7 steps of S/8; all-gather: 7 more.
    # Across the 2 servers, per rail: a ring all-reduce of the S/8 shard, 2(H-1) = 2 steps of S/16 over GPU ->
    # NIC -> rail switch -> NIC -> GPU (the two NIC links at C_R). Every step's messages use distinct links.
    intra = step(S / 8, C_NV, [C_G, C_NV, C_G])
    inter = step(S / 16, C_R, [C_G, C_R, C_G])
    want = 14 * intra + 2 * inter
    rec = fabricsim.run(scenario(2, "ring"))
    assert rec.complete
    assert rec.completion_time_s == pytest.approx(want, rel=1e-4)


def test_the_tree_across_four_servers_matches_its_closed_form():
    # Four servers: in-server rings as above (14 steps), then per rail a binomial reduce of the whole S/8 shard
    # (server 2 -> 0 and 3 -> 1, then 1 -> 0: 2 steps) and a broadcast back (0 -> 1, then 0 -> 2 and 1 -> 3:
    # 2 steps); each step's messages use distinct NIC links. With a barrier after every step: without one,
    # server 0 starts its all-gather while its NICs still broadcast, and the GPU link's two messages share one
    # input buffer at the NIC switch (a slower run, 275.6 us against 233.8 us: head-of-line blocking).
    intra = step(S / 8, C_NV, [C_G, C_NV, C_G])
    tree = step(S / 8, C_R, [C_G, C_R, C_G])
    rec = fabricsim.run(scenario(4, "tree", barrier=True))
    assert rec.complete
    assert rec.completion_time_s == pytest.approx(14 * intra + 4 * tree, rel=1e-4)


def test_local_must_make_whole_servers():
    sc = scenario(2, "ring")
    with pytest.raises(fabricsim.ScenarioError, match=r"collectives\[0\].local: 16 ranks do not make whole servers of 5"):
        fabricsim.run(sc.model_copy(update={"collectives": [sc.collectives[0].model_copy(update={"local": 5})]}))
