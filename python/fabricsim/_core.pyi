"""Type stubs of the private native module fabricsim._core (built from crates/fabricsim-py).

Errors are the package's own exceptions (fabricsim.errors): SpecError (with `field` and `reason`),
ConservationError and SimulationError, all deriving from FabricsimError; they are re-exported here."""

from typing import Any, Callable

import numpy as np

from .errors import ConservationError as ConservationError
from .errors import SimulationError as SimulationError
from .errors import SpecError as SpecError

MISSING: int
"""A missing time in a uint64 record column (2**64 - 1)."""

FLOW_KINDS: tuple[str, ...]
"""`flows.kind` codes, in the engine's order."""

def run(header_json: str, columns: dict[str, Any] | None = None, fidelity: str = "packet",
        max_events: int | None = None, max_wall_s: float | None = None,
        progress: Callable[[int, int | None, int, int, int, float], object] | None = None,
        ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Compile and simulate a scenario with the packet ("packet") or flow-level ("flow") engine; the GIL is
    released.

    `header_json` is the wire RunSpec header (network, routing, sources, tcp, collectives, measure; optional
    `messages`/`barriers` rows, lowered into the same columns). `columns` is the bulk workload
    (`Workload.columns()`): uint32 `src`, `src_nic`, `dst`, `dst_nic`, `packet`, `header`, `path`; uint64
    `size`, `start_ps`, `delay_ps`; int `n_barriers`; uint32 `compute_host`, uint64 `compute_ps`; uint32
    `streams_host`, `streams_count`; uint32 CSR `pred_start`/`pred` over messages, barriers, compute steps
    (references tagged in the top two bits: 0 delivered, 1 sent, 2 barrier, 3 compute); uint32 CSR
    `path_start`/`path_nodes`; `names` (list of str) with uint32 `msg_name`, `barrier_name`, `compute_name`.

    `max_events` / `max_wall_s` stop the run early, and so does Ctrl-C (the engine runs Python's signal
    handlers about every 50 ms): the record so far comes back with scalars["halted"] = "max_events",
    "max_wall" or "interrupted" (None after a whole run). `progress(now_ps, stop_ps, events, msgs_done,
    msgs_total, wall_s)` is called about every 50 ms and once at the end (with keywords `bytes_done` and
    `bytes_total`, the messages' payload delivered and in all, when it has a true `progress_bytes` attribute);
    an exception it raises propagates.

    Returns (scalars, columns): scalars hold totals and name lists; columns are numpy arrays keyed
    `flows.*`, `queues.*`, `samples.*`, `compute.*`, `hosts.*` (missing times = MISSING). scalars["deadlock"]
    is None or the cycle of paused ports that stopped the run ("A->B -> B->C -> C->A -> A->B"). With PFC, ECN
    or RDMA in the spec, scalars["cnps"] counts ACKs carrying a CNP that reached their sender, and the columns
    add `roce.pause_tx`, `roce.pause_rx`, `roce.paused_ps`, `roce.ecn_marks`, `roce.peak_ingress_bytes` (uint64,
    one row per port as `queues.*`), the rate log `rates.t_ps`, `rates.flow` (uint32: the QP's data flow row),
    `rates.rate_bps`, and the PFC log `pfc.t_ps`, `pfc.port` (uint32: the paused port's row), `pfc.pause`
    (bool: PAUSE True, RESUME False). `flows.kind` 5 is an RDMA ACK flow ("rdma-ack")."""

def validate(header_json: str, columns: dict[str, Any] | None = None, fidelity: str = "packet") -> int:
    """Compile without simulating (every check of `run`); returns the number of messages after collectives
    are expanded."""

def compile_stats(header_json: str, columns: dict[str, Any] | None = None) -> dict[str, Any]:
    """Compile as `validate` does and report the cost (benchmarks): "compile_s" (wall seconds from the header
    JSON and columns to the compiled scenario), "fib_bytes" (forwarding tables), "fib_groups" (attachment
    switches) and "fib_classes" (base tables the groups share)."""

def expand_collective(spec_json: str, msgs: int, barriers: int, compute: int) -> dict[str, Any]:
    """Columns of one collective (a CollectiveSpec as JSON) appended to a workload with the given counts;
    dependency references are absolute."""

def record_schema() -> list[tuple[str, str, str, bool, str | None, str | None, str | None, str, str, str]]:
    """The run record's one schema (crates/fabricsim-core/src/record_schema.rs), one tuple per field: (name,
    dtype, unit, missing, labels, json key, json form, when, description, source); see fabricsim.record.Field."""

def record_json(scalars: dict[str, Any], columns: dict[str, np.ndarray], flows: bool = True) -> str:
    """The record's --json object, written by the engine's one writer of it (the native CLI prints through it
    too); the flow rows are null with `flows` false."""

def scenario_schema() -> str:
    """The scenario tables declared in the engine ([pfc], [ecn], [[ecn.rate]], [rdma], [hybrid]) as JSON: each
    table's meaning and keys (name, JSON Schema with unit, meaning, default); fabricsim.spec.generated's input."""

def scenario_check(doc_json: str, base: str | None = None) -> tuple[str, str | None, str]:
    """The engine's reader's verdict on a parsed scenario: ("ok", None, ""), ("invalid", file, "field: reason"),
    ("warning", file, text) (file: the graph file the value is in, else None) or ("unsupported", None, why);
    `base` is the folder a graph file is relative to."""

def scenario_read(doc_json: str, what: str, base: str | None = None, quiet: bool = True) -> tuple[str, str | None, str]:
    """The engine's reading of a scenario document: `what` = "header" (the wire header), "rows" (the row-form
    wire), "network" (the document is a [topology] table: its network with node names) or "warnings" (its
    implausible values: {"said": [{"file", "text"}] (the first three), "total": n}). Returns ("ok", None, JSON
    text), ("invalid", file, "field: reason") or, unless `quiet`, ("warning", file, the first implausible value)."""

def scenario_columns(doc_json: str, base: str | None = None) -> tuple[str, str | None, str, dict[str, Any] | None]:
    """The scenario's own workload rows lowered by the engine's reader: ("ok", None, "", numpy columns keyed as
    Workload.columns() keys them, plus n_messages, n_barriers, n_compute; None without rows) or ("invalid", file,
    "field: reason", None)."""

def astra_network(text: str, fmt: str) -> tuple[str, str]:
    """An ASTRA-sim network configuration (its file's text; `fmt` "yaml" or "json") as a fabric document: ("ok",
    JSON text of {"topology": {"kind": "multi_dim", ...}, "queue": {...}}) or ("invalid", "key: reason"), the key
    as the configuration writes it (`npus_count[1]`, `line 3`; none for the whole file)."""

def rows_json(table: str, columns: dict[str, np.ndarray], names: dict[str, Any], rows: list[int] | None = None) -> str:
    """The `--json` rows of `table` ("flows", "queues") as one JSON array, as the schema writes them: `columns`
    keyed by full name as `run` returns them, `names` holding node_names, flow_names and queue_names (the
    record's scalars), `rows` the rows to write (all by default). Raises SpecError for a missing or mistyped
    column."""

def derive(table: str, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The schema's derived fields of `table` (flows.throughput_bps, mean_delay_s, max_delay_s) as float64
    arrays keyed by full name, NaN where undefined."""

def maxmin(capacity: list[float], uses: list[list[tuple[int, float]]], caps: list[float | None]) -> list[float]:
    """Max-min fair rates of flows over resources (the flow engine's solver)."""

def read_chakra(path: str) -> dict[str, Any]:
    """Read one rank's Chakra execution trace (`PREFIX.{rank}.et`, gzip-compressed or not) into columns, one
    row per Node in file order; the GIL is released while decoding. I/O and decode errors (truncated varint or
    record, bad protobuf, missing GlobalMetadata, duplicate node id, a typed attribute of the wrong kind)
    raise SpecError whose field names the file (and the node or record).

    Keys: "version" (str, GlobalMetadata.version; "" when the trace keeps it in a `schema` attribute),
    "names" (list of str: node names and pg_name values, interned), "meta_extra" (bytes: the raw
    GlobalMetadata attributes), and numpy arrays: uint64 `id`; uint32 `name` (index into names); uint8
    `node_type` (NodeType: 4 COMP, 5 COMM_SEND, 6 COMM_RECV, 7 COMM_COLL, ...); uint64 `duration_micros`;
    the typed attributes, whichever integer variant carried them: int32 `comm_type` (-1 absent), uint64
    `comm_size` (0 absent), int64 `comm_src`, `comm_dst`, `comm_tag` (-1 absent), uint32 `pg_name` (index
    into names, 2**32 - 1 absent), uint64 `num_ops`, `tensor_size` (0 absent), uint8 `is_cpu_op` (0/1, 2
    absent); dependencies as CSR: uint32 `data_dep_start` (n + 1) with uint64 `data_deps` (node ids), uint32
    `ctrl_dep_start` with uint64 `ctrl_deps`; uint64 `extra_start` (n + 1) with uint8 `extra`: every other
    field of each node (start time, inputs/outputs, other attributes) as raw protobuf bytes."""

def write_chakra(path: str, columns: dict[str, Any]) -> None:
    """Write a dict shaped as `read_chakra` returns (same dtypes) as a Chakra ET file, gzip-compressed if
    `path` ends with ".gz"; `read_chakra` of the result gives the same columns. "id", "name", "names" and
    "node_type" are required; a missing attribute column means absent everywhere, missing CSR columns no
    dependencies. Invalid columns raise SpecError naming the path and the column; nothing is written."""

def roce_presets() -> str:
    """The RoCE presets as JSON, in wire units (bytes, ps, bit/s): {"pfc": {PfcSpec}, "ecn": {preset: {"thresholds":
    [...]}}, "rdma": {preset: {cc: {RdmaSpec}}}} with presets "hpcc", "simai", "dcqcn_paper" and cc "none",
    "dcqcn", "hpcc" (crates/fabricsim-core/src/roce.rs; docs/roce_parameters.md gives the sources)."""

def version() -> str:
    """Version of the native engine."""

def fast_cli(argv: list[str], progress: Callable[[int, int | None, int, int, int, float], object] | None = None
             ) -> tuple[int, str, str] | None:
    """The native start (`fabricsim._entry`): `argv` (without the program name) of the form `run FILE [--seed N]
    [--fidelity packet|flow] [--quiet] --json` or `validate FILE`, read, resolved, checked and (for `run`)
    simulated in Rust. Returns (exit code, stdout, stderr) exactly as the click CLI would produce them, or None
    when the native front door is not sure (any other command or flag, a graph topology, a scenario Python rejects
    or warns about, an engine error): the caller then runs the click CLI. `progress` is called as `run`'s; Ctrl-C
    stops the run (exit 130)."""

def native_scenario(path: str) -> tuple[bool, str]:
    """What the native front door makes of a scenario file, for tests: (True, JSON of {"header", "rows", "columns"},
    as Python's `Scenario.header()`, `Scenario.to_wire()` (small scenarios, else null) and `Workload.columns()`
    (as lists, or null without workload rows)), or (False, why it declines), one of:
    "field: reason" — the file is invalid; field and reason as Python's front door names them (a whole-file
    problem has no field: "line 3: TOML syntax error: ...", "cannot read: ...");
    "warning: field = value means ..." — Python would warn about the value (its warning, without the file);
    "unsupported: why" — the file may be valid but this port does not read it (a graph topology, a very large
    fabric, fidelity = "hybrid", a name with characters other than printable ASCII)."""
