//! The Ultra Ethernet transport (UET), as uet-htsim's `htsim_uec` models it (sim/uec.cpp, sim/uec_mp.cpp and
//! sim/compositequeue.cpp at ultraethernet/uet-htsim 40ccb05): one connection per message that sprays its
//! packets over `entropies` entropy values (EVs), a receiver that accepts packets out of order in a receive
//! bitmap and acknowledges selectively, NACKs for the headers of trimmed packets, a retransmission timeout, and
//! congestion control: NSCC (a sender window on ECN marks and queueing delay) or RCCC (receiver credit).
//!
//! Sender (`Conn`): the window test `cwnd ≥ in_flight + next packet` (NSCC), or credit > 0 (RCCC); the NIC pulls
//! the connection's next packet, a retransmission first. `in_flight` falls by the bytes the receiver says it got
//! (each ACK carries its running total), so a lost ACK costs nothing. Send records live in a ring from the
//! cumulative ACK on; a NACK or a timeout moves a packet to the retransmission queue. The retransmission timer is
//! one pending event per connection, due `rto` after the earliest send still unacknowledged (re-armed lazily
//! when it finds that send acknowledged).
//!
//! Receiver (`Sink`): a packet at the expected PSN advances it over the bitmap; one beyond it sets its bit. An
//! ACK goes back once `ack_every` bytes arrived since the last one, and at once for an ECN-marked packet, the
//! first packet, a packet asking for one (the sender's last packet, and every packet sent with the window full
//! or retransmitted) and a duplicate. It carries the cumulative PSN, the PSN that triggered it, a 64-bit SACK
//! bitmap, the ECN echo and the receiver's byte total.
//!
//! Switches (`Sim::trim`): a data packet that finds its egress queue (or a shared-buffer switch's MMU) full is
//! trimmed to `trim_bytes` and goes ahead in the control class (strict priority), as htsim's CompositeQueue does.
//! htsim trims the arriving packet or the queue's tail by a coin flip; this trims the arriving one.
//!
//! Per-packet state that does not fit the 32-byte packet (the EV, the ACK's SACK bitmap and byte total) is a
//! side table by packet id (`Uec::side`), as HPCC's INT stacks are.
//!
//! Left out (htsim has them, off by default): SLEEK loss probing, RTS packets (a sender whose window is full at
//! a timeout waits for its window instead of soliciting an ACK), RCCC's slow pulls of speculative credit for idle
//! senders, PCIe and oversubscription models, MIXED and bitmap load balancing.

use crate::events::{Ev, EventId};
use crate::sim::Sim;
use crate::transport::rdma::{CLASS_CONTROL, ECN_CE, FLAG_CNP, FLAG_NACK};
use crate::transport::{TransportKind, TransportModel};
use fabricsim_core::record::{UecColumns, UecStats};
use fabricsim_core::spec::{UecCc, UecSpec, UecSpray};
use fabricsim_core::Time;
use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::{BTreeMap, VecDeque};

/// `Packet::ecn` flags of UEC packets (beside `ECN_CE`, `FLAG_CNP` as the ACK's ECN echo and `FLAG_NACK`).
pub(crate) const FLAG_TRIMMED: u8 = 8;
/// Data: the sender asks for an ACK at once.
pub(crate) const FLAG_AR: u8 = 16;
/// Data: a retransmission; ACK: the echo of it.
pub(crate) const FLAG_RTX: u8 = 32;
/// A credit (pull) packet of RCCC.
pub(crate) const FLAG_PULL: u8 = 64;
/// Data trimmed at its last hop (toward the receiver); NACK: the echo of it.
pub(crate) const FLAG_LAST_HOP: u8 = 128;

/// The retransmission timer of connection c, and the credit pacer of receiver NIC port p.
pub(crate) const T_RTO: u8 = 0;
pub(crate) const T_PULL: u8 = 1;
/// The receiver's ACK coalescing timer of connection c (`[uec] ack_timer`; htsim_uec has none).
pub(crate) const T_ACK: u8 = 2;

/// htsim's reference network for NSCC's scaling: 100 Gb/s and 12 µs.
const REF_RATE_BPS: f64 = 100e9;
const REF_RTT_PS: u64 = 12_000_000;
/// RCCC's credit quantum (UEC_PULL_QUANTUM, 256 B).
const PULL_QUANTUM: u64 = 256;
/// REPS: recycled-entropy buffer size, and how long a timeout freezes it (buffer_reps.cpp).
const REPS_BUFFER: usize = 8;
const REPS_FREEZE_PS: u64 = 10_000_000_000;

/// Per-packet side data (by packet id): the EV, and on an ACK the PSN that triggered it, the SACK bitmap's base
/// and bits, and the receiver's byte total; on a data packet of RCCC the sender's pull target (bytes); on a
/// credit packet the cumulative credit.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Side {
    pub(crate) ev: u16,
    pub(crate) acked: u32,
    pub(crate) base: u32,
    pub(crate) bitmap: u64,
    pub(crate) bytes: u64,
}

/// The run-wide NSCC constants (`UecSrc::initNsccParams`), from the network's RTT and rate.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Nscc {
    pub(crate) target: u64,
    pub(crate) qa_threshold: f64,
    pub(crate) qa_gate: u32,
    pub(crate) alpha: f64,
    pub(crate) fi: f64,
    pub(crate) eta: f64,
    pub(crate) fi_scale: f64,
    pub(crate) gamma: f64,
    pub(crate) delay_alpha: f64,
    pub(crate) adjust_period: u64,
    pub(crate) adjust_bytes: i64,
    pub(crate) network_rtt: u64,
}

/// The UEC state: the configuration, one connection and one sink per message, the credit pacers, the side
/// table, the counters and the window log.
#[derive(Default)]
pub(crate) struct Uec {
    pub(crate) cfg: UecSpec,
    pub(crate) on: bool,
    pub(crate) nscc: Nscc,
    pub(crate) mss: u32,
    pub(crate) rto: u64,
    pub(crate) conns: Vec<Conn>,
    pub(crate) sinks: Vec<Sink>,
    /// RCCC credit pacers by receiver NIC port (None until the port's first sink asks for credit).
    pub(crate) pacers: Vec<Option<Pacer>>,
    pub(crate) side: Vec<Side>,
    pub(crate) stats: UecStats,
    pub(crate) log: WindowLog,
}

/// The window (NSCC) or credit (RCCC) log: one row per change of at least one MTU, or 1 µs after the last row.
#[derive(Default)]
pub(crate) struct WindowLog {
    pub(crate) t_ps: Vec<u64>,
    pub(crate) flow: Vec<u32>,
    pub(crate) bytes: Vec<i64>,
}

/// One send record: wire bytes, send time, transmissions after the first, and whether it is still
/// unacknowledged and not queued for retransmission.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rec {
    size: u32,
    send: u64,
    rtx: u8,
    live: bool,
}

/// What an ACK, NACK or timeout says of the path an EV took (`UecMultipath::PathFeedback`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Feedback {
    Good,
    Ecn,
    Nack,
    Timeout,
}

/// htsim's bitmap balancer (`UecMpBitmap`): the oblivious cycle, skipping EVs with a penalty (an ECN echo 1, a NACK
/// 4, a timeout 15, at most 15; each skip takes one off).
pub(crate) struct Bitmap {
    index: u32,
    xor: u32,
    upper: u16,
    skip: Vec<u8>,
}

/// How the connection picks EVs.
pub(crate) enum Mp {
    Bitmap(Bitmap),
    /// htsim_uec's default (`UecMpMixed`): an EV an unmarked ACK brought back, in the order they came, else the
    /// bitmap's.
    Mixed(Bitmap, VecDeque<u16>),
    Oblivious {
        index: u32,
        xor: u32,
        upper: u16,
    },
    Reps {
        buf: [u16; REPS_BUFFER],
        valid: [bool; REPS_BUFFER],
        head: usize,
        count: usize,
        fresh: usize,
        frozen_until: u64,
        frozen_head: usize,
        explore: u32,
    },
    Ecmp {
        ev: u16,
    },
}

/// The sender of one connection (`UecSrc`). Bytes are wire bytes (header included) unless named payload.
pub(crate) struct Conn {
    pub(crate) flow: u32,
    pub(crate) ack_flow: u32,
    pub(crate) size: u64,
    /// Wire bytes still to send new, payload bytes still to send new.
    backlog: i64,
    highest_sent: u64,
    in_flight: i64,
    pub(crate) cwnd: i64,
    maxwnd: i64,
    /// Whether `max_window` was given (it then stays as given).
    fixed_window: bool,
    base_rtt: u64,
    avg_delay: u64,
    achieved: i64,
    received: i64,
    bytes_to_ignore: u32,
    bytes_ignored: u32,
    inc_bytes: u64,
    fi_count: u64,
    increase: bool,
    trigger_qa: bool,
    qa_end: u64,
    last_adjust: u64,
    last_dec: u64,
    recvd_bytes: u64,
    /// Send records from `ring_base` (the cumulative ACK) to `highest_sent`.
    ring: VecDeque<Rec>,
    ring_base: u64,
    rtx_queue: BTreeMap<u64, u32>,
    rtx_backlog: i64,
    rto_ev: Option<EventId>,
    mp: Mp,
    rng: Pcg64Mcg,
    /// RCCC: credit, cumulative credit granted, whether the initial (speculative) credit is still in use.
    credit: i64,
    pull: u64,
    speculating: bool,
    /// Whether the connection is in its NIC's list, and the time and value of its last window-log row.
    active: bool,
    log_t: u64,
    log_v: i64,
    pub(crate) finished: Option<u64>,
    pub(crate) rtx_sent: u64,
}

/// The receiver of one connection (`UecSink`).
#[derive(Default)]
pub(crate) struct Sink {
    expected: u64,
    /// Bit i: PSN `expected + i` arrived (i ≥ 1; i = 0 is never set).
    rx: VecDeque<bool>,
    ooo: u64,
    accepted: i64,
    received: i64,
    recvd_bytes: u64,
    ack_request: bool,
    /// RCCC: the sender's highest pull target, the credit granted so far, whether it waits at its pacer.
    pull_target: u64,
    latest_pull: u64,
    in_pull: bool,
    /// The ACK coalescing timer: whether it is pending, and the EV and PSN of the last packet not acknowledged.
    ack_timer: bool,
    last_ev: u16,
    last_psn: u64,
}

/// RCCC's credit pacer at a receiver NIC: the sinks waiting for credit, round-robin, and its pending event.
#[derive(Default)]
pub(crate) struct Pacer {
    waiting: VecDeque<u32>,
    active: bool,
    ps_per_quantum: f64,
}

pub(crate) fn timer(t: u8, i: u32) -> Ev {
    Ev::Timer(TransportKind::Uec, t, i)
}

impl TransportModel for Uec {
    fn on_packet(sim: &mut Sim, c: u32, ack: bool, pkt: u32) {
        if !ack {
            return sim.uec_rx_data(c, pkt);
        }
        let flags = sim.pkts[pkt as usize].ecn;
        if flags & FLAG_PULL != 0 {
            sim.uec_rx_pull(c, pkt)
        } else if flags & FLAG_NACK != 0 {
            sim.uec_rx_nack(c, pkt)
        } else {
            sim.uec_rx_ack(c, pkt)
        }
    }

    fn on_timer(sim: &mut Sim, t: u8, i: u32) {
        match t {
            T_RTO => sim.uec_rto(i),
            T_PULL => sim.uec_pace(i),
            T_ACK => sim.uec_ack_timer(i),
            other => debug_assert!(false, "UEC has no timer {other}"),
        }
    }

    fn next_packet(sim: &mut Sim, p: u32) -> Option<u32> {
        if sim.net.roce_ports[p as usize].qps.is_empty() {
            return None;
        }
        sim.uec_pull(p)
    }

    fn start(sim: &mut Sim, m: u32) {
        sim.uec_start(m)
    }

    /// Every absolute time a connection holds (hybrid fidelity does not run UEC, so this only keeps the
    /// contract).
    fn shift(&mut self, dt: Time) {
        for c in &mut self.conns {
            c.qa_end += dt.0;
            c.last_adjust += dt.0;
            c.last_dec += dt.0;
            for r in &mut c.ring {
                r.send += dt.0;
            }
        }
    }
}

impl Mp {
    fn new(spray: UecSpray, n: u32, rng: &mut Pcg64Mcg) -> Mp {
        match spray {
            UecSpray::Oblivious => {
                let upper = (rng.next_u32() % u16::MAX as u32) as u16;
                Mp::Oblivious { index: 0, xor: rng.next_u32() % n, upper }
            }
            UecSpray::Reps => Mp::Reps {
                buf: [0; REPS_BUFFER],
                valid: [false; REPS_BUFFER],
                head: 0,
                count: 0,
                fresh: 0,
                frozen_until: 0,
                frozen_head: 0,
                explore: 0,
            },
            UecSpray::Ecmp => Mp::Ecmp { ev: rng.next_u32() as u16 },
            UecSpray::Bitmap => Mp::Bitmap(Bitmap::new(n, rng)),
            UecSpray::Mixed => Mp::Mixed(Bitmap::new(n, rng), VecDeque::new()),
        }
    }
}

impl Bitmap {
    fn new(n: u32, rng: &mut Pcg64Mcg) -> Bitmap {
        let upper = (rng.next_u32() % 0xffff) as u16;
        Bitmap { index: 0, xor: rng.next_u32() % n, upper, skip: vec![0; n as usize] }
    }

    /// `UecMpBitmap::nextEntropy`: the next EV of the cycle whose penalty is 0; the first penalised one met loses
    /// one point; after a whole round of penalised EVs, the one reached.
    fn next(&mut self, n: u32, rng: &mut Pcg64Mcg) -> u16 {
        let mask = n - 1;
        let mut ev = (self.index ^ self.xor) & mask;
        let (mut flag, mut counter) = (false, 0u32);
        while self.skip[ev as usize] > 0 {
            if !flag {
                self.skip[ev as usize] -= 1;
            }
            flag = true;
            counter += 1;
            if counter > n {
                break;
            }
            self.advance(n, rng);
            ev = (self.index ^ self.xor) & mask;
        }
        self.advance(n, rng);
        (ev as u16) | (self.upper & !(mask as u16))
    }

    fn advance(&mut self, n: u32, rng: &mut Pcg64Mcg) {
        self.index += 1;
        if self.index == n {
            self.index = 0;
            self.xor = rng.next_u32() & (n - 1);
        }
    }

    fn feedback(&mut self, ev: u16, f: Feedback) {
        let k = (ev as usize) & (self.skip.len() - 1);
        let penalty = match f {
            Feedback::Good => 0,
            Feedback::Ecn => 1,
            Feedback::Nack => 4,
            Feedback::Timeout => 15,
        };
        self.skip[k] = (self.skip[k] + penalty).min(15);
    }
}

impl Conn {
    /// The wire size of the next packet: the oldest retransmission, else a new packet (0: nothing to send).
    fn next_size(&self, mtu: u32) -> i64 {
        match self.rtx_queue.first_key_value() {
            Some((_, &s)) => s as i64,
            None => self.backlog.min(mtu as i64),
        }
    }

    fn rec(&mut self, psn: u64) -> Option<&mut Rec> {
        psn.checked_sub(self.ring_base).and_then(|i| self.ring.get_mut(i as usize))
    }

    /// The next EV (`UecMultipath::nextEntropy`).
    fn next_ev(&mut self, n: u32, now: u64) -> u16 {
        match &mut self.mp {
            Mp::Oblivious { index, xor, upper } => {
                let mask = n - 1;
                let ev = (*index ^ *xor) & mask;
                *index += 1;
                if *index == n {
                    *index = 0;
                    *xor = self.rng.next_u32() & mask;
                }
                (ev as u16) | (*upper & !(mask as u16))
            }
            Mp::Reps { buf, valid, head, count, fresh, frozen_until, frozen_head, explore } => {
                if *explore > 0 {
                    *explore -= 1;
                    return (self.rng.next_u32() % n) as u16;
                }
                if *frozen_until > now {
                    if *count == 0 {
                        return (self.rng.next_u32() % n) as u16;
                    }
                    let k = *frozen_head;
                    if valid[k] {
                        *fresh -= 1;
                    }
                    valid[k] = false;
                    *frozen_head = (k + 1) % *count;
                    return buf[k];
                }
                if *count == 0 || *fresh == 0 {
                    return (self.rng.next_u32() % n) as u16;
                }
                let k = (*head + REPS_BUFFER - *fresh) % REPS_BUFFER;
                valid[k] = false;
                *fresh -= 1;
                buf[k]
            }
            Mp::Ecmp { ev } => *ev,
            Mp::Bitmap(b) => b.next(n, &mut self.rng),
            Mp::Mixed(b, recycled) => match recycled.pop_front() {
                Some(ev) => ev,
                None => b.next(n, &mut self.rng),
            },
        }
    }

    /// Path feedback (`processEv`): REPS recycles an EV that came back unmarked, and freezes on a timeout.
    fn path_feedback(&mut self, ev: u16, f: Feedback, now: u64) {
        let (good, timeout) = (f == Feedback::Good, f == Feedback::Timeout);
        match &mut self.mp {
            Mp::Bitmap(b) => return b.feedback(ev, f),
            Mp::Mixed(b, recycled) => {
                b.feedback(ev, f);
                if good {
                    recycled.push_back(ev);
                }
                return;
            }
            _ => {}
        }
        if let Mp::Reps { buf, valid, head, count, fresh, frozen_until, frozen_head, explore } = &mut self.mp {
            let frozen = *frozen_until > now;
            if timeout && !frozen && *explore == 0 {
                *frozen_until = now + REPS_FREEZE_PS;
                *frozen_head = 0;
                return;
            }
            if *frozen_until != 0 && !frozen {
                // The freeze ended: start afresh, exploring 16 random EVs first.
                *buf = [0; REPS_BUFFER];
                *valid = [false; REPS_BUFFER];
                (*head, *count, *fresh, *frozen_until, *frozen_head, *explore) = (0, 0, 0, 0, 0, 16);
            }
            if good {
                if !valid[*head] {
                    *fresh += 1;
                }
                buf[*head] = ev;
                valid[*head] = true;
                *head = (*head + 1) % REPS_BUFFER;
                *fresh = (*fresh).min(REPS_BUFFER);
                *count = (*count + 1).min(REPS_BUFFER);
            }
        }
    }
}

impl Sim {
    /// Build the UEC state: the NSCC constants from the network, one connection and sink per message, ECN
    /// thresholds at switch egress (without `[ecn]`), the timeout. Called from `setup_roce` (UEC runs with the
    /// control class of the RoCE ports).
    pub(crate) fn setup_uec(&mut self, spec: &fabricsim_core::spec::RunSpec, n_msg: usize, ack_base: u32) {
        let Some(u) = spec.uec.clone() else { return };
        let n_src = spec.sources.len();
        let (mtu, ack) = (u.mtu_bytes, u.ack_bytes);
        let nic_rate = self.net.topo.ports.iter().filter(|p| !self.net.topo.is_switch(p.node)).map(|p| p.rate.0).max().unwrap_or(1) as f64;
        // The largest unloaded round trip of an MTU packet out and an ACK back over the scenario's connections
        // (htsim: 2 × the fabric's diameter latency + MTU and ACK serialisation on every hop of it).
        let mut rtt = 0u64;
        let mut seen = std::collections::HashSet::new();
        for i in 0..n_msg {
            let f = n_src + i;
            let fl = &self.flows[f];
            if !seen.insert((fl.src_port, fl.dst_ep)) {
                continue;
            }
            let (delay, tx_mtu, _, latency) = self.path_walk(f, mtu);
            let (_, tx_ack, _, _) = self.path_walk(f, ack);
            rtt = rtt.max(2 * (delay + latency) + tx_mtu + tx_ack);
        }
        let rtt = u.base_rtt_ps.unwrap_or(rtt.max(1));
        let bdp = rtt as f64 / 1e12 * nic_rate / 8.0;
        let bdp_pkt = (bdp / mtu as f64).ceil();
        let trimming = u.trimming;
        let target = u.target_qdelay_ps.unwrap_or(if trimming { (rtt as f64 * 0.75) as u64 } else { rtt });
        let mss = u.mss();
        let a = bdp / (REF_RTT_PS as f64 / 1e12 * REF_RATE_BPS / 8.0);
        let b = target as f64 / REF_RTT_PS as f64;
        self.uec.nscc = Nscc {
            target,
            qa_threshold: 4.0 * target as f64,
            qa_gate: 3,
            alpha: 4.0 * mss as f64 * a * b / target as f64,
            fi: 5.0 * mss as f64 * a,
            eta: 0.15 * mss as f64 * a,
            fi_scale: 0.25 * a,
            gamma: 0.8,
            delay_alpha: 0.0125,
            adjust_period: rtt,
            adjust_bytes: 8 * mtu as i64,
            network_rtt: rtt,
        };
        // The switch queue (the largest egress limit, else one BDP) sets the timeout: 15 µs + 6 drain times.
        let limit = |q: &fabricsim_core::spec::EgressSpec| match (q.limit_bytes, q.limit_packets) {
            (Some(b), _) => Some(b),
            (None, Some(n)) => Some(n * mtu as u64),
            _ => None,
        };
        let queue = (0..self.net.topo.ports.len())
            .filter(|&p| self.net.topo.is_switch(self.net.topo.ports[p].node))
            .filter_map(|p| limit(&self.net.topo.ports[p].queue))
            .max()
            .unwrap_or((bdp_pkt as u64) * mtu as u64);
        self.uec.rto = u.rto_ps.unwrap_or(((15.0 + queue as f64 * 6.0 * 8.0 * 1e6 / nic_rate) * 1e6) as u64);
        if spec.ecn.is_none() {
            let lo = u.ecn_low_bytes.unwrap_or((bdp_pkt * 0.2).ceil() as u64 * mtu as u64);
            let hi = u.ecn_high_bytes.unwrap_or((bdp_pkt * 0.8).ceil() as u64 * mtu as u64).max(lo);
            for p in 0..self.net.ports.len() {
                if self.net.topo.is_switch(self.net.topo.ports[p].node) {
                    self.net.roce_ports[p].ecn = Some((lo, hi, 1.0));
                }
            }
        }
        let seed = self.seed;
        let maxwnd = u.max_window_bytes.map_or((1.5 * (rtt as f64 / 1e12 * nic_rate / 8.0) as i64 as f64) as i64, |w| w as i64);
        self.uec.conns = (0..n_msg)
            .map(|i| {
                let flow = (n_src + i) as u32;
                let line = self.net.ports[self.flows[flow as usize].src_port as usize].rate.0 as f64;
                let bdp_c = (rtt as f64 / 1e12 * line / 8.0) as i64;
                let mw = u.max_window_bytes.map_or(((1.5 * bdp_c as f64) as i64).max(mtu as i64), |w| w as i64);
                let mut rng = Pcg64Mcg::seed_from_u64(fabricsim_core::routing::mix64(seed ^ 0x0EC0_5EED ^ ((i as u64) << 20)));
                let mp = Mp::new(u.spray, u.entropies, &mut rng);
                let size = self.msg.msgs[i].size;
                Conn {
                    flow,
                    ack_flow: ack_base + i as u32,
                    size,
                    backlog: (size.div_ceil(mss as u64) * u.header_bytes as u64 + size) as i64,
                    highest_sent: 0,
                    in_flight: 0,
                    cwnd: mw,
                    maxwnd: mw,
                    fixed_window: u.max_window_bytes.is_some(),
                    base_rtt: rtt,
                    avg_delay: 0,
                    achieved: 0,
                    received: 0,
                    bytes_to_ignore: 0,
                    bytes_ignored: 0,
                    inc_bytes: 0,
                    fi_count: 0,
                    increase: false,
                    trigger_qa: false,
                    qa_end: 0,
                    last_adjust: 0,
                    last_dec: 0,
                    recvd_bytes: 0,
                    ring: VecDeque::new(),
                    ring_base: 0,
                    rtx_queue: BTreeMap::new(),
                    rtx_backlog: 0,
                    rto_ev: None,
                    mp,
                    rng,
                    credit: maxwnd,
                    pull: 0,
                    speculating: true,
                    active: false,
                    log_t: 0,
                    log_v: i64::MIN,
                    finished: None,
                    rtx_sent: 0,
                }
            })
            .collect();
        self.uec.sinks = (0..n_msg).map(|_| Sink::default()).collect();
        self.uec.pacers = (0..self.net.ports.len()).map(|_| None).collect();
        self.uec.mss = mss;
        self.uec.cfg = u;
        self.uec.on = true;
    }

    /// Connection c (message c) starts: it joins its NIC's list.
    pub(crate) fn uec_start(&mut self, c: u32) {
        self.uec_log(c);
        self.uec_activate(c);
    }

    fn uec_activate(&mut self, c: u32) {
        let conn = &mut self.uec.conns[c as usize];
        let p = self.flows[conn.flow as usize].src_port;
        if !conn.active {
            conn.active = true;
            self.net.roce_ports[p as usize].qps.push_back(c);
        }
        self.kick(p);
    }

    /// Whether connection c may send a packet of `size` wire bytes now (`isSendPermitted`).
    #[inline]
    fn uec_can_send(&self, c: u32, size: i64) -> bool {
        let conn = &self.uec.conns[c as usize];
        size > 0
            && match self.uec.cfg.cc {
                UecCc::Rccc => conn.credit > 0,
                UecCc::Nscc | UecCc::None => conn.cwnd >= conn.in_flight + size,
            }
    }

    /// The next packet of NIC port p's connections: round-robin over those the window (or credit) lets send;
    /// a connection with nothing left leaves the list. O(active connections of the NIC).
    pub(crate) fn uec_pull(&mut self, p: u32) -> Option<u32> {
        let mtu = self.uec.cfg.mtu_bytes;
        let mut k = 0;
        while k < self.net.roce_ports[p as usize].qps.len() {
            let c = self.net.roce_ports[p as usize].qps[k];
            let size = self.uec.conns[c as usize].next_size(mtu);
            if size == 0 {
                self.net.roce_ports[p as usize].qps.remove(k);
                self.uec.conns[c as usize].active = false;
                continue;
            }
            if !self.uec_can_send(c, size) {
                k += 1;
                continue;
            }
            let rp = &mut self.net.roce_ports[p as usize];
            rp.qps.remove(k);
            rp.qps.push_back(c);
            return Some(self.uec_send(c));
        }
        None
    }

    /// Emit connection c's next packet (`sendNewPacket` / `sendRtxPacket`).
    fn uec_send(&mut self, c: u32) -> u32 {
        let now = self.now.0;
        let (mtu, hdr, n_ev, cc) = (self.uec.cfg.mtu_bytes, self.uec.cfg.header_bytes, self.uec.cfg.entropies, self.uec.cfg.cc);
        let conn = &mut self.uec.conns[c as usize];
        let (psn, size, mut flags) = match conn.rtx_queue.pop_first() {
            Some((psn, size)) => {
                conn.rtx_backlog -= size as i64;
                let r = conn.rec(psn).expect("a queued retransmission has its record");
                r.live = true;
                r.send = now;
                r.rtx = r.rtx.saturating_add(1);
                conn.rtx_sent += 1;
                (psn, size, FLAG_RTX | FLAG_AR)
            }
            None => {
                let size = conn.backlog.min(mtu as i64) as u32;
                conn.backlog -= size as i64;
                let psn = conn.highest_sent;
                conn.highest_sent += 1;
                conn.ring.push_back(Rec { size, send: now, rtx: 0, live: true });
                (psn, size, 0)
            }
        };
        if cc == UecCc::Rccc {
            conn.credit -= size as i64;
        }
        conn.in_flight += size as i64;
        let new = flags == 0;
        if new && (conn.backlog == 0 || (cc == UecCc::Rccc && conn.credit <= 0) || (cc != UecCc::Rccc && conn.in_flight + size as i64 >= conn.cwnd)) {
            flags |= FLAG_AR;
        }
        let ev = conn.next_ev(n_ev, now);
        let target = if cc == UecCc::Rccc { self.uec_pull_target(c) } else { 0 };
        let conn = &mut self.uec.conns[c as usize];
        let arm = conn.rto_ev.is_none();
        let flow = conn.flow;
        if arm {
            let id = self.q.schedule(Time(now + self.uec.rto), timer(T_RTO, c));
            self.uec.conns[c as usize].rto_ev = Some(id);
        }
        let pkt = self.new_packet(flow, size - hdr, hdr);
        let pk = &mut self.pkts[pkt as usize];
        pk.psn = psn as u32;
        pk.ecn = flags;
        self.uec.side[pkt as usize] = Side { ev, bytes: target, ..Side::default() };
        self.uec.stats.data_packets += 1;
        pkt
    }

    /// RCCC: the pull target a data packet carries (`computePullTarget`, in bytes): the bytes still to send,
    /// capped at the maximum window, less the credit in hand, shared among the NIC's active connections, on top
    /// of the credit granted so far.
    fn uec_pull_target(&self, c: u32) -> u64 {
        let conn = &self.uec.conns[c as usize];
        let mtu = self.uec.cfg.mtu_bytes as i64;
        let mut t = (conn.backlog + conn.rtx_backlog).min(conn.maxwnd) - conn.credit;
        if conn.speculating && t < mtu && conn.backlog > 0 {
            t = mtu;
        }
        let p = self.flows[conn.flow as usize].src_port;
        let active = self.net.roce_ports[p as usize].qps.len() as i64;
        if active > 1 {
            t /= active;
        }
        let t = (t + conn.pull as i64).max(0) as u64;
        t.div_ceil(PULL_QUANTUM) * PULL_QUANTUM
    }

    /// A data packet (or a trimmed header) of connection c reached the receiver (`UecSink::processData`).
    pub(crate) fn uec_rx_data(&mut self, c: u32, pkt: u32) {
        let pk = self.pkts[pkt as usize];
        let side = self.uec.side[pkt as usize];
        let psn = pk.psn as u64;
        let rccc = self.uec.cfg.cc == UecCc::Rccc;
        if rccc {
            self.uec_pull_request(c, side.bytes);
        }
        let s = &mut self.uec.sinks[c as usize];
        let dup = psn < s.expected || s.rx.get((psn - s.expected) as usize).copied().unwrap_or(false);
        let ce = pk.ecn & ECN_CE != 0;
        let rtx = pk.ecn & FLAG_RTX != 0;
        if pk.ecn & FLAG_TRIMMED != 0 {
            self.uec.stats.trimmed_received += 1;
            if dup {
                let base = sack_base(s, psn);
                return self.uec_ack(c, side.ev, base, psn, false, rtx);
            }
            return self.uec_nack(c, side.ev, psn, pk.ecn & FLAG_LAST_HOP != 0, ce);
        }
        let size = pk.size() as i64;
        s.accepted += size;
        if dup {
            self.uec.stats.duplicates += 1;
            let base = if ce { psn } else { sack_base(s, psn) };
            s.accepted = 0;
            return self.uec_ack(c, side.ev, base, psn, ce, rtx);
        }
        let mut force = s.received == 0;
        s.received += size - self.uec.cfg.ack_bytes as i64;
        s.recvd_bytes += size as u64;
        let ar = pk.ecn & FLAG_AR != 0;
        if ar {
            force = true;
            s.ack_request = true;
        }
        if psn == s.expected {
            s.rx.pop_front();
            s.expected += 1;
            while s.rx.front() == Some(&true) {
                s.rx.pop_front();
                s.expected += 1;
                s.ooo -= 1;
            }
            if s.ooo == 0 && s.ack_request {
                force = true;
                s.ack_request = false;
            }
        } else {
            let i = (psn - s.expected) as usize;
            if s.rx.len() <= i {
                s.rx.resize(i + 1, false);
            }
            s.rx[i] = true;
            s.ooo += 1;
            self.uec.stats.out_of_order += 1;
        }
        let send = ce || s.accepted >= self.uec.cfg.ack_every_bytes as i64 || force;
        let base = if ce || ar { psn } else { sack_base(s, psn) };
        if send {
            s.accepted = 0;
        } else if let Some(t) = self.uec.cfg.ack_timer_ps {
            // Bytes wait for an ACK: the coalescing timer sends one if nothing else does first.
            (s.last_ev, s.last_psn) = (side.ev, psn);
            if !s.ack_timer {
                s.ack_timer = true;
                self.q.schedule(self.now + Time(t), timer(T_ACK, c));
            }
        }
        self.msg_rx(c, pk.payload);
        if send {
            self.uec_ack(c, side.ev, base, psn, ce, rtx);
        }
    }

    /// Connection c's ACK coalescing timer: acknowledge the bytes that arrived since the last ACK, if any.
    pub(crate) fn uec_ack_timer(&mut self, c: u32) {
        let s = &mut self.uec.sinks[c as usize];
        s.ack_timer = false;
        if s.accepted == 0 {
            return;
        }
        s.accepted = 0;
        let (ev, psn) = (s.last_ev, s.last_psn);
        let base = sack_base(s, psn);
        self.uec.stats.timer_acks += 1;
        self.uec_ack(c, ev, base, psn, false, false);
    }

    /// Send connection c's ACK from the receiver (`UecSink::sack`): cumulative PSN, triggering PSN, a SACK
    /// bitmap of the 64 PSNs from `base`, ECN echo, the receiver's byte total. Control class.
    fn uec_ack(&mut self, c: u32, ev: u16, base: u64, acked: u64, ce: bool, rtx: bool) {
        let s = &self.uec.sinks[c as usize];
        // Bit i: PSN base + i arrived out of order (only the bitmap's PSNs `rx` holds can be set).
        let mut bitmap = 0u64;
        let end = (s.expected + s.rx.len() as u64).min(base + 64);
        for psn in base.max(s.expected + 1)..end {
            if s.rx[(psn - s.expected) as usize] {
                bitmap |= 1 << (psn - base);
            }
        }
        let (cum, bytes) = (s.expected, s.recvd_bytes);
        let flags = if ce { FLAG_CNP } else { 0 } | if rtx { FLAG_RTX } else { 0 };
        let side = Side { ev, acked: acked as u32, base: base as u32, bitmap, bytes };
        self.uec.stats.acks += 1;
        self.uec_ctrl(c, cum, flags, side);
    }

    /// Send connection c's NACK of `psn` (a trimmed header arrived).
    fn uec_nack(&mut self, c: u32, ev: u16, psn: u64, last_hop: bool, ce: bool) {
        let bytes = self.uec.sinks[c as usize].recvd_bytes;
        let flags = FLAG_NACK | if ce { FLAG_CNP } else { 0 } | if last_hop { FLAG_LAST_HOP } else { 0 };
        self.uec.stats.nacks += 1;
        self.uec_ctrl(c, psn, flags, Side { ev, bytes, ..Side::default() });
        if self.uec.cfg.cc == UecCc::Rccc {
            let t = self.uec.sinks[c as usize].pull_target;
            self.uec_pull_request(c, t);
        }
    }

    /// A control packet of connection c from its receiver's NIC (ACK, NACK or credit), ahead of all data.
    fn uec_ctrl(&mut self, c: u32, psn: u64, flags: u8, side: Side) {
        let flow = self.uec.conns[c as usize].ack_flow;
        let pkt = self.new_packet(flow, 0, self.uec.cfg.ack_bytes);
        let pk = &mut self.pkts[pkt as usize];
        pk.psn = psn as u32;
        pk.ecn = flags;
        pk.class = CLASS_CONTROL;
        self.uec.side[pkt as usize] = side;
        let port = self.flows[flow as usize].src_port;
        self.enqueue_ctrl(port, pkt);
    }

    /// An ACK of connection c reached the sender (`UecSrc::processAck`).
    pub(crate) fn uec_rx_ack(&mut self, c: u32, pkt: u32) {
        let now = self.now.0;
        let pk = self.pkts[pkt as usize];
        let side = self.uec.side[pkt as usize];
        let nscc = self.uec.nscc;
        let cc = self.uec.cfg.cc;
        let conn = &mut self.uec.conns[c as usize];
        if conn.finished.is_some() {
            return;
        }
        let mut newly = 0i64;
        if side.bytes > conn.recvd_bytes {
            newly = (side.bytes - conn.recvd_bytes) as i64;
            conn.recvd_bytes = side.bytes;
            conn.achieved += newly;
            conn.received += newly;
            conn.bytes_ignored = conn.bytes_ignored.wrapping_add(newly as u32);
        }
        conn.in_flight -= newly;
        let ecn = pk.ecn & FLAG_CNP != 0;
        let rtx_echo = pk.ecn & FLAG_RTX != 0;
        let acked = side.acked as u64;
        let sample = conn.rec(acked).filter(|r| r.live && ((r.rtx == 0 && !rtx_echo) || (r.rtx == 1 && rtx_echo))).map(|r| r.send);
        let line = self.net.ports[self.flows[conn.flow as usize].src_port as usize].rate.0 as f64;
        let delay = match sample {
            Some(send) => {
                let raw = now - send;
                conn.update_base_rtt(raw, line);
                if raw >= conn.base_rtt {
                    conn.update_delay(raw, true, ecn, &nscc);
                    raw - conn.base_rtt
                } else {
                    conn.avg_delay
                }
            }
            None => conn.avg_delay,
        };
        if ecn {
            self.uec.stats.ecn_echoes += 1;
        }
        // Cumulative ACK: the retransmission queue and the send records below it go.
        let cum = pk.psn as u64;
        while let Some((&psn, &size)) = conn.rtx_queue.first_key_value() {
            if psn >= cum {
                break;
            }
            conn.rtx_queue.pop_first();
            conn.rtx_backlog -= size as i64;
            conn.in_flight += size as i64;
        }
        while conn.ring_base < cum && !conn.ring.is_empty() {
            conn.ring.pop_front();
            conn.ring_base += 1;
        }
        // Selective ACKs.
        let mut bits = side.bitmap;
        let mut psn = side.base as u64;
        while bits != 0 {
            if bits & 1 != 0 {
                match conn.rec(psn) {
                    Some(r) if r.live => r.live = false,
                    _ => {
                        if let Some(size) = conn.rtx_queue.remove(&psn) {
                            conn.rtx_backlog -= size as i64;
                            conn.in_flight += size as i64;
                            if let Some(r) = conn.rec(psn) {
                                r.live = false;
                            }
                        }
                    }
                }
            }
            psn += 1;
            bits >>= 1;
        }
        conn.path_feedback(side.ev, if ecn { Feedback::Ecn } else { Feedback::Good }, now);
        if cc == UecCc::Nscc {
            conn.nscc_on_ack(ecn, delay, newly, now, &nscc);
        }
        conn.stop_speculating();
        let mss = self.uec.mss as u64;
        if cum * mss >= conn.size {
            conn.finished = Some(now);
            if let Some(id) = conn.rto_ev.take() {
                self.q.cancel(id);
            }
            self.uec_log(c);
            return;
        }
        self.uec_log(c);
        self.uec_activate(c);
    }

    /// A NACK of connection c reached the sender (`UecSrc::processNack`): the packet goes to the retransmission
    /// queue, NSCC cuts the window.
    pub(crate) fn uec_rx_nack(&mut self, c: u32, pkt: u32) {
        let now = self.now.0;
        let pk = self.pkts[pkt as usize];
        let side = self.uec.side[pkt as usize];
        let nscc = self.uec.nscc;
        let cc = self.uec.cfg.cc;
        let line = {
            let f = self.uec.conns[c as usize].flow;
            self.net.ports[self.flows[f as usize].src_port as usize].rate.0 as f64
        };
        let conn = &mut self.uec.conns[c as usize];
        let psn = pk.psn as u64;
        let Some(r) = conn.rec(psn).filter(|r| r.live).copied() else { return };
        let raw = now - r.send;
        conn.update_base_rtt(raw, line);
        if cc == UecCc::Nscc {
            conn.nscc_on_nack(r.size as i64, now, &nscc);
        }
        conn.rec(psn).expect("found above").live = false;
        conn.in_flight -= r.size as i64;
        conn.stop_speculating();
        conn.rtx_queue.insert(psn, r.size);
        conn.rtx_backlog += r.size as i64;
        let last_hop = pk.ecn & FLAG_LAST_HOP != 0;
        let ecn = pk.ecn & FLAG_CNP != 0;
        // A last-hop trim says the receiver is congested, not the path (`processEv`).
        let f = match (last_hop, ecn) {
            (true, false) => Feedback::Good,
            (true, true) => Feedback::Ecn,
            (false, _) => Feedback::Nack,
        };
        conn.path_feedback(side.ev, f, now);
        self.uec_log(c);
        self.uec_activate(c);
    }

    /// Connection c's retransmission timer: re-arm at the earliest unacknowledged send + RTO, or retransmit
    /// that packet (`rtxTimerExpired`).
    pub(crate) fn uec_rto(&mut self, c: u32) {
        let now = self.now.0;
        let rto = self.uec.rto;
        let cc = self.uec.cfg.cc;
        let mtu = self.uec.cfg.mtu_bytes as i64;
        let conn = &mut self.uec.conns[c as usize];
        conn.rto_ev = None;
        if conn.finished.is_some() {
            return;
        }
        let earliest = conn.ring.iter().enumerate().filter(|(_, r)| r.live).min_by_key(|(_, r)| r.send).map(|(i, r)| (i, *r));
        let Some((i, r)) = earliest else { return };
        if r.send + rto > now {
            let at = r.send + rto;
            let id = self.q.schedule(Time(at), timer(T_RTO, c));
            self.uec.conns[c as usize].rto_ev = Some(id);
            return;
        }
        let psn = conn.ring_base + i as u64;
        conn.ring[i].live = false;
        // htsim keeps no EV per packet: a timeout is said of EV 0 (`UNKNOWN_EV`).
        conn.path_feedback(0, Feedback::Timeout, now);
        conn.in_flight -= r.size as i64;
        if cc == UecCc::Nscc {
            conn.cwnd = (conn.cwnd - r.size as i64).max(mtu);
        }
        conn.rtx_queue.insert(psn, r.size);
        conn.rtx_backlog += r.size as i64;
        self.uec.stats.timeouts += 1;
        // The next unacknowledged send's timer.
        let next = conn.ring.iter().filter(|r| r.live).map(|r| r.send).min();
        if let Some(s) = next {
            let at = (s + rto).max(now);
            let id = self.q.schedule(Time(at), timer(T_RTO, c));
            self.uec.conns[c as usize].rto_ev = Some(id);
        }
        self.uec_log(c);
        self.uec_activate(c);
    }

    /// RCCC: a credit packet reached the sender (`processPull`).
    pub(crate) fn uec_rx_pull(&mut self, c: u32, pkt: u32) {
        let cumul = self.uec.side[pkt as usize].bytes;
        let conn = &mut self.uec.conns[c as usize];
        conn.stop_speculating();
        if cumul > conn.pull {
            conn.credit = (conn.credit + (cumul - conn.pull) as i64).min(conn.maxwnd);
            conn.pull = cumul;
        }
        self.uec_log(c);
        self.uec_activate(c);
    }

    /// RCCC: connection c's sink saw pull target `t` (`handlePullTarget`): it asks its NIC's pacer for credit.
    fn uec_pull_request(&mut self, c: u32, t: u64) {
        let s = &mut self.uec.sinks[c as usize];
        if t > s.pull_target {
            s.pull_target = t;
        }
        if s.in_pull || s.pull_target <= s.latest_pull {
            return;
        }
        s.in_pull = true;
        let ack_flow = self.uec.conns[c as usize].ack_flow;
        let p = self.flows[ack_flow as usize].src_port;
        let rate = self.net.ports[p as usize].rate.0 as f64;
        let pull_rate = self.uec.cfg.pull_rate;
        let pacer = self.uec.pacers[p as usize].get_or_insert_with(|| Pacer {
            waiting: VecDeque::new(),
            active: false,
            ps_per_quantum: 8.0 * PULL_QUANTUM as f64 * 1e12 / rate / pull_rate,
        });
        pacer.waiting.push_back(c);
        if !pacer.active {
            pacer.active = true;
            self.q.schedule(self.now, timer(T_PULL, p));
        }
    }

    /// RCCC: the credit pacer of receiver NIC port p grants its next sink `pull_packets` MSS of credit (no more
    /// than it asked for), and waits as long as that credit takes at `pull_rate` × line rate.
    pub(crate) fn uec_pace(&mut self, p: u32) {
        let per_pull = (self.uec.mss as u64 * self.uec.cfg.pull_packets as u64) / PULL_QUANTUM * PULL_QUANTUM;
        let Some(pacer) = self.uec.pacers[p as usize].as_mut() else { return };
        let Some(c) = pacer.waiting.pop_front() else {
            pacer.active = false;
            return;
        };
        let s = &mut self.uec.sinks[c as usize];
        let prev = s.latest_pull;
        s.latest_pull = (s.latest_pull + per_pull).min(s.pull_target.max(prev));
        let extra = s.latest_pull - prev;
        let more = s.pull_target > s.latest_pull;
        if !more {
            s.in_pull = false;
        }
        let cumul = s.latest_pull;
        let pacer = self.uec.pacers[p as usize].as_mut().expect("looked up above");
        if more {
            pacer.waiting.push_back(c);
        }
        let quanta = (extra / PULL_QUANTUM).max(1024 / PULL_QUANTUM);
        let wait = (pacer.ps_per_quantum * quanta as f64) as u64;
        self.q.schedule(self.now + Time(wait.max(1)), timer(T_PULL, p));
        self.uec.stats.pulls += 1;
        self.uec_ctrl(c, 0, FLAG_PULL, Side { bytes: cumul, ..Side::default() });
    }

    /// Log connection c's window (NSCC, none) or credit (RCCC) if it moved by an MTU or 1 µs passed.
    fn uec_log(&mut self, c: u32) {
        let now = self.now.0;
        let rccc = self.uec.cfg.cc == UecCc::Rccc;
        let mtu = self.uec.cfg.mtu_bytes as i64;
        let conn = &mut self.uec.conns[c as usize];
        let v = if rccc { conn.credit } else { conn.cwnd };
        if v == conn.log_v || ((v - conn.log_v).abs() < mtu && now < conn.log_t + 1_000_000 && conn.finished.is_none()) {
            return;
        }
        conn.log_v = v;
        conn.log_t = now;
        let log = &mut self.uec.log;
        log.t_ps.push(now);
        log.flow.push(conn.flow);
        log.bytes.push(v);
    }

    /// A data packet of a UEC connection that found port p's queue full: trim it to its header, which goes
    /// ahead in the control class. Returns false (the caller drops it) for any other packet, or with trimming
    /// off.
    pub(crate) fn uec_trim(&mut self, p: u32, pkt: u32) -> bool {
        if !self.uec.cfg.trimming {
            return false;
        }
        let pk = self.pkts[pkt as usize];
        let b = self.flows[pk.flow as usize].transport;
        if b.kind != TransportKind::Uec || b.ack || pk.ecn & FLAG_TRIMMED != 0 || !self.net.topo.is_switch(self.net.topo.ports[p as usize].node) {
            return false;
        }
        let last_hop = !self.net.ports[p as usize].peer_is_switch;
        let pk = &mut self.pkts[pkt as usize];
        pk.payload = 0;
        pk.header = self.uec.cfg.trim_bytes as u16;
        pk.ecn |= FLAG_TRIMMED | if last_hop { FLAG_LAST_HOP } else { 0 };
        pk.class = CLASS_CONTROL;
        self.uec.stats.trims += 1;
        self.enqueue_ctrl(p, pkt);
        true
    }

    /// The record's UEC section.
    pub(crate) fn uec_columns(&mut self) -> Option<UecColumns> {
        if !self.uec.on {
            return None;
        }
        let n = self.flows.len();
        let u = &mut self.uec;
        let mut stats = u.stats;
        stats.retransmits = u.conns.iter().map(|c| c.rtx_sent).sum();
        let (mut acked_ps, mut retransmits) = (vec![None; n], vec![0; n]);
        for c in &u.conns {
            acked_ps[c.flow as usize] = c.finished;
            retransmits[c.flow as usize] = c.rtx_sent;
        }
        Some(UecColumns {
            stats,
            acked_ps,
            retransmits,
            window_t_ps: std::mem::take(&mut u.log.t_ps),
            window_flow: std::mem::take(&mut u.log.flow),
            window_bytes: std::mem::take(&mut u.log.bytes).into_iter().map(|b| b.max(0) as u64).collect(),
        })
    }
}

impl Sim {
    /// The ECMP salt of packet `pkt` at a switch with several next hops: its flow's salt, mixed with the packet's
    /// EV for a UEC packet (UEC sprays: data, ACK and NACK of one EV take one path each way).
    #[inline]
    pub(crate) fn hash_salt(&self, pkt: u32) -> u64 {
        let pk = &self.pkts[pkt as usize];
        let f = &self.flows[pk.flow as usize];
        if self.uec.on && f.transport.kind == TransportKind::Uec {
            f.salt ^ fabricsim_core::routing::mix64(self.uec.side[pkt as usize].ev as u64 + 1)
        } else {
            f.salt
        }
    }
}

/// The SACK bitmap's base for a packet at `psn` (`sackBitmapBase`): the 64 PSNs up to it, above the expected one.
fn sack_base(s: &Sink, psn: u64) -> u64 {
    (psn.saturating_sub(63)).max(s.expected + 1)
}

impl Conn {
    fn stop_speculating(&mut self) {
        if self.speculating {
            self.speculating = false;
            if self.credit > 0 {
                self.credit = 0;
            }
        }
    }

    /// A smaller RTT sample lowers the base RTT and the maximum window (1.5 BDP at the NIC's rate).
    fn update_base_rtt(&mut self, raw: u64, line: f64) {
        if self.base_rtt > raw {
            self.base_rtt = raw;
            if !self.fixed_window {
                let bdp = (raw as f64 / 1e6 * line / 8e6) as i64;
                self.maxwnd = (1.5 * bdp as f64) as i64;
            }
        }
    }

    /// The smoothed queueing delay (`update_delay`).
    fn update_delay(&mut self, raw: u64, update_avg: bool, skip: bool, k: &Nscc) {
        let delay = raw - self.base_rtt;
        if update_avg {
            let a = k.delay_alpha;
            self.avg_delay = if !skip && delay > k.target {
                (a * self.base_rtt as f64 * 0.25 + (1.0 - a) * self.avg_delay as f64) as u64
            } else {
                (a * delay as f64 + (1.0 - a) * self.avg_delay as f64) as u64
            };
        }
    }

    fn bounds(&mut self, mtu: i64) {
        self.cwnd = self.cwnd.max(mtu).min(self.maxwnd);
    }

    /// NSCC's quick adapt: once per base RTT + target delay, a window that delivered less than 1/8 of the maximum
    /// window during a loss or a long delay collapses to what it delivered (`quick_adapt`).
    fn quick_adapt(&mut self, is_loss: bool, skip: bool, delay: u64, now: u64, k: &Nscc, mtu: i64) -> bool {
        let mut done = false;
        if self.bytes_ignored < self.bytes_to_ignore && skip {
            done = true;
        } else if now > self.qa_end {
            if self.qa_end != 0 && (self.trigger_qa || is_loss || delay as f64 > k.qa_threshold) && self.achieved < (self.maxwnd >> k.qa_gate) {
                self.cwnd = self.achieved.max(mtu);
                self.bytes_to_ignore = self.in_flight as u32;
                self.bytes_ignored = 0;
                self.trigger_qa = false;
                done = true;
            }
            self.achieved = 0;
            self.qa_end = now + self.base_rtt + k.target;
        }
        if done {
            self.inc_bytes = 0;
            self.received = 0;
        }
        done
    }

    /// NSCC on an ACK (`updateCwndOnAck_NSCC`): fair or proportional increase below the target delay without a
    /// mark, multiplicative decrease with a mark and a delay above it, and the adjustment every 8 MTUs or RTT.
    fn nscc_on_ack(&mut self, skip: bool, delay: u64, newly: i64, now: u64, k: &Nscc) {
        let mtu = k.adjust_bytes / 8;
        if self.quick_adapt(false, skip, delay, now, k, mtu) {
            return;
        }
        if !skip && delay >= k.target {
            self.inc_bytes = (self.inc_bytes as f64 + k.fi * newly as f64) as u64;
        } else if !skip {
            // Proportional increase, or the fast increase when the delay stays under 1 µs.
            let mut fast = false;
            if delay < 1_000_000 {
                self.fi_count += newly as u64;
                if self.fi_count > self.cwnd as u64 || self.increase {
                    self.cwnd = (self.cwnd as f64 + newly as f64 * k.fi_scale) as i64;
                    self.increase = true;
                    fast = true;
                }
            } else {
                self.fi_count = 0;
            }
            if !fast {
                self.increase = false;
                self.inc_bytes = (self.inc_bytes as f64 + k.alpha * newly as f64 * (k.target - delay) as f64) as u64;
            }
        } else if delay >= k.target {
            self.increase = false;
            self.fi_count = 0;
            let avg = self.avg_delay;
            if avg > k.target && now - self.last_dec > self.base_rtt {
                let f = (1.0 - k.gamma * (avg - k.target) as f64 / avg as f64).max(0.5);
                self.cwnd = ((self.cwnd as f64 * f) as i64).max(mtu);
                self.last_dec = now;
            }
        }
        self.bounds(mtu);
        if self.received > k.adjust_bytes || now - self.last_adjust > k.adjust_period {
            self.cwnd += (self.inc_bytes / self.cwnd.max(1) as u64) as i64;
            if now - self.last_adjust >= k.adjust_period {
                self.cwnd = (self.cwnd as f64 + k.eta) as i64;
                self.last_adjust = now;
            }
            self.inc_bytes = 0;
            self.received = 0;
        }
        self.bounds(mtu);
    }

    /// NSCC on a NACK (`updateCwndOnNack_NSCC`): the delay average sees one network RTT, quick adapt is
    /// triggered, and without it the window falls by the NACKed bytes.
    fn nscc_on_nack(&mut self, nacked: i64, now: u64, k: &Nscc) {
        let mtu = k.adjust_bytes / 8;
        self.bytes_ignored = self.bytes_ignored.wrapping_add(nacked as u32);
        let raw = self.base_rtt + k.network_rtt;
        self.update_delay(raw, true, true, k);
        self.trigger_qa = true;
        if !self.quick_adapt(true, true, 0, now, k, mtu) {
            self.cwnd -= nacked;
            self.bounds(mtu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Bitmap, Feedback};
    use rand_core::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    /// htsim's bitmap balancer by hand, over 4 EVs: a round visits each EV once (in an order its XOR sets); an EV
    /// NACKed (penalty 4) is skipped the next 4 times the cycle reaches it, each skip taking one point off, and then
    /// comes back; an ECN echo costs 1 skip, a timeout 15 (the cap); a good ACK costs nothing.
    #[test]
    fn the_bitmap_balancer_skips_a_penalised_entropy_as_often_as_its_penalty() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut b = Bitmap::new(4, &mut rng);
        let round = |b: &mut Bitmap, rng: &mut Pcg64Mcg| (0..4).map(|_| b.next(4, rng) & 3).collect::<Vec<_>>();
        let mut r = round(&mut b, &mut rng);
        r.sort();
        assert_eq!(r, vec![0, 1, 2, 3], "one round visits every EV once");
        b.feedback(2, Feedback::Nack);
        b.feedback(1, Feedback::Good);
        // 24 calls: every skip moves the cycle one position further, so they cover 24 + 4 = 28 positions, 7 whole
        // cycles, each of which meets every EV once: EVs 0, 1 and 3 are chosen 7 times, EV 2 7 - 4 = 3 times.
        let mut count = [0; 4];
        for _ in 0..24 {
            count[(b.next(4, &mut rng) & 3) as usize] += 1;
        }
        assert_eq!(count, [7, 7, 3, 7]);
        assert_eq!(b.skip[2], 0, "its penalty is spent");
        b.feedback(3, Feedback::Ecn);
        assert_eq!(b.skip[3], 1);
        b.feedback(3, Feedback::Timeout);
        assert_eq!(b.skip[3], 15, "penalties cap at 15");
    }

    /// The memory estimate (`fabricsim_core::budget`) counts 800 B per message for a UEC connection's sender and
    /// receiver at rest, beside its two flows: keep them below that.
    #[test]
    fn a_connection_at_rest_fits_the_memory_estimate() {
        let at_rest = std::mem::size_of::<super::Conn>() + std::mem::size_of::<super::Sink>();
        assert!(at_rest <= 800, "{at_rest} B");
    }
}
