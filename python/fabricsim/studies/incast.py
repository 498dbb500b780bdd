"""The incast study (seed 001): synchronized UDP bursts or staggered TCP flows into one bottleneck, and its metrics.

`build_scenario(IncastParams(...))` gives the dumbbell scenario the study describes, with ns-3 3.44's defaults
wherever the study is silent; `incast_metrics(record, params)` reduces a run to the numbers of the study's
Tables 4 and 5, computed the way the study (and ns-3's FlowMonitor) computes them.

Byte counts. Our flow records count bytes on the wire: payload + the configured header, and the header of
the study's packets is UDP 8 + IP 20 + PPP 2 = 30 B (TCP: IP 20 + TCP 20 + timestamps 12 + PPP 2 = 54 B).
ns-3's FlowMonitor counts IP-layer bytes (no PPP header), and the study's throughput and offered load are
computed from FlowMonitor's bytes (S2: 401,253 packets × 1052 B × 8 / 57.93 s = 58.3 Mb/s, its Table 4), so
the metrics use IP-layer bytes = wire bytes − 2 B per packet.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..record import PS, RunRecord, fields
from ..spec import Scenario, scenario_from_dict

PPP_HEADER_BYTES = 2
UDP_HEADER_BYTES = 8 + 20 + PPP_HEADER_BYTES
"""UDP 8 + IPv4 20 + PPP 2: what ns-3 adds to an OnOff payload on a point-to-point link."""
BOTTLENECK = "leaf->spine"
DATA_KINDS = ("onoff", "cbr", "tcp")
"""Flow kinds that carry data (TCP's reverse ACK flows, kind "tcp-ack", are excluded from delays and throughput)."""


class IncastParams(BaseModel):
    """One incast run. Defaults are the study's (Table 2 and §4) and, where it is silent, ns-3 3.44's.

    - `app_stop_s`: when the applications stop; None = `duration_s − 1` (59 s of a 60 s run). That is the
      study's setup: with 290 on-periods (starts 1.1, 1.3, …, 58.9 s; ns-3's OnOff begins with an off period)
      a 30 Mb/s sender sends ⌊290 × 3·10⁶ bits / 8192⌋ = 106,201 packets, and 8 × 106,201 = 849,608 is the
      study's S2 TX count (stopping at 60 s would give 295 periods and 864,256 packets).
    - `queue_pkts` limits the bottleneck's queue discipline (`qdisc`), `device_queue_pkts` the device queue
      below it (ns-3's default 100-packet DropTail): the bottleneck buffers up to their sum.
    - `other_qdisc`: ns-3 installs its default FqCoDelQueueDisc (10240 packets) on every device that gets an
      IP address, above the 100-packet device queue; "fq_codel" mirrors that on every other port, "none"
      leaves them plain 100-packet DropTail device queues (it matters only where a host bursts a TCP
      window faster than its NIC drains, never for the study's UDP senders).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    senders: int = Field(8, gt=0)
    transport: Literal["udp", "tcp"] = "udp"
    rate_mbps: float = Field(30.0, gt=0, description="per-sender UDP payload rate while on")
    on_ms: float = Field(100.0, gt=0)
    off_ms: float = Field(100.0, ge=0)
    start_s: float = Field(1.0, ge=0)
    stagger_s: float = Field(0.5, ge=0, description="TCP flow i starts at start_s + i·stagger_s")
    access_mbps: float = Field(1000.0, gt=0)
    access_delay_ms: float = Field(2.0, ge=0)
    bottleneck_mbps: float = Field(100.0, gt=0)
    bottleneck_delay_ms: float = Field(5.0, ge=0)
    queue_pkts: int = Field(100, gt=0)
    device_queue_pkts: int = Field(100, gt=0)
    qdisc: Literal["fifo", "fq_codel", "codel"] = "fifo"
    other_qdisc: Literal["fq_codel", "none"] = "fq_codel"
    packet_bytes: int = Field(1024, gt=0, le=65_000)
    header_bytes: int = Field(UDP_HEADER_BYTES, ge=PPP_HEADER_BYTES)
    tcp_cc: Literal["cubic", "newreno"] = "cubic"
    duration_s: float = Field(60.0, gt=0)
    app_stop_s: float | None = Field(None, gt=0)
    sample_ms: float | None = Field(None, gt=0)
    seed: int = Field(1, ge=0)

    @model_validator(mode="after")
    def _times(self) -> "IncastParams":
        if self.start_s >= self.duration_s:
            raise ValueError(f"start_s = {self.start_s:g} s is not before the end of the run (duration_s = {self.duration_s:g} s)")
        if self.app_stop_s is not None and not (self.start_s < self.app_stop_s <= self.duration_s):
            raise ValueError(f"app_stop_s = {self.app_stop_s:g} s is not in (start_s, duration_s] = "
                             f"({self.start_s:g}, {self.duration_s:g}] s")
        last = self.start_s + (self.senders - 1) * self.stagger_s
        if self.transport == "tcp" and last >= self.stop_s:
            raise ValueError(f"the last TCP flow would start at start_s + (senders - 1) x stagger_s = {last:g} s, "
                             f"not before the applications stop ({self.stop_s:g} s)")
        return self

    @property
    def stop_s(self) -> float:
        """When the applications stop: `app_stop_s`, else one second before the end of the run (the study's setup),
        or the end of the run when that second would leave nothing after `start_s`."""
        if self.app_stop_s is not None:
            return self.app_stop_s
        return self.duration_s - 1.0 if self.duration_s - 1.0 > self.start_s else self.duration_s


def _ps(seconds: float) -> str:
    return f"{round(seconds * 1e12)}ps"


def _bps(mbps: float) -> str:
    return f"{round(mbps * 1e6)}bps"


def _qdisc(kind: str, limit_packets: int) -> dict:
    """The bottleneck discipline: ns-3 3.44's defaults (spec.network) except the packet limit."""
    return {"kind": kind, "limit_packets": limit_packets}


def scenario_dict(p: IncastParams) -> dict[str, Any]:
    """The scenario as a plain dict (what `build_scenario` validates); handy for sweeps and TOML export."""
    sc: dict[str, Any] = {
        "seed": p.seed,
        "stop": _ps(p.duration_s),
        "topology": {
            "kind": "dumbbell", "senders": p.senders,
            "access_rate": _bps(p.access_mbps), "access_delay": _ps(p.access_delay_ms / 1e3),
            "bottleneck_rate": _bps(p.bottleneck_mbps), "bottleneck_delay": _ps(p.bottleneck_delay_ms / 1e3),
        },
        "queue": {"limit_packets": 100, "qdisc": {"kind": "fq_codel"} if p.other_qdisc == "fq_codel" else None},
        "ports": [{"node": "leaf", "peer": "spine",
                   "queue": {"limit_packets": p.device_queue_pkts, "qdisc": _qdisc(p.qdisc, p.queue_pkts)}}],
    }
    if sc["queue"]["qdisc"] is None:
        del sc["queue"]["qdisc"]
    stop = _ps(p.stop_s)
    if p.transport == "udp":
        sc["sources"] = [{
            "name": f"burst{i}", "kind": "onoff", "src": f"sender{i}", "dst": "receiver",
            "rate": _bps(p.rate_mbps), "packet_size": p.packet_bytes, "header": p.header_bytes,
            "on": _ps(p.on_ms / 1e3), "off": _ps(p.off_ms / 1e3), "start": _ps(p.start_s), "stop": stop,
        } for i in range(p.senders)]
    else:
        sc["tcp"] = [{
            "name": f"tcp{i}", "src": f"sender{i}", "dst": "receiver", "cc": p.tcp_cc,
            "start": _ps(p.start_s + i * p.stagger_s), "stop": stop,
        } for i in range(p.senders)]
    if p.sample_ms is not None:
        sc["measure"] = {"queue_interval": _ps(p.sample_ms / 1e3), "queues": [BOTTLENECK]}
    return sc


def build_scenario(p: IncastParams) -> Scenario:
    """The dumbbell scenario of one incast run (validated; raises ScenarioError naming the field).

    UDP: `senders` OnOff sources (ns-3 semantics: each starts with an off period; residual bits carried over),
    all starting at `start_s` and stopping at `stop_s`. TCP: `senders` BulkSend connections (ns-3 3.44
    defaults, spec.TcpDef) starting at `start_s + i·stagger_s`. The bottleneck port leaf->spine gets the
    `device_queue_pkts` device queue under a `qdisc` limited to `queue_pkts`; every other port keeps a
    100-packet device queue (under ns-3's default FQ-CoDel with `other_qdisc = "fq_codel"`). With
    `sample_ms`, the bottleneck's depth is sampled at that period."""
    return scenario_from_dict(scenario_dict(p), source="<incast>")


def jain_index(values: list[float]) -> float | None:
    """Jain's fairness index J = (Σx)² / (n·Σx²): 1 when all equal, 1/n when one holds everything; None if empty
    or all zero."""
    xs = [float(v) for v in values]
    sq = sum(x * x for x in xs)
    if not xs or sq == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sq)


def window_throughput_mbps(rx_ip_bytes: int, first_tx_ps: int | None, last_rx_ps: int | None) -> float:
    """Delivered IP-layer bits over the observed window first TX … last RX (the study's Eq. 1), in Mb/s."""
    if first_tx_ps is None or last_rx_ps is None or last_rx_ps <= first_tx_ps:
        return 0.0
    return rx_ip_bytes * 8 / ((last_rx_ps - first_tx_ps) * PS) / 1e6


def incast_metrics(record: RunRecord, params: IncastParams) -> dict[str, Any]:
    """The study's Table 4 and 5 quantities for one run.

    Flows: FlowMonitor sees every flow, TCP ACK flows included, and the study's packet counts are its totals
    (S1: 1,856,018 TX only adds up with the ACKs); delays and throughput use the data flows only.

    - `tx_packets`, `rx_packets`: summed over all flows; `lost_packets` = tx − rx (the study's Table 4:
      every row has lost = tx − rx; a packet still in flight when the run ends counts as lost);
      `loss_pct` = 100·lost/tx.
    - `throughput_mbps`: Σ IP-layer bytes received by the data flows × 8 over the window from the first
      data packet sent to the last received (min first_tx … max last_rx), Eq. 1; IP-layer bytes = wire
      bytes − 2 B PPP per packet, as FlowMonitor counts. `offered_load_mbps`: the same with bytes sent.
    - per-flow mean delay d_i = Σ delay / rx packets of data flow i (FlowMonitor's delaySum / rxPackets;
      flows that received nothing are left out); `flow_mean_delays_ms` lists them in flow order (names in
      `flow_names`); `max_flow_delay_ms` / `min_flow_delay_ms` are their max / min, `delay_spread_ms` =
      max − min, `jain_fairness_delay` = Jain's index of the d_i (Eq. 8).
    - `mean_delay_ms` = Σ delay / Σ rx over the data flows: the packet-weighted mean. That is what the study's
      "avg delay" (Table 4) and "mean flow delay" (Table 5) are: our S2 and S3 runs match its min/max flow
      delays (17.55/24.94, 17.42/25.75 ms) and its 23.84 / 24.65 ms packet-weighted means, while their
      unweighted means of the d_i are about 21.0 and 18.6 ms. `flow_delay_avg_ms` is that unweighted mean.
    - `peak_queue_pkts`: the bottleneck discipline's peak occupancy, what the study reports ("sampled at the
      bottleneck egress disc"; its FIFO peak is the 100-packet limit). The engine records the peak of
      discipline + device queue; while the discipline holds packets the device queue is full (it releases
      only into a free slot), so the discipline's peak is max(0, that peak − device_queue_pkts).
      `peak_port_pkts` is the engine's figure (discipline + device queue).
    - `queue_samples` (with `sample_ms`): the bottleneck's depth over time as columns t_s, packets
      (discipline + device), qdisc_packets (= max(0, packets − device_queue_pkts)) and bytes; and
      `sampled_peak_queue_pkts`, the largest qdisc_packets sample. The study's "peak queue" is that figure
      at its 100 ms sampling (FQ-CoDel: 94, below the 100-packet limit the discipline reaches between
      samples); `sampled_peak(metrics, 100)` recovers it from finer samples.
    """
    c = {f.column: record.values(f.name) for f in fields("flows") if f.source == "stored" and f.name in record.columns}
    n = len(c["name"])
    data = [i for i in range(n) if c["kind"][i] in DATA_KINDS]
    tx = sum(c["tx_packets"])
    rx = sum(c["rx_packets"])
    lost = tx - rx

    def ip_bytes(col: str, pkts: str, idx) -> int:
        return sum(c[col][i] - PPP_HEADER_BYTES * c[pkts][i] for i in idx)

    firsts = [c["first_tx_ps"][i] for i in data if c["first_tx_ps"][i] is not None]
    lasts = [c["last_rx_ps"][i] for i in data if c["last_rx_ps"][i] is not None]
    first_tx, last_rx = (min(firsts) if firsts else None), (max(lasts) if lasts else None)
    throughput = window_throughput_mbps(ip_bytes("rx_bytes", "rx_packets", data), first_tx, last_rx)
    offered = window_throughput_mbps(ip_bytes("tx_bytes", "tx_packets", data), first_tx, last_rx)

    delays = [c["delay_sum_ps"][i] * PS * 1e3 / c["rx_packets"][i] for i in data if c["rx_packets"][i]]
    data_rx = sum(c["rx_packets"][i] for i in data)
    q = {f.column: record.values(f.name) for f in fields("queues")}
    try:
        port = q["name"].index(BOTTLENECK)
    except ValueError:
        raise ValueError(f"the record has no port named {BOTTLENECK!r}; was it built by build_scenario?") from None
    peak_port = q["peak_packets"][port]
    out: dict[str, Any] = {
        "throughput_mbps": throughput,
        "offered_load_mbps": offered,
        "mean_delay_ms": (sum(c["delay_sum_ps"][i] for i in data) * PS * 1e3 / data_rx) if data_rx else None,
        "max_flow_delay_ms": max(delays) if delays else None,
        "min_flow_delay_ms": min(delays) if delays else None,
        "delay_spread_ms": (max(delays) - min(delays)) if delays else None,
        "jain_fairness_delay": jain_index(delays),
        "flow_delay_avg_ms": sum(delays) / len(delays) if delays else None,
        "loss_pct": 100.0 * lost / tx if tx else 0.0,
        "peak_queue_pkts": max(0, peak_port - params.device_queue_pkts),
        "peak_port_pkts": peak_port,
        "bottleneck_drops": q["drops"][port],
        "tx_packets": tx,
        "rx_packets": rx,
        "lost_packets": lost,
        "data_tx_packets": sum(c["tx_packets"][i] for i in data),
        "data_rx_packets": data_rx,
        "window_s": ((last_rx - first_tx) * PS) if (first_tx is not None and last_rx is not None) else None,
        "flow_names": [c["name"][i] for i in data if c["rx_packets"][i]],
        "flow_mean_delays_ms": delays,
    }
    s = {f.column: record.columns[f.name].tolist() for f in fields("samples")}
    if params.sample_ms is not None and s["t_ps"]:
        rows = [k for k, pt in enumerate(s["port"]) if pt == port]
        pk = [s["packets"][k] for k in rows]
        out["queue_samples"] = {
            "t_s": [s["t_ps"][k] * PS for k in rows],
            "packets": pk,
            "qdisc_packets": [max(0, v - params.device_queue_pkts) for v in pk],
            "bytes": [s["bytes"][k] for k in rows],
        }
        out["sampled_peak_queue_pkts"] = max(out["queue_samples"]["qdisc_packets"])
    return out


def sampled_peak(metrics: dict[str, Any], every_ms: float) -> int | None:
    """The discipline's peak over the samples taken at multiples of `every_ms` (e.g. the study's 100 ms) from
    finer `queue_samples`; None without samples."""
    qs = metrics.get("queue_samples")
    if not qs:
        return None
    step = round(every_ms * 1e9)
    vals = [q for t, q in zip(qs["t_s"], qs["qdisc_packets"]) if round(t * 1e12) % step == 0]
    return max(vals) if vals else None


def run_incast(params: IncastParams, fidelity: str | None = None) -> tuple[RunRecord, dict[str, Any]]:
    """Build, simulate and reduce one incast run: (record, metrics). The study needs the packet engine
    (OnOff bursts, TCP, queue disciplines); `fidelity="flow"` is rejected with the field it cannot model."""
    from ..engine import run

    rec = run(build_scenario(params), fidelity=fidelity)
    return rec, incast_metrics(rec, params)


def expected_onoff_packets(rate_bps: float, packet_bytes: int, on_s: float, off_s: float, start_s: float,
                           stop_s: float) -> int:
    """Packets one ns-3 OnOff source sends (closed form): it starts with an off period, sends its first packet
    one packet interval into the on period, and carries the bits of an unfinished interval into the next on
    period, so the count is ⌊(total on time × rate) / packet bits⌋ (on-periods cut at `stop_s`)."""
    on_time = 0.0
    t = start_s + off_s
    while t < stop_s - 1e-15:
        on_time += min(on_s, stop_s - t)
        t += on_s + off_s
    return math.floor(on_time * rate_bps / (packet_bytes * 8) + 1e-9)
