//! Run records: per-flow statistics with ns-3 FlowMonitor's meaning, per-queue statistics and samples, as columns.

use serde::{Deserialize, Serialize};

/// Per-flow columns; row i is flow i (sources first, in spec order, then messages).
/// Times are ps; `first_*`/`last_*` are `None` when nothing was sent/received.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FlowColumns {
    pub name: Vec<String>,
    /// "cbr", "onoff" or "message".
    pub kind: Vec<String>,
    pub src: Vec<String>,
    pub dst: Vec<String>,
    pub tx_packets: Vec<u64>,
    pub rx_packets: Vec<u64>,
    /// Packets of this flow dropped by a queue.
    pub lost_packets: Vec<u64>,
    /// Bytes on the wire (payload + header) sent and received.
    pub tx_bytes: Vec<u64>,
    pub rx_bytes: Vec<u64>,
    pub rx_payload_bytes: Vec<u64>,
    pub first_tx_ps: Vec<Option<u64>>,
    pub last_tx_ps: Vec<Option<u64>>,
    pub first_rx_ps: Vec<Option<u64>>,
    pub last_rx_ps: Vec<Option<u64>>,
    /// Sum over received packets of (receive time − hand-over to the sender's NIC queue).
    pub delay_sum_ps: Vec<u64>,
    pub max_delay_ps: Vec<u64>,
    /// Messages: when the last payload byte arrived; sources: `None`.
    pub complete_ps: Vec<Option<u64>>,
    /// Messages: when the message became ready and started sending.
    pub start_ps: Vec<Option<u64>>,
}

/// Per-egress-queue columns; row i is port i (global port id).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct QueueColumns {
    /// `node->peer` (with `#k` for parallel links).
    pub name: Vec<String>,
    pub node: Vec<u32>,
    pub port: Vec<u32>,
    pub tx_packets: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    pub drops: Vec<u64>,
    /// Peak occupancy of discipline + device queue (the packet being serialised is not counted).
    pub peak_packets: Vec<u64>,
    pub peak_bytes: Vec<u64>,
}

/// Queue-depth samples, one row per (sample time, sampled port).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SampleColumns {
    pub t_ps: Vec<u64>,
    /// Global port id (index into `QueueColumns`).
    pub port: Vec<u32>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct PacketTotals {
    pub tx: u64,
    pub rx: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub fidelity: String,
    pub seed: u64,
    /// Time of the last processed event.
    pub end_ps: u64,
    /// When the last message completed; `None` if there are no messages or one did not complete.
    pub completion_ps: Option<u64>,
    pub events: u64,
    pub packets: PacketTotals,
    /// hops[k] = received packets that crossed k switches.
    pub hops: Vec<u64>,
    pub flows: FlowColumns,
    pub queues: QueueColumns,
    pub samples: SampleColumns,
    /// Wall-clock seconds spent in the engine (the only non-deterministic field).
    pub wall_s: f64,
}
