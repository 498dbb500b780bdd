//! Messages of the workload DAG: pulled by their NIC round-robin, complete when every payload byte arrived.

use crate::events::Ev;
use crate::sim::Sim;
use crate::transport::{with_transport, TransportModel};
use fabricsim_core::Time;

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
}

/// The workload's messages (message m is flow `n_src + m`), and how many were delivered (progress reports).
#[derive(Default)]
pub(crate) struct Messages {
    pub(crate) msgs: Vec<MsgRt>,
    pub(crate) done: u64,
    /// Payload bytes received in order over all messages, and the messages' total payload (progress reports).
    pub(crate) rx_bytes: u64,
    pub(crate) total_bytes: u64,
}

impl TransportModel for Messages {
    fn on_packet(sim: &mut Sim, m: u32, _ack: bool, pkt: u32) {
        let payload = sim.pkts[pkt as usize].payload;
        sim.msg_rx(m, payload);
    }

    /// Messages have no timers (their starts are the workload's `Ev::MsgStart`).
    fn on_timer(_sim: &mut Sim, t: u8, _m: u32) {
        debug_assert!(false, "messages have no timer {t}");
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

    /// A message holds only its history (start and completion) and byte counts: nothing to move.
    fn shift(&mut self, _dt: Time) {}

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
        let (flow, header) = (msg.flow, msg.header);
        if msg.remaining > 0 {
            self.net.ports[p as usize].senders.push_back(m);
        } else if self.dag.has_sent_dependents(m) {
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
