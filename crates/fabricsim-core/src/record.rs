//! Run records: per-flow statistics with ns-3 FlowMonitor's meaning, per-queue statistics and samples, as columns.

use crate::units::Time;
use serde::{Deserialize, Serialize};

/// What a flow is.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum FlowKind {
    #[serde(rename = "cbr")]
    Cbr,
    #[serde(rename = "onoff")]
    Onoff,
    #[serde(rename = "message")]
    Message,
    #[serde(rename = "tcp")]
    Tcp,
    #[serde(rename = "tcp-ack")]
    TcpAck,
    #[serde(rename = "rdma-ack")]
    RdmaAck,
    /// The reverse flow of a UEC connection: its ACKs, NACKs and credit packets.
    #[serde(rename = "uec-ack")]
    UecAck,
}

impl FlowKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FlowKind::Cbr => "cbr",
            FlowKind::Onoff => "onoff",
            FlowKind::Message => "message",
            FlowKind::Tcp => "tcp",
            FlowKind::TcpAck => "tcp-ack",
            FlowKind::RdmaAck => "rdma-ack",
            FlowKind::UecAck => "uec-ack",
        }
    }
}

/// Per-flow columns; row i is flow i (sources, messages, TCP data flows, TCP ACK flows, in spec order).
/// Times are ps; `first_*`/`last_*` are `None` when nothing was sent/received.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FlowColumns {
    /// Index into `RunRecord::flow_names`, or u32::MAX for an unnamed message.
    pub name: Vec<u32>,
    pub kind: Vec<FlowKind>,
    /// Source and destination nodes (indices into `RunRecord::node_names`).
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
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
    /// The link's line rate (b/s, the topology's; a per-end `rate_cap` not applied): utilization's denominator.
    #[serde(default)]
    pub rate_bps: Vec<u64>,
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

/// Compute steps: when each started and ended (`None` if it never ran).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ComputeColumns {
    pub host: Vec<u32>,
    pub start_ps: Vec<Option<u64>>,
    pub end_ps: Vec<Option<u64>>,
}

/// Per-host busy time (for workloads with compute steps), for hosts that compute or communicate: `compute_ps` is the time at least one
/// compute step runs, `comm_ps` the time at least one of its messages (sent or received) is between its
/// start and its delivery, `exposed_comm_ps` the part of `comm_ps` with no compute running.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostColumns {
    pub node: Vec<u32>,
    pub compute_ps: Vec<u64>,
    pub comm_ps: Vec<u64>,
    pub exposed_comm_ps: Vec<u64>,
}

impl FlowColumns {
    /// Empty columns with room for `n` flows.
    pub fn with_capacity(n: usize) -> FlowColumns {
        FlowColumns {
            name: Vec::with_capacity(n),
            kind: Vec::with_capacity(n),
            src: Vec::with_capacity(n),
            dst: Vec::with_capacity(n),
            tx_packets: Vec::with_capacity(n),
            rx_packets: Vec::with_capacity(n),
            lost_packets: Vec::with_capacity(n),
            tx_bytes: Vec::with_capacity(n),
            rx_bytes: Vec::with_capacity(n),
            rx_payload_bytes: Vec::with_capacity(n),
            first_tx_ps: Vec::with_capacity(n),
            last_tx_ps: Vec::with_capacity(n),
            first_rx_ps: Vec::with_capacity(n),
            last_rx_ps: Vec::with_capacity(n),
            delay_sum_ps: Vec::with_capacity(n),
            max_delay_ps: Vec::with_capacity(n),
            complete_ps: Vec::with_capacity(n),
            start_ps: Vec::with_capacity(n),
        }
    }
}

impl HostColumns {
    /// Busy times from compute intervals and message intervals (each (host, start, end), end ≥ start), per
    /// host in node order. O(k log k) for k intervals.
    pub fn from_intervals(n_nodes: usize, compute: &[(u32, u64, u64)], comm: &[(u32, u64, u64)]) -> HostColumns {
        let mut by_host: Vec<(Intervals, Intervals)> = vec![(vec![], vec![]); n_nodes];
        for &(h, a, b) in compute {
            by_host[h as usize].0.push((a, b));
        }
        for &(h, a, b) in comm {
            by_host[h as usize].1.push((a, b));
        }
        let mut out = HostColumns::default();
        for (h, (mut c, mut m)) in by_host.into_iter().enumerate() {
            if c.is_empty() && m.is_empty() {
                continue;
            }
            let cu = union(&mut c);
            let mu = union(&mut m);
            let total = |v: &[(u64, u64)]| v.iter().map(|&(a, b)| b - a).sum::<u64>();
            // Overlap of two sorted disjoint interval lists, by a merge walk.
            let (mut i, mut j, mut overlap) = (0, 0, 0u64);
            while i < cu.len() && j < mu.len() {
                let (a, b) = (cu[i].0.max(mu[j].0), cu[i].1.min(mu[j].1));
                if b > a {
                    overlap += b - a;
                }
                if cu[i].1 < mu[j].1 {
                    i += 1;
                } else {
                    j += 1;
                }
            }
            out.node.push(h as u32);
            out.compute_ps.push(total(&cu));
            out.comm_ps.push(total(&mu));
            out.exposed_comm_ps.push(total(&mu) - overlap);
        }
        out
    }
}

/// What a run did with its workload, for the record: every message's endpoints, start and delivery, and
/// every compute step's host, start and end (`Time::MAX` when it never started).
pub struct WorkTimes<'a> {
    pub msgs: Vec<MsgTimes>,
    pub comp_host: &'a [u32],
    pub comp_start: &'a [Time],
    pub comp_end: &'a [Time],
}

impl WorkTimes<'_> {
    /// (completion, compute columns, host busy times) at the end of a run at `now`: completion is the last
    /// delivery or compute end when every message and step finished (`None` otherwise, or with no work);
    /// unfinished intervals count up to `now`. Host busy times are computed only for workloads with compute
    /// steps (where the split matters). O(work log work).
    pub fn summarize(&self, n_nodes: usize, now: Time) -> (Option<u64>, ComputeColumns, HostColumns) {
        let done = |t: Time| t != Time::MAX && t <= now;
        let mut compute = ComputeColumns::default();
        let mut c_iv = Vec::with_capacity(self.comp_host.len());
        for (i, &h) in self.comp_host.iter().enumerate() {
            let (a, b) = (self.comp_start[i], self.comp_end[i]);
            compute.host.push(h);
            compute.start_ps.push((a != Time::MAX).then_some(a.0));
            compute.end_ps.push(done(b).then_some(b.0));
            if a != Time::MAX {
                c_iv.push((h, a.0, b.min(now).0));
            }
        }
        let mut m_iv = Vec::with_capacity(if self.comp_host.is_empty() { 0 } else { 2 * self.msgs.len() });
        for &((s, d), start, end) in self.msgs.iter().filter(|_| !self.comp_host.is_empty()) {
            if let Some(a) = start {
                let b = end.unwrap_or(now).max(a);
                m_iv.push((s, a.0, b.0));
                if d != s {
                    m_iv.push((d, a.0, b.0));
                }
            }
        }
        let all_msgs = self.msgs.iter().all(|m| m.2.is_some());
        let all_comp = compute.end_ps.iter().all(|e| e.is_some());
        let completion = if self.comp_host.is_empty() {
            (!self.msgs.is_empty() && all_msgs).then(|| self.msgs.iter().filter_map(|m| m.2).max().map(|t| t.0)).flatten()
        } else if all_msgs && all_comp {
            let m = self.msgs.iter().filter_map(|m| m.2.map(|t| t.0)).max();
            let c = compute.end_ps.iter().filter_map(|&e| e).max();
            m.max(c)
        } else {
            None
        };
        let hosts = if self.comp_host.is_empty() { HostColumns::default() } else { HostColumns::from_intervals(n_nodes, &c_iv, &m_iv) };
        (completion, compute, hosts)
    }
}

/// Intervals [start, end) in ps.
type Intervals = Vec<(u64, u64)>;

/// A message's (source node, destination node), start and delivery.
pub type MsgTimes = ((u32, u32), Option<Time>, Option<Time>);

/// Sorted disjoint union of intervals. O(k log k).
fn union(v: &mut [(u64, u64)]) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for &(a, b) in v.iter() {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
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
    /// When the last message (or compute step) completed; `None` if there are none or one did not complete.
    pub completion_ps: Option<u64>,
    pub events: u64,
    pub packets: PacketTotals,
    /// hops[k] = received packets that crossed k switches.
    pub hops: Vec<u64>,
    pub flows: FlowColumns,
    pub queues: QueueColumns,
    pub samples: SampleColumns,
    pub compute: ComputeColumns,
    pub hosts: HostColumns,
    /// Names of the network's nodes (flows' `src`/`dst` index it) and of the named flows.
    pub node_names: Vec<String>,
    pub flow_names: Vec<String>,
    /// Wall-clock seconds spent in the engine (the only non-deterministic field).
    pub wall_s: f64,
    /// Why the run stopped early (a limit or an interrupt); `None` when it ran to its end or stop time.
    #[serde(default)]
    pub halted: Option<crate::control::Halt>,
    /// Whether the run ended at the scenario's stop time with events still pending (work was cut short).
    #[serde(default)]
    pub reached_stop: bool,
    /// Payload bytes delivered in each bin of `bin_ps` (bin k covers [k·bin_ps, (k+1)·bin_ps)), when
    /// `measure.throughput_bin_ps` is set (packet engine).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rx_bins: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bin_ps: Option<u64>,
    /// RoCE counters (scenarios with PFC, ECN or RDMA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roce: Option<RoceColumns>,
    /// A cycle of paused ports that stopped the run ("node:port -> ... -> node:port").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadlock: Option<String>,
    /// What hybrid fidelity's steady-state jumps skipped (hybrid runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_forward: Option<FastForward>,
    /// The message transport's retransmissions (None when no workload message lost a packet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retransmit: Option<RetransmitStats>,
    /// The UEC transport's counters, per-connection figures and window log (runs with `[uec]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uec: Option<UecColumns>,
    /// The scenario's network events in time order (runs with `[[events]]`; figures mark them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub net_events: Vec<NetEventRow>,
}

/// A network event as the record keeps it: when (ps), what ("link_down", "link_up", "ber" or "link_rate"), the
/// links it touched by their end nodes' names ("leaf0-spine1"), the bit error rate it set (0 but for "ber") and
/// the rate it set (bit/s; 0 but for "link_rate").
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NetEventRow {
    pub t_ps: u64,
    pub kind: String,
    pub links: Vec<String>,
    pub ber: f64,
    #[serde(default)]
    pub rate_bps: u64,
}

impl NetEventRow {
    /// The record's rows of a scenario's network events, in time order (file order among equal times), each link
    /// named by its end nodes (`link_ends[l]` = (a, b), `names` the nodes'). Empty without events. O(events).
    pub fn of_spec(events: &[crate::spec::NetEventSpec], link_ends: &[(u32, u32)], names: &[String]) -> Vec<NetEventRow> {
        use crate::spec::NetEventKind;
        let mut rows: Vec<NetEventRow> = events
            .iter()
            .map(|e| NetEventRow {
                t_ps: e.at_ps,
                kind: match e.kind {
                    NetEventKind::LinkDown => "link_down",
                    NetEventKind::LinkUp => "link_up",
                    NetEventKind::Ber => "ber",
                    NetEventKind::LinkRate => "link_rate",
                }
                .into(),
                links: e
                    .links
                    .iter()
                    .map(|&l| {
                        let (a, b) = link_ends[l as usize];
                        format!("{}-{}", names[a as usize], names[b as usize])
                    })
                    .collect(),
                ber: if e.kind == NetEventKind::Ber { e.ber } else { 0.0 },
                rate_bps: e.rate_bps,
            })
            .collect();
        rows.sort_by_key(|r| r.t_ps);
        rows
    }
}

/// The message transport's retransmissions (runs in which a workload message lost a packet; `transport::message`
/// in fabricsim-des): message packets lost, timeouts that re-sent, packets and payload bytes re-sent, and
/// messages abandoned after `max_retries` timeouts without progress.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RetransmitStats {
    pub lost_packets: u64,
    pub timeouts: u64,
    pub packets: u64,
    pub bytes: u64,
    pub abandoned: u64,
}

/// The UEC transport's run-wide counters: data packets sent (new and re-sent), packets trimmed at switches,
/// trimmed headers that reached their receiver, NACKs and ACKs sent, ACKs echoing an ECN mark, retransmission
/// timeouts, packets re-sent, duplicates and out-of-order arrivals at the receivers, credit packets (RCCC).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct UecStats {
    pub data_packets: u64,
    pub trims: u64,
    pub trimmed_received: u64,
    pub nacks: u64,
    pub acks: u64,
    pub ecn_echoes: u64,
    pub timeouts: u64,
    pub retransmits: u64,
    pub duplicates: u64,
    pub out_of_order: u64,
    pub pulls: u64,
    /// ACKs the receivers' coalescing timer sent (`[uec] ack_timer`).
    #[serde(default)]
    pub timer_acks: u64,
}

/// The UEC section of a record: the counters; per flow row (None or 0 for rows that are not a connection's data
/// flow) when the sender saw the last byte acknowledged (htsim_uec's "finished at"), and the packets it re-sent;
/// and the window log (NSCC's congestion window or RCCC's credit, clamped at 0, in bytes: one row per change of
/// at least an MTU, or after 1 µs).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct UecColumns {
    pub stats: UecStats,
    pub acked_ps: Vec<Option<u64>>,
    pub retransmits: Vec<u64>,
    pub window_t_ps: Vec<u64>,
    pub window_flow: Vec<u32>,
    pub window_bytes: Vec<u64>,
}

/// What a hybrid run skipped: its steady-state jumps, the simulated time they covered and the packets they
/// delivered without simulating them. Every count in the record that a jump advanced (flows' packets, bytes and
/// delays, ports' counters, pauses, ECN marks, CNPs, hops, throughput bins, queue samples inside a jump) is
/// *extrapolated* from the steady windows before it, not simulated; `flow_skipped_packets` says how many of each
/// flow's delivered packets were.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FastForward {
    /// The detector's window (ps).
    pub window_ps: u64,
    pub jumps: u64,
    pub skipped_ps: u64,
    /// Packets delivered inside jumps (all flows).
    pub skipped_packets: u64,
    /// Per flow (record order): delivered packets extrapolated by jumps.
    pub flow_skipped_packets: Vec<u64>,
    /// Why the run went packet by packet, when a feature of the scenario allows no jumps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// RoCE counters: per port (rows as `QueueColumns`) PAUSE frames sent upstream and received, paused time of
/// the data priority, ECN marks and peak ingress bytes held (shared-buffer switches); totals; and the
/// per-QP rate log (one row per rate change, the QP named by its data flow).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RoceColumns {
    pub pause_tx: Vec<u64>,
    pub pause_rx: Vec<u64>,
    pub paused_ps: Vec<u64>,
    pub ecn_marks: Vec<u64>,
    pub peak_ingress_bytes: Vec<u64>,
    /// ACKs carrying a CNP that reached their sender.
    pub cnps: u64,
    pub rate_t_ps: Vec<u64>,
    pub rate_flow: Vec<u32>,
    pub rate_bps: Vec<u64>,
    /// PFC frame log: when a PAUSE (true) or RESUME (false) took effect at a port (the paused sender's port).
    pub pfc_t_ps: Vec<u64>,
    pub pfc_port: Vec<u32>,
    pub pfc_pause: Vec<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Host 0 computes [0, 10) and [5, 20), and communicates [15, 30) and [40, 50): compute 20, comm 25,
    /// overlap [15, 20) = 5, so 20 exposed. Host 1 only communicates [0, 7): 7 exposed. Host 2 is idle.
    #[test]
    fn busy_times_by_hand() {
        let h = HostColumns::from_intervals(3, &[(0, 0, 10), (0, 5, 20)], &[(0, 15, 30), (0, 40, 50), (1, 0, 7)]);
        assert_eq!(h.node, vec![0, 1]);
        assert_eq!(h.compute_ps, vec![20, 0]);
        assert_eq!(h.comm_ps, vec![25, 7]);
        assert_eq!(h.exposed_comm_ps, vec![20, 7]);
    }
}
