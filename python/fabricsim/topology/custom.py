"""The `custom` topology family: nodes and links given one by one."""

from __future__ import annotations

from typing import Literal


from ..spec.base import _Model
from ..spec.network import LinkDef, Network, NodeDef


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
    """A network from explicit nodes ({name, kind, latency}) and links ({a, b, rate, delay})."""
    return Network(nodes=[NodeDef.model_validate(n) for n in nodes], links=[LinkDef.model_validate(l) for l in links])
