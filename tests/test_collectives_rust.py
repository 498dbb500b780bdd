"""Collectives generated in the engine: closed forms in both engines, and records identical to the Python
reference generators (`fabricsim.collectives.patterns`) run as message rows."""

import pytest

import fabricsim
from fabricsim import ScenarioError, Workload
from fabricsim.collectives import all_reduce, all_to_all, ring_all_reduce, split_barriers

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


def vela():
    from fabricsim.collectives.run import vela_topology

    return fabricsim.scenario_from_dict({"topology": vela_topology(), "routing": {"ecmp": "per_message"}})


def rows_record(sc, items, fidelity):
    msgs, bars = split_barriers(items)
    full = fabricsim.scenario_from_dict({**sc.model_dump(exclude={"messages", "barriers"}), "messages": msgs,
                                         "barriers": bars})
    return fabricsim.run(full, fidelity=fidelity).legacy_dict()


def without_names(rec):
    rec = dict(rec, flows={k: v for k, v in rec["flows"].items() if k != "name"})
    rec.pop("wall_s")
    return rec


CASES = [
    ("all_to_all", "shift", dict(order="sent"), lambda eps, s: all_to_all(eps, s, order="sent")),
    ("all_to_all", "shift", dict(order="delivered", barrier=True), lambda eps, s: all_to_all(eps, s, order="delivered", barrier=True)),
    ("all_reduce", "shift", dict(), lambda eps, s: all_reduce(eps, s)),
    ("all_reduce", "shift", dict(barrier=True), lambda eps, s: all_reduce(eps, s, barrier=True)),
    ("all_reduce", "ring", dict(), lambda eps, s: ring_all_reduce(eps, s)),
]


@pytest.mark.parametrize("kind,algorithm,opts,reference", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_engine_generator_gives_the_reference_record(kind, algorithm, opts, reference, fidelity):
    eps = [("h0", 0), ("h1", 0), ("h6", 0), ("h12", 2)]
    size = 64 * 1024
    sc = vela()
    wl = Workload(sc)
    wl.collective(kind, eps, size, algorithm=algorithm, **opts)
    got = fabricsim.run(sc, workload=wl, fidelity=fidelity).legacy_dict()
    want = rows_record(sc, reference(eps, size), fidelity)
    # The engine's collective adds one completion barrier after the reference's messages: no traffic, no time.
    assert without_names(got) == without_names(want)


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


@pytest.mark.parametrize("preset,pattern,opts", [("4n_2r_6n_2r", "all-reduce", {}), ("8n_2r", "all-to-all", {"barrier": True}),
                                                 ("6n_3r", "all-gather", {"interfaces": 4}), ("4n_2r", "ring-all-reduce", {})])
def test_study_scenarios_from_the_engine_equal_the_reference(preset, pattern, opts):
    # Study 000's scenarios use the engine's collectives; the named Python-built rows give the same record.
    from fabricsim.collectives.run import collective_messages, collective_scenario
    from fabricsim.studies.orchestration import preset_groups

    g = preset_groups(preset)
    a = fabricsim.run(collective_scenario(g, [pattern] * len(g), 0.25, seed=2, **opts)).legacy_dict()
    b = fabricsim.run(collective_messages(g, [pattern] * len(g), 0.25, seed=2, **opts)).legacy_dict()
    assert without_names(a) == without_names(b)
