"""RunRecord: the engine's result as numpy columns (per flow, queue, sample, compute step and host), with pandas/Parquet views."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

PS = 1e-12
MISSING = np.iinfo(np.uint64).max
"""A missing time in a uint64 column (nothing sent or received, never completed)."""

FLOW_KINDS = ("cbr", "onoff", "message", "tcp", "tcp-ack", "rdma-ack")
"""`flows.kind` codes, in the engine's order."""

WORK_SCALARS = ("wall_s", "events")
"""Scalars that measure the engine's work rather than the simulated network; `digests` leaves them out."""

_TIME_COLS = ("first_tx_ps", "last_tx_ps", "first_rx_ps", "last_rx_ps", "complete_ps", "start_ps")


class RunRecord:
    """One run's record. `scalars` holds totals and names; `columns` numpy arrays keyed `flows.*`,
    `queues.*`, `samples.*`, `compute.*`, `hosts.*` and, for RoCE runs, `roce.*` (per port, as `queues.*`),
    `rates.*` and `pfc.*` (times in ps, missing times = `MISSING`). Properties give SI units; `frame()` is a
    pandas DataFrame of the flows (messages included)."""

    def __init__(self, scalars: dict[str, Any], columns: dict[str, np.ndarray]):
        self.scalars = scalars
        self.columns = columns

    @classmethod
    def from_legacy(cls, raw: dict[str, Any]) -> "RunRecord":
        """A record from the engine's original JSON shape (hand-made records in tests, stored records)."""
        f, q, sm = raw["flows"], raw["queues"], raw.get("samples") or {}
        nodes = list(dict.fromkeys(list(f["src"]) + list(f["dst"])))
        at = {n: i for i, n in enumerate(nodes)}
        u64 = lambda v: np.asarray([MISSING if x is None else x for x in v], dtype=np.uint64)  # noqa: E731
        cols: dict[str, np.ndarray] = {
            "flows.name": np.arange(len(f["name"]), dtype=np.uint32),
            "flows.kind": np.asarray([FLOW_KINDS.index(k) for k in f["kind"]], dtype=np.uint8),
            "flows.src": np.asarray([at[x] for x in f["src"]], dtype=np.uint32),
            "flows.dst": np.asarray([at[x] for x in f["dst"]], dtype=np.uint32),
        }
        for k in ("tx_packets", "rx_packets", "lost_packets", "tx_bytes", "rx_bytes", "rx_payload_bytes",
                  "delay_sum_ps", "max_delay_ps", *_TIME_COLS):
            cols[f"flows.{k}"] = u64(f[k])
        for k in ("node", "port"):
            cols[f"queues.{k}"] = np.asarray(q[k], dtype=np.uint32)
        for k in ("tx_packets", "tx_bytes", "drops", "peak_packets", "peak_bytes"):
            cols[f"queues.{k}"] = u64(q[k])
        cols["samples.t_ps"] = u64(sm.get("t_ps", []))
        cols["samples.port"] = np.asarray(sm.get("port", []), dtype=np.uint32)
        cols["samples.packets"] = u64(sm.get("packets", []))
        cols["samples.bytes"] = u64(sm.get("bytes", []))
        scalars = {k: raw[k] for k in ("fidelity", "seed", "end_ps", "completion_ps", "events", "packets", "hops", "wall_s")}
        scalars.update(node_names=nodes, flow_names=list(f["name"]), queue_names=list(q["name"]))
        return cls(scalars, cols)

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
        """How many messages were never delivered (dropped packets: messages do not retransmit; a halt)."""
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

    def incomplete_reason(self, stop_s: float | None = None) -> str | None:
        """One sentence on why the run did not complete, or None if it did: a halt, drops (messages do not
        retransmit), the scenario's stop (`stop_s`, for the message) reached first, or a workload that stopped
        moving (no event left with messages undelivered: a lossless deadlock, or dependencies never met)."""
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
                   "retransmission timeout, as HPCC's model): a lost tail is never resent; use lossless switches "
                   "(switch_model = \"shared_buffer\" with [pfc]) or longer queues")
        elif dropped:
            why = (f"{dropped:,} packet(s) were dropped (full queues, failed links or bit errors) and messages do not "
                   "retransmit: use lossless switches (switch_model = \"input_buffered\") or longer queues, or "
                   "[[tcp]] over failing links")
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
        rows, codes = np.unique(flow, return_inverse=True)
        labels = self._flow_labels(rows)
        codes = codes.astype(np.int64)
        names = pd.Categorical.from_codes(codes, categories=labels) if len(set(labels)) == len(labels) \
            else np.asarray(labels, dtype=object)[codes]
        return pd.DataFrame({"t_s": t * PS, "flow": names, "rate_gbps": bps / 1e9})

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

    @cached_property
    def flow_columns(self) -> dict[str, Any]:
        """Per-flow columns with the engine's original meaning: names as lists of str, times as lists with
        None for missing (the legacy view; `frame()` is the fast one)."""
        c = self._cols("flows")
        nodes, names = self.scalars["node_names"], self.scalars["flow_names"]
        none = np.iinfo(np.uint32).max
        out: dict[str, Any] = {
            "name": [names[k] if k != none else "" for k in c["name"].tolist()],
            "kind": [FLOW_KINDS[k] for k in c["kind"].tolist()],
            "src": [nodes[k] for k in c["src"].tolist()],
            "dst": [nodes[k] for k in c["dst"].tolist()],
        }
        for k in ("tx_packets", "rx_packets", "lost_packets", "tx_bytes", "rx_bytes", "rx_payload_bytes"):
            out[k] = c[k].tolist()
        for k in ("first_tx_ps", "last_tx_ps", "first_rx_ps", "last_rx_ps"):
            out[k] = _opt(c[k])
        out["delay_sum_ps"] = c["delay_sum_ps"].tolist()
        out["max_delay_ps"] = c["max_delay_ps"].tolist()
        out["complete_ps"] = _opt(c["complete_ps"])
        out["start_ps"] = _opt(c["start_ps"])
        return out

    @property
    def queue_columns(self) -> dict[str, list]:
        c = self._cols("queues")
        out: dict[str, list] = {"name": list(self.scalars["queue_names"])}
        out.update({k: v.tolist() for k, v in c.items()})
        return out

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

    @property
    def samples(self) -> dict[str, list]:
        """Queue-depth samples: columns t_ps, port (index into queues), packets, bytes."""
        return {k: v.tolist() for k, v in self._cols("samples").items()}

    def message_completion_s(self) -> np.ndarray:
        """Completion time (s) of every message, in workload order; NaN for one that never completed."""
        c = self._cols("flows")
        msg = c["kind"] == FLOW_KINDS.index("message")
        t = c["complete_ps"][msg]
        return np.where(t == MISSING, np.nan, t.astype(np.float64) * PS)

    def frame(self):
        """Per-flow pandas DataFrame (sources, messages, TCP flows in record order): names as categoricals,
        missing times as nullable UInt64, plus throughput_bps and mean_delay_s."""
        import pandas as pd

        c = self._cols("flows")
        node_cat = self.scalars["node_names"]
        names = list(self.scalars["flow_names"]) + [""]
        name_codes = c["name"].astype(np.int64)
        name_codes[c["name"] == np.iinfo(np.uint32).max] = len(names) - 1
        unique = len(set(names)) == len(names)
        df = pd.DataFrame({
            "name": pd.Categorical.from_codes(name_codes, categories=names) if unique
            else pd.Categorical(np.asarray(names, dtype=object)[name_codes]),
            "kind": pd.Categorical.from_codes(c["kind"].astype(np.int8), categories=list(FLOW_KINDS)),
            "src": pd.Categorical.from_codes(c["src"].astype(np.int64), categories=node_cat),
            "dst": pd.Categorical.from_codes(c["dst"].astype(np.int64), categories=node_cat),
        })
        for k in ("tx_packets", "rx_packets", "lost_packets", "tx_bytes", "rx_bytes", "rx_payload_bytes",
                  "delay_sum_ps", "max_delay_ps"):
            df[k] = c[k]
        for k in _TIME_COLS:
            v = c[k]
            df[k] = pd.arrays.IntegerArray(v.copy(), v == MISSING).astype("UInt64") if len(v) else pd.array([], dtype="UInt64")
        span = (df["last_rx_ps"].astype("Float64") - df["first_tx_ps"].astype("Float64")) * PS
        df["throughput_bps"] = (df["rx_bytes"] * 8 / span.where(span > 0)).fillna(0.0).astype(np.float64)
        df["mean_delay_s"] = (df["delay_sum_ps"] * PS / df["rx_packets"].where(df["rx_packets"] > 0)).astype(np.float64)
        return df

    def to_parquet(self, path) -> None:
        """Write `frame()` to a Parquet file (pyarrow)."""
        self.frame().to_parquet(path, index=False)

    def compute_frame(self):
        """Compute steps: host, start and end (ps, nullable)."""
        import pandas as pd

        c = self._cols("compute")
        return pd.DataFrame({
            "host": pd.Categorical.from_codes(c["host"].astype(np.int64), categories=self.scalars["node_names"]),
            "start_ps": pd.arrays.IntegerArray(c["start_ps"].copy(), c["start_ps"] == MISSING),
            "end_ps": pd.arrays.IntegerArray(c["end_ps"].copy(), c["end_ps"] == MISSING),
        })

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
        """Per-flow rows with FlowMonitor's meaning, in SI units (the first `limit` only, if given).

        throughput_bps = rx_bytes * 8 / (last_rx - first_tx), the usual FlowMonitor reduction."""
        if limit is not None and limit < self.n_flows:
            head = RunRecord(self.scalars, {k: (v[:limit] if k.startswith("flows.") else v) for k, v in self.columns.items()})
            return head.flows()
        c = self.flow_columns
        rows = []
        for i in range(len(c["name"])):
            rx = c["rx_packets"][i]
            first_tx, last_rx = c["first_tx_ps"][i], c["last_rx_ps"][i]
            span = (last_rx - first_tx) if (first_tx is not None and last_rx is not None) else 0
            rows.append({
                "name": c["name"][i],
                "kind": c["kind"][i],
                "src": c["src"][i],
                "dst": c["dst"][i],
                "tx_packets": c["tx_packets"][i],
                "rx_packets": rx,
                "lost_packets": c["lost_packets"][i],
                "tx_bytes": c["tx_bytes"][i],
                "rx_bytes": c["rx_bytes"][i],
                "throughput_bps": c["rx_bytes"][i] * 8 / (span * PS) if span > 0 else 0.0,
                "mean_delay_s": c["delay_sum_ps"][i] * PS / rx if rx else None,
                "max_delay_s": c["max_delay_ps"][i] * PS if rx else None,
                "first_tx_s": None if first_tx is None else first_tx * PS,
                "last_rx_s": None if last_rx is None else last_rx * PS,
                "start_s": None if c["start_ps"][i] is None else c["start_ps"][i] * PS,
                "complete_s": None if c["complete_ps"][i] is None else c["complete_ps"][i] * PS,
            })
        return rows

    def queues(self, only_active: bool = True) -> list[dict[str, Any]]:
        """Per-egress-queue rows (name 'node->peer'); by default only queues that carried or dropped packets."""
        c = self.queue_columns
        rows = []
        for i in range(len(c["name"])):
            if only_active and not (c["tx_packets"][i] or c["drops"][i]):
                continue
            rows.append({k: c[k][i] for k in ("name", "tx_packets", "tx_bytes", "drops", "peak_packets", "peak_bytes")})
        return rows

    def digests(self) -> dict[str, str]:
        """sha256 of every column (its dtype, length and bytes), keyed by the column's name ("flows.tx_bytes"),
        and of every scalar (its canonical JSON) keyed "scalars.NAME", engine-work scalars (WORK_SCALARS) left
        out. The regression corpus keeps these, so a changed record names the columns that changed, and a new
        column is covered the moment the engine writes it. O(record size)."""
        import hashlib
        import json

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

    @property
    def raw(self) -> dict[str, Any]:
        """The whole record as plain Python values (the engine's original JSON shape)."""
        return self.legacy_dict()

    def legacy_dict(self) -> dict[str, Any]:
        """The record in the engine's original JSON shape (the regression corpus hashes this)."""
        return {
            "fidelity": self.fidelity,
            "seed": self.seed,
            "end_ps": self.scalars["end_ps"],
            "completion_ps": self.scalars["completion_ps"],
            "events": self.events,
            "packets": self.packets,
            "hops": list(self.scalars["hops"]),
            "flows": self.flow_columns,
            "queues": self.queue_columns,
            "samples": self.samples,
            "wall_s": self.wall_s,
        }

    def to_json_dict(self, flows: bool = True) -> dict[str, Any]:
        """The CLI's --json object (`flows=False` leaves the per-flow rows out)."""
        out = {
            "fidelity": self.fidelity,
            "seed": self.seed,
            "completion_time_s": self.completion_time_s,
            "end_time_s": self.end_time_s,
            "packets": self.packets,
            "hops": {str(k): v for k, v in self.hops.items()},
            "flows": self.flows() if flows else None,
            "queues": self.queues(),
            "events": self.events,
            "wall_s": self.wall_s,
            "complete": self.complete,
            "incomplete_messages": self.incomplete_messages,
            "halted": self.halted,
        }
        if len(self.columns.get("hosts.node", ())) and len(self.columns.get("compute.host", ())):
            out["hosts"] = self.host_busy()
        if self.scalars.get("bin_ps"):
            tp = self.throughput()
            out["throughput"] = {"bin_s": self.scalars["bin_ps"] * 1e-12, "gbps": [round(x, 6) for x in tp["gbps"]]}
        if self.has_roce:
            out.update(pfc_pauses=self.pfc_pauses, pfc_paused_s=self.pfc_paused_s, ecn_marks=self.ecn_marks,
                       cnps=self.cnps)
        out["deadlock"] = self.deadlock
        if self.fast_forward is not None:
            out["fast_forward"] = {**self.fast_forward, "extrapolated": "counts inside jumps are extrapolated from "
                                   "the steady windows before each jump, not simulated"}
        return out

    def to_json(self) -> str:
        """`to_json_dict()` as JSON text; the flow rows are written by the engine's native formatter, so a
        record of a million flows serializes in well under a second."""
        import json

        from . import _core

        d = self.to_json_dict(flows=False)
        rows = _core.flow_rows_json(self._cols("flows"), list(self.scalars["node_names"]), list(self.scalars["flow_names"]))
        marker = "__fabricsim_flow_rows__"
        d["flows"] = marker
        return json.dumps(d).replace(json.dumps(marker), rows, 1)

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
