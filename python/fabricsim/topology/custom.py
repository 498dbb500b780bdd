"""The `custom` topology family: nodes and links given one by one."""

from __future__ import annotations

from typing import Literal

from ..spec.base import _Model
from ..spec.network import LinkDef, Network, NodeDef
from .base import family_network


class CustomTopology(_Model):
    """Nodes and links given one by one."""

    kind: Literal["custom"]
    nodes: list[NodeDef]
    """Every node, host or switch ([[topology.nodes]] below)."""
    links: list[LinkDef]
    """Every full-duplex link; a host's NICs are its links, numbered in the order they are listed."""

    def network(self) -> Network:
        return Network(nodes=self.nodes, links=self.links)


def custom(nodes: list[dict | NodeDef], links: list[dict | LinkDef]) -> Network:
    """A network from explicit nodes ({name, kind, latency}) and links ({a, b, rate, delay}), read as a
    `[topology] kind = "custom"` table is (an error names `nodes[i].field`)."""
    from ..checks import instance

    instance(nodes, list, "nodes", "a list of nodes ({name, kind, latency} dicts or NodeDef)")
    instance(links, list, "links", "a list of links ({a, b, rate, delay} dicts or LinkDef)")
    as_table = lambda xs: [x.model_dump() if isinstance(x, (NodeDef, LinkDef)) else x for x in xs]  # noqa: E731
    return family_network("custom", {"nodes": as_table(nodes), "links": as_table(links)})
