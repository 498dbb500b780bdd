"""The `fat_tree` topology family: the two-level fat-tree FT(2;M0,M1) (its failure model is `topology.fattree`)."""

from __future__ import annotations

from typing import Literal

from ..spec.base import LinkRate, PositiveInt
from ..spec.network import LinkDef, Network, NodeDef
from ..units import Duration
from .base import BuiltTopology


class FatTreeTopology(BuiltTopology):
    """Two-level fat-tree FT(2;M0,M1): M1 leaves with M0 servers and M0 uplinks each, M0 spines."""

    kind: Literal["fat_tree"]
    m0: PositiveInt
    """Servers per leaf, uplinks per leaf and number of spines (M0)."""
    m1: PositiveInt
    """Number of leaves (M1); hosts are M0·M1."""
    rate: LinkRate
    """Rate of every link."""
    delay: Duration = 0
    """Propagation delay of every link."""

    def network(self) -> Network:
        return self.build(fat_tree)


def fat_tree(m0: int, m1: int, rate: int | str, delay: int | str = 0, switch_latency: int | str = 0,
             switch_model: str = "output_queued", input_buffer: int | str = 128 * 1024) -> Network:
    """FT(2;M0,M1): M1 leaves `leaf{l}`, each with M0 servers h{l*M0+j} and one uplink to each of M0 spines
    `spine{s}` (so a leaf has M0 down and M0 up ports: a non-blocking two-level fat-tree)."""
    nodes = [NodeDef(name=f"h{l * m0 + j}", kind="host") for l in range(m1) for j in range(m0)]
    sw = dict(kind="switch", latency=switch_latency, model=switch_model, input_buffer=input_buffer)
    nodes += [NodeDef(name=f"leaf{l}", **sw) for l in range(m1)]
    nodes += [NodeDef(name=f"spine{s}", **sw) for s in range(m0)]
    links = [LinkDef(a=f"h{l * m0 + j}", b=f"leaf{l}", rate=rate, delay=delay) for l in range(m1) for j in range(m0)]
    links += [LinkDef(a=f"leaf{l}", b=f"spine{s}", rate=rate, delay=delay) for l in range(m1) for s in range(m0)]
    return Network(nodes=nodes, links=links)
