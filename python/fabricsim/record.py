"""RunRecord: the engine's result (FlowMonitor-like per-flow columns, queues, samples, totals) with helpers."""

from __future__ import annotations

from typing import Any

PS = 1e-12


class RunRecord:
    """One run's record. `raw` is the engine's record dict (times in ps); properties give SI units."""

    def __init__(self, raw: dict[str, Any]):
        self.raw = raw

    @property
    def seed(self) -> int:
        return self.raw["seed"]

    @property
    def fidelity(self) -> str:
        return self.raw["fidelity"]

    @property
    def events(self) -> int:
        return self.raw["events"]

    @property
    def wall_s(self) -> float:
        """Engine wall-clock seconds (the only field that differs between identical runs)."""
        return self.raw["wall_s"]

    @property
    def completion_time_s(self) -> float | None:
        """When the last message completed; None without messages or if one never completed (loss)."""
        c = self.raw["completion_ps"]
        return None if c is None else c * PS

    @property
    def end_time_s(self) -> float:
        return self.raw["end_ps"] * PS

    @property
    def packets(self) -> dict[str, int]:
        """Totals: tx = rx + dropped + in_flight (checked by the engine)."""
        return dict(self.raw["packets"])

    @property
    def hops(self) -> dict[int, int]:
        """Received packets by number of switches crossed (nonzero entries only)."""
        return {k: n for k, n in enumerate(self.raw["hops"]) if n}

    @property
    def flow_columns(self) -> dict[str, list]:
        return self.raw["flows"]

    @property
    def queue_columns(self) -> dict[str, list]:
        return self.raw["queues"]

    @property
    def samples(self) -> dict[str, list]:
        """Queue-depth samples: columns t_ps, port (index into queues), packets, bytes."""
        return self.raw["samples"]

    def flows(self) -> list[dict[str, Any]]:
        """Per-flow rows with FlowMonitor's meaning, in SI units.

        throughput_bps = rx_bytes * 8 / (last_rx - first_tx), the usual FlowMonitor reduction."""
        c = self.raw["flows"]
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
        c = self.raw["queues"]
        rows = []
        for i in range(len(c["name"])):
            if only_active and not (c["tx_packets"][i] or c["drops"][i]):
                continue
            rows.append({k: c[k][i] for k in ("name", "tx_packets", "tx_bytes", "drops", "peak_packets", "peak_bytes")})
        return rows

    def to_json_dict(self) -> dict[str, Any]:
        """The CLI's --json object."""
        return {
            "fidelity": self.fidelity,
            "seed": self.seed,
            "completion_time_s": self.completion_time_s,
            "end_time_s": self.end_time_s,
            "packets": self.packets,
            "hops": {str(k): v for k, v in self.hops.items()},
            "flows": self.flows(),
            "queues": self.queues(),
            "events": self.events,
            "wall_s": self.wall_s,
        }

    def __repr__(self) -> str:
        p = self.packets
        return (f"RunRecord(seed={self.seed}, completion_time_s={self.completion_time_s}, tx={p['tx']}, "
                f"rx={p['rx']}, dropped={p['dropped']}, events={self.events})")

    def legacy_dict(self) -> dict[str, Any]:
        """The record in the engine's original JSON shape (the regression corpus hashes this)."""
        return self.raw
