"""The topology families a scenario names by `kind`: explicit nodes and links, or a builder's parameters."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Union

from pydantic import Field

from ..units import Duration
from .base import PositiveInt, PositiveRate, PositiveSize, _Model
from .network import LinkDef, Network, NodeDef, SwitchModelName


class CustomTopology(_Model):
    """Nodes and links given one by one."""

    kind: Literal["custom"]
    nodes: list[NodeDef] = Field(min_length=1)
    links: list[LinkDef] = Field(min_length=1)

    def network(self) -> Network:
        return Network(nodes=self.nodes, links=self.links)


class _BuiltTopology(_Model):
    """A topology made by a builder in `topology.builders` (named by `_builder`), with the switch settings
    every builder shares."""

    _builder: ClassVar[str]
    switch_latency: Duration = 0
    switch_model: SwitchModelName = "output_queued"
    input_buffer: PositiveSize = 128 * 1024

    def network(self) -> Network:
        from ..topology import builders

        # Durations and rates dump with explicit units, so the builder reads them back exactly.
        return getattr(builders, self._builder)(**self.model_dump(exclude={"kind"}))


class DumbbellTopology(_BuiltTopology):
    """N senders -> leaf -> bottleneck -> spine -> receiver (the incast bottleneck of study 001)."""

    _builder: ClassVar[str] = "dumbbell"
    kind: Literal["dumbbell"]
    senders: PositiveInt = 8
    access_rate: PositiveRate = 1_000_000_000
    access_delay: Duration = 2_000_000_000
    bottleneck_rate: PositiveRate = 100_000_000
    bottleneck_delay: Duration = 5_000_000_000


class LeafSpineTopology(_BuiltTopology):
    """Racks of hosts under one or more leaves each, every leaf linked to every spine."""

    _builder: ClassVar[str] = "leaf_spine"
    kind: Literal["leaf_spine"]
    racks: PositiveInt
    hosts_per_rack: PositiveInt
    spines: PositiveInt
    leaves_per_rack: PositiveInt = 1
    nics_per_host: PositiveInt = 1
    parallel_links: PositiveInt = 1
    host_rate: PositiveRate
    fabric_rate: PositiveRate
    host_delay: Duration = 0
    fabric_delay: Duration = 0


class FatTreeTopology(_BuiltTopology):
    """Two-level fat-tree FT(2;M0,M1): M1 leaves with M0 servers and M0 uplinks each, M0 spines."""

    _builder: ClassVar[str] = "fat_tree"
    kind: Literal["fat_tree"]
    m0: PositiveInt
    m1: PositiveInt
    rate: PositiveRate
    delay: Duration = 0


TopologyDef = Annotated[
    Union[CustomTopology, DumbbellTopology, LeafSpineTopology, FatTreeTopology], Field(discriminator="kind")
]
