"""The `leaf_spine` topology family: racks of hosts under one or more leaves each, every leaf linked to every spine."""

from __future__ import annotations

from typing import Literal

from ..spec.base import LinkRate, PositiveInt
from ..spec.network import Network
from ..units import Duration
from .base import BuiltTopology, family_network


class LeafSpineTopology(BuiltTopology):
    """Racks of hosts under one or more leaves each, every leaf linked to every spine."""

    kind: Literal["leaf_spine"]
    racks: PositiveInt
    """Number of racks; hosts are h0… in rack order."""
    hosts_per_rack: PositiveInt
    """Hosts in each rack."""
    spines: PositiveInt
    """Number of spine switches; every leaf links to every spine."""
    leaves_per_rack: PositiveInt = 1
    """Leaf switches per rack; NIC k of a host attaches to leaf k mod leaves_per_rack of its rack."""
    nics_per_host: PositiveInt = 1
    """NICs (links to its leaves) per host."""
    parallel_links: PositiveInt = 1
    """Links between each leaf and each spine."""
    host_rate: LinkRate
    """Rate of each host–leaf link."""
    fabric_rate: LinkRate
    """Rate of each leaf–spine link."""
    host_delay: Duration = 0
    """Propagation delay of each host–leaf link."""
    fabric_delay: Duration = 0
    """Propagation delay of each leaf–spine link."""
    spine_arbiter: Literal["round_robin", "fifo"] = "round_robin"
    """How an input-buffered spine's output picks among its inputs: "round_robin" (one packet per input in
    turn) or "fifo" (the oldest head packet first)."""



def leaf_spine(
    racks: int,
    hosts_per_rack: int,
    spines: int,
    host_rate: int | str,
    fabric_rate: int | str,
    leaves_per_rack: int = 1,
    nics_per_host: int = 1,
    parallel_links: int = 1,
    host_delay: int | str = 0,
    fabric_delay: int | str = 0,
    switch_latency: int | str = 0,
    switch_model: str = "output_queued",
    input_buffer: int | str = 128 * 1024,
    spine_arbiter: str = "round_robin",
) -> Network:
    """A two-tier leaf-spine.

    Hosts h0..h{racks*hosts_per_rack-1} in rack order; leaves `leaf{r}` (or `leaf{r}_{j}` with several per
    rack); spines `spine{s}`. NIC k of a host attaches to leaf k mod leaves_per_rack of its rack, so a
    Vela-like server (4 NICs, 2 leaves) has NICs 0, 2 on its rack's first leaf and 1, 3 on the second.
    Every leaf links to every spine with `parallel_links` links. Host links come first (host by host,
    NIC by NIC), then fabric links (leaf by leaf, spine by spine)."""
    return family_network("leaf_spine", locals())
