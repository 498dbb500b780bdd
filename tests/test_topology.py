"""Topology builders (sizes and NIC attachment checked by hand) and networkx export."""

import networkx as nx

from fabricsim.topology import dumbbell, fat_tree, leaf_spine, to_networkx


def kinds(net):
    hosts = [n.name for n in net.nodes if n.kind == "host"]
    switches = [n.name for n in net.nodes if n.kind == "switch"]
    return hosts, switches


def test_fat_tree_counts():
    net = fat_tree(4, 3, "100Gbps")
    hosts, switches = kinds(net)
    assert len(hosts) == 12 and len(switches) == 3 + 4
    assert len(net.links) == 12 + 12
    g = to_networkx(net)
    assert all(g.degree(f"leaf{l}") == 8 for l in range(3)), "M0 down + M0 up ports per leaf"
    assert all(g.degree(f"spine{s}") == 3 for s in range(4)), "one port per leaf"
    assert nx.is_connected(g)


def test_vela_like_leaf_spine():
    net = leaf_spine(racks=4, leaves_per_rack=2, hosts_per_rack=6, nics_per_host=4, spines=4, parallel_links=2,
                     host_rate="100Gbps", fabric_rate="100Gbps")
    hosts, switches = kinds(net)
    assert len(hosts) == 24 and len(switches) == 8 + 4
    host_links = [l for l in net.links if l.a.startswith("h")]
    fabric_links = [l for l in net.links if l.a.startswith("leaf")]
    assert len(host_links) == 96 and len(fabric_links) == 8 * 4 * 2 == 64
    h0 = [l.b for l in net.links if l.a == "h0"]
    assert h0 == ["leaf0_0", "leaf0_1", "leaf0_0", "leaf0_1"], "NICs 0, 2 on the first leaf; 1, 3 on the second"
    g = to_networkx(net)
    assert g.number_of_edges("leaf3_1", "spine2") == 2
    assert g.edges["h0", "leaf0_0", 0]["rate_bps"] == 100 * 10**9


def test_dumbbell_shape():
    net = dumbbell(senders=8)
    g = to_networkx(net)
    assert g.degree("leaf") == 9 and g.degree("spine") == 2
    assert g.edges["leaf", "spine", 8]["rate_bps"] == 100_000_000
    assert g.edges["leaf", "spine", 8]["delay_ps"] == 5_000_000_000
    assert g.edges["sender0", "leaf", 0]["delay_ps"] == 2_000_000_000


def test_registry_families_match_their_builders():
    """Every registered family has a unique kind and, in its module, a builder named like the kind taking exactly
    its other fields; its model builds the same network as the builder with the model's defaults."""
    import inspect
    import sys

    import fabricsim.topology as topology
    from fabricsim.spec import format_loc

    assert len(set(topology.KINDS)) == len(topology.FAMILIES)
    for family, kind in zip(topology.FAMILIES, topology.KINDS):
        builder = getattr(sys.modules[family.__module__], kind)
        assert set(inspect.signature(builder).parameters) == set(family.model_fields) - {"kind"}, kind
        assert format_loc(("topology", kind, "x")) == "topology.x"
    model = topology.FAMILIES[topology.KINDS.index("dumbbell")](kind="dumbbell")
    assert model.network() == dumbbell()
