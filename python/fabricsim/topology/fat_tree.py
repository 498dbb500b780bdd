"""The `fat_tree` topology family: the two-level fat-tree FT(2;M0,M1) (its failure model is `topology.fattree`)."""

from __future__ import annotations

from typing import Literal

from ..spec.base import LinkRate, PositiveInt
from ..spec.network import Network
from ..units import Duration
from .base import BuiltTopology, family_network


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



def fat_tree(m0: int, m1: int, rate: int | str, delay: int | str = 0, switch_latency: int | str = 0,
             switch_model: str = "output_queued", input_buffer: int | str = 128 * 1024) -> Network:
    """FT(2;M0,M1): M1 leaves `leaf{l}`, each with M0 servers h{l*M0+j} and one uplink to each of M0 spines
    `spine{s}` (so a leaf has M0 down and M0 up ports: a non-blocking two-level fat-tree)."""
    return family_network("fat_tree", locals())
