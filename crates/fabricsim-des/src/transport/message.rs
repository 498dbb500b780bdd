//! Messages of the workload DAG: pulled by their NIC round-robin, complete when every payload byte arrived, and
//! re-sent selectively on a retransmission timeout when packets were lost.
//!
//! Retransmission (`[retransmit]`, `RetransmitSpec`): selective repeat. The receiver counts delivered bytes (no
//! ordering, no duplicates: a packet is either delivered once or lost), so the sender re-sends exactly the
//! packets that were lost, as a receiver's selective acknowledgements would tell it; the transport carries no ACK
//! packets (as without loss: the message transport models the data alone). A message arms its one timer at its
//! first lost packet (a full queue, a dead link, a bit error, a missing route); the timer is due `rto << retries`
//! after the message's last transmission (`retries`: timeouts since it last delivered a byte; a delivery restarts
//! a backed-off timer at the base RTO, as TCP's ACK of new data), and a timer that finds the message sent more
//! since re-arms lazily at the new due time (one pending event per message). When
//! due, the lost bytes go back to the message's bytes to send, on the routes of that moment (the tables may have
//! moved off a failed link), and the message rejoins its NIC's round robin; after `max_retries` timeouts without
//! progress the message is abandoned, and the run ends incomplete (`max_retries = 0`: at its first loss, with no
//! timer). A loss-free run never arms a timer, so its events and record are those of a transport without
//! retransmission.

use crate::events::{Ev, EventId, TransportKind};
use crate::sim::Sim;
use crate::transport::{with_transport, TransportModel};
use fabricsim_core::record::RetransmitStats;
use fabricsim_core::Time;
use std::collections::HashMap;

/// A message in flight. Invariant: `received <= size`, `remaining <= size`.
pub(crate) struct MsgRt {
    pub(crate) flow: u32,
    pub(crate) size: u64,
    pub(crate) payload: u32,
    pub(crate) header: u32,
    pub(crate) remaining: u64,
    pub(crate) received: u64,
    pub(crate) started: Option<Time>,
    pub(crate) complete: Option<Time>,
    /// When the NIC last pulled one of its packets, minus `Messages::epoch` (ps; the retransmission timer is due
    /// from it).
    pub(crate) last_tx: u64,
}

/// The workload's messages (message m is flow `n_src + m`), how many were delivered (progress reports), and
/// retransmission: its configuration, the state of the messages that lost packets (none in a loss-free run), and
/// the run's counters (None until the first loss).
#[derive(Default)]
pub(crate) struct Messages {
    pub(crate) msgs: Vec<MsgRt>,
    pub(crate) done: u64,
    /// Payload bytes received in order over all messages, and the messages' total payload (progress reports).
    pub(crate) rx_bytes: u64,
    pub(crate) total_bytes: u64,
    pub(crate) rto: Time,
    pub(crate) max_retries: u32,
    /// How far `shift` has moved the run so far (ps): a message's last pull is `last_tx + epoch`, so a shift
    /// moves every message's last pull in O(1).
    pub(crate) epoch: u64,
    pub(crate) retx: HashMap<u32, Retx>,
    pub(crate) stats: Option<RetransmitStats>,
}

/// Retransmission state of a message that lost packets: payload bytes and packets lost and not yet re-sent,
/// timeouts since it last delivered a byte, its pending timer, whether it was re-queued (its
/// dependents on "sent" were released the first time), and whether it was abandoned.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Retx {
    pub(crate) lost_bytes: u64,
    pub(crate) lost_packets: u64,
    pub(crate) retries: u32,
    pub(crate) ev: Option<EventId>,
    pub(crate) resent: bool,
    pub(crate) abandoned: bool,
}

/// The retransmission timer of message m (`Ev::Timer(TransportKind::Message, T_RTO, m)`).
pub(crate) const T_RTO: u8 = 0;

impl TransportModel for Messages {
    fn on_packet(sim: &mut Sim, m: u32, _ack: bool, pkt: u32) {
        let payload = sim.pkts[pkt as usize].payload;
        sim.msg_rx(m, payload);
    }

    /// The retransmission timer (their starts are the workload's `Ev::MsgStart`).
    fn on_timer(sim: &mut Sim, t: u8, m: u32) {
        debug_assert_eq!(t, T_RTO, "messages have one timer");
        sim.msg_rto(m);
    }

    fn next_packet(sim: &mut Sim, p: u32) -> Option<u32> {
        sim.pull_message(p)
    }

    fn next_size(sim: &Sim, p: u32) -> Option<u32> {
        sim.next_message_size(p)
    }

    fn start(sim: &mut Sim, m: u32) {
        let p = sim.flows[sim.msg.msgs[m as usize].flow as usize].src_port;
        sim.join(p, m);
        sim.wake_port(p);
    }

    /// A message holds its history (start and completion), byte counts, and its last pull, which its
    /// retransmission timer is due from: that one moves (every message's at once, through `epoch`).
    fn shift(&mut self, dt: Time) {
        self.epoch += dt.0;
    }

    /// Full packets left to pull (the last, partial one included).
    fn remaining(sim: &Sim, m: u32, _ack: bool) -> Option<u64> {
        let msg = &sim.msg.msgs[m as usize];
        Some(msg.remaining.div_ceil(msg.payload as u64))
    }

    /// `tx` full packets pulled, `rx` delivered (a jump stops short of the last packets, so all are full).
    fn skip(sim: &mut Sim, m: u32, _ack: bool, tx: u64, rx: u64) -> u64 {
        let msg = &mut sim.msg.msgs[m as usize];
        let p = msg.payload as u64;
        debug_assert!(tx * p < msg.remaining && msg.received + rx * p < msg.size, "a jump ends before the message");
        msg.remaining -= (tx * p).min(msg.remaining.saturating_sub(1));
        let got = (rx * p).min(msg.size - msg.received - 1);
        msg.received += got;
        sim.msg.rx_bytes += got;
        0
    }
}

impl Sim {
    /// Wire size of the next packet the NIC would pull from its active messages.
    #[inline]
    pub(crate) fn next_message_size(&self, p: u32) -> Option<u32> {
        let m = *self.net.ports[p as usize].senders.front()?;
        let msg = &self.msg.msgs[m as usize];
        Some((msg.payload as u64).min(msg.remaining) as u32 + msg.header)
    }

    /// Next packet of the NIC's active messages (round-robin), or None.
    #[inline]
    pub(crate) fn pull_message(&mut self, p: u32) -> Option<u32> {
        let m = self.net.ports[p as usize].senders.pop_front()?;
        let msg = &mut self.msg.msgs[m as usize];
        let payload = (msg.payload as u64).min(msg.remaining) as u32;
        msg.remaining -= payload as u64;
        msg.last_tx = self.now.0 - self.msg.epoch;
        let (flow, header) = (msg.flow, msg.header);
        if msg.remaining > 0 {
            self.net.ports[p as usize].senders.push_back(m);
        } else if self.dag.has_sent_dependents(m) && !self.msg.retx.get(&m).is_some_and(|r| r.resent) {
            let mut out = std::mem::take(&mut self.dag_out);
            self.dag.sent(m, self.now, &mut out);
            self.start_released(&mut out);
        }
        Some(self.new_packet(flow, payload, header))
    }

    /// Message m becomes active: the run's pulled transport (messages, or RDMA queue pairs) starts it at its NIC.
    pub(crate) fn msg_start(&mut self, m: u32) {
        self.msg.msgs[m as usize].started = Some(self.now);
        with_transport!(self.pulled, T => T::start(self, m));
    }

    /// Payload of message m arrived; the message completes with its last byte.
    #[inline]
    pub(crate) fn msg_rx(&mut self, m: u32, payload: u32) {
        if !self.msg.retx.is_empty() {
            self.msg_progress(m);
        }
        let msg = &mut self.msg.msgs[m as usize];
        msg.received += payload as u64;
        self.msg.rx_bytes += payload as u64;
        if msg.received == msg.size {
            self.msg_complete(m);
        }
    }

    pub(crate) fn msg_complete(&mut self, m: u32) {
        let now = self.now;
        self.msg.msgs[m as usize].complete = Some(now);
        self.msg.done += 1;
        let mut out = std::mem::take(&mut self.dag_out);
        self.dag.delivered(m, now, &mut out);
        self.start_released(&mut out);
    }

    /// A packet of message m carrying `payload` bytes was lost: count it for the next retransmission and arm
    /// the message's timer if it is not pending. O(1).
    pub(crate) fn msg_lost(&mut self, m: u32, payload: u32) {
        let stats = self.msg.stats.get_or_insert_with(RetransmitStats::default);
        stats.lost_packets += 1;
        let off = self.msg.max_retries == 0;
        let r = self.msg.retx.entry(m).or_default();
        r.lost_bytes += payload as u64;
        r.lost_packets += 1;
        if off {
            // Retransmission off: the message is abandoned at its first loss, no timer (the transport before
            // issue 33, whose records this keeps bit for bit).
            if !r.abandoned {
                r.abandoned = true;
                stats.abandoned += 1;
            }
            return;
        }
        if r.ev.is_none() {
            let at = self.rto_due(m).max(self.now);
            let id = self.q.schedule(at, Ev::Timer(TransportKind::Message, T_RTO, m));
            self.msg.retx.get_mut(&m).expect("inserted above").ev = Some(id);
        }
    }

    /// Message m delivered a byte: a backed-off timer restarts at the base RTO (as TCP's on an ACK of new data).
    fn msg_progress(&mut self, m: u32) {
        let Some(r) = self.msg.retx.get_mut(&m) else { return };
        if r.retries == 0 {
            return;
        }
        r.retries = 0;
        if let Some(id) = r.ev.take() {
            self.q.cancel(id);
            let at = self.rto_due(m).max(self.now);
            let id = self.q.schedule(at, Ev::Timer(TransportKind::Message, T_RTO, m));
            self.msg.retx.get_mut(&m).expect("looked up above").ev = Some(id);
        }
    }

    /// When message m's retransmission timer is due: `rto << retries` after its NIC last pulled one of its
    /// packets.
    fn rto_due(&self, m: u32) -> Time {
        let retries = self.msg.retx.get(&m).map_or(0, |r| r.retries);
        let last = self.msg.msgs[m as usize].last_tx + self.msg.epoch;
        Time(last) + Time(self.msg.rto.0 << retries)
    }

    /// Message m's retransmission timer fires: re-arm if the message sent since (lazy re-arm), abandon it after
    /// `max_retries` timeouts without progress, or else put its lost bytes back to be sent and let its NIC
    /// pull them.
    pub(crate) fn msg_rto(&mut self, m: u32) {
        let due = self.rto_due(m);
        let now = self.now;
        let max = self.msg.max_retries;
        let r = self.msg.retx.get_mut(&m).expect("a message's timer implies its retransmission state");
        r.ev = None;
        if r.lost_bytes == 0 || r.abandoned {
            return;
        }
        if due > now {
            r.ev = Some(self.q.schedule(due, Ev::Timer(TransportKind::Message, T_RTO, m)));
            return;
        }
        let stats = self.msg.stats.get_or_insert_with(RetransmitStats::default);
        if r.retries >= max {
            r.abandoned = true;
            stats.abandoned += 1;
            return;
        }
        let (bytes, packets) = (r.lost_bytes, r.lost_packets);
        r.retries += 1;
        r.resent = true;
        r.lost_bytes = 0;
        r.lost_packets = 0;
        stats.timeouts += 1;
        stats.packets += packets;
        stats.bytes += bytes;
        let msg = &mut self.msg.msgs[m as usize];
        let idle = msg.remaining == 0;
        msg.remaining += bytes;
        if idle {
            let p = self.flows[msg.flow as usize].src_port;
            self.join(p, m);
            self.wake_port(p);
        }
    }

    /// Schedule the messages the DAG released and the ends of the compute steps it started (and hand the
    /// scratch buffer back, emptied).
    pub(crate) fn start_released(&mut self, out: &mut Vec<(u32, Time)>) {
        let m = self.dag.n_msgs();
        for &(d, at) in out.iter() {
            let ev = if d < m { Ev::MsgStart(d) } else { Ev::ComputeDone(d - m) };
            self.q.schedule(at, ev);
        }
        out.clear();
        self.dag_out = std::mem::take(out);
    }
}
