"""The scenario: the typed model a user builds or loads, and the engine's reading of it.

The engine's reader (crates/fabricsim-core/src/scenario/) is the one validator and the one translation to the
wire RunSpec: `Scenario.header()`, `to_wire()` and `check()` hand the scenario to it as a document
(`spec.base.engine_read`), so a scenario built in Python is checked exactly as a file is, every error naming the key as
written and the file. Python's models give the scenario typed attributes; they judge only the values to warn
about (an implausible rate or size)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import PrivateAttr, ValidationError

from ..errors import ScenarioError
from ..topology.registry import KINDS, TopologyDef
from ..units import Duration
from .base import (NonNegativeInt, _Model, _base, engine_read, first_error, non_finite, said_error, say_warnings,
                   validating)
from .network import NetEventDef, PortDef, QueueDef, RoutingDef
from .roce import EcnDef, PfcDef, RdmaDef
from .base import Name, PositiveInt
from .traffic import (BarrierDef, CollectiveDef, ComputeDef, HybridDef, MeasureDef, MessageDef, RetransmitDef, SourceDef,
                      TcpDef, UecDef)

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
    """Link failures, repairs, bit error rates and link rates during the run (packet and hybrid fidelity; flow
    fidelity takes link rates only), in any order."""
    transport: Literal["message", "rdma", "uec"] = "message"
    """How messages (and collectives) travel: "message" (packets paced by the NIC, no ACKs; lost packets re-sent
    on a timeout, see [retransmit]), "rdma" (RoCEv2: one queue pair per message with ACKs, NACK and go-back-N
    without a timeout, and congestion control, see [rdma]; packet fidelity) or "uec" (Ultra Ethernet: packet
    spraying, trimming, selective ACKs, NSCC or RCCC congestion control, see [uec]; packet fidelity, or flow
    fidelity with spray = "ecmp")."""
    pfc: PfcDef | None = None
    """Priority flow control of the `shared_buffer` switches (required when the fabric has one)."""
    ecn: EcnDef | None = None
    """ECN marking at every switch egress port (required by `[rdma] cc = "dcqcn"`)."""
    rdma: RdmaDef | None = None
    """The RDMA transport's congestion control and parameters (needs `transport = "rdma"`; without this table
    the RDMA transport runs DCQCN with the "hpcc" preset)."""
    hybrid: HybridDef | None = None
    """The steady-state detector's window and tolerance at `fidelity = "hybrid"` (ignored otherwise)."""
    retransmit: RetransmitDef | None = None
    """The message transport's retransmission timeout and retry limit (without this table: a 100 us timeout and
    7 retries; a loss-free run never uses them)."""
    uec: UecDef | None = None
    """The UEC transport's congestion control, spraying, trimming and reliability (needs `transport = "uec"`;
    without this table uet-htsim's defaults: NSCC, oblivious spraying over 64 entropies, trimming)."""

    _source: str = PrivateAttr(default="<scenario>")
    _workload: object = PrivateAttr(default=None)
    _warned: bool = PrivateAttr(default=False)

    @property
    def source(self) -> str:
        """Where the scenario came from (a file path), for error messages."""
        return self._source

    def with_seed(self, seed: int) -> "Scenario":
        """A copy with another seed (checked as the `seed` key is; O(1): nothing else is re-validated)."""
        from ..checks import U64_MAX, integer

        try:
            seed = integer(seed, "seed", low=0, high=U64_MAX)
        except ValueError:
            raise ScenarioError(self._source, "seed", f"expected an integer >= 0 and < 2^64, got {seed!r}") from None
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
        """Whether the scenario uses RoCE or UEC: PFC, ECN marking, the RDMA or the UEC transport (runs with
        the control class, ECN and the RoCE record columns)."""
        return self.pfc is not None or self.ecn is not None or self.transport in ("rdma", "uec")

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
        """Check the scenario with the engine's reader, the one validator: keys, values, the built network and
        every name (nodes, ports, flows, dependencies); raises ScenarioError naming the field as the user wrote it.
        What needs the compiled network (reachability, cycles) is the engine's check (`validate`). A small
        scenario (`row_form`) is checked in its row form, without importing numpy."""
        if self.row_form:
            self._read("rows")
            return
        self.header()
        if self.has_workload_rows:
            self.workload()

    def header_json(self) -> str:
        """`header()` as the engine's reader writes it (JSON text), for the engine: no Python dict in between
        (a k = 48 fat-tree's header is ~10 MB of JSON)."""
        return self._read("header", parse=False)

    def _read(self, what: str, parse: bool = True) -> Any:
        """The engine's reading of this scenario (`_core.scenario_read`): its wire "header" or "rows". The
        scenario travels as a document (`model_dump`, units written out), so one built in Python is read exactly
        as a file is; raises ScenarioError naming the file and the key. O(size of the scenario)."""
        # A scenario built in Python has its implausible values said once, on its first reading.
        wire = engine_read(self.model_dump(exclude_unset=True), what, self._source, quiet=self._warned, parse=parse)
        self._warned = True
        return wire

    def workload(self):
        """The scenario's own rows as a `fabricsim.Workload` (built once and kept while the rows are the same)."""
        from ..workload import Workload  # here, not above: it imports numpy, which a small scenario never needs

        w = self._workload
        if not (isinstance(w, Workload) and w.belongs_to(self) and w.n_added == w.n_own):
            w = Workload(self)
            self._workload = w
        return w

    def columns(self) -> dict | None:
        """The scenario's own workload rows (messages, barriers, compute steps, collectives, streams) lowered to
        columns by the engine's reader (`_core.scenario_columns`), every name resolved; None without rows. Raises
        ScenarioError naming the row (`messages[3].after[0]`). `workload()` starts from them."""
        from .. import _core

        doc = self.model_dump(exclude_unset=True)
        if not self._warned:
            say_warnings(doc, self._source)
            self._warned = True
        import json

        verdict, file, said, cols = _core.scenario_columns(json.dumps(doc, allow_nan=True), _base(self._source))
        if verdict != "ok":
            raise said_error(said, file or self._source)
        return cols

    def header(self) -> dict:
        """The wire header the engine compiles: network, routing, sources, TCP, measurement. The workload
        (messages, barriers, compute steps, collectives) travels as columns (`fabricsim.Workload`)."""
        return self._read("header")

    def to_wire(self) -> dict:
        """The complete wire RunSpec in its JSON row form, messages and barriers included (see
        crates/fabricsim-core/src/spec.rs); the regression corpus and tests use it. Compute steps and
        collectives exist only in the columnar form."""
        return self._read("rows")


def engine_verdict(data: dict, source: str) -> tuple[str, ScenarioError | None]:
    """The engine's reader's verdict on a parsed scenario (`_core.scenario_check`): ("invalid", the user's error
    as a ScenarioError naming the file and the key as written), ("ok", None) when it is valid, or (verdict, None)
    when Python's models have a say: "warning" (values to warn about), "unsupported" (not a JSON document)."""
    import json

    from .. import _core
    try:
        text = json.dumps(data, allow_nan=True)
    except (TypeError, ValueError):
        return "unsupported", None
    verdict, file, said = _core.scenario_check(text, _base(source))
    if verdict != "invalid":
        return verdict, None
    return verdict, said_error(said, file or source)


INT_MAX = 2**63 - 1
"""The largest integer a scenario document holds (the engine reads TOML integers as 64-bit signed ones)."""


def out_of_range(data: Any, at: str = "") -> tuple[str, str] | None:
    """The first integer of a parsed document outside -2^63..2^63-1, as (field, reason) with the field written as
    the reader names it (`queue.limit_packets`, `messages[3].size`), or None. JSON would carry it as a float and
    the reader would name the float, not the number written. O(document)."""
    stack = [(at, data)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            if v > INT_MAX:
                return path, f"{v} is too large (at most {INT_MAX})"
            if v < -INT_MAX - 1:
                return path, f"{v} is too small (at least {-INT_MAX - 1})"
        elif isinstance(v, Mapping):
            stack.extend((f"{path}.{k}" if path else str(k), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{path}[{i}]", x) for i, x in reversed(list(enumerate(v))))
    return None


def scenario_from_dict(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate a parsed scenario (dict) completely; raises ScenarioError naming the field. The engine's reader
    is the validator (`engine_verdict`); Python's models build the typed scenario, and judge only what the reader
    leaves to them (a value to warn about: an implausible link rate or message size, a FabricsimWarning naming
    the file, the field and the value; a document it does not read). numpy numbers and arrays in `data` are read
    as the Python numbers and lists they hold."""
    from ..checks import plain, text

    source = str(source) if isinstance(source, Path) else text(source, "source")
    if not isinstance(data, dict):
        raise ScenarioError(source, "", f"a scenario must be a table of keys (a dict), got {type(data).__name__}")
    data = plain(data)
    if (bad := out_of_range(data)) is not None:
        raise ScenarioError(source, *bad)
    verdict, error = engine_verdict(data, source)
    if error is not None:
        raise error
    if verdict == "warning":
        say_warnings(data, source)
    with validating(source):
        try:
            sc = Scenario.model_validate(data)
        except ValidationError as e:
            field, msg = first_error(e, KINDS)
            raise ScenarioError(source, field, msg) from None
    if verdict != "ok" and (bad := non_finite(data)) is not None:
        # a NaN or infinity the models keep as given (a table the engine declares, [uec]); JSON cannot carry it
        raise ScenarioError(source, bad[0], f"must be a finite number, got {bad[1]}")
    sc._source = source
    sc._warned = True
    if verdict != "ok":  # the reader has judged the whole scenario when it says ok
        sc.check()
    return sc
