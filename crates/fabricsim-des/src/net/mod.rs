//! Ports: egress buffer, transmitter (serialisation and shaper) and pipe (propagation) of each directed link end.

pub(crate) mod ahead;
pub(crate) mod commit;
pub(crate) mod credit;
pub(crate) mod ecn;
pub(crate) mod faults;
pub(crate) mod forward;
pub(crate) mod pfc;
pub(crate) mod voq;

use crate::events::Ev;
use crate::queues::Egress;
use crate::sim::Sim;
use crate::transport::TransportKind;
use fabricsim_core::routing::{Fib, PathTable};
use fabricsim_core::topology::{Topology, NONE};
use fabricsim_core::{Bps, Time};
use std::collections::VecDeque;
use voq::Voq;

/// The network: the wiring, the forwarding tables and explicit paths, and every directed link end (port: egress
/// buffer, transmitter, pipe, credit and RoCE state). `roce` is whether any of PFC, ECN or RDMA is on (the hot
/// path checks this flag alone); `roce_ports` is empty otherwise.
pub(crate) struct Net {
    pub(crate) topo: Topology,
    pub(crate) fib: Fib,
    pub(crate) paths: PathTable,
    pub(crate) ports: Vec<PortState>,
    pub(crate) roce: bool,
    pub(crate) roce_ports: Vec<RocePort>,
}

impl Net {
    /// Move every absolute time the ports hold by `dt`: transmitters, shapers, pipes, credit returns, the queue
    /// disciplines' clocks and, on RoCE ports, pause starts, serialisation ends and PFC frames in flight.
    pub(crate) fn shift(&mut self, dt: Time) {
        for p in &mut self.ports {
            p.busy_until = p.busy_until + dt;
            p.head_start = p.head_start + dt;
            p.next_start = p.next_start + dt;
            for e in p.pipe.iter_mut() {
                e.0 = e.0 + dt;
            }
            for e in p.credit_pipe.iter_mut() {
                e.0 = e.0 + dt;
            }
            if p.credit_ev != Time::MAX {
                p.credit_ev = p.credit_ev + dt;
            }
            p.egress.shift(dt);
        }
        for r in &mut self.roce_ports {
            r.paused_since = r.paused_since + dt;
            r.tx_end = r.tx_end + dt;
            for e in r.pfc_pipe.iter_mut() {
                e.0 = e.0 + dt;
            }
        }
    }
}

pub(crate) struct PortState {
    pub(crate) peer_node: u32,
    pub(crate) peer_is_switch: bool,
    pub(crate) rate: Bps,
    /// The last serialisation computed: (wire bytes, time at `rate`); most packets of a port share a size, so
    /// this spares a 64-bit division per packet. Invariant: `ser.1 == rate.tx_time(ser.0)` (or `ser.0 == 0`).
    pub(crate) ser: (u32, Time),
    /// Propagation delay plus the peer node's traversal latency.
    pub(crate) arrive: Time,
    /// Propagation delay alone (credit returns travel it back toward this port).
    pub(crate) delay: Time,
    pub(crate) cap: Option<Bps>,
    pub(crate) egress: Egress,
    /// When the transmitter is free: the end of the last serialisation started (a port in serialisation has
    /// `now < busy_until`).
    pub(crate) busy_until: Time,
    /// Whether a `Ev::Port` is scheduled: the transmitter's next decision (at `busy_until` when something waits
    /// to be sent, a shaper or pacing wake-up). A port with nothing waiting schedules none when it starts a
    /// packet: the packet is in its pipe already, and a later arrival wakes the port (`wake_port`).
    pub(crate) pending: bool,
    /// Whether the port commits each packet's departure when it is queued (`net::commit`: a switch port with a
    /// plain DropTail FIFO, no shaper, VOQ, credit or drop list, in a non-RoCE scenario). Such a port never has an
    /// `Ev::Port` but the rare wake-up for nothing after a drop (`Sim::commit`); its egress FIFO holds the
    /// committed packets not yet started (once settled), the first starting at `head_start`, each of the others
    /// when the one before it ends, the last ending at `busy_until`; all of them are in the pipe already.
    pub(crate) commits: bool,
    pub(crate) head_start: Time,
    /// Whether the NIC pulls its next packet one serialisation ahead (`net::ahead`: a host port that only pulls
    /// workload messages, in a non-RoCE scenario without flowlets, shaper or credit), and the packet it pulled
    /// ahead last: (its start, its flow, whether its message went back to `senders`, as the last one).
    pub(crate) pulls_ahead: bool,
    pub(crate) ahead: Option<(Time, u32, bool)>,
    /// Shaper: earliest start of the next serialisation.
    pub(crate) next_start: Time,
    pub(crate) pipe: VecDeque<(Time, u32)>,
    /// Active messages pulled by this NIC, round-robin.
    pub(crate) senders: VecDeque<u32>,
    pub(crate) tx_packets: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) drops: u64,
    pub(crate) peak_packets: u64,
    pub(crate) peak_bytes: u64,
    /// Error model: arrival indices still to drop, in descending order (popped from the back).
    pub(crate) drop_list: Vec<u64>,
    pub(crate) arrivals: u64,
    /// Bytes the peer's input buffer can still take (u64::MAX unless the peer is an input-buffered switch).
    pub(crate) credits: u64,
    /// Credit returns travelling toward this port: (arrival time, bytes), absorbed when the port needs credit
    /// (`net::credit`); their sum; the credit a blocked port waits for with none on its way (0: none); and the
    /// time of its scheduled `Ev::Credit` wake-up (Time::MAX: none).
    pub(crate) credit_pipe: VecDeque<(Time, u32)>,
    pub(crate) credit_inflight: u64,
    pub(crate) credit_need: u64,
    pub(crate) credit_ev: Time,
    /// Output ports of input-buffered switches: the virtual output queues at the switch's inputs (boxed, so
    /// the ports of other switches stay small).
    pub(crate) voq: Option<Box<Voq>>,
}

/// The RoCE state of a port (allocated only for scenarios with PFC, ECN or RDMA, so the others keep a small
/// `PortState`): the control-class queue served with strict priority, the data priority's pause state and
/// PFC frames in flight toward it, ECN thresholds, the NIC's queue pairs, and counters.
#[derive(Default)]
pub(crate) struct RocePort {
    /// Control packets (ACK, NACK) waiting, and their bytes; never paused.
    pub(crate) ctrl: VecDeque<u32>,
    pub(crate) ctrl_bytes: u64,
    /// Whether the downstream paused this port's data priority, since when, and the paused time so far (ps).
    pub(crate) paused: bool,
    pub(crate) paused_since: Time,
    pub(crate) paused_ps: u64,
    /// PAUSE frames this port sent upstream and received from downstream.
    pub(crate) pause_tx: u64,
    pub(crate) pause_rx: u64,
    /// PFC frames travelling toward this port: (arrival, pause?); the head alone is scheduled.
    pub(crate) pfc_pipe: VecDeque<(Time, bool)>,
    /// When the packet being serialised ends (a PFC frame waits for it).
    pub(crate) tx_end: Time,
    /// ECN thresholds of a switch port (kmin, kmax bytes; pmax), and packets marked.
    pub(crate) ecn: Option<(u64, u64, f64)>,
    pub(crate) ecn_marks: u64,
    /// Active queue pairs of a NIC, round-robin, and the pending pacing wake-up of the port (if that is what
    /// its `pending` event is).
    pub(crate) qps: VecDeque<u32>,
    pub(crate) wake: Option<crate::events::EventId>,
    /// Peak bytes held in the switch buffer on behalf of this (ingress) port.
    pub(crate) peak_ingress: u64,
}

impl Sim {
    /// A packet is lost at port `port` (a full queue, a dead link, a bit error, no route): counted at the port
    /// and its flow, and its transport told (the message transport re-sends it).
    #[inline]
    pub(crate) fn drop_packet(&mut self, pkt: u32, port: u32) {
        let flow = self.pkts[pkt as usize].flow;
        let b = self.flows[flow as usize].transport;
        if b.kind == TransportKind::Message {
            // The message transport re-sends it on its retransmission timeout (`transport::message`).
            let payload = self.pkts[pkt as usize].payload;
            self.msg_lost(b.idx, payload);
        }
        self.measure.stats[flow as usize].lost += 1;
        self.net.ports[port as usize].drops += 1;
        self.measure.totals.dropped += 1;
        self.release(pkt);
    }

    /// Offer a packet to port p's egress buffer; start the transmitter if idle.
    #[inline]
    pub(crate) fn enqueue(&mut self, p: u32, pkt: u32) {
        let (size, key) = {
            let pk = &self.pkts[pkt as usize];
            (pk.size(), pk.flow)
        };
        if self.net.ports[p as usize].commits {
            return self.commit(p, pkt, size);
        }
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        if !port.drop_list.is_empty() {
            let k = port.arrivals;
            port.arrivals += 1;
            if port.drop_list.last() == Some(&k) {
                port.drop_list.pop();
                self.drop_packet(pkt, p);
                return;
            }
        }
        port.egress.enqueue(pkt, size, key, now);
        let (n, b) = (port.egress.len(), port.egress.bytes());
        port.peak_packets = port.peak_packets.max(n);
        port.peak_bytes = port.peak_bytes.max(b);
        self.drain_drops(p);
        self.wake_port(p);
    }

    /// Something arrived for port p to send: start it now if the transmitter is free, or have the transmitter
    /// decide when its serialisation ends (one `Ev::Port`, unless one is pending). O(1) plus `try_start`.
    #[inline]
    pub(crate) fn wake_port(&mut self, p: u32) {
        let port = &mut self.net.ports[p as usize];
        if port.pending {
            return;
        }
        if self.now < port.busy_until {
            port.pending = true;
            let at = port.busy_until;
            self.q.schedule(at, Ev::Port(p));
            return;
        }
        self.try_start(p);
    }

    /// Account for every packet port p's buffering dropped since the last call (a UEC data packet is trimmed
    /// instead, `transport::uec`).
    #[inline]
    pub(crate) fn drain_drops(&mut self, p: u32) {
        while let Some((pkt, _)) = self.net.ports[p as usize].egress.drops.pop() {
            if self.uec.on && self.uec_trim(p, pkt) {
                continue;
            }
            self.drop_packet(pkt, p);
        }
    }

    /// Whether port p has something queued to send: an egress packet, a message to pull, a virtual output queue's
    /// packet or a control packet (a NIC's queue pairs are the caller's to add). O(1).
    #[inline]
    fn has_work(&self, p: u32) -> bool {
        let port = &self.net.ports[p as usize];
        !port.egress.is_empty()
            || !port.senders.is_empty()
            || port.voq.as_ref().is_some_and(|v| v.len > 0)
            || (self.net.roce && !self.net.roce_ports[p as usize].ctrl.is_empty())
    }

    /// Start serialising the next packet if the transmitter is idle and the shaper allows.
    /// Precondition: no `Ev::Port(p)` pending and nothing in serialisation.
    #[inline]
    pub(crate) fn try_start(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        debug_assert!(!port.pending && now >= port.busy_until, "try_start on a busy port {p}");
        if port.cap.is_some() && now < port.next_start {
            if self.has_work(p) {
                let port = &mut self.net.ports[p as usize];
                port.pending = true;
                let at = port.next_start;
                self.q.schedule(at, Ev::Port(p));
            }
            return;
        }
        if self.net.roce {
            let rp = &mut self.net.roce_ports[p as usize];
            if let Some(pkt) = rp.ctrl.pop_front() {
                let size = self.pkts[pkt as usize].size();
                rp.ctrl_bytes -= size as u64;
                return self.start_tx(p, pkt, size);
            }
            if rp.paused {
                return;
            }
        }
        let port = &mut self.net.ports[p as usize];
        if let Some(voq) = &mut port.voq {
            // Input-buffered switch: the arbiter picks the next input; the packet leaves its input buffer,
            // so that buffer's credit goes back to the upstream port.
            let Some((input, size)) = voq.peek() else {
                return;
            };
            if !self.has_credit(p, size as u64) {
                return; // it waits for credit from downstream
            }
            let port = &mut self.net.ports[p as usize];
            let voq = port.voq.as_mut().expect("checked above");
            let (pkt, size, upstream) = voq.pop(input);
            self.return_credit(upstream, size);
            self.start_tx(p, pkt, size);
            return;
        }
        if port.credits != u64::MAX {
            let head = match port.egress.dev_head_size() {
                Some(s) => Some(s),
                None => self.pull_size(p),
            };
            let Some(s) = head else { return };
            if !self.has_credit(p, s as u64) {
                return;
            }
        }
        let port = &mut self.net.ports[p as usize];
        let next = match port.egress.dequeue(now) {
            Some(queued) => Some(queued),
            None => self.pull(p).map(|k| (k, self.pkts[k as usize].size())),
        };
        if !self.net.ports[p as usize].egress.drops.is_empty() {
            self.drain_drops(p);
        }
        if let Some((pkt, size)) = next {
            self.start_tx(p, pkt, size);
        }
    }

    /// Begin serialising `pkt` of `size` wire bytes on port p (consumes downstream credit on lossless links). The
    /// caller passes the size its queue kept, so the packet itself is not read here.
    #[inline]
    pub(crate) fn start_tx(&mut self, p: u32, pkt: u32, size: u32) {
        let done = self.begin_tx(p, pkt, size);
        // The transmitter decides again at `done` only if something waits to be sent: a queued packet, a message
        // or queue pair to pull, a control packet.
        let waiting = self.has_work(p) || (self.net.roce && !self.net.roce_ports[p as usize].qps.is_empty());
        let port = &mut self.net.ports[p as usize];
        if port.pulls_ahead {
            port.ahead = None;
            if waiting && self.pull_ahead(p, done) {
                return; // the decision at `done` is taken (`net::ahead`)
            }
        }
        let port = &mut self.net.ports[p as usize];
        if waiting {
            port.pending = true;
            self.q.schedule(done, Ev::Port(p));
        }
        if self.net.roce {
            self.net.roce_ports[p as usize].tx_end = done;
        }
    }

    /// `start_tx` without the transmitter's next decision: count the packet, occupy the transmitter and put the
    /// packet in the pipe. Returns the end of its serialisation.
    #[inline]
    pub(crate) fn begin_tx(&mut self, p: u32, pkt: u32, size: u32) -> Time {
        let now = self.now;
        debug_assert_eq!(size, self.pkts[pkt as usize].size(), "the queued size is the packet's");
        if self.net.roce {
            self.on_dequeue(p, pkt);
        }
        let port = &mut self.net.ports[p as usize];
        port.tx_packets += 1;
        port.tx_bytes += size as u64;
        if port.credits != u64::MAX {
            port.credits -= size as u64;
        }
        if let Some(cap) = port.cap {
            port.next_start = now + cap.tx_time(size as u64);
        }
        self.send_into_pipe(p, pkt, now, size)
    }

    /// Serialise `pkt` of `size` wire bytes on port p from `start`: the transmitter is busy until its end, and the
    /// packet enters the pipe now, arriving one serialisation, the link delay and the peer's latency after
    /// `start`; the pipe schedules its head alone (arrivals are in start order). Returns the serialisation's end.
    #[inline]
    pub(crate) fn send_into_pipe(&mut self, p: u32, pkt: u32, start: Time, size: u32) -> Time {
        let port = &mut self.net.ports[p as usize];
        let done = start + port.ser_time(size);
        port.busy_until = done;
        let at = done + port.arrive;
        if port.pipe.is_empty() {
            self.q.schedule(at, Ev::Pipe(p));
        }
        port.pipe.push_back((at, pkt));
        done
    }

    /// Queue a control packet (ACK, NACK) at port p, ahead of all data; start the transmitter if idle.
    pub(crate) fn enqueue_ctrl(&mut self, p: u32, pkt: u32) {
        let rp = &mut self.net.roce_ports[p as usize];
        rp.ctrl.push_back(pkt);
        rp.ctrl_bytes += self.pkts[pkt as usize].size() as u64;
        self.wake_port(p);
    }

    /// RoCE hooks as port p dequeues `pkt` (HPCC's SwitchNotifyDequeue): a shared-buffer switch frees the
    /// packet's ingress bytes (and may resume the upstream), marks ECN on the data queue left behind, and
    /// appends HPCC's INT record.
    fn on_dequeue(&mut self, p: u32, pkt: u32) {
        self.pfc.tx_started += 1;
        let pk = self.pkts[pkt as usize];
        if pk.class == crate::transport::rdma::CLASS_CONTROL {
            return;
        }
        let v = self.net.topo.ports[p as usize].node;
        if !self.net.topo.is_switch(v) {
            return;
        }
        if self.pfc.mmu_of[v as usize] != NONE {
            self.mmu_release(v, pkt);
        }
        if self.net.roce_ports[p as usize].ecn.is_some() {
            self.ecn_mark(p, pkt);
        }
        let b = self.flows[pk.flow as usize].transport;
        if self.rdma.hpcc_on && b.kind == TransportKind::Rdma && !b.ack {
            self.int_push(p, pkt);
        }
    }

    /// The transmitter of port p is free (its serialisation ended) or its shaper or pacing allows the next start:
    /// it picks the next packet.
    pub(crate) fn on_port(&mut self, p: u32) {
        if self.net.roce {
            self.net.roce_ports[p as usize].wake = None;
        }
        let port = &mut self.net.ports[p as usize];
        port.pending = false;
        if port.commits {
            return; // the wake-up for nothing after a drop (`Sim::commit`): its packets are committed already
        }
        self.try_start(p);
    }

    pub(crate) fn on_pipe(&mut self, p: u32) {
        let port = &mut self.net.ports[p as usize];
        let (_, pkt) = port.pipe.pop_front().expect("a pipe event implies a packet in the pipe");
        if let Some(&(t, _)) = port.pipe.front() {
            self.q.schedule(t, Ev::Pipe(p));
        }
        let (v, to_switch) = (port.peer_node, port.peer_is_switch);
        if self.faults.any {
            let link = self.net.topo.ports[p as usize].link as usize;
            if !self.faults.link_up[link] || (self.faults.link_ber[link] > 0.0 && self.bit_error(pkt, link, v)) {
                return self.lose_on_link(pkt, p);
            }
        }
        if to_switch {
            self.forward(v, pkt, p);
        } else {
            self.receive(pkt);
        }
    }
}
