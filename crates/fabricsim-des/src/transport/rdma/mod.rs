//! The RDMA transport (RoCEv2 RC as in HPCC's ns-3 fork): one queue pair per message, paced at its rate,
//! ACK per packet, NACK and go-back-N on a gap, and congestion control (none, DCQCN or HPCC).
//!
//! Sequence numbers: a data packet's `psn` is its packet index (byte offset / packet payload); an ACK or NACK
//! carries the receiver's next expected packet index. The receiver keeps no out-of-order buffer: a packet
//! beyond the expected one is discarded and NACKed (at most once per `nack_interval` per hole), a duplicate is
//! discarded silently. There is no retransmission timer (as in the peer): only a NACK recovers a loss.

pub(crate) mod dcqcn;
pub(crate) mod hpcc;

use crate::events::Ev;
use crate::sim::Sim;
use crate::transport::{TransportKind, TransportModel};
use fabricsim_core::spec::{RdmaCc, RdmaSpec};
use fabricsim_core::Time;

/// The RDMA state: the configuration (None without `[rdma]`), one QP per message, HPCC's INT stacks by packet id,
/// the rate log and the CNPs received.
#[derive(Default)]
pub(crate) struct Rdma {
    pub(crate) cfg: Option<RdmaCfg>,
    pub(crate) qps: Vec<Qp>,
    pub(crate) hpcc_on: bool,
    pub(crate) ints: Vec<IntStack>,
    pub(crate) rates: RateLog,
    pub(crate) cnps: u64,
}

/// The DCQCN timers of a QP (`Ev::Timer(TransportKind::Rdma, timer, qp)`).
pub(crate) const T_ALPHA: u8 = 0;
pub(crate) const T_DECREASE: u8 = 1;
pub(crate) const T_INCREASE: u8 = 2;

pub(crate) fn timer(t: u8, q: u32) -> Ev {
    Ev::Timer(TransportKind::Rdma, t, q)
}

impl TransportModel for Rdma {
    fn on_packet(sim: &mut Sim, q: u32, ack: bool, pkt: u32) {
        if ack {
            sim.rdma_rx_ack(q, pkt)
        } else {
            sim.rdma_rx_data(q, pkt)
        }
    }

    fn on_timer(sim: &mut Sim, t: u8, q: u32) {
        match t {
            T_ALPHA => sim.dcqcn_alpha(q),
            T_DECREASE => sim.dcqcn_decrease(q),
            T_INCREASE => sim.dcqcn_increase(q),
            other => debug_assert!(false, "RDMA has no timer {other}"),
        }
    }

    fn next_packet(sim: &mut Sim, p: u32) -> Option<u32> {
        if sim.net.roce_ports[p as usize].qps.is_empty() {
            return None;
        }
        sim.pull_qp(p)
    }

    fn start(sim: &mut Sim, m: u32) {
        sim.qp_start(m)
    }

    /// Packets of the QP's message not yet sent (the ACK flow: none of its own).
    fn remaining(sim: &Sim, q: u32, ack: bool) -> Option<u64> {
        let qp = &sim.rdma.qps[q as usize];
        (!ack).then(|| (qp.size - qp.snd_nxt).div_ceil(qp.mtu as u64))
    }

    /// The data flow moves the sender's next and acknowledged bytes and the receiver's expected byte by `tx`
    /// packets (a steady QP loses none, so `rx == tx`); the packets in flight of both directions carry PSNs
    /// (packet indices), which move by as many.
    fn skip(sim: &mut Sim, q: u32, ack: bool, tx: u64, _rx: u64) -> u64 {
        let qp = &mut sim.rdma.qps[q as usize];
        if ack {
            return qp.skipped;
        }
        let b = tx * qp.mtu as u64;
        qp.snd_nxt += b;
        qp.snd_una += b;
        qp.expected += b;
        qp.skipped = tx;
        // The message layer counts delivered bytes too (it completes the message).
        sim.msg.msgs[q as usize].received += b;
        sim.msg.rx_bytes += b;
        tx
    }

    /// The QP's rate, DCQCN's target rate and α (offset by 1/16, so that a small α's relative noise does not
    /// count), or HPCC's rate and window; line rate alone without congestion control.
    fn cc_state(sim: &Sim, q: u32, ack: bool) -> Option<[f64; 3]> {
        let qp = &sim.rdma.qps[q as usize];
        (!ack).then_some([qp.rate, qp.dcqcn.target, qp.dcqcn.alpha + 0.0625])
    }

    /// Each QP's pacing time and NACK timer, HPCC's last update, and the INT timestamps of packets in flight.
    fn shift(&mut self, dt: Time) {
        for qp in &mut self.qps {
            qp.next_avail = qp.next_avail + dt;
            qp.nack_timer = qp.nack_timer + dt;
            qp.hpcc.shift(dt);
        }
        for s in &mut self.ints {
            for h in &mut s.hops[..s.n as usize] {
                h.ts += dt.0;
            }
        }
    }
}

/// Traffic class of ACKs and NACKs when `ack_high_priority` (strict priority, never paused, no buffer accounting).
pub(crate) const CLASS_CONTROL: u8 = 1;
/// `Packet::ecn` bits: congestion experienced (set by a marking switch), and the ACK flags.
pub(crate) const ECN_CE: u8 = 1;
pub(crate) const FLAG_CNP: u8 = 2;
pub(crate) const FLAG_NACK: u8 = 4;

/// One INT record a switch appends to an HPCC data packet at dequeue.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IntHop {
    /// Dequeue time (ps), bytes the port had sent before this packet, bytes queued at the port after it left,
    /// and the port's rate (bits/s).
    pub(crate) ts: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) qlen: u64,
    pub(crate) rate: u64,
}

/// HPCC's INT stack of one packet (at most `MAX_HOPS`; further hops are not recorded).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IntStack {
    pub(crate) n: u8,
    pub(crate) hops: [IntHop; MAX_HOPS],
}

pub(crate) const MAX_HOPS: usize = 5;

/// A queue pair: the sender's state, the receiver's, and the congestion control's. Rates are bits/s (f64, as
/// the peer's DataRate arithmetic); sequence state is bytes. Invariant: `snd_una <= snd_nxt <= size`.
pub(crate) struct Qp {
    pub(crate) flow: u32,
    pub(crate) ack_flow: u32,
    pub(crate) size: u64,
    pub(crate) mtu: u32,
    pub(crate) header: u32,
    pub(crate) snd_nxt: u64,
    pub(crate) snd_una: u64,
    /// Current rate, line rate, earliest start of the next packet, and the wire size of the last one.
    pub(crate) rate: f64,
    pub(crate) max_rate: f64,
    pub(crate) next_avail: Time,
    pub(crate) last_size: u32,
    /// In-flight limit at line rate (bytes; 0 = none).
    pub(crate) win: u64,
    /// Receiver: next expected byte, NACK suppression.
    pub(crate) expected: u64,
    pub(crate) nack_timer: Time,
    pub(crate) last_nack: u64,
    pub(crate) done: bool,
    /// Packets the last hybrid jump advanced the QP by (its ACK flow's in-flight PSNs move by as many).
    pub(crate) skipped: u64,
    pub(crate) dcqcn: dcqcn::State,
    pub(crate) hpcc: hpcc::State,
}

impl Qp {
    pub(crate) fn new(flow: u32, ack_flow: u32, size: u64, mtu: u32, header: u32, line: f64, win: u64) -> Qp {
        Qp {
            flow,
            ack_flow,
            size,
            mtu,
            header,
            snd_nxt: 0,
            snd_una: 0,
            rate: line,
            max_rate: line,
            next_avail: Time::ZERO,
            last_size: 0,
            win,
            expected: 0,
            nack_timer: Time::ZERO,
            last_nack: u64::MAX,
            done: false,
            skipped: 0,
            dcqcn: dcqcn::State::new(line),
            hpcc: hpcc::State::new(line),
        }
    }

    /// The in-flight limit now: the window, scaled by rate / line rate under `var_window` (at least 1 byte).
    #[inline]
    fn window(&self, var: bool) -> u64 {
        if self.win == 0 {
            0
        } else if var {
            ((self.win as f64 * self.rate / self.max_rate) as u64).max(1)
        } else {
            self.win
        }
    }
}

/// The RDMA configuration the engine runs with (the spec plus what the network implies).
pub(crate) struct RdmaCfg {
    pub(crate) spec: RdmaSpec,
    /// Base RTT T (ps) and the window W (bytes) of HPCC's rule and of the in-flight limit.
    pub(crate) base_rtt: Time,
    pub(crate) bdp: u64,
}

/// Per-QP rate samples (one row per rate change).
#[derive(Clone, Debug, Default)]
pub(crate) struct RateLog {
    pub(crate) t_ps: Vec<u64>,
    pub(crate) flow: Vec<u32>,
    pub(crate) rate_bps: Vec<u64>,
}

/// Picoseconds to send `bytes` at `rate` bits/s, rounded to the nearest ps.
#[inline]
pub(crate) fn tx_ps(bytes: u32, rate: f64) -> u64 {
    (bytes as f64 * 8.0 * 1e12 / rate).round() as u64
}

impl Sim {
    /// QP q (message q) becomes active at its NIC.
    pub(crate) fn qp_start(&mut self, q: u32) {
        let flow = self.rdma.qps[q as usize].flow;
        self.rdma.qps[q as usize].next_avail = self.now;
        self.log_rate(q);
        let p = self.flows[flow as usize].src_port;
        self.net.roce_ports[p as usize].qps.push_back(q);
        self.kick(p);
    }

    /// The next data packet of NIC port p's QPs: round-robin over the QPs with bytes to send, inside their
    /// window and past their pacing time. If none is ready, wake the port at the earliest pacing time.
    /// O(active QPs of the NIC).
    pub(crate) fn pull_qp(&mut self, p: u32) -> Option<u32> {
        let now = self.now;
        let var = self.rdma.cfg.as_ref().is_some_and(|r| r.spec.var_window);
        let n = self.net.roce_ports[p as usize].qps.len();
        let mut wake = Time::MAX;
        for k in 0..n {
            let q = self.net.roce_ports[p as usize].qps[k];
            let qp = &self.rdma.qps[q as usize];
            if qp.snd_nxt >= qp.size {
                continue;
            }
            let w = qp.window(var);
            if w != 0 && qp.snd_nxt - qp.snd_una >= w {
                continue;
            }
            if qp.next_avail > now {
                wake = wake.min(qp.next_avail);
                continue;
            }
            // Serve q and move it behind the others (round-robin).
            let rp = &mut self.net.roce_ports[p as usize];
            rp.qps.remove(k);
            rp.qps.push_back(q);
            return Some(self.qp_packet(q));
        }
        if wake != Time::MAX {
            let port = &mut self.net.ports[p as usize];
            if !port.pending {
                port.pending = true;
                let id = self.q.schedule(wake, crate::events::Ev::Port(p));
                self.net.roce_ports[p as usize].wake = Some(id);
            }
        }
        None
    }

    /// Let NIC port p send now if it is only waiting on a pacing wake-up (a window opened, a QP started or the
    /// port resumed): the wake-up is cancelled and the transmitter tried at once, as the peer's TriggerTransmit.
    pub(crate) fn kick(&mut self, p: u32) {
        if let Some(id) = self.net.roce_ports[p as usize].wake.take() {
            self.q.cancel(id);
            self.net.ports[p as usize].pending = false;
        }
        self.wake_port(p);
    }

    /// Emit QP q's next data packet (from `snd_nxt`) and pace the QP: its next packet may start one
    /// serialisation at the QP's rate later.
    fn qp_packet(&mut self, q: u32) -> u32 {
        let now = self.now;
        let qp = &mut self.rdma.qps[q as usize];
        let payload = (qp.mtu as u64).min(qp.size - qp.snd_nxt) as u32;
        let psn = (qp.snd_nxt / qp.mtu as u64) as u32;
        qp.snd_nxt += payload as u64;
        let wire = payload + qp.header;
        qp.last_size = wire;
        qp.next_avail = now + Time(tx_ps(wire, qp.rate));
        let (flow, header) = (qp.flow, qp.header);
        let pkt = self.new_packet(flow, payload, header);
        self.pkts[pkt as usize].psn = psn;
        if self.rdma.hpcc_on {
            self.rdma.ints[pkt as usize] = IntStack::default();
        }
        pkt
    }

    /// A data packet of QP q reached the receiver: deliver it in order, or NACK a gap, or drop a duplicate.
    pub(crate) fn rdma_rx_data(&mut self, q: u32, pkt: u32) {
        let now = self.now;
        let pk = self.pkts[pkt as usize];
        let cfg = &self.rdma.cfg.as_ref().expect("an RDMA flow implies [rdma]").spec;
        let nack_interval = Time(cfg.nack_interval_ps);
        let qp = &mut self.rdma.qps[q as usize];
        let seq = pk.psn as u64 * qp.mtu as u64;
        let nack = if seq == qp.expected {
            qp.expected += pk.payload as u64;
            false
        } else if seq > qp.expected {
            if now >= qp.nack_timer || qp.last_nack != qp.expected {
                qp.nack_timer = now + nack_interval;
                qp.last_nack = qp.expected;
                true
            } else {
                return;
            }
        } else {
            return; // duplicate: discarded, no ACK (as the peer)
        };
        let expected = qp.expected;
        let mtu = qp.mtu as u64;
        let mut flags = if pk.ecn & ECN_CE != 0 { FLAG_CNP } else { 0 };
        if nack {
            flags |= FLAG_NACK;
        }
        self.send_ack(q, pkt, expected.div_ceil(mtu) as u32, flags);
        if !nack {
            self.msg_rx(q, pk.payload);
        }
    }

    /// Send the ACK (or NACK) of QP q for data packet `data` from the receiver's NIC: control class or data
    /// class by `ack_high_priority`; HPCC copies the data packet's INT stack into it.
    fn send_ack(&mut self, q: u32, data: u32, psn: u32, flags: u8) {
        let cfg = &self.rdma.cfg.as_ref().expect("[rdma]").spec;
        let (bytes, high) = (cfg.ack_bytes, cfg.ack_high_priority);
        let flow = self.rdma.qps[q as usize].ack_flow;
        let ack = self.new_packet(flow, 0, bytes);
        let pk = &mut self.pkts[ack as usize];
        pk.psn = psn;
        pk.ecn = flags;
        if high {
            pk.class = CLASS_CONTROL;
        }
        if self.rdma.hpcc_on {
            self.rdma.ints[ack as usize] = self.rdma.ints[data as usize];
        }
        let port = self.flows[flow as usize].src_port;
        if high {
            self.enqueue_ctrl(port, ack);
        } else {
            self.enqueue(port, ack);
        }
    }

    /// An ACK or NACK of QP q reached the sender: advance `snd_una`, go back to it on a NACK, react to a CNP
    /// (DCQCN) or to the INT stack (HPCC), finish the QP once everything is acknowledged, and let the NIC send.
    pub(crate) fn rdma_rx_ack(&mut self, q: u32, pkt: u32) {
        let pk = self.pkts[pkt as usize];
        let cc = self.rdma.cfg.as_ref().expect("[rdma]").spec.cc;
        let qp = &mut self.rdma.qps[q as usize];
        if qp.done {
            return;
        }
        let acked = (pk.psn as u64 * qp.mtu as u64).min(qp.size);
        qp.snd_una = qp.snd_una.max(acked);
        if pk.ecn & FLAG_NACK != 0 {
            qp.snd_nxt = qp.snd_una;
        }
        if pk.ecn & FLAG_CNP != 0 {
            self.rdma.cnps += 1;
            if cc == RdmaCc::Dcqcn {
                self.dcqcn_cnp(q);
            }
        }
        if cc == RdmaCc::Hpcc {
            self.hpcc_ack(q, pkt);
        }
        let qp = &mut self.rdma.qps[q as usize];
        let p = self.flows[qp.flow as usize].src_port;
        if qp.snd_una >= qp.size {
            qp.done = true;
            self.dcqcn_stop(q);
            let rp = &mut self.net.roce_ports[p as usize];
            if let Some(k) = rp.qps.iter().position(|&x| x == q) {
                rp.qps.remove(k);
            }
        }
        self.kick(p);
    }

    /// Set QP q's rate (clamped to [min rate, line rate]) and log it.
    pub(crate) fn set_rate(&mut self, q: u32, rate: f64) {
        let min = self.rdma.cfg.as_ref().expect("[rdma]").spec.min_rate_bps as f64;
        let qp = &mut self.rdma.qps[q as usize];
        let r = rate.max(min).min(qp.max_rate);
        if r != qp.rate {
            qp.rate = r;
            self.log_rate(q);
        }
    }

    pub(crate) fn log_rate(&mut self, q: u32) {
        let qp = &self.rdma.qps[q as usize];
        self.rdma.rates.t_ps.push(self.now.0);
        self.rdma.rates.flow.push(qp.flow);
        self.rdma.rates.rate_bps.push(qp.rate.round() as u64);
    }
}
