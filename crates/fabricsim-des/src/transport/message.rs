//! Messages of the workload DAG: pulled by their NIC round-robin, complete when every payload byte arrived.

use crate::events::Ev;
use crate::sim::Sim;
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

impl Sim {
    /// Wire size of the next packet the NIC would pull from its active messages.
    #[inline]
    pub(crate) fn next_message_size(&self, p: u32) -> Option<u32> {
        let m = *self.ports[p as usize].senders.front()?;
        let msg = &self.msgs[m as usize];
        Some((msg.payload as u64).min(msg.remaining) as u32 + msg.header)
    }

    /// Next packet of the NIC's active messages (round-robin), or None.
    #[inline]
    pub(crate) fn pull_message(&mut self, p: u32) -> Option<u32> {
        let m = self.ports[p as usize].senders.pop_front()?;
        let msg = &mut self.msgs[m as usize];
        let payload = (msg.payload as u64).min(msg.remaining) as u32;
        msg.remaining -= payload as u64;
        let (flow, header) = (msg.flow, msg.header);
        if msg.remaining > 0 {
            self.ports[p as usize].senders.push_back(m);
        } else if self.dag.has_sent_dependents(m) {
            let mut out = std::mem::take(&mut self.dag_out);
            self.dag.sent(m, self.now, &mut out);
            self.start_released(&mut out);
        }
        Some(self.new_packet(flow, payload, header))
    }

    /// Message m becomes active: its NIC starts pulling it.
    pub(crate) fn msg_start(&mut self, m: u32) {
        let now = self.now;
        let msg = &mut self.msgs[m as usize];
        msg.started = Some(now);
        if self.rdma.is_some() {
            return self.qp_start(m);
        }
        let flow = msg.flow as usize;
        let p = self.flows[flow].src_port;
        let port = &mut self.ports[p as usize];
        port.senders.push_back(m);
        self.wake_port(p);
    }

    /// Payload of message m arrived; the message completes with its last byte.
    #[inline]
    pub(crate) fn msg_rx(&mut self, m: u32, payload: u32) {
        let msg = &mut self.msgs[m as usize];
        msg.received += payload as u64;
        if msg.received == msg.size {
            self.msg_complete(m);
        }
    }

    pub(crate) fn msg_complete(&mut self, m: u32) {
        let now = self.now;
        self.msgs[m as usize].complete = Some(now);
        self.msgs_done += 1;
        let mut out = std::mem::take(&mut self.dag_out);
        self.dag.delivered(m, now, &mut out);
        self.start_released(&mut out);
    }

    /// Schedule the messages the DAG released and the ends of the compute steps it started (and hand the
    /// scratch buffer back, emptied).
    pub(crate) fn start_released(&mut self, out: &mut Vec<(u32, Time)>) {
        let m = self.dag.n_msgs();
        for &(d, at) in out.iter() {
            let ev = if d < m {
                Ev::MsgStart(d)
            } else {
                Ev::ComputeDone(d - m)
            };
            self.q.schedule(at, ev);
        }
        out.clear();
        self.dag_out = std::mem::take(out);
    }
}
