"""Collective generators (message counts, order, dependencies), placements, and the send-completion dependency."""

import pytest

import fabricsim
from fabricsim import scenario_from_dict
from fabricsim.collectives import (
    all_gather,
    all_to_all,
    reduce_scatter,
    ring_all_reduce,
    shift_all_reduce,
    split_barriers,
)
from fabricsim.collectives import read_fabric
from fabricsim.collectives.placement import pack, spread
from fabricsim.collectives.run import collective_metrics, host_nics, host_nodes
from fabricsim.studies.orchestration import PRESETS, collective_scenario, preset_groups

NODES = [(f"h{i}", 0) for i in range(4)]


def test_all_to_all_is_n_minus_1_shift_phases():
    msgs = all_to_all(NODES, 1000)
    assert len(msgs) == 4 * 3
    # Phase k: node i sends to (i + k) mod N.
    assert [(m["src"], m["dst"]) for m in msgs[:4]] == [("h0", "h1"), ("h1", "h2"), ("h2", "h3"), ("h3", "h0")]
    # Free-running: node i's phase-2 message waits only for its own phase-1 message to be sent.
    p2 = msgs[4]
    assert p2["after"] == [] and p2["after_sent"] == ["a2a.p1.0to1"]


def test_barrier_waits_for_the_whole_previous_phase():
    items = all_to_all(NODES, 1000, barrier=True)
    msgs, bars = split_barriers(items)
    assert len(msgs) == 12 and [b["name"] for b in bars] == ["a2a.b1", "a2a.b2", "a2a.b3"]
    assert set(bars[0]["after"]) == {m["name"] for m in msgs[:4]}, "phase 1's barrier waits for phase 1"
    assert "a2a.b1" in msgs[4]["after"], "phase 2 waits for phase 1's barrier"
    # Simulated, phases cannot overlap: 3 phases of 1 MiB at 100 Gb/s, each ending before the next starts.
    rec = fabricsim.run(collective_scenario([[1, 2, 3, 4]], ["all-to-all"], 1.0, barrier=True))
    starts = rec.values("flows.start_ps")
    done = rec.values("flows.complete_ps")
    assert min(starts[4:8]) >= max(done[:4])


def test_all_reduce_is_all_to_all_then_all_gather():
    msgs = shift_all_reduce(NODES, 1000)
    assert len(msgs) == 2 * 4 * 3 == len(all_to_all(NODES, 1000)) + len(all_gather(NODES, 1000))
    first_ag = next(m for m in msgs if ".ag." in m["name"] and m["src"] == "h0")
    # Node 0's All-Gather messages all wait for every All-to-All message addressed to it (from nodes 3, 2 and 1
    # in phases 1, 2 and 3) and then leave in parallel.
    gate = sorted(["ar.a2a.p1.3to0", "ar.a2a.p2.2to0", "ar.a2a.p3.1to0"])
    assert first_ag["after"] == gate and first_ag["after_sent"] == []
    later = next(m for m in msgs if m["name"] == "ar.ag.p2.0to2")
    assert later["after"] == gate and later["after_sent"] == []
    # With back-to-back sends the All-Gather instead follows node 0's last All-to-All message out of the NIC.
    seq = shift_all_reduce(NODES, 1000, ag_order="sent")
    first = next(m for m in seq if m["name"] == "ar.ag.p1.0to1")
    assert first["after_sent"] == ["ar.a2a.p3.0to3"] and first["after"] == gate
    later = next(m for m in seq if m["name"] == "ar.ag.p2.0to2")
    assert later["after"] == [] and later["after_sent"] == ["ar.ag.p1.0to1"]


def test_ring_patterns():
    ring = ring_all_reduce(NODES, 4000)
    assert len(ring) == 2 * 3 * 4 and {m["size"] for m in ring} == {1000}
    assert ring[5]["after"] == ["ring.s0.0"], "step 1 of node 1 waits for step 0 of node 0"
    assert len(reduce_scatter(NODES, 4000)) == 3 * 4


def test_placements():
    assert len(PRESETS) == 22 + 12
    assert PRESETS["4n_3r"] == [[1, 2, 7, 13]]
    vela = read_fabric("vela")
    nics = host_nics(scenario_from_dict(vela.doc))
    nodes = host_nodes(["h0", "h0", "h0", "h1"], 1, nics, vela.nic_order)
    assert [n[0] for n in nodes] == [("h0", 0), ("h0", 2), ("h0", 1), ("h1", 0)], "leaf 0's NICs first"
    with pytest.raises(ValueError, match="server 1 has 4 NIC"):
        host_nodes(["h0"] * 5, 1, nics, vela.nic_order, ids=[1] * 5)
    assert pack(4, 4, 6) == [1, 2, 3, 4] and pack(4, 4, 6, start_rack=1) == [7, 8, 9, 10]
    assert spread(4, 4, 4, 6) == [1, 7, 13, 19] and spread(6, 3, 4, 6) == [1, 2, 7, 8, 13, 14]


def test_contention_free_all_reduce_meets_the_nic_bound():
    # 4n_1r: each node sends 3 + 3 messages of 10 MiB through one 100G NIC, all within one leaf:
    # 6 x 10 MiB x 8 / 100 Gb/s = 5.033 ms (+ a few switch latencies); 24 x 10 240 packets, all 1-hop.
    rec = fabricsim.run(collective_scenario(preset_groups("4n_1r"), ["shift-all-reduce"], 10.0))
    m = collective_metrics(rec, 4)
    assert 5.033 < m["completion_time_ms"] < 5.045
    assert rec.hops == {1: 24 * 10_240}
    assert m["dropped"] == 0


def test_after_sent_starts_the_next_message_when_the_previous_left_the_nic():
    # Two 1000-packet messages from a over one 1 Gb/s link with 1 ms delay. With after_sent the second
    # follows the first back to back: done at 2000 x 8 us + 1 ms = 17 ms. With after (delivery) it starts
    # when the first has arrived (9 ms) and lands 8 ms + 1 ms later: 18 ms.
    def scenario(dep):
        return scenario_from_dict({
            "topology": {"kind": "custom", "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
                         "links": [{"a": "a", "b": "b", "rate": "1Gbps", "delay": "1ms"}]},
            "messages": [{"name": "m1", "src": "a", "dst": "b", "size": 1_000_000, "packet_size": 1000},
                         {"name": "m2", "src": "a", "dst": "b", "size": 1_000_000, "packet_size": 1000, dep: ["m1"]}]})
    assert fabricsim.run(scenario("after_sent")).scalars["completion_ps"] == 17_000_000_000
    assert fabricsim.run(scenario("after")).scalars["completion_ps"] == 18_000_000_000


def test_collective_cli_json(capsys):
    from fabricsim.cli import main

    assert main(["collective", "--placement", "4n_1r", "--seeds", "2", "--workers", "0", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["runs"] == 2 and out["hop_packets"] == {"1": 245760.0, "3": 0.0}
    assert 5.033 < out["completion_time_ms"]["mean"] < 5.045
    assert main(["collective", "--nodes", "1", "--seeds", "1"]) == 2
    assert main(["collective", "--placement", "9n_9r"]) == 2


def test_nodes_sharing_a_server_use_leaf_0_nics_first():
    # Table III's 4n_2_2 puts two nodes on each of servers 1 and 2: NICs 0 and 2, all on the rack's first leaf.
    # A 10 MiB All-to-All is then contention-free: 3 messages per NIC, 3 x 10 MiB x 8 / 100 Gb/s = 2.517 ms,
    # all 12 x 10 240 packets 1-hop (two of them between NICs of one server).
    rec = fabricsim.run(collective_scenario(preset_groups("4n_2_2"), ["all-to-all"], 10.0))
    assert rec.hops == {1: 12 * 10_240}
    assert 2.516 < rec.completion_time_s * 1e3 < 2.525
    # 4n_4 needs all four NICs of server 1: NICs 1 and 3 hang off the second leaf, so 8 of the 12 messages
    # (those between the two leaves) cross a spine (3 hops).
    rec = fabricsim.run(collective_scenario(preset_groups("4n_4"), ["all-to-all"], 10.0))
    assert rec.hops == {1: 4 * 10_240, 3: 8 * 10_240}


def test_general_placer():
    from fabricsim.collectives.placement import placement_groups

    assert placement_groups("pack:8", 4, 6) == [[1, 2, 3, 4, 5, 6, 7, 8]]
    assert placement_groups("spread:8:4", 4, 6) == [[1, 2, 7, 8, 13, 14, 19, 20]] == PRESETS["8n_4r"]
    assert placement_groups("spread:6:2", racks=3, per_rack=4) == [[1, 2, 3, 5, 6, 7]]
    # A numbered leaf-spine fabric's own shape: vela's 4 racks x 6 servers.
    assert read_fabric("vela").placement("spread:8:4") == PRESETS["8n_4r"]
    for bad in ("pack", "pack:x", "spread:30:4", "zz"):
        with pytest.raises(ValueError):
            placement_groups(bad, 4, 6)


def test_parallel_all_gather_is_placement_insensitive_with_one_interface():
    # Each node sends its 5 blocks of 1 MiB at once through one 100G NIC: 5 x 1 MiB x 8 / 100 Gb/s = 0.419 ms
    # whether the six nodes sit in one rack or two (the leaves' uplinks are not oversubscribed by one NIC per
    # server); the spread placement only adds two switch traversals (3 us).
    for preset in ("6n_1r", "6n_2r"):
        rec = fabricsim.run(collective_scenario(preset_groups(preset), ["all-gather"], 1.0, seed=3))
        assert 0.4194 < rec.completion_time_s * 1e3 < 0.4194 + 0.006, preset


def test_endpoints_are_checked_and_names_mean_nic_0():
    # A plain host name is its NIC 0: the ring over ["h0", "h1", "h2"] is the ring over (h, 0) pairs, 2(N−1) = 4
    # steps of 3 messages of 900 // 3 = 300 bytes.
    by_name = ring_all_reduce(["h0", "h1", "h2"], 900)
    assert by_name == ring_all_reduce([("h0", 0), ("h1", 0), ("h2", 0)], 900)
    assert len(by_name) == 12 and {m["size"] for m in by_name} == {300}
    assert {(m["src"], m["src_nic"]) for m in by_name} == {("h0", 0), ("h1", 0), ("h2", 0)}
    with pytest.raises(ValueError, match=r"got the string 'h0h1'"):
        all_to_all("h0h1", 100)
    with pytest.raises(ValueError, match=r"nodes\[1\]: expected a host name or a \(host, nic\) pair"):
        all_gather([("h0", 0), ("h1", -1)], 100)
    with pytest.raises(ValueError, match=r"appears more than once"):
        shift_all_reduce(["h0", ("h0", 0)], 100)
    with pytest.raises(ValueError, match=r"at least 2 nodes, got 1"):
        reduce_scatter(["h0"], 100)
