"""Export any network to a networkx MultiGraph (parallel links kept as separate edges)."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from ..spec.network import Network

if TYPE_CHECKING:
    import networkx as nx


def layers(network: Network) -> dict[str, int]:
    """Each node's layer for drawing: 0 for hosts, else the fewest links from the node to a host (edge, leaf
    and rail switches 1, aggregation and spine switches 2, cores 3 on a Clos fabric); a switch that reaches
    no host is one layer above the highest. BFS from every host at once: O(nodes + links)."""
    adj: dict[str, list[str]] = {n.name: [] for n in network.nodes}
    for l in network.links:
        adj[l.a].append(l.b)
        adj[l.b].append(l.a)
    layer = {n.name: 0 for n in network.nodes if n.kind == "host"}
    todo = deque(layer)
    while todo:
        u = todo.popleft()
        for v in adj[u]:
            if v not in layer:
                layer[v] = layer[u] + 1
                todo.append(v)
    top = max(layer.values(), default=0) + 1
    return {n.name: layer.get(n.name, top) for n in network.nodes}


def to_networkx(network: Network) -> "nx.MultiGraph":
    """Nodes carry `kind`, `latency_ps` and `layer` (see `layers`); edges carry `rate_bps`, `delay_ps`,
    `weight` and their link index as key; the graph's `policy` is the routing policy's kind, if any. Written
    with `networkx.node_link_data` (JSON) or `write_graphml`, it reads back as the `graph` family. networkx is
    imported here, on first use, to keep `import fabricsim` fast. O(nodes + links)."""
    import networkx as nx

    from ..checks import instance

    instance(network, Network, "network", "a fabricsim.topology.Network (a builder's result, e.g. fat_tree(4, 3, "
             "\"100Gbps\"), or scenario.topology.network())")

    g = nx.MultiGraph()
    if network.policy is not None:
        g.graph["policy"] = network.policy.kind
    layer = layers(network)
    for n in network.nodes:
        g.add_node(n.name, kind=n.kind, latency_ps=n.latency, layer=layer[n.name])
    for i, l in enumerate(network.links):
        g.add_edge(l.a, l.b, key=i, rate_bps=l.rate, delay_ps=l.delay, weight=l.weight)
    return g
