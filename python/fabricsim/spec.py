"""Typed scenario specs (pydantic): the one home of defaults and validation, loaded from TOML/JSON or built in Python.

Units: durations are integer picoseconds, rates bit/s, sizes bytes; every field accepts a plain number in
the base unit (seconds for durations) or a string with a unit ("5ms", "100Gbps", "10MiB"). A scenario is
checked completely when it is loaded or converted: unknown keys, wrong types, impossible values and dangling
names are errors that name the field (`messages[2].after[0]`).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union

from annotated_types import Ge, Gt
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, Strict, ValidationError

from .errors import ScenarioError
from .units import Duration, Rate, Size

MAX_PACKET_BYTES = 65_536
MAX_MESSAGE_BYTES = 1 << 40

PositiveInt = Annotated[int, Strict(), Gt(0)]
"""A count > 0; booleans, strings and floats are rejected (TOML `true` or `"3"` is an error, not 1 or 3)."""
NonNegativeInt = Annotated[int, Strict(), Ge(0)]
"""A count or index >= 0, strictly an integer."""
PositiveRate = Annotated[Rate, Gt(0)]
PositiveSize = Annotated[Size, Gt(0)]
PositiveDuration = Annotated[Duration, Gt(0)]
Name = Annotated[str, Field(min_length=1, pattern=r"^[^\s:>#]+$")]
Unlimited = Literal["unlimited"]


class SpecProblem(Exception):
    """A cross-reference problem found after field validation: (field path, reason)."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


# ---- topology -------------------------------------------------------------------------------------------


SwitchModelName = Literal["output_queued", "input_buffered"]


class NodeDef(_Model):
    """A host or a switch; `latency` is added to every packet entering the node.

    Switches are `output_queued` (lossy egress buffers, the default) or `input_buffered` (lossless: an
    `input_buffer` per input port with a virtual output queue per output, round-robin arbitration and
    credit-based flow control on the links into it)."""

    name: Name
    kind: Literal["host", "switch"]
    latency: Duration = 0
    model: SwitchModelName = "output_queued"
    input_buffer: PositiveSize = 128 * 1024


class LinkDef(_Model):
    """A full-duplex point-to-point link; a host's NICs are its links, numbered in the order they are listed."""

    a: Name
    b: Name
    rate: PositiveRate
    delay: Duration = 0


class Network(_Model):
    """A resolved network: nodes and links (what every topology builder returns)."""

    nodes: list[NodeDef]
    links: list[LinkDef]


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
        from .topology import builders

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
    rate_cap: PositiveRate | None = None
    drop_packets: list[NonNegativeInt] = []
    """Error model (ns-3 ListErrorModel): drop the packets offered to this port with these arrival indices."""


class RoutingDef(_Model):
    """ECMP: one next hop per flow (hash of flow id and seed), random per message, random per packet, or
    adaptive (per packet, the candidate with the fewest queued bytes; the flow engine spreads evenly)."""

    ecmp: Literal["per_flow", "per_message", "per_packet", "adaptive"] = "per_flow"


# ---- traffic --------------------------------------------------------------------------------------------


class SourceDef(_Model):
    """A UDP source with ns-3 OnOffApplication semantics (`rate` counts payload bits; onoff starts off)."""

    name: Name | None = None
    kind: Literal["cbr", "onoff"]
    src: Name
    dst: Name
    src_nic: NonNegativeInt = 0
    dst_nic: NonNegativeInt = 0
    rate: PositiveRate
    packet_size: PositiveSize = 1024
    header: Size = 0
    on: PositiveDuration | None = None
    off: Duration | None = None
    start: Duration = 0
    stop: Duration | None = None
    max_bytes: PositiveSize | None = None
    path: list[Name] | None = None


class MessageDef(_Model):
    """A message transfer: `size` bytes of payload in packets of `packet_size` (+ `header`), paced by the NIC.

    It starts `delay` after the later of `start` and the completion of every message (or barrier) named in
    `after`."""

    name: Name
    src: Name
    dst: Name
    src_nic: NonNegativeInt = 0
    dst_nic: NonNegativeInt = 0
    size: PositiveSize
    packet_size: PositiveSize = 1024
    header: Size = 0
    start: Duration = 0
    after: list[Name] = []
    after_sent: list[Name] = []
    """Messages that must be fully sent (last packet handed to the NIC), not delivered, before this starts."""
    delay: Duration = 0
    path: list[Name] | None = None


class BarrierDef(_Model):
    """A synchronisation point of the workload DAG: it completes when every message (or barrier) named in
    `after` has; messages (and barriers) naming it in their `after` start only then. A phase barrier for N
    messages waiting on M others costs N + M names instead of N·M."""

    name: Name
    after: list[Name] = []


class TcpDef(_Model):
    """A TCP connection driven by a BulkSend application (sends as fast as TCP allows, up to `max_bytes`).

    Defaults are ns-3 3.44's: TcpCubic (or `cc = "newreno"`), 536-byte segments, initial window 10
    segments, minimum and initial RTO 1 s with 1 ms timer granularity, delayed ACKs every 2 segments or
    200 ms, 128 KiB send and receive buffers, BulkSend writing 512-byte chunks (with Nagle off, a sender
    held by its buffer sends shorter segments, as ns-3 does), fast retransmit after 3 duplicate ACKs, SACK. `header` is the bytes
    added to every segment and ACK on the wire: IP 20 + TCP 20 + timestamp option 12 + PPP 2 = 54."""

    name: Name | None = None
    src: Name
    dst: Name
    src_nic: NonNegativeInt = 0
    dst_nic: NonNegativeInt = 0
    cc: Literal["cubic", "newreno"] = "cubic"
    start: Duration = 0
    stop: Duration | None = None
    max_bytes: PositiveSize | None = None
    mss: PositiveSize = 536
    header: Size = 54
    initial_cwnd: PositiveInt = 10
    min_rto: PositiveDuration = 10**12
    initial_rto: PositiveDuration = 10**12
    clock_granularity: PositiveDuration = 10**9
    delack_count: PositiveInt = 2
    delack_timeout: PositiveDuration = 200 * 10**9
    rcv_buf: PositiveSize = 131072
    snd_buf: PositiveSize = 131072
    app_write: PositiveSize = 512
    dupack_threshold: PositiveInt = 3
    sack: bool = True
    path: list[Name] | None = None


class MeasureDef(_Model):
    """Queue-depth sampling: every `queue_interval`, of the ports named "node->peer" (default: every switch port)."""

    queue_interval: PositiveDuration | None = None
    queues: list[str] | None = None


# ---- the scenario ---------------------------------------------------------------------------------------


class Scenario(_Model):
    """A complete simulation scenario."""

    seed: NonNegativeInt = 1
    stop: Duration | None = None
    fidelity: Literal["packet", "flow"] = "packet"
    """Which engine simulates: "packet" (discrete events, queues, loss, TCP) or "flow" (max-min fair fluid
    flows on the same routes: fast at scale, lossless, no queues or transport dynamics)."""
    topology: TopologyDef
    queue: QueueDef = QueueDef()
    ports: list[PortDef] = []
    routing: RoutingDef = RoutingDef()
    sources: list[SourceDef] = []
    messages: list[MessageDef] = []
    tcp: list[TcpDef] = []
    barriers: list[BarrierDef] = []
    measure: MeasureDef = MeasureDef()

    _source: str = PrivateAttr(default="<scenario>")

    @property
    def source(self) -> str:
        """Where the scenario came from (a file path), for error messages."""
        return self._source

    def with_seed(self, seed: int) -> "Scenario":
        """A copy with another seed."""
        s = self.model_copy(update={"seed": seed})
        s._source = self._source
        return s

    def check(self) -> None:
        """Check every cross-reference; raises ScenarioError naming the field."""
        self.to_wire()

    def to_wire(self) -> dict:
        """The wire RunSpec the engine consumes (see crates/fabricsim-core/src/spec.rs)."""
        try:
            return _to_wire(self)
        except SpecProblem as p:
            raise ScenarioError(self._source, p.field, p.reason) from None


def _to_wire(sc: Scenario) -> dict:
    net = sc.topology.network()
    topo_field = "topology" if sc.topology.kind == "custom" else f"topology ({sc.topology.kind})"
    index: dict[str, int] = {}
    for i, n in enumerate(net.nodes):
        if n.name in index:
            raise SpecProblem(f"{topo_field}.nodes[{i}].name", f"duplicate node name '{n.name}'")
        if n.kind == "host" and n.model != "output_queued":
            raise SpecProblem(f"{topo_field}.nodes[{i}].model", "only switches have a switch model")
        index[n.name] = i
    kinds = [n.kind for n in net.nodes]
    ports_of: list[list[tuple[int, int, str]]] = [[] for _ in net.nodes]  # (link, peer, end)
    links = []
    for i, l in enumerate(net.links):
        for end in ("a", "b"):
            if getattr(l, end) not in index:
                raise SpecProblem(f"{topo_field}.links[{i}].{end}", f"unknown node '{getattr(l, end)}'")
        a, b = index[l.a], index[l.b]
        if a == b:
            raise SpecProblem(f"{topo_field}.links[{i}].b", "a link cannot connect a node to itself")
        ports_of[a].append((i, b, "a_end"))
        ports_of[b].append((i, a, "b_end"))
        links.append({"a": a, "b": b, "rate_bps": l.rate, "delay_ps": l.delay, "a_end": {}, "b_end": {}})
    for i, p in enumerate(sc.ports):
        f = f"ports[{i}]"
        node = _node(index, p.node, f"{f}.node")
        peer = _node(index, p.peer, f"{f}.peer")
        ends = [(li, end) for (li, pr, end) in ports_of[node] if pr == peer]
        if not ends:
            raise SpecProblem(f"{f}.peer", f"'{p.node}' has no link to '{p.peer}'")
        for li, end in ends:
            if p.queue is not None:
                links[li][end]["queue"] = p.queue.wire()
            if p.rate_cap is not None:
                links[li][end]["rate_cap_bps"] = p.rate_cap
            if p.drop_packets:
                links[li][end]["drop_packets"] = list(p.drop_packets)

    def endpoint(f: str, name: str, nic: int, nic_field: str) -> int:
        v = _node(index, name, f)
        if kinds[v] != "host":
            raise SpecProblem(f, f"'{name}' is a switch; traffic starts and ends at hosts")
        if nic >= len(ports_of[v]):
            raise SpecProblem(nic_field, f"'{name}' has {len(ports_of[v])} NIC(s); NIC {nic} does not exist")
        return v

    def path(f: str, names: list[str] | None) -> list[int] | None:
        if names is None:
            return None
        return [_node(index, n, f"{f}[{k}]") for k, n in enumerate(names)]

    def packet(f: str, size: int, header: int) -> None:
        if size + header > MAX_PACKET_BYTES:
            raise SpecProblem(f, f"a packet of {size + header} B exceeds the {MAX_PACKET_BYTES} B limit")

    sources = []
    source_names: set[str] = set()
    for i, s in enumerate(sc.sources):
        f = f"sources[{i}]"
        flow_name = s.name or f"{s.kind}{i}"
        if flow_name in source_names:
            raise SpecProblem(f"{f}.name", f"duplicate source name '{flow_name}' (flows are reported by name)")
        source_names.add(flow_name)
        src = endpoint(f"{f}.src", s.src, s.src_nic, f"{f}.src_nic")
        dst = endpoint(f"{f}.dst", s.dst, s.dst_nic, f"{f}.dst_nic")
        if src == dst and s.src_nic == s.dst_nic:
            raise SpecProblem(f"{f}.dst_nic", "source and destination are the same NIC of one host")
        packet(f"{f}.packet_size", s.packet_size, s.header)
        if s.kind == "onoff" and (s.on is None or s.off is None):
            raise SpecProblem(f"{f}.{'on' if s.on is None else 'off'}", "an onoff source needs both 'on' and 'off'")
        if s.kind == "cbr" and (s.on is not None or s.off is not None):
            raise SpecProblem(f"{f}.{'on' if s.on is not None else 'off'}", "a cbr source has no on/off times")
        if s.stop is not None and s.stop < s.start:
            raise SpecProblem(f"{f}.stop", "stop is before start")
        sources.append({
            "name": flow_name, "kind": s.kind,
            "src": src, "src_nic": s.src_nic, "dst": dst, "dst_nic": s.dst_nic,
            "rate_bps": s.rate, "packet_bytes": s.packet_size, "header_bytes": s.header,
            "on_ps": s.on or 0, "off_ps": s.off or 0, "start_ps": s.start, "stop_ps": s.stop,
            "max_bytes": s.max_bytes, "path": path(f"{f}.path", s.path),
        })
    msg_index: dict[str, int] = {}
    for i, m in enumerate(sc.messages):
        if m.name in msg_index:
            raise SpecProblem(f"messages[{i}].name", f"duplicate message name '{m.name}'")
        if m.name in source_names:
            raise SpecProblem(f"messages[{i}].name", f"'{m.name}' already names a source (flows are reported by name)")
        msg_index[m.name] = i
    barrier_index: dict[str, int] = {}
    for i, b in enumerate(sc.barriers):
        if b.name in msg_index or b.name in source_names or b.name in barrier_index:
            raise SpecProblem(f"barriers[{i}].name", f"'{b.name}' already names a flow or barrier")
        barrier_index[b.name] = i
    barriers = []
    for i, b in enumerate(sc.barriers):
        deps, bdeps = [], []
        for k, name in enumerate(b.after):
            if name in msg_index:
                deps.append(msg_index[name])
            elif name in barrier_index:
                bdeps.append(barrier_index[name])
            else:
                raise SpecProblem(f"barriers[{i}].after[{k}]", f"unknown message or barrier '{name}'")
        barriers.append({"name": b.name, "deps": deps, "barriers": bdeps})
    messages = []
    for i, m in enumerate(sc.messages):
        f = f"messages[{i}]"
        src = endpoint(f"{f}.src", m.src, m.src_nic, f"{f}.src_nic")
        dst = endpoint(f"{f}.dst", m.dst, m.dst_nic, f"{f}.dst_nic")
        if src == dst and m.src_nic == m.dst_nic:
            raise SpecProblem(f"{f}.dst_nic", "source and destination are the same NIC of one host")
        if m.size > MAX_MESSAGE_BYTES:
            raise SpecProblem(f"{f}.size", f"{m.size} B exceeds the 1 TiB limit")
        packet(f"{f}.packet_size", m.packet_size, m.header)
        deps, sent_deps, mbarriers = [], [], []
        for key, names, out in (("after", m.after, deps), ("after_sent", m.after_sent, sent_deps)):
            for k, name in enumerate(names):
                if key == "after" and name in barrier_index:
                    mbarriers.append(barrier_index[name])
                    continue
                if name not in msg_index:
                    raise SpecProblem(f"{f}.{key}[{k}]", f"unknown message '{name}'")
                if name == m.name:
                    raise SpecProblem(f"{f}.{key}[{k}]", "a message cannot wait for itself")
                out.append(msg_index[name])
        messages.append({
            "name": m.name, "src": src, "src_nic": m.src_nic, "dst": dst, "dst_nic": m.dst_nic,
            "size_bytes": m.size, "packet_bytes": m.packet_size, "header_bytes": m.header,
            "start_ps": m.start, "deps": deps, "sent_deps": sent_deps, "barriers": mbarriers, "delay_ps": m.delay,
            "path": path(f"{f}.path", m.path),
        })
    tcp = []
    for i, t in enumerate(sc.tcp):
        f = f"tcp[{i}]"
        flow_name = t.name or f"tcp{i}"
        if flow_name in source_names or flow_name in msg_index:
            raise SpecProblem(f"{f}.name", f"'{flow_name}' already names another flow (flows are reported by name)")
        source_names.add(flow_name)
        src = endpoint(f"{f}.src", t.src, t.src_nic, f"{f}.src_nic")
        dst = endpoint(f"{f}.dst", t.dst, t.dst_nic, f"{f}.dst_nic")
        if src == dst and t.src_nic == t.dst_nic:
            raise SpecProblem(f"{f}.dst_nic", "source and destination are the same NIC of one host")
        packet(f"{f}.mss", t.mss, t.header)
        if t.stop is not None and t.stop < t.start:
            raise SpecProblem(f"{f}.stop", "stop is before start")
        if t.rcv_buf < t.mss:
            raise SpecProblem(f"{f}.rcv_buf", "must hold at least one segment")
        if t.snd_buf < t.app_write:
            raise SpecProblem(f"{f}.snd_buf", "must hold at least one application write")
        tcp.append({
            "name": flow_name, "src": src, "src_nic": t.src_nic, "dst": dst, "dst_nic": t.dst_nic, "cc": t.cc.replace("newreno", "new_reno"),
            "start_ps": t.start, "stop_ps": t.stop, "max_bytes": t.max_bytes, "mss_bytes": t.mss,
            "header_bytes": t.header, "initial_cwnd": t.initial_cwnd, "min_rto_ps": t.min_rto,
            "initial_rto_ps": t.initial_rto, "clock_granularity_ps": t.clock_granularity,
            "delack_count": t.delack_count, "delack_timeout_ps": t.delack_timeout, "rcv_buf_bytes": t.rcv_buf,
            "snd_buf_bytes": t.snd_buf, "app_write_bytes": t.app_write,
            "dupack_threshold": t.dupack_threshold, "sack": t.sack, "path": path(f"{f}.path", t.path),
        })
    n_msg = len(messages)
    cycle = _find_cycle([m["deps"] + m["sent_deps"] + [n_msg + b for b in m["barriers"]] for m in messages]
                        + [b["deps"] + [n_msg + x for x in b["barriers"]] for b in barriers])
    if cycle:
        label = [m.name for m in sc.messages] + [b.name for b in sc.barriers]
        names = " -> ".join(label[k] for k in cycle)
        field = f"messages[{cycle[0]}].after" if cycle[0] < n_msg else f"barriers[{cycle[0] - n_msg}].after"
        raise SpecProblem(field, f"dependency cycle: {names}")
    sample_ports = None
    if sc.measure.queues is not None:
        sample_ports = []
        for k, q in enumerate(sc.measure.queues):
            sample_ports.append(_port_ref(index, ports_of, q, f"measure.queues[{k}]"))
    return {
        "seed": sc.seed,
        "stop_ps": sc.stop,
        "network": {
            "nodes": [{"name": n.name, "kind": n.kind, "latency_ps": n.latency, "model": n.model,
                       "input_buffer_bytes": n.input_buffer} for n in net.nodes],
            "links": links,
            "default_queue": sc.queue.wire(),
        },
        "routing": {"ecmp": sc.routing.ecmp},
        "sources": sources,
        "messages": messages,
        "tcp": tcp,
        "barriers": barriers,
        "measure": {"queue_sample_ps": sc.measure.queue_interval, "sample_ports": sample_ports},
    }


def _node(index: dict[str, int], name: str, field: str) -> int:
    try:
        return index[name]
    except KeyError:
        raise SpecProblem(field, f"unknown node '{name}'") from None


def _port_ref(index, ports_of, ref: str, field: str) -> tuple[int, int]:
    """Resolve "node->peer" or "node->peer#k" (k-th parallel link) to (node index, local port index)."""
    if "->" not in ref:
        raise SpecProblem(field, f"'{ref}' is not a port name of the form 'node->peer'")
    node_name, rest = ref.split("->", 1)
    peer_name, sep, k = rest.partition("#")
    node = _node(index, node_name.strip(), field)
    peer = _node(index, peer_name.strip(), field)
    matches = [local for local, (_, pr, _) in enumerate(ports_of[node]) if pr == peer]
    if sep and not k.isdigit():
        raise SpecProblem(field, f"'{ref}': the parallel-link number after '#' must be an integer")
    nth = int(k) if k else 0
    if nth >= len(matches):
        raise SpecProblem(field, f"'{node_name}' has no link to '{peer_name}'" + (f" numbered #{k}" if k else ""))
    return (node, matches[nth])


def _find_cycle(deps: list[list[int]]) -> list[int] | None:
    """A dependency cycle as a list of message indices (first repeated at the end), or None. O(V + E)."""
    state = [0] * len(deps)
    for root in range(len(deps)):
        if state[root]:
            continue
        stack = [(root, iter(deps[root]))]
        trail = [root]
        state[root] = 1
        while stack:
            v, it = stack[-1]
            w = next(it, None)
            if w is None:
                state[v] = 2
                stack.pop()
                trail.pop()
            elif state[w] == 1:
                return trail[trail.index(w):] + [w]
            elif state[w] == 0:
                state[w] = 1
                stack.append((w, iter(deps[w])))
                trail.append(w)
    return None


# ---- loading --------------------------------------------------------------------------------------------


_PYDANTIC_STEP = re.compile(r"^(function-|constrained-|literal\[|lax-|strict-)|^(str|int|float|bool|list|dict)$")
"""Location parts pydantic adds for validator steps and union branches (never a field name of ours)."""


def format_loc(loc: tuple) -> str:
    """Pydantic error location -> dotted path with [i] indices (union tags dropped)."""
    out = ""
    tags = {"custom", "dumbbell", "leaf_spine", "fat_tree"}
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif i > 0 and loc[i - 1] == "topology" and part in tags:
            continue
        elif isinstance(part, str) and _PYDANTIC_STEP.match(part):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def first_error(e: ValidationError) -> tuple[str, str]:
    err = e.errors()[0]
    msg = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif err["type"] == "union_tag_invalid":
        ctx = err.get("ctx", {})
        tag = ctx.get("tag", err["input"])
        msg = f"unknown kind {tag!r} (expected one of: {ctx.get('expected_tags', '')})"
    # A union of an int and "unlimited" reports the last branch; name what was expected instead.
    if err["type"] == "literal_error" and "unlimited" in msg:
        msg = f"expected a positive number or 'unlimited', got {err['input']!r}"
    elif err["type"].endswith("_type") and isinstance(err.get("input"), (bool, int, float, str)):
        msg = f"{msg}, got {err['input']!r}"
    return format_loc(tuple(err["loc"])), msg


def scenario_from_dict(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate a parsed scenario (dict) completely; raises ScenarioError naming the field."""
    if not isinstance(data, dict):
        raise ScenarioError(source, "", "a scenario must be a table of keys")
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        field, msg = first_error(e)
        raise ScenarioError(source, field, msg) from None
    sc._source = source
    sc.check()
    return sc


def read_document(path: str | Path) -> dict:
    """Parse a TOML (or .json) file; raises ScenarioError naming the file (and line) on any failure."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(str(p), "", f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        return json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", str(e))
        if m:
            raise ScenarioError(str(p), f"line {m[2]}", f"TOML syntax error: {m[1]} (column {m[3]})") from None
        raise ScenarioError(str(p), "", f"TOML syntax error: {e}") from None
    except json.JSONDecodeError as e:
        raise ScenarioError(str(p), f"line {e.lineno}", f"JSON syntax error: {e.msg} (column {e.colno})") from None


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario from a TOML (or .json) file; raises ScenarioError naming file and field."""
    return scenario_from_dict(read_document(path), str(path))
