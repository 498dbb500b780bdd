"""The traffic of a scenario: UDP sources, messages and barriers of the workload DAG, TCP connections, measurement."""

from __future__ import annotations

from typing import Literal

from ..units import Duration, Size
from .base import Name, NonNegativeInt, PositiveDuration, PositiveInt, PositiveRate, PositiveSize, _Model


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
