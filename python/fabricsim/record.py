"""RunRecord: the engine's result as numpy columns (per flow, queue, sample, compute step and host), with pandas/Arrow/Parquet views.

The record has one schema, declared once in the engine (crates/fabricsim-core/src/record_schema.rs) and read here
as `SCHEMA`: every column's name, type, unit, missing-value rule, labels, description and place in the `--json`
rows, and the per-row metrics derived from them. `frame()`, `to_arrow()`, `to_parquet()`, `flows()`, `queues()`,
`to_json()`, `values()` and `digests()` all follow it, so a new column is one row of that table.
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from . import _core, checks
from .errors import ArgumentError

PS = 1e-12
MISSING = np.iinfo(np.uint64).max
"""A missing time in a uint64 column (nothing sent or received, never completed)."""

FLOW_KINDS: tuple[str, ...] = tuple(_core.FLOW_KINDS)
"""`flows.kind` codes, in the engine's order."""

WORK_SCALARS = ("wall_s", "events")
"""Scalars that measure the engine's work rather than the simulated network; `digests` leaves them out."""


class Field(NamedTuple):
    """One field of the record's schema: `name` is "table.column" ("flows.tx_bytes"); `dtype` its Arrow type name
    ("uint64", "float64", ...); `unit` ("ps", "bytes", "packets", "s", "b/s"; "" for codes and names); `missing`
    whether MISSING (or NaN, derived) marks a missing value; `labels` the name list its codes index ("node_names",
    "flow_names", "queue_names" of the scalars, or "flow_kinds"); `json_key` and `json_form` its place in the
    table's `--json` rows ("label", "int", "seconds" from ps, "float"); `when` "" (every record), "hybrid" or
    "roce"; `source` "stored" (a column of `RunRecord.columns`), "derived" (computed from them) or "row_name"."""

    name: str
    dtype: str
    unit: str
    missing: bool
    labels: str | None
    json_key: str | None
    json_form: str | None
    when: str
    description: str
    source: str

    @property
    def table(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def column(self) -> str:
        return self.name.split(".", 1)[1]


SCHEMA: tuple[Field, ...] = tuple(Field(*t) for t in _core.record_schema())
"""Every field of the record, table by table, in the order of frames, Arrow tables and `--json` rows."""

TABLES: tuple[str, ...] = tuple(dict.fromkeys(f.table for f in SCHEMA))
"""The record's tables: flows, queues, samples, compute, timeline, hosts, roce, rates, windows, pfc."""

_BY_NAME = {f.name: f for f in SCHEMA}


def fields(table: str) -> tuple[Field, ...]:
    """The fields of `table` ("flows"), in order."""
    if table not in TABLES:
        raise ValueError(f"table: one of {', '.join(TABLES)}, not {table!r}")
    return tuple(f for f in SCHEMA if f.table == table)


def _arrow_field(f: Field):
    import pyarrow as pa

    if f.labels:
        typ = pa.dictionary(pa.int32(), pa.string())
    else:
        typ = {"string": pa.string(), "bool": pa.bool_()}.get(f.dtype) or getattr(pa, f.dtype)()
    meta = {"unit": f.unit, "description": f.description, "fabricsim.field": f.name}
    if f.missing:
        meta["missing"] = "null: " + ("never happened" if f.unit == "ps" else "undefined")
    return pa.field(f.column, typ, nullable=f.missing, metadata=meta)


def arrow_schema(table: str = "flows", present: list[str] | None = None):
    """The pyarrow Schema of `table` (the fields `present` names, by full name, or all of them): codes as
    dictionaries of their labels, missing values as nulls, each field's unit and description as its metadata."""
    import pyarrow as pa

    fs = [f for f in fields(table) if present is None or f.name in present]
    return pa.schema([_arrow_field(f) for f in fs], metadata={"fabricsim.table": table})


class RecordKeyError(ArgumentError, KeyError):
    """A column or table the record's schema does not have: an ArgumentError, and a KeyError as a lookup is."""

    def __str__(self) -> str:
        return f"{self.param}: {self.reason}"


class RunRecord:
    """One run's record. `scalars` holds totals and names; `columns` numpy arrays keyed `flows.*`,
    `queues.*`, `samples.*`, `compute.*`, `hosts.*`, `timeline.*` and, for RoCE runs, `roce.*` (per port, as
    `queues.*`), `rates.*` and `pfc.*`; UEC runs (transport = "uec", packet fidelity) add `flows.acked_ps`,
    `flows.retransmits` and `windows.*` (times in ps, missing times = `MISSING`), as `SCHEMA` declares them.
    Properties give SI units; `frame(table)` is a pandas DataFrame of a table (the flows by default, messages
    included), `to_arrow(table)` a pyarrow Table, `values(name)` one column as Python values."""

    def __init__(self, scalars: dict[str, Any], columns: dict[str, np.ndarray]):
        checks.instance(scalars, dict, "scalars", "the dict of scalars fabricsim.run's record holds")
        checks.instance(columns, dict, "columns", "the dict of numpy columns fabricsim.run's record holds")
        self.scalars = scalars
        self.columns = columns

    @property
    def seed(self) -> int:
        return self.scalars["seed"]

    @property
    def fidelity(self) -> str:
        return self.scalars["fidelity"]

    @property
    def events(self) -> int:
        return self.scalars["events"]

    @property
    def fast_forward(self) -> dict[str, Any] | None:
        """What a hybrid run's steady-state jumps skipped (None at packet and flow fidelity): `jumps`,
        `skipped_s` (simulated seconds jumped), `skipped_packets` (packets delivered inside jumps, their counts
        *extrapolated* from the steady windows before each jump, not simulated), `window_s` (the detector's
        window) and `note` (why the run went packet by packet, when it had to). Per flow:
        `columns["flows.skipped_packets"]`."""
        ff = self.scalars.get("fast_forward")
        if ff is None:
            return None
        return {"window_s": ff["window_ps"] * PS, "jumps": ff["jumps"], "skipped_s": ff["skipped_ps"] * PS,
                "skipped_packets": ff["skipped_packets"], "note": ff["note"]}

    @property
    def wall_s(self) -> float:
        """Engine wall-clock seconds (the only field that differs between identical runs)."""
        return self.scalars["wall_s"]

    @property
    def completion_time_s(self) -> float | None:
        """When the last message (or compute step) completed; None without work or if something never
        completed (a loss on a lossy fabric: messages have no retransmission)."""
        c = self.scalars["completion_ps"]
        return None if c is None else c * PS

    @property
    def end_time_s(self) -> float:
        return self.scalars["end_ps"] * PS

    @property
    def halted(self) -> str | None:
        """Why the run stopped before its end: "interrupted" (Ctrl-C), "max_events" or "max_wall" (the
        limits of `fabricsim.run`); None when it ran until no event was left or its stop time."""
        return self.scalars.get("halted")

    @cached_property
    def _incomplete(self) -> np.ndarray:
        """Flow-row indices of the messages that were never delivered, in order."""
        kind = self.columns["flows.kind"]
        done = self.columns["flows.complete_ps"]
        return np.flatnonzero((kind == FLOW_KINDS.index("message")) & (done == MISSING))

    def _flow_labels(self, rows) -> list[str]:
        """The name of each flow row in `rows` (`messages[i]` for an unnamed message, i counting messages in
        workload order)."""
        names = self.scalars["flow_names"]
        kind = self.columns["flows.kind"]
        first_msg = int(np.argmax(kind == FLOW_KINDS.index("message")))
        out = []
        for i in rows:
            k = int(self.columns["flows.name"][i])
            out.append(names[k] if k < len(names) else f"messages[{int(i) - first_msg}]")
        return out

    @property
    def incomplete_messages(self) -> int:
        """How many messages were never delivered (a halt, the stop time, messages that gave up retransmitting)."""
        return int(len(self._incomplete))

    def incomplete_message_names(self, limit: int = 5) -> list[str]:
        """Names of the first `limit` undelivered messages (`messages[i]` for an unnamed one, i counting
        messages in workload order)."""
        return self._flow_labels(self._incomplete[:limit])

    @property
    def complete(self) -> bool:
        """Whether the run ended on its own (no halt, no deadlock) with every message delivered and every
        compute step finished."""
        comp = self.columns.get("compute.end_ps")
        return (self.halted is None and self.deadlock is None and not len(self._incomplete)
                and not (comp is not None and bool((comp == MISSING).any())))

    @property
    def reached_stop(self) -> bool:
        """Whether the run ended at the scenario's stop time with events still pending."""
        return bool(self.scalars.get("reached_stop", False))

    @property
    def retransmit(self) -> dict[str, int]:
        """The message transport's retransmissions: `lost_packets` (workload message packets lost: full queues,
        failed links, bit errors), `timeouts` (retransmission timeouts that re-sent), `packets` and `bytes`
        (payload) re-sent, and `abandoned` (messages that gave up after `[retransmit] max_retries` timeouts without
        progress). Empty when no message lost a packet (and for the RDMA transport, which recovers by NACK)."""
        return dict(self.scalars.get("retransmit") or {})

    def incomplete_reason(self, stop_s: float | None = None) -> str | None:
        """One sentence on why the run did not complete, or None if it did: a halt, drops the RDMA transport
        could not recover (a lost tail), messages that gave up retransmitting, the scenario's stop (`stop_s`, for
        the message) reached first, or a workload that stopped moving (no event left with messages undelivered: a
        lossless deadlock, or dependencies never met)."""
        if self.complete:
            return None
        n = self.incomplete_messages
        names = ", ".join(self.incomplete_message_names(3)) + (", ..." if n > 3 else "")
        what = f"{n:,} message(s) never delivered ({names})" if n else "compute steps never finished"
        dropped = self.packets["dropped"]
        if self.deadlock is not None:
            return f"deadlock: a cycle of paused ports: {self.deadlock}; {what}"
        if self.halted == "interrupted":
            why = "the run was interrupted"
        elif self.halted is not None:
            why = f"the run was stopped by its {self.halted.replace('_', ' ')} limit"
        elif dropped and (self.columns["flows.kind"] == FLOW_KINDS.index("rdma-ack")).any():
            why = (f"{dropped:,} packet(s) were dropped and the RDMA transport resends only on a NACK (go-back-N, no "
                   "retransmission timeout, as HPCC's model): a lost tail is never resent; for a failed link or bit "
                   "errors use transport = \"message\", which resends on a timeout ([retransmit]), and for full queues "
                   "lossless switches (switch_model = \"shared_buffer\" with [pfc]) or longer queues")
        elif self.retransmit.get("abandoned"):
            why = (f"{dropped:,} packet(s) were dropped and {self.retransmit['abandoned']:,} message(s) gave up after "
                   "[retransmit] max_retries timeouts without progress (a host cut off by a failure, or a path that "
                   "kept losing; max_retries = 0 turns retransmission off): bring the link back (link_up), add paths, "
                   "or raise retransmit.max_retries")
        elif self.reached_stop:
            why = "the scenario's stop" + (f" ({stop_s:.6g} s)" if stop_s is not None else "") + " came first"
        else:
            why = ("no event was left with work outstanding: a lossless fabric deadlocked or a dependency was "
                   "never met")
        return f"the workload did not complete: {what}; {why}"

    # ---- RoCE: PFC, ECN, RDMA ------------------------------------------------------------------------------

    @property
    def has_roce(self) -> bool:
        """Whether the run had PFC, ECN marking or the RDMA transport (and so RoCE counters)."""
        return "roce.pause_tx" in self.columns

    def _roce_sum(self, column: str) -> int:
        c = self.columns.get(f"roce.{column}")
        return 0 if c is None else int(c.sum())

    @property
    def pfc_pauses(self) -> int:
        """PAUSE frames the switches sent upstream (0 without RoCE)."""
        return self._roce_sum("pause_tx")

    @property
    def pfc_paused_s(self) -> float:
        """Paused time of the data priority summed over every port, in seconds (0 without RoCE)."""
        return self._roce_sum("paused_ps") * PS

    @property
    def ecn_marks(self) -> int:
        """Packets marked Congestion Experienced at switch egress ports (0 without RoCE)."""
        return self._roce_sum("ecn_marks")

    @property
    def cnps(self) -> int:
        """ACKs carrying a congestion notification (CNP) that reached their sender (0 without RoCE)."""
        return int(self.scalars.get("cnps") or 0)

    @property
    def deadlock(self) -> str | None:
        """The cycle of paused ports that stopped the run ("A->B -> B->C -> C->A -> A->B": each port waits on
        the next), or None."""
        return self.scalars.get("deadlock")

    def roce_ports(self, only_active: bool = True):
        """Per port (named "node->peer" as in `queues()`): PAUSE frames sent upstream (`pause_tx`, by the port's
        ingress side) and received (`pause_rx`), seconds its data priority was paused (`paused_s`), ECN marks at
        its egress, and the peak bytes its ingress held in a shared-buffer switch. A pandas DataFrame; by default
        only ports with a nonzero counter; empty without RoCE."""
        import pandas as pd

        cols = ("pause_tx", "pause_rx", "paused_s", "ecn_marks", "peak_ingress_bytes")
        if not self.has_roce:
            return pd.DataFrame({k: [] for k in ("port", "node", *cols)})
        c = self._cols("roce")
        df = pd.DataFrame({
            "port": list(self.scalars["queue_names"]),
            "node": [self.scalars["node_names"][k] for k in self.columns["queues.node"].tolist()],
            "pause_tx": c["pause_tx"], "pause_rx": c["pause_rx"], "paused_s": c["paused_ps"] * PS,
            "ecn_marks": c["ecn_marks"], "peak_ingress_bytes": c["peak_ingress_bytes"],
        })
        if only_active:
            df = df[(df[list(cols)] != 0).any(axis=1)].reset_index(drop=True)
        return df

    def rates(self):
        """The RDMA rate log: one row per rate change of a queue pair (its first rate included), `t_s`, `flow`
        (the name of the QP's message) and `rate_gbps`. A pandas DataFrame; empty without RDMA."""
        import pandas as pd

        t = self.columns.get("rates.t_ps", np.zeros(0, dtype=np.uint64))
        flow = self.columns.get("rates.flow", np.zeros(0, dtype=np.uint32))
        bps = self.columns.get("rates.rate_bps", np.zeros(0, dtype=np.uint64))
        return pd.DataFrame({"t_s": t * PS, "flow": self._flow_categorical(flow), "rate_gbps": bps / 1e9})

    def pfc_events(self):
        """The PFC log: each PAUSE (`pause` True) or RESUME (False) as it takes effect at the paused port
        (`port`, the upstream sender's "node->peer"), at `t_s`. A pandas DataFrame; empty without PFC frames."""
        import pandas as pd

        t = self.columns.get("pfc.t_ps", np.zeros(0, dtype=np.uint64))
        port = self.columns.get("pfc.port", np.zeros(0, dtype=np.uint32))
        names = list(self.scalars.get("queue_names") or [])
        return pd.DataFrame({
            "t_s": t * PS,
            "port": [names[k] for k in port.tolist()],
            "pause": self.columns.get("pfc.pause", np.zeros(0, dtype=bool)).astype(bool),
        })

    # ---- UEC: trimming, NACKs, windows ------------------------------------------------------------------------

    @property
    def uec(self) -> dict[str, int]:
        """The UEC transport's counters over the whole run ({} for any other run, and at flow fidelity, which
        models UEC as fluid flows): `data_packets` (data packets sent, new and re-sent), `trims` (data packets
        trimmed to their header at a full switch queue), `trimmed_received` (trimmed headers that reached their
        receiver), `nacks` (NACKs the receivers sent, one per trimmed header that was not a duplicate), `acks`
        (ACKs the receivers sent), `ecn_echoes` (ACKs echoing an ECN mark to their sender), `timeouts`
        (retransmission timeouts that fired), `retransmits` (data packets re-sent, after a NACK or a timeout; a
        packet queued for re-sending whose ACK arrives first is not re-sent), `duplicates` (data packets that
        arrived twice), `out_of_order` (data packets that arrived ahead of the next expected one), `pulls`
        (credit packets of RCCC) and `timer_acks` (ACKs sent by the receivers' coalescing timer, `[uec]
        ack_timer`)."""
        return dict(self.scalars.get("uec") or {})

    @property
    def has_uec(self) -> bool:
        """Whether the run had the UEC transport at packet fidelity (and so its counters and window log)."""
        return "windows.t_ps" in self.columns

    def uec_connections(self) -> np.ndarray:
        """The flow rows of the UEC connections (their data flows), in message order; empty without UEC."""
        if not self.has_uec:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.columns["flows.kind"] == FLOW_KINDS.index("message"))

    def uec_fct_s(self) -> np.ndarray:
        """Each UEC connection's flow completion time as uet-htsim's `htsim_uec` counts it (s): when its sender
        saw the last byte acknowledged (`flows.acked_ps`) less its start, in message order (`uec_connections`);
        NaN for a connection never fully acknowledged. Empty without UEC."""
        rows = self.uec_connections()
        if not len(rows):
            return np.zeros(0)
        acked = self.columns["flows.acked_ps"][rows]
        start = self.columns["flows.start_ps"][rows]
        done = acked != MISSING
        return np.where(done, (acked - np.where(done, start, 0)).astype(np.float64) * PS, np.nan)

    def windows(self):
        """The UEC window log: one row per change of a connection's NSCC congestion window (RCCC: its credit) by
        an MTU or more, or 1 µs after its last row (its first value, the maximum window, included): `t_s`, `flow`
        (the name of the connection's message) and `bytes`. A pandas DataFrame; empty without UEC."""
        import pandas as pd

        t = self.columns.get("windows.t_ps", np.zeros(0, dtype=np.uint64))
        flow = self.columns.get("windows.flow", np.zeros(0, dtype=np.uint32))
        b = self.columns.get("windows.bytes", np.zeros(0, dtype=np.uint64))
        return pd.DataFrame({"t_s": t * PS, "flow": self._flow_categorical(flow), "bytes": b})

    def _flow_categorical(self, flow: np.ndarray):
        """The names of flow rows `flow` (a log's flow column): a Categorical when the names are unique, else an
        object array. O(rows + distinct flows)."""
        import pandas as pd

        rows, codes = np.unique(flow, return_inverse=True)
        labels = self._flow_labels(rows)
        codes = codes.astype(np.int64)
        return pd.Categorical.from_codes(codes, categories=labels) if len(set(labels)) == len(labels) \
            else np.asarray(labels, dtype=object)[codes]

    @property
    def packets(self) -> dict[str, int]:
        """Totals: tx = rx + dropped + in_flight (checked by the engine)."""
        return dict(self.scalars["packets"])

    @property
    def hops(self) -> dict[int, int]:
        """Received packets by number of switches crossed (nonzero entries only)."""
        return {k: n for k, n in enumerate(self.scalars["hops"]) if n}

    def _cols(self, prefix: str) -> dict[str, np.ndarray]:
        n = len(prefix) + 1
        return {k[n:]: v for k, v in self.columns.items() if k.startswith(prefix + ".")}

    def throughput(self):
        """Throughput over time (`measure.throughput_interval`): a pandas DataFrame with one row per bin,
        `t_s` (the bin's start), `rx_payload_bytes` delivered in it and `gbps` (payload bits over the bin)."""
        import pandas as pd

        b = self.scalars.get("bin_ps")
        rx = self.columns.get("timeline.rx_payload_bytes", np.zeros(0, dtype=np.uint64))
        if not b:
            return pd.DataFrame({"t_s": [], "rx_payload_bytes": [], "gbps": []})
        t = np.arange(len(rx), dtype=np.float64) * (b * 1e-12)
        return pd.DataFrame({"t_s": t, "rx_payload_bytes": rx, "gbps": rx.astype(np.float64) * 8 / (b * 1e-12) / 1e9})

    def message_completion_s(self) -> np.ndarray:
        """Completion time (s) of every message, in workload order; NaN for one that never completed."""
        c = self._cols("flows")
        msg = c["kind"] == FLOW_KINDS.index("message")
        t = c["complete_ps"][msg]
        return np.where(t == MISSING, np.nan, t.astype(np.float64) * PS)

    def _labels(self, f: Field, codes: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """(codes, categories) of a labelled column: categories unique, "" for a code outside its list (an
        unnamed message's name)."""
        pool = list(FLOW_KINDS if f.labels == "flow_kinds" else self.scalars.get(f.labels) or ())
        codes = codes.astype(np.int64)
        bad = codes >= len(pool)
        if f.labels == "flow_names" or bad.any():
            codes[bad] = len(pool)
            pool.append("")
        if len(set(pool)) != len(pool):
            pool, inverse = np.unique(np.asarray(pool, dtype=object), return_inverse=True)
            codes, pool = inverse[codes], list(pool)
        return codes, pool

    def _present(self, table: str) -> list[tuple[Field, Any]]:
        """The fields of `table` this record has, each with its values: numpy arrays for stored and derived
        fields, the list of row names for a row_name field."""
        if not isinstance(table, str) or table not in TABLES:
            raise RecordKeyError("table", f"{table!r} is not a table of the record (one of {', '.join(TABLES)})")
        out, derived = [], None
        for f in fields(table):
            if f.source == "derived":
                if derived is None:
                    derived = _core.derive(table, self.columns)
                out.append((f, derived[f.name]))
            elif f.source == "row_name":
                out.append((f, list(self.scalars.get(f.labels) or ())))
            elif f.name in self.columns:
                out.append((f, self.columns[f.name]))
        return out

    def values(self, name: str) -> list:
        """Column `name` ("flows.start_ps", a field of `SCHEMA`) as Python values: labels as their names, missing
        values as None."""
        if not isinstance(name, str) or name not in _BY_NAME:
            raise RecordKeyError("name", f"{name!r} is not a field of the record's schema (fabricsim.record.SCHEMA)")
        f = _BY_NAME[name]
        if f.source == "row_name":
            return list(self.scalars.get(f.labels) or ())
        v = _core.derive(f.table, self.columns)[name] if f.source == "derived" else self.columns[name]
        if f.labels:
            codes, pool = self._labels(f, v)
            return [pool[k] for k in codes.tolist()]
        if f.source == "derived":
            return [None if x != x else x for x in v.tolist()]
        return _opt(v) if f.missing else v.tolist()

    def frame(self, table: str = "flows"):
        """A pandas DataFrame of `table` (one of `TABLES`; the flows by default: sources, messages, TCP flows in
        record order), its columns as `SCHEMA` orders them: labels as categoricals, missing times as nullable
        UInt64, derived metrics (flows' throughput_bps, mean_delay_s, max_delay_s) as float64 with NaN."""
        import pandas as pd

        data = {}
        for f, v in self._present(table):
            if f.source == "row_name":
                data[f.column] = pd.Series(v, dtype=object)
            elif f.labels:
                codes, pool = self._labels(f, v)
                data[f.column] = pd.Categorical.from_codes(codes, categories=pool)
            elif f.missing and f.source == "stored":
                data[f.column] = pd.arrays.IntegerArray(v.copy(), v == MISSING).astype("UInt64") if len(v) \
                    else pd.array([], dtype="UInt64")
            else:
                data[f.column] = v
        return pd.DataFrame(data)

    def to_arrow(self, table: str = "flows"):
        """`table` as a pyarrow Table with `arrow_schema(table)`: codes as dictionaries of their labels, missing
        values as nulls, units and descriptions in each field's metadata."""
        import pyarrow as pa

        present = self._present(table)
        arrays = []
        for f, v in present:
            if f.source == "row_name":
                arrays.append(pa.array(v, pa.string()))
            elif f.labels:
                codes, pool = self._labels(f, v)
                arrays.append(pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(pool, pa.string())))
            elif f.missing:
                arrays.append(pa.array(v, mask=np.isnan(v) if f.source == "derived" else v == MISSING))
            else:
                arrays.append(pa.array(v))
        return pa.Table.from_arrays(arrays, schema=arrow_schema(table, [f.name for f, _ in present]))

    def to_parquet(self, path, table: str = "flows") -> None:
        """Write `to_arrow(table)` to a Parquet file: the Arrow schema, units and descriptions included."""
        import pyarrow.parquet as pq

        pq.write_table(self.to_arrow(table), path)

    def host_busy(self) -> list[dict[str, Any]]:
        """Per host that computes or communicates: compute, communication and exposed communication (the
        communication no compute overlaps) in seconds."""
        c = self._cols("hosts")
        nodes = self.scalars["node_names"]
        return [{"host": nodes[h], "compute_s": cp * PS, "comm_s": cm * PS, "exposed_comm_s": ex * PS}
                for h, cp, cm, ex in zip(c["node"].tolist(), c["compute_ps"].tolist(), c["comm_ps"].tolist(),
                                         c["exposed_comm_ps"].tolist())]

    @property
    def n_flows(self) -> int:
        return len(self.columns["flows.name"])

    def flows(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Per-flow rows with FlowMonitor's meaning, in SI units (the first `limit` only, if given): the `--json`
        rows, the fields of `SCHEMA` with a json_key. throughput_bps = rx_bytes * 8 / (last_rx - first_tx), the
        usual FlowMonitor reduction."""
        cols = self.columns
        limit = checks.integer(limit, "limit", low=0, none=True)
        if limit is not None and limit < self.n_flows:
            cols = {k: v[:limit] for k, v in cols.items() if k.startswith("flows.")}
        return json.loads(_core.rows_json("flows", cols, self.scalars))

    def queues(self, only_active: bool = True) -> list[dict[str, Any]]:
        """Per-egress-queue rows (name 'node->peer'); by default only queues that carried or dropped packets."""
        c = self.columns
        rows = np.flatnonzero((c["queues.tx_packets"] != 0) | (c["queues.drops"] != 0)).tolist() if only_active else None
        return json.loads(_core.rows_json("queues", c, self.scalars, rows))

    def links(self) -> list[dict[str, Any]]:
        """One row per directed link (egress port), busiest first, as the --json object's `links` (the engine's one
        writer): name ("node->peer"), rate_bps (line rate), bytes and packets sent, utilization = bytes·8 /
        (rate_bps · `links_span_s`), gbps (mean rate over that span), peak_bytes and peak_packets of its queue
        (None at flow fidelity: the fluid model has no queues), pfc_pauses (PAUSE frames its sender received) and
        drops; a link that a `link_rate` event changed also has rate_end_bps, the rate in force at the end (its
        rate_bps and utilization stay the topology's line rate's). O(ports · log ports)."""
        return json.loads(_core.record_json(self.scalars, self._queue_columns(), False))["links"]

    @property
    def links_span_s(self) -> float:
        """The span link utilization is measured over: the completion time when the workload has one, else the
        end time (s)."""
        ct = self.completion_time_s
        return ct if ct else self.end_time_s

    def _queue_columns(self) -> dict[str, np.ndarray]:
        """The queue and RoCE columns (what the `links` rows read), so the writer skips the flow rows' work."""
        return {k: v for k, v in self.columns.items() if k.startswith(("queues.", "roce."))}

    def digests(self) -> dict[str, str]:
        """sha256 of every column (its dtype, length and bytes), keyed by the column's name ("flows.tx_bytes"),
        and of every scalar (its canonical JSON) keyed "scalars.NAME", engine-work scalars (WORK_SCALARS) left
        out. The regression corpus keeps these, so a changed record names the columns that changed, and a new
        column is covered the moment the engine writes it. O(record size)."""
        import hashlib

        out = {}
        for name in sorted(self.columns):
            a = np.ascontiguousarray(self.columns[name])
            h = hashlib.sha256(f"{a.dtype.str}:{a.shape}:".encode())
            h.update(a.tobytes() if a.dtype != object else json.dumps(a.tolist(), sort_keys=True).encode())
            out[name] = h.hexdigest()
        for k in sorted(self.scalars):
            if k not in WORK_SCALARS:
                out[f"scalars.{k}"] = hashlib.sha256(json.dumps(self.scalars[k], sort_keys=True, default=str).encode()).hexdigest()
        return out

    def to_json_dict(self, flows: bool = True) -> dict[str, Any]:
        """The CLI's --json object (`flows=False` leaves the per-flow rows out: null), as `to_json` writes it."""
        return json.loads(self.to_json(flows))

    def to_json(self, flows: bool = True) -> str:
        """The CLI's --json object as JSON text, written by the engine's one writer of it (`_core.record_json`,
        which the native CLI prints too): the scalars, the schema's flow and queue rows, hosts, throughput, RoCE
        totals, the UEC counters (`uec`, as `RunRecord.uec`) and the fast-forward summary. A record of a million flows serializes in about a second."""
        return _core.record_json(self.scalars, self.columns, flows)

    def __repr__(self) -> str:
        p = self.packets
        return (f"RunRecord(seed={self.seed}, completion_time_s={self.completion_time_s}, tx={p['tx']}, "
                f"rx={p['rx']}, dropped={p['dropped']}, events={self.events})")


def _opt(v: np.ndarray) -> list:
    """uint64 times with MISSING → list of int or None."""
    out = v.tolist()
    if (v == MISSING).any():
        return [None if x == MISSING else x for x in out]
    return out
