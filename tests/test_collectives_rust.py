"""Collectives generated in the engine: closed forms in both engines, and the frozen reference DAGs: the
fixtures crates/fabricsim-core/tests/fixtures/collectives/*.json hold, lowered to wire rows, the messages and
dependencies of the Python generators the engine's shift and ring collectives were written to reproduce (208
cases; the Rust test `expand_reproduces_the_python_generators` checks `expand` against them). The Python
generators are gone; `fabricsim.collectives.all_to_all` & co. now name the engine's rows, and must lower to the
same wire rows."""

import json
from pathlib import Path

import pytest

import fabricsim
from fabricsim import ScenarioError, Workload
from fabricsim.collectives import all_gather, all_to_all, reduce_scatter, ring_all_reduce, shift_all_reduce, split_barriers

NS = 1000  # ps


def star(n):
    """n hosts on one non-blocking switch, 8 Gb/s links (1 byte per ns), no propagation or switch latency."""
    return fabricsim.scenario_from_dict({
        "topology": {"kind": "custom", "nodes": [{"name": f"h{i}", "kind": "host"} for i in range(n)]
                     + [{"name": "s", "kind": "switch"}],
                     "links": [{"a": f"h{i}", "b": "s", "rate": "8Gbps"} for i in range(n)]},
    })


@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_ring_all_reduce_closed_form(fidelity):
    # n = 4 ranks, S = 4 MB, B = 1 B/ns, 1000 B packets. 2(n−1) = 6 steps of S/n = 1 MB; in every step each
    # host link carries one message each way, so a step takes S/(nB) = 1 ms plus the store-and-forward of its
    # last 1000 B packet at the switch (1 us). Total 2(n−1)/n · S/B + 6 · 1 us = 6 ms + 6 us.
    sc = star(4)
    wl = Workload(sc)
    wl.collective("all_reduce", [f"h{i}" for i in range(4)], 4_000_000, algorithm="ring", packet_size=1000)
    rec = fabricsim.run(sc, workload=wl, fidelity=fidelity)
    assert rec.scalars["completion_ps"] == (6_000_000 + 6 * 1000) * NS
    assert wl.n_messages == 24


@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_halving_doubling_all_reduce_closed_form(fidelity):
    # n = 4, S = 4 MB: recursive halving sends S/2 then S/4 to partners i^2, i^1; recursive doubling sends S/4
    # then S/2 to i^1, i^2. Each step is a pairwise exchange (one message per link direction), so step times
    # are size/B + 1 us: (2 + 1 + 1 + 2) ms + 4 us = 2(n−1)/n · S/B + 2 log2(n) · 1 us = 6.004 ms.
    sc = star(4)
    wl = Workload(sc)
    wl.collective("all_reduce", [f"h{i}" for i in range(4)], 4_000_000, algorithm="halving_doubling", packet_size=1000)
    rec = fabricsim.run(sc, workload=wl, fidelity=fidelity)
    assert rec.scalars["completion_ps"] == (6_000_000 + 4 * 1000) * NS
    assert wl.n_messages == 16


def test_collective_done_barrier_gates_compute():
    # The barrier a collective returns completes with its last delivery (6.006 ms, as above); a 1 ms compute
    # step after it ends at 7.006 ms.
    sc = star(4)
    wl = Workload(sc)
    done = wl.collective("all_reduce", [f"h{i}" for i in range(4)], 4_000_000, packet_size=1000)
    wl.compute("h0", 1_000_000 * NS, after=[[done]])
    rec = fabricsim.run(sc, workload=wl)
    assert rec.scalars["completion_ps"] == (7_000_000 + 6 * 1000) * NS


FIXTURES = Path(__file__).resolve().parent.parent / "crates/fabricsim-core/tests/fixtures/collectives"
FIXTURE_TOPOLOGY = {"kind": "leaf_spine", "racks": 2, "leaves_per_rack": 2, "hosts_per_rack": 4, "nics_per_host": 4,
                    "spines": 2, "host_rate": "100Gbps", "fabric_rate": "100Gbps"}
"""The fabric the fixtures' rank indices and rows refer to."""
GENERATORS = {("all_to_all", "shift"): all_to_all, ("all_gather", "shift"): all_gather, ("all_reduce", "shift"): shift_all_reduce,
              ("all_reduce", "ring"): ring_all_reduce, ("reduce_scatter", "ring"): reduce_scatter}


def test_generators_lower_to_the_frozen_reference_rows():
    # Every fixture case through the public generator (named dicts, `after` lists by name, barrier entries),
    # lowered as every scenario is: the same message rows [src, src_nic, dst, dst_nic, size, deps, sent_deps,
    # barriers], barrier rows, packet and header bytes.
    names = [n.name for n in fabricsim.scenario_from_dict({"topology": FIXTURE_TOPOLOGY}).topology.network().nodes]
    cases = msgs_total = 0
    for path in sorted(FIXTURES.glob("*.json")):
        for c in json.loads(path.read_text())["cases"]:
            spec = c["spec"]
            opts = {k: spec[k] for k in ("barrier", "order", "ag_order") if k in spec}
            items = GENERATORS[spec["kind"], spec["algorithm"]](
                [(names[i], nic) for i, nic in spec["ranks"]], spec["size_bytes"], packet=spec["packet_bytes"],
                header=spec["header_bytes"], **opts)
            msgs, bars = split_barriers(items)
            wire = fabricsim.scenario_from_dict({"topology": FIXTURE_TOPOLOGY, "messages": msgs, "barriers": bars}).to_wire()
            got = [[m["src"], m["src_nic"], m["dst"], m["dst_nic"], m["size_bytes"], m["deps"], m["sent_deps"], m["barriers"]]
                   for m in wire["messages"]]
            where = f"{path.name}: {c['label']}"
            assert got == c["messages"], where
            assert [[b["deps"], b["barriers"]] for b in wire["barriers"]] == c["barriers"], where
            assert {(m["packet_bytes"], m["header_bytes"]) for m in wire["messages"]} == {(spec["packet_bytes"], spec["header_bytes"])}, where
            cases += 1
            msgs_total += len(got)
    assert (cases, msgs_total) == (208, 5630)


def test_bad_collectives_are_named():
    sc = star(4)
    wl = Workload(sc)
    with pytest.raises(ScenarioError, match="shift"):
        wl.collective("broadcast", ["h0", "h1"], 100, algorithm="shift")
    with pytest.raises(ScenarioError, match="power-of-two number of ranks, got 3"):
        wl.collective("all_reduce", ["h0", "h1", "h2"], 100, algorithm="halving_doubling")
    with pytest.raises(ScenarioError, match=r"unknown node 'h9'"):
        wl.collective("all_reduce", ["h0", "h9"], 100)
    with pytest.raises(ScenarioError, match=r"collective\.ranks\[1\]|node index 99 out of range"):
        wl.collective("all_reduce", [0, 99], 100)
    with pytest.raises(ScenarioError, match=r"root"):
        wl.collective("broadcast", ["h0", "h1"], 100, root=5)
    assert wl.n_messages == 0, "rejected collectives leave nothing behind"
