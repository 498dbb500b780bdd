//! Lazy sources: a NIC that only pulls workload messages takes its next packet one serialisation ahead, so a
//! message streaming at line rate costs one transmitter event (`Ev::Port`) per two packets instead of one each.
//!
//! A NIC *pulls ahead* (`PortState::pulls_ahead`) when its transmitter's decision at the end of a serialisation is
//! already known when the serialisation starts: a host port of a non-RoCE scenario (no queue pairs, control
//! packets or pauses), without shaper or credit, all of whose flows are workload messages (nothing pushes into its
//! egress buffer, which the transmitter would serve first), and without flowlets (a pull would read the clock).
//! Its decision at `done` is to pull from the front of `senders`, and nothing can change that front before
//! `done`: only this NIC's pulls pop it, and a message that becomes active appends itself. So when the NIC starts
//! a packet at s and something waits, `pull_ahead` pulls the next one at once, as if at `done`, and schedules the
//! `Ev::Port` at its end instead.
//!
//! Exactness. The packet pulled ahead carries `done` as its send time, and FlowMonitor its counts and `done` as
//! the flow's last (or first) send, as the pull at `done` would have made them; the NIC's counters and the pipe
//! get the same values and entries. Not pulled ahead: the last packet of a message that releases dependents when
//! it is sent (`Dag::sent` acts at the pull's time), and a pull after the run's stop time. What an observer
//! between s and `done` could see differently is settled where it is read: a message becoming active before
//! `done` (`Messages::start` through `join`) goes where it would have been in the round robin had the pull not
//! happened yet (before the message pulled ahead, which went back to the end); `Sim::shift` at a pause before
//! `done` moves the flow's send times that lie beyond the pause; the run's end time under a stop time includes
//! `done` (`Sim::settle_ports`). A run halted by its event or wall-clock limit (never exact across engines, since
//! the events differ) may count the packet pulled ahead as sent.

use crate::events::Ev;
use crate::sim::Sim;
use crate::transport::TransportKind;
use fabricsim_core::Time;

impl Sim {
    /// Mark the NICs that pull ahead (see the module). O(ports + flows).
    pub(crate) fn mark_pulls_ahead(&mut self) {
        if self.net.roce || self.flowlet_gap != 0 || self.pulled != TransportKind::Message {
            return;
        }
        let mut ok: Vec<bool> = (0..self.net.ports.len())
            .map(|p| {
                let port = &self.net.ports[p];
                !self.net.topo.is_switch(self.net.topo.ports[p].node) && port.cap.is_none() && port.voq.is_none() && port.credits == u64::MAX
            })
            .collect();
        for f in &self.flows {
            if f.transport.kind != TransportKind::Message {
                ok[f.src_port as usize] = false;
            }
        }
        for (port, ok) in self.net.ports.iter_mut().zip(ok) {
            port.pulls_ahead = ok;
        }
    }

    /// NIC p, which pulls ahead, started a packet ending at `done` and has something waiting: pull the next
    /// packet now as if at `done`, start it then, and schedule the transmitter's decision at its end. Returns
    /// false, doing nothing, when that pull must happen at `done` (see the module). O(1).
    #[inline]
    pub(crate) fn pull_ahead(&mut self, p: u32, done: Time) -> bool {
        if self.stop.is_some_and(|s| done > s) {
            return false;
        }
        let port = &self.net.ports[p as usize];
        debug_assert!(port.egress.is_empty(), "nothing pushes into a NIC that pulls ahead");
        let Some(&m) = port.senders.front() else {
            return false;
        };
        let msg = &self.msg.msgs[m as usize];
        let requeued = msg.remaining > msg.payload as u64;
        if !requeued && self.dag.has_sent_dependents(m) {
            return false;
        }
        let now = self.now;
        self.now = done;
        let pkt = self.pull_message(p).expect("a message waits");
        let size = self.pkts[pkt as usize].size();
        let flow = self.pkts[pkt as usize].flow;
        let end = self.begin_tx(p, pkt, size);
        self.now = now;
        let waiting = self.has_work(p);
        let port = &mut self.net.ports[p as usize];
        port.ahead = Some((done, flow, requeued));
        if waiting {
            port.pending = true;
            self.q.schedule(end, Ev::Port(p));
        }
        true
    }

    /// Message m becomes active at NIC p: it joins the round robin at the end, before the message pulled ahead
    /// if that pull has not happened yet (it is at `done`, and at one picosecond the transmitter decides first).
    #[inline]
    pub(crate) fn join(&mut self, p: u32, m: u32) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        match port.ahead {
            Some((done, _, true)) if now < done => {
                let at = port.senders.len() - 1;
                port.senders.insert(at, m);
            }
            _ => port.senders.push_back(m),
        }
    }

    /// Before `shift(dt)` at the clock: a pull ahead still to happen at the pause (its `done` later, or at the
    /// clock with the last event carried out before the NIC's `Ev::Port` in tie order) happens `dt` later, and so
    /// do its flow's send times it set. O(ports).
    pub(crate) fn shift_ahead(&mut self, dt: Time) {
        let now = self.now;
        for (p, port) in self.net.ports.iter_mut().enumerate() {
            let Some((done, flow, requeued)) = port.ahead else { continue };
            if done > now || (done == now && Ev::Port(p as u32).tie_key() > self.last_key) {
                let st = &mut self.measure.stats[flow as usize];
                if st.first_tx == Some(done.0) {
                    st.first_tx = Some(done.0 + dt.0);
                }
                st.last_tx = Some(done.0 + dt.0);
                port.ahead = Some((done + dt, flow, requeued));
            } else {
                port.ahead = None;
            }
        }
    }
}
