"""The `dumbbell` topology family: N senders -> leaf -> bottleneck -> spine -> receiver (study 001's incast)."""

from __future__ import annotations

from typing import Literal

from ..spec.base import LinkRate, PositiveInt
from ..spec.network import Network
from ..units import Duration
from .base import BuiltTopology, family_network


class DumbbellTopology(BuiltTopology):
    """N senders -> leaf -> bottleneck -> spine -> receiver (the incast bottleneck of study 001)."""

    kind: Literal["dumbbell"]
    senders: PositiveInt = 8
    """Number of senders (sender0…); each has its own access link to the leaf."""
    access_rate: LinkRate = 1_000_000_000
    """Rate of each sender's access link."""
    access_delay: Duration = 2_000_000_000
    """Propagation delay of each access link."""
    bottleneck_rate: LinkRate = 100_000_000
    """Rate of the leaf–spine bottleneck link."""
    bottleneck_delay: Duration = 5_000_000_000
    """Propagation delay of the bottleneck link."""



def dumbbell(
    senders: int = 8,
    access_rate: int | str = "1Gbps",
    access_delay: int | str = "2ms",
    bottleneck_rate: int | str = "100Mbps",
    bottleneck_delay: int | str = "5ms",
    switch_latency: int | str = 0,
    switch_model: str = "output_queued",
    input_buffer: int | str = 128 * 1024,
) -> Network:
    """The incast bottleneck: sender0..sender{N-1} -> leaf -> (bottleneck) -> spine -> receiver.

    Links are listed senders first, then leaf-spine, then spine-receiver, so every host has NIC 0 only."""
    return family_network("dumbbell", locals())
