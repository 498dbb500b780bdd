"""The scenario: the complete, validated model, and its translation to the wire RunSpec the engine consumes.

`Scenario.to_wire()` resolves every name to an index and checks every cross-reference (duplicate names,
dangling nodes, NICs, ports, dependencies), raising ScenarioError naming the field (dependency cycles, RoCE
values and what a fidelity can model are the engine's checks, named with the user's keys too); the dict it returns is the engine's input and must stay byte-for-byte what the engine expects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import PrivateAttr, ValidationError, model_validator

from ..errors import ScenarioError
from ..topology.registry import KINDS, TopologyDef
from ..units import Duration
from .base import NonNegativeInt, SpecProblem, _Model, bulk, current_source, first_error, format_loc, validating
from .network import NetEventDef, PortDef, QueueDef, RoutingDef
from .roce import EcnDef, PfcDef, RdmaDef, roce_wire
from .base import Name, PositiveInt
from .traffic import (BarrierDef, CollectiveDef, ComputeDef, HybridDef, MeasureDef, MessageDef, SourceDef, TcpDef,
                      hybrid_wire)

MAX_PACKET_BYTES = 65_536
MAX_MESSAGE_BYTES = 1 << 40
ROW_FORM_MAX = 1000
"""A scenario with at most this many message and barrier rows (and no compute steps, collectives or streams) is
checked in its row form (`to_wire()`), which needs no numpy: loading and validating a small scenario file stays
fast. Larger ones are lowered to columns once (`workload()`), which `run` reuses."""


class Scenario(_Model):
    """A complete simulation scenario."""

    seed: NonNegativeInt = 1
    stop: Duration | None = None
    fidelity: Literal["packet", "flow", "hybrid"] = "packet"
    """Which engine simulates: "packet" (discrete events, queues, loss, TCP), "flow" (max-min fair fluid
    flows on the same routes: fast at scale, lossless, no queues or transport dynamics) or "hybrid" (the packet
    engine jumping over steady states, see [hybrid] and docs/guide/hybrid.md)."""
    topology: TopologyDef
    queue: QueueDef = QueueDef()
    ports: list[PortDef] = []
    routing: RoutingDef = RoutingDef()
    sources: list[SourceDef] = []
    messages: list[MessageDef] = []
    tcp: list[TcpDef] = []
    barriers: list[BarrierDef] = []
    compute: list[ComputeDef] = []
    collectives: list[CollectiveDef] = []
    streams: dict[Name, PositiveInt] = {}
    """Compute streams per host (default 1): how many compute steps a host runs at once."""
    measure: MeasureDef = MeasureDef()
    events: list[NetEventDef] = []
    """Link failures, repairs and bit error rates during the run (packet fidelity), in any order."""
    transport: Literal["message", "rdma"] = "message"
    """How messages (and collectives) travel: "message" (packets paced by the NIC, no ACKs) or "rdma" (RoCEv2:
    one queue pair per message with ACKs, go-back-N and congestion control, see [rdma]; packet fidelity)."""
    pfc: PfcDef | None = None
    """Priority flow control of the `shared_buffer` switches (required when the fabric has one)."""
    ecn: EcnDef | None = None
    """ECN marking at every switch egress port (required by `[rdma] cc = "dcqcn"`)."""
    rdma: RdmaDef | None = None
    """The RDMA transport's congestion control and parameters (needs `transport = "rdma"`; without this table
    the RDMA transport runs DCQCN with the "hpcc" preset)."""
    hybrid: HybridDef | None = None
    """The steady-state detector's window and tolerance at `fidelity = "hybrid"` (ignored otherwise)."""

    _source: str = PrivateAttr(default="<scenario>")
    _workload: object = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _plausible(cls, data: Any, handler):
        """Validate; then, if a link rate below 1 Mb/s or a message or packet size below 1 byte was seen (rare),
        validate once more with those values raising, which gives each one's path (`topology.host_rate`,
        `messages[3].size`) and its value as written, and warn (FabricsimWarning) for the first three. Costs
        nothing more on plausible scenarios: each fabric field compares its value to its floor."""
        from ..units import plausibility

        found: list[str] = []
        with plausibility(found):
            sc = handler(data)
        if found:
            _warn_implausible(data, handler, len(found))
        return sc

    @property
    def source(self) -> str:
        """Where the scenario came from (a file path), for error messages."""
        return self._source

    def with_seed(self, seed: int) -> "Scenario":
        """A copy with another seed (checked as the `seed` key is; O(1): nothing else is re-validated)."""
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ScenarioError(self._source, "seed", f"expected an integer >= 0, got {seed!r}")
        s = super().model_copy(update={"seed": seed})
        s._source = self._source
        return s

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> "Scenario":
        """A copy; with `update`, a new scenario validated completely, as `scenario_from_dict` validates a file.

        `update` maps top-level keys to values written as in a scenario file (`{"messages": [{"name": ..., "src":
        ..., "size": "1MiB"}], "stop": "5ms"}`; model objects such as `MessageDef` are taken as they are). The
        other keys keep their values. Raises ScenarioError naming the field (`messages[0].src`), as loading does.
        O(size of the scenario): the kept keys are dumped with their units and validated again."""
        if not update:
            s = super().model_copy(deep=deep)
            s._source = self._source
            return s
        if not isinstance(update, Mapping):
            raise ScenarioError(self._source, "", f"model_copy: update must be a mapping of keys, not "
                                                  f"{type(update).__name__}")
        for key in update:
            if key not in type(self).model_fields:
                raise ScenarioError(self._source, str(key), "unknown key")
        data = self.model_dump(exclude=set(update), exclude_unset=True)
        data.update(update)
        return scenario_from_dict(data, self._source)

    @property
    def roce(self) -> bool:
        """Whether the scenario uses RoCE: PFC, ECN marking or the RDMA transport."""
        return self.pfc is not None or self.ecn is not None or self.transport == "rdma"

    @property
    def has_workload_rows(self) -> bool:
        """Whether the scenario lists messages, barriers, compute steps or collectives of its own."""
        return bool(self.messages or self.barriers or self.compute or self.collectives)

    @property
    def row_form(self) -> bool:
        """Whether the engine can take the whole scenario as JSON rows (`to_wire()`, no numpy columns): it has no
        compute steps, collectives or streams and at most ROW_FORM_MAX message and barrier rows."""
        return not (self.compute or self.collectives or self.streams) and \
            len(self.messages) + len(self.barriers) <= ROW_FORM_MAX

    def check(self) -> None:
        """Resolve every name (nodes, ports, flows, dependencies); raises ScenarioError naming the field. What
        needs the built network (reachability, NICs, sizes, cycles) is the engine's check (`validate`). A small
        scenario (`row_form`) is checked in its row form, without importing numpy."""
        if self.row_form:
            try:
                _to_wire(self)
            except SpecProblem as p:
                raise ScenarioError(self._source, p.field, p.reason) from None
            return
        self.header()
        if self.has_workload_rows:
            self.workload()

    def workload(self):
        """The scenario's own rows as a `fabricsim.Workload` (built once and kept while the rows are the same)."""
        from ..workload import Workload  # here, not above: it imports numpy, which a small scenario never needs

        w = self._workload
        if not (isinstance(w, Workload) and w.belongs_to(self) and w.n_added == w.n_own):
            w = Workload(self)
            self._workload = w
        return w

    def header(self) -> dict:
        """The wire header the engine compiles: network, routing, sources, TCP, measurement. The workload
        (messages, barriers, compute steps, collectives) travels as columns (`fabricsim.Workload`)."""
        try:
            return bulk(_to_wire)(self, rows=False)
        except SpecProblem as p:
            raise ScenarioError(self._source, p.field, p.reason) from None

    def to_wire(self) -> dict:
        """The complete wire RunSpec in its JSON row form, messages and barriers included (see
        crates/fabricsim-core/src/spec.rs); the regression corpus and tests use it. Compute steps and
        collectives exist only in the columnar form."""
        try:
            return _to_wire(self)
        except SpecProblem as p:
            raise ScenarioError(self._source, p.field, p.reason) from None


def engine_verdict(data: dict, source: str) -> ScenarioError | None:
    """The engine's reader's verdict on a parsed scenario (`_core.scenario_check`): the user's error as a
    ScenarioError naming the file and the key as written, or None when it is valid or when Python's models decide
    (a value to warn about; a document the reader leaves to Python)."""
    import json
    from pathlib import Path

    from .. import _core

    try:
        text = json.dumps(data, allow_nan=True)
    except (TypeError, ValueError):
        return None
    base = None if not source or source.startswith("<") else str(Path(source).parent)
    verdict, file, said = _core.scenario_check(text, base)
    if verdict != "invalid":
        return None
    field, sep, reason = said.partition(": ")
    return ScenarioError(file or source, field if sep else "", reason if sep else said)


def scenario_from_dict(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate a parsed scenario (dict) completely; raises ScenarioError naming the field. The engine's reader
    is the validator (`engine_verdict`); Python's models build the typed scenario, and judge only what the reader
    leaves to them (a value to warn about: an implausible link rate or message size, a FabricsimWarning naming
    the file, the field and the value; a document it does not read)."""
    if not isinstance(data, dict):
        raise ScenarioError(source, "", "a scenario must be a table of keys")
    error = engine_verdict(data, source)
    if error is not None:
        raise error
    with validating(source):
        try:
            sc = Scenario.model_validate(data)
        except ValidationError as e:
            field, msg = first_error(e, KINDS)
            raise ScenarioError(source, field, msg) from None
    sc._source = source
    sc.check()
    return sc


def _event_wire(e, f: str, index: dict[str, int], ports_of) -> dict:
    """A network event with its links resolved to link indices (every parallel link, or every link of a
    switch); one clear problem per missing or impossible field."""
    if e.kind == "switch_down":
        if e.node is None:
            raise SpecProblem(f"{f}.node", "a switch_down names its switch: node = \"spine0\"")
        v = _node(index, e.node, f"{f}.node")
        links = sorted(li for (li, _, _) in ports_of[v])
        if not links:
            raise SpecProblem(f"{f}.node", f"'{e.node}' has no link")
    else:
        if e.link is None or len(e.link) != 2:
            raise SpecProblem(f"{f}.link", f"a {e.kind} names its link by its two nodes: link = [\"leaf0\", \"spine1\"]")
        a = _node(index, e.link[0], f"{f}.link[0]")
        b = _node(index, e.link[1], f"{f}.link[1]")
        links = [li for (li, peer, _) in ports_of[a] if peer == b]
        if not links:
            raise SpecProblem(f"{f}.link", f"there is no link between '{e.link[0]}' and '{e.link[1]}'")
    if e.kind == "ber" and not 0.0 <= e.ber < 1.0:
        raise SpecProblem(f"{f}.ber", f"{e.ber} is not a bit error rate in [0, 1)")
    kind = "link_down" if e.kind == "switch_down" else e.kind
    return {"at_ps": e.at, "kind": kind, "links": links, "ber": e.ber}


def _policy_wire(policy, index: dict[str, int], topo_field: str) -> dict:
    """The network's routing policy with node names resolved to indices ({} for least-cost ECMP alone)."""
    if policy is None:
        return {}

    def ids(names: list[str], f: str) -> list[int]:
        return [_node(index, n, f"{topo_field}.policy.{f}[{k}]") for k, n in enumerate(names)]

    if policy.kind == "dimension_order":
        return {"policy": {"kind": policy.kind, "dims": list(policy.dims), "routers": ids(policy.routers, "routers")}}
    if policy.kind == "valiant":
        return {"policy": {"kind": policy.kind, "groups": [ids(g, f"groups[{k}]") for k, g in enumerate(policy.groups)]}}
    return {"policy": {"kind": policy.kind, "servers": [
        {"nvswitch": _node(index, s.nvswitch, f"{topo_field}.policy.servers[{k}].nvswitch"),
         "gpus": ids(s.gpus, f"servers[{k}].gpus"), "nics": ids(s.nics, f"servers[{k}].nics")}
        for k, s in enumerate(policy.servers)]}}


def _to_wire(sc: Scenario, rows: bool = True) -> dict:
    """The wire spec; with `rows=False` the header alone (message and barrier names are only checked against
    the flow names, their rows are the workload's). Dependency cycles are the engine's check."""
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
        if l.weight != 1:
            links[-1]["weight"] = l.weight
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
    if not rows:
        for i, m in enumerate(sc.messages):
            if m.name in source_names:
                raise SpecProblem(f"messages[{i}].name", f"'{m.name}' already names a source (flows are reported by name)")
    msg_index: dict[str, int] = {}
    for i, m in enumerate(sc.messages if rows else ()):
        if m.name in msg_index:
            raise SpecProblem(f"messages[{i}].name", f"duplicate message name '{m.name}'")
        if m.name in source_names:
            raise SpecProblem(f"messages[{i}].name", f"'{m.name}' already names a source (flows are reported by name)")
        msg_index[m.name] = i
    barrier_index: dict[str, int] = {}
    for i, b in enumerate(sc.barriers if rows else ()):
        if b.name in msg_index or b.name in source_names or b.name in barrier_index:
            raise SpecProblem(f"barriers[{i}].name", f"'{b.name}' already names a flow or barrier")
        barrier_index[b.name] = i
    barriers = []
    for i, b in enumerate(sc.barriers if rows else ()):
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
    for i, m in enumerate(sc.messages if rows else ()):
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
        if flow_name in source_names or flow_name in msg_index or (not rows and any(m.name == flow_name for m in sc.messages)):
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
    sample_ports = None
    if sc.measure.queues is not None:
        sample_ports = []
        for k, q in enumerate(sc.measure.queues):
            sample_ports.append(_port_ref(index, ports_of, q, f"measure.queues[{k}]"))
    events = [_event_wire(e, f"events[{i}]", index, ports_of) for i, e in enumerate(sc.events)]
    out = {
        "seed": sc.seed,
        "stop_ps": sc.stop,
        "network": {
            "nodes": [{"name": n.name, "kind": n.kind, "latency_ps": n.latency, "model": n.model,
                       "input_buffer_bytes": n.input_buffer, **({"arbiter": n.arbiter} if n.arbiter != "round_robin" else {})}
                      for n in net.nodes],
            "links": links,
            "default_queue": sc.queue.wire(),
            "topology": sc.topology.kind,
        },
        "routing": {"ecmp": sc.routing.ecmp, **_policy_wire(net.policy, index, topo_field),
                    **({"flowlet_gap_ps": sc.routing.flowlet_gap} if sc.routing.flowlet_gap is not None else {})},
        "sources": sources,
        "messages": messages,
        "tcp": tcp,
        "barriers": barriers,
        "measure": {"queue_sample_ps": sc.measure.queue_interval, "sample_ports": sample_ports},
    }
    if sc.measure.throughput_interval is not None:
        out["measure"]["throughput_bin_ps"] = sc.measure.throughput_interval
    if events:
        out["events"] = events
        out["routing"]["detection_delay_ps"] = sc.routing.detection_delay
    out.update(roce_wire(sc))
    if sc.hybrid is not None:
        out["hybrid"] = hybrid_wire(sc.hybrid)
    if not rows:
        del out["messages"], out["barriers"]
    return out


def _warn_implausible(data: Any, handler, count: int) -> None:
    """One FabricsimWarning per implausible fabric value (the first three, then how many more): `file: path =
    value as written means ...`."""
    import warnings

    from ..errors import FabricsimWarning
    from ..units import PLAUSIBILITY_MARK, _as_written, plausibility

    found: list[tuple[str, str]] = []
    with plausibility("raise"):
        try:
            handler(data)
        except ValidationError as e:
            for err in e.errors():
                msg = str(err.get("ctx", {}).get("error", err["msg"]))
                if PLAUSIBILITY_MARK in msg:
                    found.append((f"{format_loc(tuple(err['loc']), KINDS)} = {_as_written(err['input'])}",
                                  msg.split(PLAUSIBILITY_MARK, 1)[1]))
    if not found:  # pragma: no cover - the second pass sees what the first did
        found = [("a fabric field", f"has {count} implausible value(s)")]
    src = current_source()
    where = f"{src}: " if src else ""
    for what, why in found[:3]:
        warnings.warn(f"{where}{what} {why}", FabricsimWarning, stacklevel=4)
    if len(found) > 3:
        warnings.warn(f"{where}{len(found) - 3:,} more implausible rate(s) or size(s) like these", FabricsimWarning,
                      stacklevel=4)


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
