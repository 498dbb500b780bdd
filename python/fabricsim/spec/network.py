"""The network of a scenario: nodes, links, egress queues and their disciplines, port overrides and ECMP routing.

Imports no topology builder: builders import `NodeDef`, `LinkDef` and `Network` from here.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, Strict

from ..units import Duration
from .base import LinkRate, Name, NonNegativeInt, PositiveDuration, PositiveInt, PositiveSize, Requires, Unlimited, _Model

SwitchModelName = Literal["output_queued", "input_buffered", "shared_buffer"]


class NodeDef(_Model):
    """A host or a switch; `latency` is added to every packet entering the node.

    Switches are `output_queued` (lossy egress buffers, the default), `input_buffered` (lossless: an
    `input_buffer` per input port with a virtual output queue per output, round-robin arbitration and
    credit-based flow control on the links into it) or `shared_buffer` (RoCE: one buffer shared by every port,
    accounted per ingress port, with PFC pause frames upstream; the scenario's `[pfc]` sets it up)."""

    name: Name
    kind: Literal["host", "switch"]
    latency: Duration = 0
    model: SwitchModelName = "output_queued"
    input_buffer: PositiveSize = 128 * 1024
    arbiter: Literal["round_robin", "fifo"] = "round_robin"
    """An input-buffered switch's output arbiter: "round_robin" over its inputs, or "fifo" (oldest head first)."""


class LinkDef(_Model):
    """A full-duplex point-to-point link; a host's NICs are its links, numbered in the order they are listed."""

    a: Name
    b: Name
    rate: LinkRate
    delay: Duration = 0
    weight: Annotated[int, Strict(), Requires("integer 1..255")] = 1
    """Routing cost of the link (both directions), an integer 1..255: the forwarding tables hold the least-cost
    paths (ECMP over ties); with every weight 1 they are the fewest-hop paths."""


class DimensionOrderPolicy(_Model):
    """Dimension-order routing: correct the first coordinate that differs, then the next, each within that
    dimension's group of routers (those differing only there): around a ring the shorter way (the positive way
    on a tie), directly when the group is fully connected, or through the group's switch. `routers[i]` sits at
    the coordinates of linear index i, the first dimension fastest: i = x0 + d0·(x1 + d1·x2)."""

    kind: Literal["dimension_order"]
    dims: list[PositiveInt]
    routers: list[Name]
    shapes: list[Literal["ring", "fully_connected", "switch"]] = []
    """Each dimension's shape; empty: every dimension a ring (a torus)."""
    switches: list[list[Name]] = []
    """Per dimension, the switches of its groups in the order of their first router (empty for a ring or fully
    connected dimension; the whole list empty when no dimension is switched)."""


class ValiantPolicy(_Model):
    """Valiant routing on a dragonfly: a packet between two groups goes minimally to a router of a random
    third group (a hash of the seed and the message), then minimally on; within a group, minimal."""

    kind: Literal["valiant"]
    groups: list[list[Name]]
    """The routers of each group."""


class RailServer(_Model):
    """One server of a rail-optimized cluster: its NVSwitch, and per rail its GPU and the GPU's NIC switch."""

    nvswitch: Name
    gpus: list[Name]
    nics: list[Name]


class PxnPolicy(_Model):
    """PXN (NCCL's PCI x NVLink): a message between GPUs on different servers and different rails first
    crosses the NVSwitch to the sending server's GPU on the destination's rail and leaves through that
    GPU's NIC, so it stays on one rail in the network; everything else follows the forwarding tables."""

    kind: Literal["pxn"]
    servers: list[RailServer]


RoutingPolicy = Annotated[Union[DimensionOrderPolicy, ValiantPolicy, PxnPolicy], Field(discriminator="kind")]


class Network(_Model):
    """A resolved network: nodes and links (what every topology builder returns), and the routing policy a
    topology family imposes on top of least-cost ECMP (None: least-cost ECMP alone)."""

    nodes: list[NodeDef]
    links: list[LinkDef]
    policy: RoutingPolicy | None = None


# ---- queues, ports, routing -----------------------------------------------------------------------------


class FifoQdisc(_Model):
    """DropTail FIFO limited in packets and/or bytes (ns-3 FifoQueueDisc; default 100 packets here)."""

    kind: Literal["fifo"]
    limit_packets: PositiveInt | Unlimited = 100
    limit_bytes: PositiveSize | Unlimited = "unlimited"

    def wire(self) -> dict:
        return {"kind": self.kind, "limit_packets": _lim(self.limit_packets), "limit_bytes": _lim(self.limit_bytes)}


class CodelQdisc(_Model):
    """CoDel (RFC 8289); defaults are ns-3 3.44's CoDelQueueDisc: 1500 packets, target 5 ms, interval 100 ms,
    and no drop while the queue holds fewer than 1500 bytes."""

    kind: Literal["codel"]
    limit_packets: PositiveInt = 1500
    target: PositiveDuration = 5 * 10**9
    interval: PositiveDuration = 100 * 10**9
    min_bytes: NonNegativeInt = 1500

    def wire(self) -> dict:
        return {"kind": "codel", "limit_packets": self.limit_packets, "target_ps": self.target,
                "interval_ps": self.interval, "min_bytes": self.min_bytes}


class FqCodelQdisc(_Model):
    """FQ-CoDel (RFC 8290); defaults as Linux / ns-3: 10240 packets, 1024 flows, quantum 1514 B, target 5 ms,
    interval 100 ms, drop batch 64. Flows are hashed by fabricsim flow (ns-3 hashes the 5-tuple)."""

    kind: Literal["fq_codel"]
    limit_packets: PositiveInt = 10240
    flows: PositiveInt = 1024
    quantum: PositiveSize = 1514
    target: PositiveDuration = 5 * 10**9
    interval: PositiveDuration = 100 * 10**9
    min_bytes: NonNegativeInt = 1500
    drop_batch: PositiveInt = 64

    def wire(self) -> dict:
        return {"kind": "fq_codel", "limit_packets": self.limit_packets, "flows": self.flows,
                "quantum_bytes": self.quantum, "target_ps": self.target, "interval_ps": self.interval,
                "min_bytes": self.min_bytes, "drop_batch": self.drop_batch}


QdiscDef = Annotated[Union[FifoQdisc, CodelQdisc, FqCodelQdisc], Field(discriminator="kind")]


class QueueDef(_Model):
    """An egress port's device queue (DropTail; default 100 packets) and an optional discipline above it."""

    limit_packets: PositiveInt | Unlimited = 100
    limit_bytes: PositiveSize | Unlimited = "unlimited"
    qdisc: QdiscDef | None = None

    def wire(self) -> dict:
        return {
            "limit_packets": _lim(self.limit_packets),
            "limit_bytes": _lim(self.limit_bytes),
            "qdisc": self.qdisc.wire() if self.qdisc else None,
        }


def _lim(x: int | str) -> int | None:
    return None if x == "unlimited" else int(x)


class PortDef(_Model):
    """Override for the egress ports of `node` toward `peer` (every parallel link)."""

    node: Name
    peer: Name
    queue: QueueDef | None = None
    rate_cap: LinkRate | None = None
    drop_packets: list[NonNegativeInt] = []
    """Error model (ns-3 ListErrorModel): drop the packets offered to this port with these arrival indices."""


class RoutingDef(_Model):
    """ECMP: one next hop per flow (hash of flow id and seed), random per message, random per packet,
    flowlets (per message, and a new random path after a pause longer than `flowlet_gap` at the sender; packet
    fidelity), or adaptive (per packet, the candidate with the fewest queued bytes; the flow engine spreads
    evenly)."""

    ecmp: Literal["per_flow", "per_message", "per_packet", "flowlet", "adaptive"] = "per_flow"
    flowlet_gap: Duration | None = None
    """With `ecmp = "flowlet"`: the idle time between two packets of a message that starts a new flowlet."""
    detection_delay: Duration = 100_000_000
    """After a link goes down or comes back (`[[events]]`), the switches recompute their tables this much later
    (default 100 µs: loss-of-signal detection and a table update); until then packets sent into a dead link are
    lost. Only the destinations whose routes used a failed link are recomputed."""


class NetEventDef(_Model):
    """A change of the network during a run (packet and hybrid fidelity; flow fidelity takes `link_rate` only):
    `link_down` / `link_up` of every link between the two nodes of `link`, `switch_down` of every link of
    `node`, `ber` (bit error rate) on `link`: a packet of b bits is lost with probability 1 − (1 − ber)^b (0
    clears it), or `link_rate`: every link between the two nodes runs at `rate` in both directions from `at` on
    (a degraded link: the packet on the wire at `at` ends at the old rate). Packets on or sent into a dead link are lost and counted at the port; the tables avoid it
    `routing.detection_delay` later (a degraded link stays in the tables). Lost message packets are re-sent on
    the [retransmit] timeout; a message that runs out of retries never completes, and the run says so (exit 3)."""

    at: Duration
    kind: Literal["link_down", "link_up", "switch_down", "ber", "link_rate"]
    link: list[Name] | None = None
    """The two nodes of the link, e.g. ["leaf0", "spine1"] (every parallel link between them)."""
    node: Name | None = None
    """The switch of a `switch_down`."""
    ber: float = 0.0
    rate: LinkRate | None = None
    """The new rate of a `link_rate` event ("25Gbps"; required there, an error on any other kind)."""
