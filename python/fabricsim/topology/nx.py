"""Export any network to a networkx MultiGraph (parallel links kept as separate edges)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec.network import Network

if TYPE_CHECKING:
    import networkx as nx


def to_networkx(network: Network) -> "nx.MultiGraph":
    """Nodes carry `kind` and `latency_ps`; edges carry `rate_bps`, `delay_ps` and their link index as key.
    networkx is imported here, on first use, to keep `import fabricsim` fast."""
    import networkx as nx

    g = nx.MultiGraph()
    for n in network.nodes:
        g.add_node(n.name, kind=n.kind, latency_ps=n.latency)
    for i, l in enumerate(network.links):
        g.add_edge(l.a, l.b, key=i, rate_bps=l.rate, delay_ps=l.delay)
    return g
