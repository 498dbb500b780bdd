"""The topology families of issue 18 (fat_tree3, rail_optimized, dragonfly, torus, graph) and `fabricsim topology`: counts, names, routes and diameters by hand calculation, closed forms over random small instances, bad input as one line with exit 2."""

from __future__ import annotations

import json
import math
import random
import sys
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricsim.cli import main
from fabricsim.errors import FabricsimWarning, ScenarioError
from fabricsim.spec import load_scenario, scenario_from_dict
from fabricsim.spec.network import LinkDef, Network, NodeDef
from fabricsim.topology import dragonfly, fat_tree3, graph, rail_gpus, rail_optimized, to_networkx, torus
from fabricsim.topology.base import link, node
from fabricsim.topology.metrics import diameter_hops, estimate_bisection_bps, summary

ROOT = Path(__file__).resolve().parents[1]


def split(net: Network) -> tuple[list[str], list[str]]:
    return [n.name for n in net.nodes if n.kind == "host"], [n.name for n in net.nodes if n.kind == "switch"]


def check_sane(net: Network) -> None:
    """Names unique, every link between existing nodes, every host has a link, and every two hosts have a
    route (hosts at its ends only: `diameter_hops` is None otherwise)."""
    names = [n.name for n in net.nodes]
    assert len(set(names)) == len(names)
    known = set(names)
    assert all(l.a in known and l.b in known and l.a != l.b for l in net.links)
    hosts, _ = split(net)
    linked = Counter(x for l in net.links for x in (l.a, l.b))
    assert all(linked[h] >= 1 for h in hosts)
    assert len(hosts) < 2 or diameter_hops(net) is not None, "some hosts cannot reach each other"


def least_cost_paths(net: Network, src: str, dst: str) -> list[list[str]]:
    """Every least-cost route (link weights) from src to dst that does not pass through another host."""
    g = nx.Graph()
    hosts = {n.name for n in net.nodes if n.kind == "host"}
    for l in net.links:
        if not g.has_edge(l.a, l.b) or g.edges[l.a, l.b]["weight"] > l.weight:
            g.add_edge(l.a, l.b, weight=l.weight)
    g.remove_nodes_from(hosts - {src, dst})
    return list(nx.all_shortest_paths(g, src, dst, weight="weight"))


# ---- fat_tree3 ----------------------------------------------------------------------------------------------


def test_fat_tree3_counts_by_hand():
    net = fat_tree3(4, "100Gbps")
    hosts, switches = split(net)
    # k = 4: 4 pods × (2 edge + 2 aggregation) + (4/2)² = 4 cores; k³/4 = 16 hosts, 2 per edge switch.
    assert len(hosts) == 16 and len(switches) == 20
    # 16 host links + 4 pods × 2 × 2 edge–aggregation + 4 pods × 2 aggregations × 2 cores = 16 + 16 + 16.
    assert len(net.links) == 48
    hosts8, switches8 = split(fat_tree3(8, "100Gbps"))
    assert len(hosts8) == 128 and len(switches8) == 8 * 8 + 16 == 80
    assert hosts[:3] == ["p0.e0.h0", "p0.e0.h1", "p0.e1.h0"] and "p3.a1" in switches and "c3" in switches
    check_sane(net)


def test_fat_tree3_core_wiring_and_diameter():
    g = to_networkx(fat_tree3(4, "100Gbps"))
    # Core c(j·k/2 + m) links to aggregation j of every pod: c0, c1 to every a0; c2, c3 to every a1.
    assert sorted(g.neighbors("c2")) == ["p0.a1", "p1.a1", "p2.a1", "p3.a1"]
    assert sorted(g.neighbors("p2.a0")) == ["c0", "c1", "p2.e0", "p2.e1"]
    assert {g.nodes[n]["layer"] for n in ("p0.e0.h0", "p0.e0", "p0.a0", "c0")} == {0, 1, 2, 3}
    # Host, edge, aggregation, core, aggregation, edge, host: 6 links between pods (4 within a pod, 2 on an edge).
    assert diameter_hops(fat_tree3(4, "100Gbps")) == 6


def test_fat_tree3_oversubscription():
    net = fat_tree3(4, "100Gbps", oversubscription=3)
    hosts, switches = split(net)
    assert len(hosts) == 4 * 2 * 6 and len(switches) == 20, "round(3·4/2) = 6 hosts per edge switch, up-links stay 2"
    assert len(split(fat_tree3(6, "1Gbps", oversubscription=0.5))[0]) == 6 * 3 * 2, "0.5·3 = 1.5 rounds up to 2"
    with pytest.raises(ScenarioError, match=r"^fat_tree3: oversubscription: .*rounds to no host"):
        fat_tree3(4, "1Gbps", oversubscription=0.2)
    with pytest.raises(ScenarioError, match=r"^fat_tree3: oversubscription: Input should be greater than 0"):
        fat_tree3(4, "1Gbps", oversubscription=-1)


def test_odd_k_is_an_error_naming_topology_k(tmp_path, capsys):
    with pytest.raises(ScenarioError, match=r"^fat_tree3: k: must be even"):
        fat_tree3(5, "100Gbps")
    f = tmp_path / "odd.toml"
    f.write_text('[topology]\nkind = "fat_tree3"\nk = 5\nrate = "100Gbps"\n')
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{f}: topology.k: must be even") and err.rstrip().endswith("got 5")


# ---- rail_optimized -----------------------------------------------------------------------------------------


def test_rail_optimized_counts_names_and_weights():
    net = rail_optimized(sus=2, servers_per_su=3, spines=2, gpus_per_server=4)
    hosts, switches = split(net)
    assert hosts == rail_gpus(2, 3, 4) and len(hosts) == 24 and hosts[5] == "su0.s1.g1"
    # 24 NICs + 6 NVSwitches + 2 SUs × 4 rails + 2 spines.
    assert len(switches) == 24 + 6 + 8 + 2
    by = Counter((l.weight, l.rate) for l in net.links)
    assert by[(1, 4000 * 10**9)] == 24, "GPU–NIC: nvlink_rate + rate"
    assert by[(3, 3600 * 10**9)] == 24, "NVSwitch–NIC: NVLink, weight 3"
    # NIC–rail 24, then each of 8 rail switches has ⌈3/2⌉ = 2 links to each of 2 spines: 32.
    assert by[(2, 400 * 10**9)] == 24 + 32
    g = to_networkx(net)
    assert g.degree("su1.rail3") == 3 + 4 and g.number_of_edges("su1.rail3", "spine1") == 2
    assert g.degree("su0.s2.g3.nic") == 3 and g.degree("su0.s2.g3") == 1
    nvs = {n.name: n.latency for n in net.nodes if n.name.endswith(".nvs")}
    assert set(nvs.values()) == {300_000} and len(nvs) == 6
    assert all(n.latency == 0 for n in net.nodes if n.name.endswith(".nic"))
    assert {l.delay for l in net.links if l.weight == 2} == {500_000} and {l.delay for l in net.links if l.weight != 2} == {0}
    check_sane(net)


def test_rail_optimized_pxn_policy_lists_every_server_by_rail():
    net = rail_optimized(sus=2, servers_per_su=2, spines=1, gpus_per_server=2)
    assert net.policy.kind == "pxn" and len(net.policy.servers) == 4
    s = net.policy.servers[3]
    assert s.nvswitch == "su1.s1.nvs" and s.gpus == ["su1.s1.g0", "su1.s1.g1"]
    assert s.nics == ["su1.s1.g0.nic", "su1.s1.g1.nic"]
    assert rail_optimized(sus=1, servers_per_su=2, spines=1, cross_rail="spine").policy is None


def test_rail_least_cost_routes_keep_nvlink_inside_servers():
    """Weights 2 (network) and 3 (NVLink): within a server the route is GPU, NIC, NVSwitch, NIC, GPU (cost 8,
    against 10 over a spine); between servers no least-cost route crosses an NVSwitch, in either tier."""
    for tiers in (1, 2):
        net = rail_optimized(sus=2, servers_per_su=2, spines=1, gpus_per_server=2, spine_tiers=tiers)
        assert least_cost_paths(net, "su0.s0.g0", "su0.s0.g1") == [
            ["su0.s0.g0", "su0.s0.g0.nic", "su0.s0.nvs", "su0.s0.g1.nic", "su0.s0.g1"]]
        gpus = rail_gpus(2, 2, 2)
        for a in gpus:
            for b in gpus:
                if a.rsplit(".", 1)[0] != b.rsplit(".", 1)[0]:
                    assert all(not x.endswith(".nvs") for p in least_cost_paths(net, a, b) for x in p), (a, b)
    # Same rail, same SU: GPU, NIC, rail, NIC, GPU; tier 2 across SUs: up to a core and down (8 links).
    assert diameter_hops(rail_optimized(sus=2, servers_per_su=2, spines=1, gpus_per_server=2)) == 6
    assert diameter_hops(rail_optimized(sus=2, servers_per_su=2, spines=1, gpus_per_server=2, spine_tiers=2)) == 8


def test_rail_two_tiers_counts():
    net = rail_optimized(sus=3, servers_per_su=4, spines=2, gpus_per_server=2, spine_tiers=2)
    _, switches = split(net)
    cores = [s for s in switches if s.startswith("core")]
    assert len(cores) == 2 * 2, "gpus_per_server·⌈servers_per_su/spines⌉ = 2·2 cores"
    assert len([s for s in switches if ".spine" in s]) == 3 * 2
    g = to_networkx(net)
    # An SU spine: 2 rails × 2 parallel links down, one link to each of 4 cores up.
    assert g.degree("su2.spine1") == 4 + 4 and g.number_of_edges("su2.rail0", "su2.spine1") == 2
    check_sane(net)


def test_rail_8192_gpus_counts():
    """The flow engine's target cluster: 32 SUs × 32 servers × 8 GPUs = 8,192 GPUs on 1,024 servers (its build time
    is measured in benchmarks/bench_fabrics.py, rail8192, not here)."""
    net = rail_optimized(sus=32, servers_per_su=32, spines=32)
    assert len(split(net)[0]) == 8192 and len(net.policy.servers) == 1024


# ---- dragonfly ----------------------------------------------------------------------------------------------


def test_dragonfly_counts_and_diameter_by_hand():
    net = dragonfly(p=2, a=4, h=2, g=9, rate="100Gbps")
    hosts, routers = split(net)
    assert len(hosts) == 72 and len(routers) == 36 and hosts[0] == "g0.r0.h0" and routers[-1] == "g8.r3"
    local = [l for l in net.links if l.weight == 1 and ".h" not in l.a]
    glob = [l for l in net.links if l.weight == 3]
    # 9 groups × C(4, 2) = 6 local links; one global link per pair of groups: C(9, 2) = 36 (8 ports per group).
    assert len(local) == 54 and len(glob) == 36
    assert Counter(tuple(sorted((l.a.split(".")[0], l.b.split(".")[0]))) for l in glob).most_common(1)[0][1] == 1
    # Longest host-to-host route: host, router, (local) router, (global) router, (local) router, host = 5 links:
    # a router reaches h·1 = 2 of the 8 other groups directly, so some pair needs a local hop at both ends.
    assert diameter_hops(net) == 5
    check_sane(net)


def test_dragonfly_least_cost_is_minimal_routing():
    """Global links weigh 3: every least-cost route between groups takes exactly one global link."""
    net = dragonfly(p=1, a=4, h=2, g=9, rate="1Gbps")
    weight = {frozenset((l.a, l.b)): l.weight for l in net.links}
    hosts, _ = split(net)
    for a in hosts[::5]:
        for b in hosts[::3]:
            if a.split(".")[0] != b.split(".")[0]:
                for p in least_cost_paths(net, a, b):
                    assert sum(weight[frozenset(e)] == 3 for e in zip(p, p[1:])) == 1, p


def test_dragonfly_fewer_groups_and_valiant():
    # a·h = 8 ports, g = 4: two full rounds of 3 offsets and a partial round of r = 2 ports, of which only the
    # offset-2 port has a peer: groups 2 apart get 3 links, the others 2; 1 port per group stays unused.
    glob = [l for l in dragonfly(p=1, a=4, h=2, g=4, rate="1Gbps").links if l.weight == 3]
    per_pair = Counter(tuple(sorted((l.a.split(".")[0], l.b.split(".")[0]))) for l in glob)
    assert per_pair[("g0", "g2")] == per_pair[("g1", "g3")] == 3 and per_pair[("g0", "g1")] == 2
    assert len(glob) == (4 * 8 - 4 * 1) // 2
    net = dragonfly(p=1, a=2, h=1, rate="1Gbps", routing="valiant")
    assert net.policy.kind == "valiant" and net.policy.groups[2] == ["g2.r0", "g2.r1"] and len(net.policy.groups) == 3


def test_dragonfly_bad_input():
    with pytest.raises(ScenarioError, match=r"^dragonfly: routing: UGAL \(adaptive\) routing is not supported; the "
                                            r"supported routings are 'minimal' and 'valiant'$"):
        dragonfly(p=1, a=2, h=1, rate="1Gbps", routing="ugal")
    with pytest.raises(ScenarioError, match=r"^dragonfly: g: must be from 2 to a·h \+ 1 = 3 .*got 4$"):
        dragonfly(p=1, a=2, h=1, g=4, rate="1Gbps")
    with pytest.raises(ScenarioError, match=r"got 1$"):
        dragonfly(p=1, a=2, h=1, g=1, rate="1Gbps")


def test_dragonfly_ugal_in_a_scenario_is_one_line(tmp_path, capsys):
    f = tmp_path / "df.toml"
    f.write_text('[topology]\nkind = "dragonfly"\np = 1\na = 2\nh = 1\nrate = "10Gbps"\nrouting = "ugal"\n')
    assert main(["topology", str(f)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == (f"{f}: topology.routing: UGAL (adaptive) routing is not supported; the "
                                         "supported routings are 'minimal' and 'valiant'\n")


# ---- torus --------------------------------------------------------------------------------------------------


def test_torus_counts_names_and_policy():
    net = torus([4, 4, 4], "100Gbps")
    hosts, routers = split(net)
    assert len(routers) == 64 and len(hosts) == 64 and hosts[0] == "r0.0.0.h0"
    router_links = [l for l in net.links if ".h" not in l.a]
    assert len(router_links) == 192 and len(net.links) == 192 + 64
    g = to_networkx(net)
    assert sorted(g.neighbors("r0.0.0")) == sorted(["r1.0.0", "r3.0.0", "r0.1.0", "r0.3.0", "r0.0.1", "r0.0.3",
                                                     "r0.0.0.h0"])
    assert net.policy.kind == "dimension_order" and net.policy.dims == [4, 4, 4]
    # Linear order, first dimension fastest: i = x + 4·(y + 4·z).
    assert net.policy.routers[1] == "r1.0.0" and net.policy.routers[4] == "r0.1.0" and net.policy.routers[16] == "r0.0.1"
    # Host, router, 2 + 2 + 2 hops (half of each ring of 4), router, host.
    assert diameter_hops(net) == 8
    check_sane(net)


def test_torus_small_dimensions_and_hosts():
    net = torus([2, 3], "1Gbps", hosts_per_router=2)
    g = to_networkx(net)
    assert g.number_of_edges("r0.0", "r1.0") == 1, "a dimension of size 2 is one link, not two"
    assert len([l for l in net.links if ".h" not in l.a]) == 3 + 2 * 3
    assert split(net)[0][:2] == ["r0.0.h0", "r0.0.h1"]
    assert len([l for l in torus([1, 3], "1Gbps").links if ".h" not in l.a]) == 3, "size 1: no link"
    with pytest.raises(ScenarioError, match=r"^torus: dims: a torus has 2 or 3 dimensions, got 4"):
        torus([2, 2, 2, 2], "1Gbps")


# ---- closed forms over random small instances ----------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([2, 4, 6]), st.sampled_from([1, 2, 1.5]))
def test_fat_tree3_closed_forms(k, r):
    net = fat_tree3(k, "1Gbps", oversubscription=r)
    hosts, switches = split(net)
    hpe = math.floor(r * k / 2 + 0.5)
    assert len(hosts) == k * (k // 2) * hpe and len(switches) == k * k + k * k // 4
    assert len(net.links) == len(hosts) + k ** 3 // 2
    assert diameter_hops(net) == 6
    check_sane(net)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), st.data())
def test_dragonfly_closed_forms(p, a, h, data):
    g = data.draw(st.integers(2, a * h + 1))
    net = dragonfly(p=p, a=a, h=h, g=g, rate="1Gbps")
    hosts, routers = split(net)
    assert len(hosts) == g * a * p and len(routers) == g * a
    rounds, r = divmod(a * h, g - 1)
    unused = min(r, g - 1 - r)
    assert len([l for l in net.links if l.weight == 3]) == g * (a * h - unused) // 2
    assert len([l for l in net.links if l.weight == 1]) == g * a * p + g * a * (a - 1) // 2
    pairs = Counter(tuple(sorted((l.a.split(".")[0], l.b.split(".")[0]))) for l in net.links if l.weight == 3)
    assert len(pairs) == g * (g - 1) // 2 and set(pairs.values()) <= {rounds, rounds + 1}
    d = diameter_hops(net)
    # At most local, global, local; a full dragonfly with a ≥ 2 has a router pair needing all three (a router
    # links directly to h of the a·h other groups, and the one link to another group lands on one of its routers).
    assert d <= 5 and (d == 5 or not (a >= 2 and g == a * h + 1))
    check_sane(net)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=2, max_size=3), st.integers(1, 2))
def test_torus_closed_forms(dims, hpr):
    net = torus(dims, "1Gbps", hosts_per_router=hpr)
    hosts, routers = split(net)
    n = math.prod(dims)
    assert len(routers) == n and len(hosts) == n * hpr
    ring = {1: 0, 2: 1}
    assert len(net.links) == n * hpr + sum(n // d * ring.get(d, d) for d in dims)
    # Host, router, ⌊d/2⌋ hops along each dimension, router, host; a lone router's two hosts: 2 links.
    assert diameter_hops(net) == (None if n * hpr == 1 else 2 + sum(d // 2 for d in dims))
    assert net.policy.routers == [r for r in routers]
    check_sane(net)


# ---- diameter: against a brute force ---------------------------------------------------------------------------


def brute_diameter(net: Network) -> int | None:
    """Most links on a least-cost route between two hosts, by networkx: Dijkstra from each host over a directed
    copy in which hosts are only sources (`o`) and sinks (`i`), then the longest path over tight edges."""
    kinds = {n.name: n.kind for n in net.nodes}
    d = nx.DiGraph()
    hosts = [n for n, k in kinds.items() if k == "host"]
    for l in net.links:
        for a, b in ((l.a, l.b), (l.b, l.a)):
            u = ("o", a) if kinds[a] == "host" else a
            v = ("i", b) if kinds[b] == "host" else b
            if not d.has_edge(u, v) or d.edges[u, v]["w"] > l.weight:
                d.add_edge(u, v, w=l.weight)
    worst = 0
    for h in hosts:
        if ("o", h) not in d:
            return None
        dist = nx.single_source_dijkstra_path_length(d, ("o", h), weight="w")
        hops = {("o", h): 0}
        for v in sorted(dist, key=dist.get)[1:]:
            hops[v] = max(hops[u] + 1 for u in d.predecessors(v) if u in dist and dist[u] + d.edges[u, v]["w"] == dist[v])
        for h2 in hosts:
            if h2 != h:
                if ("i", h2) not in dist:
                    return None
                worst = max(worst, hops[("i", h2)])
    return worst


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**9), st.sampled_from([0, 4]), st.sampled_from([1, 7, 4_000_000]))
def test_diameter_matches_brute_force(seed, relay, chunk):
    """Random small networks: weights 1–3, multi-NIC hosts, host–host links, now and then a host cut off;
    with and without relays, in chunks of 1, 7 and all NICs."""
    import fabricsim.topology.metrics as m

    rnd = random.Random(seed)
    S = [f"s{i}" for i in range(rnd.randint(1, 7))]
    H = [f"h{i}" for i in range(rnd.randint(2, 7))]
    links = [link(S[i], S[rnd.randrange(i)], 1, 0, rnd.randint(1, 3)) for i in range(1, len(S))]
    if len(S) > 1:
        links += [link(*rnd.sample(S, 2), 1, 0, rnd.randint(1, 3)) for _ in range(rnd.randint(0, 5))]
    links += [link(h, rnd.choice(S), 1, 0, rnd.randint(1, 3)) for h in H for _ in range(rnd.choice([1, 1, 2]))]
    if rnd.random() < 0.3:
        links.append(link(*rnd.sample(H, 2), 1, 0, rnd.randint(1, 5)))
    if rnd.random() < 0.15:
        links = [l for l in links if H[0] not in (l.a, l.b)]
    net = Network(nodes=[node(h, "host") for h in H] + [node(s, "switch") for s in S], links=links)
    saved = m.RELAY_DEGREE, m.CHUNK_CELLS
    m.RELAY_DEGREE, m.CHUNK_CELLS = relay, chunk
    try:
        assert diameter_hops(net) == brute_diameter(net)
    finally:
        m.RELAY_DEGREE, m.CHUNK_CELLS = saved


def test_diameter_of_families_matches_brute_force():
    for net in (rail_optimized(sus=2, servers_per_su=3, spines=2, gpus_per_server=3, spine_tiers=2),
                dragonfly(p=1, a=3, h=2, g=5, rate="1Gbps"), torus([3, 4], "1Gbps"), fat_tree3(2, "1Gbps")):
        assert diameter_hops(net) == brute_diameter(net)


# ---- bisection ---------------------------------------------------------------------------------------------------


def test_bisection_closed_forms_by_hand():
    from fabricsim.topology.registry import FAMILIES

    fam = {f.model_fields["kind"].annotation.__args__[0]: f for f in FAMILIES}

    def bis(**kw) -> float:
        return fam[kw["kind"]](**kw).bisection_bps() / 1e9

    # k = 4: cutting 2 of 4 pods crosses 2 pods × 2 aggregations × 2 cores = 8 links = k³/8.
    assert bis(kind="fat_tree3", k=4, rate="100Gbps") == 800
    assert bis(kind="fat_tree3", k=4, rate="100Gbps", oversubscription=2) == 800, "hosts/2 = 16 > 8"
    # 9 groups: groups 0–3 against 4–8, one global link per pair: 4 × 5 = 20.
    assert bis(kind="dragonfly", p=2, a=4, h=2, rate="100Gbps") == 2000
    # 4×4×4: a cut across a ring of 4 crosses 2 links, 16 rings.
    assert bis(kind="torus", dims=[4, 4, 4], rate="100Gbps") == 3200
    # 2×5: the even dimension (size 2, one link per ring): 5 links.
    assert bis(kind="torus", dims=[2, 5], rate="1Gbps", hosts_per_router=2) == 5
    # Rail: non-blocking, half the GPUs' NICs.
    assert bis(kind="rail_optimized", sus=2, servers_per_su=2, spines=1) == 16 * 400
    # Kernighan–Lin then exact min cut agrees where the cut is clear.
    assert estimate_bisection_bps(fat_tree3(4, "100Gbps")) == 800 * 10**9
    assert estimate_bisection_bps(torus([4, 4], "1Gbps")) == 8 * 10**9


# ---- graph files ----------------------------------------------------------------------------------------------------

GRAPHML = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="k" for="node" attr.name="kind" attr.type="string"/>
  <key id="r" for="edge" attr.name="rate" attr.type="string"/>
  <key id="w" for="edge" attr.name="weight" attr.type="int"><default>1</default></key>
  <graph edgedefault="undirected">
    <node id="a"><data key="k">host</data></node>
    <node id="s"><data key="k">switch</data></node>
    <node id="t"><data key="k">switch</data></node>
    <node id="b"><data key="k">host</data></node>
    <edge source="a" target="s"><data key="r">100Gbps</data></edge>
    <edge source="s" target="t"><data key="r">400Gbps</data><data key="w">2</data></edge>
    <edge source="t" target="b"><data key="r">100Gbps</data></edge>
  </graph>
</graphml>
"""


def test_graphml_relative_to_the_scenario_file(tmp_path, monkeypatch):
    (tmp_path / "fabrics").mkdir()
    (tmp_path / "fabrics" / "topo.graphml").write_text(GRAPHML)
    (tmp_path / "runs").mkdir()
    scen = tmp_path / "runs" / "s.toml"
    scen.write_text('[topology]\nkind = "graph"\nfile = "../fabrics/topo.graphml"\nswitch_latency = "1us"\n')
    monkeypatch.chdir(tmp_path / "runs" / "..")  # not the scenario's folder
    net = load_scenario(str(scen.relative_to(tmp_path))).topology.network()
    assert [n.name for n in net.nodes] == ["a", "s", "t", "b"]
    assert [(l.a, l.b, l.rate, l.weight) for l in net.links] == [
        ("a", "s", 100 * 10**9, 1), ("s", "t", 400 * 10**9, 2), ("t", "b", 100 * 10**9, 1)]
    assert net.nodes[1].latency == 10**6 and net.nodes[0].latency == 0
    assert diameter_hops(net) == 3


@pytest.mark.parametrize("command", ["validate", "topology"])
def test_graphml_edge_to_a_missing_node_is_one_line(tmp_path, capsys, command):
    (tmp_path / "topo.graphml").write_text(GRAPHML.replace('target="b"', 'target="zz"'))
    scen = tmp_path / "s.toml"
    scen.write_text('[topology]\nkind = "graph"\nfile = "topo.graphml"\n')
    assert main([command, str(scen)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == f"{tmp_path / 'topo.graphml'}: edge ('t', 'zz'): node 'zz' does not exist\n"


@pytest.mark.parametrize("text, where, reason", [
    (GRAPHML.replace('<data key="k">switch</data></node>\n    <node id="b">', '</node>\n    <node id="b">'),
     "node 't'", 'needs the attribute kind = "host" or "switch"'),
    (GRAPHML.replace(">switch<", ">router<", 1), "node 's'", "got 'router'"),
    (GRAPHML.replace('<data key="r">400Gbps</data>', ""), "edge ('s', 't')", "needs the attribute rate"),
    (GRAPHML.replace(">400Gbps<", ">fast<"), "edge ('s', 't')", "rate: unknown rate unit 'fast' in 'fast'"),
    (GRAPHML.replace('<data key="w">2</data>', '<data key="w">0</data>'), "edge ('s', 't')", "weight must be"),
    (GRAPHML.replace('id="t"', 'id="s"'), "node 's'", "declared twice"),
    (GRAPHML.replace("</graph>", "<edge source='a' target='a'><data key='r'>1Gbps</data></edge></graph>"),
     "edge ('a', 'a')", "two different nodes"),
    (GRAPHML.replace("<graph ", "<graph <"), "line 6", "GraphML syntax error"),
])
def test_bad_graph_files_name_the_file_and_the_element(tmp_path, text, where, reason):
    f = tmp_path / "g.graphml"
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        graph(str(f))
    assert str(e.value).startswith(f"{f}: {where}: ") and reason in str(e.value)


def test_graph_file_field_errors(tmp_path):
    with pytest.raises(ScenarioError, match=r"^s.toml: topology.file: cannot read 'nope.json' .*no such file"):
        scenario_from_dict({"topology": {"kind": "graph", "file": "nope.json"}}, "s.toml")
    (tmp_path / "g.gml").write_text("graph []")
    with pytest.raises(ScenarioError, match=r"topology.file: .*must be .json .* or .graphml"):
        scenario_from_dict({"topology": {"kind": "graph", "file": str(tmp_path / "g.gml")}}, "s.toml")


def test_graph_rate_without_unit_warns_naming_the_edge(tmp_path):
    f = tmp_path / "g.json"
    f.write_text(json.dumps({"nodes": [{"id": "a", "kind": "host"}, {"id": "s", "kind": "switch"}],
                             "links": [{"source": "a", "target": "s", "rate": 100}]}))
    with pytest.warns(FabricsimWarning, match=r"g.json: edge \('a', 's'\): rate = 100 means 100 bit/s"):
        assert graph(str(f)).links[0].rate == 100


@pytest.mark.parametrize("fmt", ["json", "graphml"])
def test_round_trip_through_networkx_files(tmp_path, fmt):
    """to_networkx, then node_link_data as JSON (or write_graphml), then the graph family: the same nodes and
    links in the same order (a link's ends may swap), so the same counts."""
    for net in (rail_optimized(sus=2, servers_per_su=2, spines=1, gpus_per_server=2), torus([3, 2], "1Gbps", delay="1us"),
                dragonfly(p=1, a=3, h=1, rate="10Gbps")):
        g = to_networkx(net)
        f = tmp_path / f"net.{fmt}"
        if fmt == "json":
            f.write_text(json.dumps(nx.node_link_data(g)))
        else:
            nx.write_graphml(g, f)
        back = graph(str(f))
        assert back.nodes == net.nodes
        assert [({l.a, l.b}, l.rate, l.delay, l.weight) for l in back.links] == \
               [({l.a, l.b}, l.rate, l.delay, l.weight) for l in net.links]
        assert summary_counts(back) == summary_counts(net)


def summary_counts(net: Network) -> tuple[int, int, int]:
    hosts, switches = split(net)
    return len(hosts), len(switches), len(net.links)


# ---- fabricsim topology ------------------------------------------------------------------------------------------


def test_topology_json_keys_and_values(tmp_path, capsys):
    f = tmp_path / "ft.toml"
    f.write_text('[topology]\nkind = "fat_tree3"\nk = 4\nrate = "100Gbps"\n')
    assert main(["topology", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"scenario", "kind", "hosts", "switches", "links", "diameter_hops", "bisection_gbps",
                        "bisection", "policy"}
    assert out == {"scenario": str(f), "kind": "fat_tree3", "hosts": 16, "switches": 20, "links": 48,
                   "diameter_hops": 6, "bisection_gbps": 800.0, "bisection": "closed form", "policy": None}


def test_topology_table_and_figure(tmp_path, capsys):
    f = tmp_path / "tor.toml"
    f.write_text('[topology]\nkind = "torus"\ndims = [4, 4]\nrate = "100Gbps"\n')
    png = tmp_path / "tor.png"
    assert main(["topology", str(f), "--figure", str(png)]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines() == [str(f), "  kind            torus", "  hosts           16", "  switches        16",
                                    "  links           48", "  diameter_hops   6", "  bisection_gbps  800 (closed form)",
                                    "  policy          dimension_order"]
    assert out.err == f"wrote {png}\n" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_topology_estimate_for_a_family_without_closed_form(tmp_path, capsys):
    f = tmp_path / "ls.toml"
    f.write_text('[topology]\nkind = "leaf_spine"\nracks = 4\nhosts_per_rack = 4\nspines = 2\n'
                 'host_rate = "100Gbps"\nfabric_rate = "100Gbps"\n')
    assert main(["topology", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # 4 racks of 4 hosts, 2 uplinks per leaf: two racks against two cross 2 leaves × 2 uplinks = 4 links.
    assert out["bisection"] == "estimate" and out["bisection_gbps"] == 400.0 and out["diameter_hops"] == 4


def test_topology_refuses_to_draw_a_large_fabric(tmp_path, capsys):
    f = tmp_path / "big.toml"
    f.write_text('[topology]\nkind = "fat_tree3"\nk = 20\nrate = "100Gbps"\n')
    assert main(["topology", str(f), "--figure", str(tmp_path / "x.png")]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1
    assert "draws fabrics of at most 2,000 nodes" in out.err and "has 2,500" in out.err
    assert not (tmp_path / "x.png").exists()
    assert main(["topology", str(f), "--figure", str(tmp_path / "x.txt")]) == 2
    assert "no image suffix" in capsys.readouterr().err


# ---- construction ----------------------------------------------------------------------------------------------------


def test_trusted_objects_equal_validated_ones():
    assert link("a", "b", 400 * 10**9, 500_000, 2) == LinkDef(a="a", b="b", rate="400Gbps", delay="500ns", weight=2)
    assert node("s", "switch", 300_000, "input_buffered", 4096) == NodeDef(
        name="s", kind="switch", latency="300ns", model="input_buffered", input_buffer=4096)
    assert node("h", "host") == NodeDef(name="h", kind="host")
    net = fat_tree3(2, "1Gbps", delay="1us")
    assert Network.model_validate(net.model_dump()) == net


def test_family_models_build_what_their_builders_build():
    cases = [dict(kind="fat_tree3", k=4, rate="10Gbps", delay="1us", switch_latency="100ns"),
             dict(kind="rail_optimized", sus=1, servers_per_su=2, spines=1, gpus_per_server=2, spine_tiers=2,
                  cross_rail="spine"),
             dict(kind="dragonfly", p=1, a=2, h=1, g=3, rate="10Gbps", routing="valiant"),
             dict(kind="torus", dims=[3, 3, 2], rate="10Gbps", hosts_per_router=2)]
    builders = {"fat_tree3": fat_tree3, "rail_optimized": rail_optimized, "dragonfly": dragonfly, "torus": torus}
    for c in cases:
        sc = scenario_from_dict({"topology": c}, "x.toml")
        args = {k: v for k, v in c.items() if k != "kind"}
        assert sc.topology.network() == builders[c["kind"]](**args), c["kind"]
        assert summary(sc.topology)["hosts"] > 0


def test_reference_documents_every_new_field():
    sys.path.insert(0, str(ROOT / "docs"))
    import gen_reference

    new = ("FatTree3Topology", "RailOptimizedTopology", "DragonflyTopology", "TorusTopology", "GraphTopology")
    assert [u for u in gen_reference.undocumented() if u.split(".")[0] in new] == []
    text = gen_reference.render()
    assert all(f'kind = "{k}"' in text for k in ("fat_tree3", "rail_optimized", "dragonfly", "torus", "graph"))


# ---- through the engine ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("topo, src, dst, switch_hops", [
    # edge, aggregation, core, aggregation, edge
    (dict(kind="fat_tree3", k=4, rate="10Gbps"), "p0.e0.h0", "p3.e1.h1", 5),
    # PXN: NIC 0, NVSwitch, the sender's NIC 1, rail 1, SU spine, core, SU spine, rail 1, the receiver's NIC 1
    (dict(kind="rail_optimized", sus=2, servers_per_su=1, spines=1, gpus_per_server=2, spine_tiers=2),
     "su0.s0.g0", "su1.s0.g1", 9),
    # No PXN: NIC 0, rail 0, SU spine, core, SU spine, rail 1, NIC 1 (up rail 0 and down rail 1)
    (dict(kind="rail_optimized", sus=2, servers_per_su=1, spines=1, gpus_per_server=2, spine_tiers=2,
          cross_rail="spine"), "su0.s0.g0", "su1.s0.g1", 7),
    # r0.0 to r2.2 on a 4×4 torus: two hops along x, then two along y: 5 routers
    (dict(kind="torus", dims=[4, 4], rate="10Gbps"), "r0.0.h0", "r2.2.h0", 5),
])
def test_engine_routes_on_the_families(topo, src, dst, switch_hops):
    from fabricsim.engine import run

    sc = scenario_from_dict({"topology": topo, "messages": [{"name": "m", "src": src, "dst": dst, "size": "64KiB"}]},
                            "x.toml")
    rec = run(sc)
    assert rec.complete and rec.hops == {switch_hops: rec.packets["rx"]}


def test_engine_valiant_takes_longer_routes_than_minimal():
    from fabricsim.engine import run

    def hops(routing: str) -> Counter:
        sc = scenario_from_dict({"topology": dict(kind="dragonfly", p=1, a=2, h=2, rate="10Gbps", routing=routing),
                                 "messages": [{"name": f"m{i}", "src": "g0.r0.h0", "dst": f"g{i}.r1.h0", "size": "8KiB"}
                                              for i in range(1, 5)]}, "x.toml")
        rec = run(sc)
        assert rec.complete
        return Counter(rec.hops)

    def mean(c: Counter) -> float:
        return sum(k * n for k, n in c.items()) / sum(c.values())

    minimal, valiant = hops("minimal"), hops("valiant")
    # g0.r0 links to g1 and g2 directly (2 routers); g3 and g4 hang off g0.r1: local, global, local (4 routers).
    assert minimal == Counter({2: minimal[2], 4: minimal[4]}) and minimal[2] == minimal[4]
    assert mean(valiant) > mean(minimal), (minimal, valiant)
