//! TCP in the packet engine, modelled on ns-3 3.44's TcpSocketBase: handshake, delayed ACKs, SACK-based loss
//! recovery (RFC 6675) with PRR (RFC 6937), RTO with RttMeanDeviation and backoff, Cubic (with HyStart) or
//! NewReno congestion control, and a BulkSend application.
//!
//! Sequence numbers are byte offsets of the payload (the SYN is tracked by state, not by a sequence number).
//! Segments and ACKs are ordinary packets of the connection's data flow and ACK flow; their TCP header
//! lives in `Sim::hdrs` at the packet's index.

use crate::events::{Ev, EventId};
use crate::sim::Sim;
use crate::transport::{TransportKind, TransportModel};
use fabricsim_core::spec::{TcpCc, TcpSpec};
use fabricsim_core::Time;

/// The TCP connections (connection c's data flow is `conns[c].data_flow`, its ACK flow `conns[c].ack_flow`) and
/// the TCP header of every packet id (meaningful only for packets of TCP flows).
#[derive(Default)]
pub(crate) struct Tcp {
    pub(crate) conns: Vec<TcpConn>,
    pub(crate) hdrs: Vec<TcpHdr>,
}

/// The TCP timers (`Ev::Timer(TransportKind::Tcp, timer, connection)`).
pub(crate) const T_START: u8 = 0;
pub(crate) const T_STOP: u8 = 1;
pub(crate) const T_RTO: u8 = 2;
pub(crate) const T_DELACK: u8 = 3;

pub(crate) fn timer(t: u8, c: u32) -> Ev {
    Ev::Timer(TransportKind::Tcp, t, c)
}

impl TransportModel for Tcp {
    fn on_packet(sim: &mut Sim, c: u32, ack: bool, pkt: u32) {
        let h = sim.tcp.hdrs[pkt as usize];
        if ack {
            sim.tcp_rx_ack(c as usize, h)
        } else {
            sim.tcp_rx_data(c as usize, h)
        }
    }

    fn on_timer(sim: &mut Sim, t: u8, c: u32) {
        match t {
            T_START => sim.tcp_start(c),
            T_STOP => sim.tcp_stop(c),
            T_RTO => sim.tcp_rto(c),
            T_DELACK => sim.tcp_delack(c),
            other => debug_assert!(false, "TCP has no timer {other}"),
        }
    }

    /// The timestamps in flight (every header's TSval/TSecr, the receivers' TS.Recent) and CUBIC's epoch, round
    /// and last-ACK times; RTT estimates and the RTO are durations and stay.
    fn shift(&mut self, dt: Time) {
        for h in &mut self.hdrs {
            h.ts_val += dt.0;
            if h.ts_ecr != 0 {
                h.ts_ecr += dt.0;
            }
        }
        for c in &mut self.conns {
            if c.ts_recent != 0 {
                c.ts_recent += dt.0;
            }
            let cu = &mut c.cubic;
            cu.epoch_start = cu.epoch_start.map(|t| t + dt);
            cu.round_start = cu.round_start + dt;
            cu.last_ack = cu.last_ack + dt;
        }
    }
}

pub(crate) const SYN: u8 = 1;
pub(crate) const ACK: u8 = 2;

/// The TCP header of one packet: sequence (data start), cumulative ACK, timestamps, SACK blocks.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TcpHdr {
    pub seq: u64,
    pub len: u32,
    pub ack: u64,
    pub flags: u8,
    pub ts_val: u64,
    pub ts_ecr: u64,
    pub rwnd: u64,
    pub sack: [(u64, u64); 3],
    pub n_sack: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CaState {
    Open,
    Disorder,
    Recovery,
    Loss,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    SynSent,
    Established,
}

/// A sorted set of disjoint half-open byte ranges. Invariant: sorted by start, non-overlapping, non-adjacent.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ranges(Vec<(u64, u64)>);

impl Ranges {
    /// Add [a, b); returns the bytes newly covered. O(ranges).
    fn add(&mut self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let before = self.total();
        let mut na = a;
        let mut nb = b;
        self.0.retain(|&(s, e)| {
            if e < na || s > nb {
                true
            } else {
                na = na.min(s);
                nb = nb.max(e);
                false
            }
        });
        let pos = self.0.partition_point(|&(s, _)| s < na);
        self.0.insert(pos, (na, nb));
        self.total() - before
    }
    /// Drop everything below `x`.
    fn trim_below(&mut self, x: u64) {
        self.0.retain(|&(_, e)| e > x);
        if let Some(first) = self.0.first_mut() {
            first.0 = first.0.max(x);
        }
    }
    fn total(&self) -> u64 {
        self.0.iter().map(|&(s, e)| e - s).sum()
    }
    /// Bytes covered at or above `x`.
    fn above(&self, x: u64) -> u64 {
        self.0.iter().map(|&(s, e)| if e <= x { 0 } else { e - s.max(x) }).sum()
    }
    fn highest(&self) -> Option<u64> {
        self.0.last().map(|&(_, e)| e)
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    /// The first gap start at or above `x` and below `limit`, with the gap's end.
    fn next_gap(&self, x: u64, limit: u64) -> Option<(u64, u64)> {
        let mut cur = x;
        for &(s, e) in &self.0 {
            if e <= cur {
                continue;
            }
            if s > cur {
                return (cur < limit).then_some((cur, s.min(limit)));
            }
            cur = e;
        }
        (cur < limit).then_some((cur, limit))
    }
}

#[derive(Clone, Debug, Default)]
struct Cubic {
    /// ACKed segments not yet credited to the Reno-friendly window estimate.
    ack_cnt: u32,
    /// Reno-equivalent window estimate (segments), for TCP friendliness.
    tcp_cwnd: u32,
    cwnd_cnt: u32,
    last_max_cwnd: u32,
    origin: u32,
    k: f64,
    delay_min: Option<Time>,
    epoch_start: Option<Time>,
    found: bool,
    round_start: Time,
    end_seq: u64,
    last_ack: Time,
    curr_rtt: Option<Time>,
    sample_cnt: u32,
}

pub(crate) struct TcpConn {
    pub data_flow: u32,
    pub ack_flow: u32,
    cfg: TcpSpec,
    mss: u64,
    phase: Phase,
    stopped: bool,
    // sender
    snd_una: u64,
    snd_nxt: u64,
    high_tx: u64,
    cwnd: u64,
    ssthresh: u64,
    ca: CaState,
    dupacks: u32,
    recover: u64,
    sacked: Ranges,
    rtx_high: u64,
    peer_rwnd: u64,
    srtt: Option<Time>,
    rttvar: Time,
    rto: Time,
    rto_ev: Option<EventId>,
    bytes_acked_rem: u64,
    prr_delivered: u64,
    prr_out: u64,
    recovery_flight: u64,
    cubic: Cubic,
    pub complete: Option<Time>,
    pub started: Option<Time>,
    /// Bytes the application has written into the sender buffer so far.
    written: u64,
    // receiver
    rcv_nxt: u64,
    ooo: Ranges,
    last_sack_block: Option<(u64, u64)>,
    unacked: u32,
    ts_recent: u64,
    delack_ev: Option<EventId>,
}

impl TcpConn {
    pub fn new(cfg: &TcpSpec, data_flow: u32, ack_flow: u32) -> TcpConn {
        let mss = cfg.mss_bytes;
        TcpConn {
            data_flow,
            ack_flow,
            cfg: cfg.clone(),
            mss,
            phase: Phase::Idle,
            stopped: false,
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            cwnd: cfg.initial_cwnd as u64 * mss,
            ssthresh: u64::MAX / 2,
            ca: CaState::Open,
            dupacks: 0,
            recover: 0,
            sacked: Ranges::default(),
            rtx_high: 0,
            peer_rwnd: cfg.rcv_buf_bytes,
            srtt: None,
            rttvar: Time::ZERO,
            rto: Time(cfg.initial_rto_ps),
            rto_ev: None,
            bytes_acked_rem: 0,
            prr_delivered: 0,
            prr_out: 0,
            recovery_flight: 0,
            cubic: Cubic::default(),
            complete: None,
            started: None,
            written: 0,
            rcv_nxt: 0,
            ooo: Ranges::default(),
            last_sack_block: None,
            unacked: 0,
            ts_recent: 0,
            delack_ev: None,
        }
    }

    /// BulkSend: write whole `app_write_bytes` chunks while they fit in the sender buffer (the last chunk
    /// of a `max_bytes` transfer may be shorter). Returns the bytes available to send (the written end).
    fn app_write(&mut self) -> u64 {
        if !self.stopped {
            let max = self.cfg.max_bytes.unwrap_or(u64::MAX);
            let cap = self.snd_una + self.cfg.snd_buf_bytes;
            let w = self.cfg.app_write_bytes;
            while self.written < max {
                let chunk = w.min(max - self.written);
                if self.written + chunk > cap {
                    break;
                }
                self.written += chunk;
            }
        }
        self.written
    }

    /// RFC 6675 IsLost: more than (dupthresh − 1)·MSS bytes SACKed above `seq`.
    fn is_lost(&self, seq: u64) -> bool {
        self.sacked.above(seq + 1) > (self.cfg.dupack_threshold as u64 - 1) * self.mss
    }

    /// RFC 6675 pipe: bytes sent and not SACKed, minus holes deemed lost and not yet retransmitted.
    /// After an RTO (Loss) everything outstanding counts as lost, so only what was resent is in the pipe.
    fn pipe(&self) -> u64 {
        let sacked = self.sacked.above(self.snd_una);
        if self.ca == CaState::Loss {
            return self.snd_nxt.saturating_sub(self.snd_una).saturating_sub(sacked);
        }
        let outstanding = self.high_tx - self.snd_una - sacked;
        let mut lost_unretx = 0;
        if self.ca == CaState::Recovery {
            if self.cfg.sack {
                let limit = self.sacked.highest().unwrap_or(self.snd_una).min(self.high_tx);
                let mut x = self.snd_una.max(self.rtx_high);
                while let Some((a, b)) = self.sacked.next_gap(x, limit) {
                    if self.is_lost(a) {
                        lost_unretx += b - a;
                    }
                    x = b;
                }
            } else if self.rtx_high <= self.snd_una {
                lost_unretx = self.mss;
            }
        }
        outstanding - lost_unretx.min(outstanding)
    }

    /// RFC 6675 NextSeg rule 1 (a lost hole not yet retransmitted); NewReno without SACK: the segment at
    /// snd_una after a partial ACK; after an RTO: go-back-N from snd_nxt.
    fn next_lost(&self) -> Option<(u64, u64)> {
        match self.ca {
            CaState::Recovery if self.cfg.sack => {
                let limit = self.sacked.highest().unwrap_or(self.snd_una).min(self.high_tx);
                let mut x = self.snd_una.max(self.rtx_high);
                while let Some((a, b)) = self.sacked.next_gap(x, limit) {
                    if self.is_lost(a) {
                        return Some((a, (b - a).min(self.mss)));
                    }
                    x = b;
                }
                None
            }
            CaState::Recovery => {
                (self.rtx_high <= self.snd_una && self.snd_una < self.high_tx).then(|| (self.snd_una, self.mss.min(self.high_tx - self.snd_una)))
            }
            CaState::Loss if self.snd_nxt < self.high_tx => {
                let (a, b) = self.sacked.next_gap(self.snd_nxt, self.high_tx)?;
                Some((a, (b - a).min(self.mss)))
            }
            _ => None,
        }
    }

    fn ss_thresh_on_loss(&mut self) -> u64 {
        let seg_cwnd = (self.cwnd / self.mss) as u32;
        match self.cfg.cc {
            TcpCc::Cubic => {
                let beta = 0.7;
                let c = &mut self.cubic;
                if seg_cwnd < c.last_max_cwnd {
                    c.last_max_cwnd = ((seg_cwnd as f64 * (1.0 + beta)) / 2.0) as u32;
                } else {
                    c.last_max_cwnd = seg_cwnd;
                }
                c.epoch_start = None;
                ((seg_cwnd as f64 * beta) as u64).max(2) * self.mss
            }
            TcpCc::NewReno => {
                let inflight = self.pipe();
                (inflight / 2).max(2 * self.mss)
            }
        }
    }

    /// ns-3 TcpCubic::Update: the ACK count after which cwnd grows by one segment.
    fn cubic_update(&mut self, now: Time, segs: u32) -> u32 {
        let seg_cwnd = (self.cwnd / self.mss) as u32;
        let cc = 0.4;
        let beta = 0.7;
        let c = &mut self.cubic;
        c.ack_cnt += segs;
        if c.epoch_start.is_none() {
            c.epoch_start = Some(now);
            c.ack_cnt = segs;
            c.tcp_cwnd = seg_cwnd;
            if c.last_max_cwnd <= seg_cwnd {
                c.k = 0.0;
                c.origin = seg_cwnd;
            } else {
                c.k = ((c.last_max_cwnd - seg_cwnd) as f64 / cc).powf(1.0 / 3.0);
                c.origin = c.last_max_cwnd;
            }
        }
        let delay_min = c.delay_min.unwrap_or(Time::ZERO);
        let t = (now + delay_min - c.epoch_start.unwrap()).as_secs_f64();
        let offs = if t < c.k { c.k - t } else { t - c.k };
        let delta = (cc * offs.powi(3)) as u32;
        let target = if t < c.k { c.origin.saturating_sub(delta) } else { c.origin + delta };
        let mut cnt = if target > seg_cwnd { seg_cwnd / (target - seg_cwnd) } else { 100 * seg_cwnd };
        if c.last_max_cwnd == 0 && cnt > 20 {
            cnt = 20;
        }
        // TCP friendliness (RFC 8312 §4.2, Linux): grow at least as fast as Reno would.
        let scale = (1.0 + beta) / (3.0 * (1.0 - beta));
        let delta = ((seg_cwnd as f64 * scale) as u32).max(1);
        c.tcp_cwnd += c.ack_cnt / delta;
        c.ack_cnt %= delta;
        if c.tcp_cwnd > seg_cwnd {
            let max_cnt = seg_cwnd / (c.tcp_cwnd - seg_cwnd);
            cnt = cnt.min(max_cnt);
        }
        cnt.max(2)
    }

    fn increase_window(&mut self, now: Time, mut segs: u32) {
        match self.cfg.cc {
            TcpCc::Cubic => {
                if segs == 0 {
                    return;
                }
                if self.cwnd < self.ssthresh {
                    // Slow start up to ssthresh (byte counting); what is left goes to avoidance.
                    let grown = (self.cwnd + segs as u64 * self.mss).min(self.ssthresh);
                    segs -= ((grown - self.cwnd) / self.mss) as u32;
                    self.cwnd = grown;
                }
                if segs == 0 {
                    return;
                }
                self.cubic.cwnd_cnt += segs;
                let cnt = self.cubic_update(now, segs);
                if self.cubic.cwnd_cnt >= cnt {
                    self.cwnd += self.mss;
                    self.cubic.cwnd_cnt -= cnt;
                }
            }
            TcpCc::NewReno => {
                if self.cwnd < self.ssthresh && segs >= 1 {
                    self.cwnd += self.mss;
                    segs -= 1;
                }
                if self.cwnd >= self.ssthresh && segs > 0 {
                    let adder = ((self.mss * self.mss) as f64 / self.cwnd as f64).max(1.0);
                    self.cwnd += adder as u64;
                }
            }
        }
    }

    fn hystart_reset(&mut self, now: Time) {
        let c = &mut self.cubic;
        c.round_start = now;
        c.last_ack = now;
        c.end_seq = self.high_tx;
        c.curr_rtt = None;
        c.sample_cnt = 0;
    }

    /// Cubic PktsAcked: track the minimum delay and run HyStart in slow start.
    fn pkts_acked(&mut self, now: Time, rtt: Time) {
        if self.cfg.cc != TcpCc::Cubic {
            return;
        }
        let c = &mut self.cubic;
        if let Some(e) = c.epoch_start {
            if now - e < Time::from_ms(10) {
                return;
            }
        }
        if c.delay_min.is_none_or(|d| d > rtt) {
            c.delay_min = Some(rtt);
        }
        if !c.found && self.cwnd < self.ssthresh && self.cwnd >= 16 * self.mss {
            // HystartUpdate: a new round starts once everything of the previous one is acknowledged.
            if self.snd_una > c.end_seq {
                c.round_start = now;
                c.last_ack = now;
                c.end_seq = self.high_tx;
                c.curr_rtt = None;
                c.sample_cnt = 0;
            }
            let dmin = c.delay_min.unwrap();
            if now - c.last_ack <= Time::from_ms(2) {
                c.last_ack = now;
                if now - c.round_start > dmin {
                    c.found = true;
                }
            }
            c.curr_rtt = Some(c.curr_rtt.map_or(rtt, |r| r.min(rtt)));
            if c.sample_cnt < 8 {
                c.sample_cnt += 1;
            } else if c.curr_rtt.unwrap() > dmin + Time(dmin.0 / 8).clamp(Time::from_ms(4), Time::from_ms(1000)) {
                c.found = true;
            }
            if c.found {
                self.ssthresh = self.cwnd;
            }
        }
    }

    fn update_rtt(&mut self, rtt: Time) {
        // ns-3 RttMeanDeviation: alpha 1/8, beta 1/4; RTO = max(min RTO, srtt + max(G, 4·rttvar)).
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = Time(rtt.0 / 2);
            }
            Some(s) => {
                let err = s.0.abs_diff(rtt.0);
                self.rttvar = Time((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Time((7 * s.0 + rtt.0) / 8));
            }
        }
        let var = Time((4 * self.rttvar.0).max(self.cfg.clock_granularity_ps));
        self.rto = (self.srtt.unwrap() + var).max(Time(self.cfg.min_rto_ps));
    }
}

impl Sim {
    /// Send one TCP packet on `flow` from the connection's end; counts it as sent and enqueues it at the NIC.
    fn tcp_emit(&mut self, c: usize, flow: u32, hdr: TcpHdr) {
        let conn = &self.tcp.conns[c];
        let mut header = conn.cfg.header_bytes as u32;
        if hdr.n_sack > 0 {
            header += (2 + 8 * hdr.n_sack as u32).div_ceil(4) * 4;
        }
        let pkt = self.new_packet(flow, hdr.len, header);
        if self.tcp.hdrs.len() <= pkt as usize {
            self.tcp.hdrs.resize(pkt as usize + 1, TcpHdr::default());
        }
        self.tcp.hdrs[pkt as usize] = hdr;
        let port = self.flows[flow as usize].src_port;
        self.enqueue(port, pkt);
    }

    fn tcp_arm_rto(&mut self, c: usize) {
        if let Some(id) = self.tcp.conns[c].rto_ev.take() {
            self.q.cancel(id);
        }
        let at = self.now + self.tcp.conns[c].rto;
        self.tcp.conns[c].rto_ev = Some(self.q.schedule(at, timer(T_RTO, c as u32)));
    }

    fn tcp_cancel_rto(&mut self, c: usize) {
        if let Some(id) = self.tcp.conns[c].rto_ev.take() {
            self.q.cancel(id);
        }
    }

    pub(crate) fn tcp_start(&mut self, c: u32) {
        let c = c as usize;
        let now = self.now;
        let conn = &mut self.tcp.conns[c];
        conn.phase = Phase::SynSent;
        conn.started = Some(now);
        self.tcp_send_syn(c);
    }

    /// Send (or resend) connection c's SYN and arm its retransmission timer.
    fn tcp_send_syn(&mut self, c: usize) {
        let flow = self.tcp.conns[c].data_flow;
        let now = self.now;
        self.tcp_emit(c, flow, TcpHdr { flags: SYN, ts_val: now.0, ..Default::default() });
        self.tcp_arm_rto(c);
    }

    pub(crate) fn tcp_stop(&mut self, c: u32) {
        self.tcp.conns[c as usize].stopped = true;
    }

    /// Send what cwnd, the peer's window and the application allow: retransmissions of lost holes first.
    fn tcp_send(&mut self, c: usize) {
        let now = self.now;
        loop {
            let conn = &mut self.tcp.conns[c];
            if conn.phase != Phase::Established {
                return;
            }
            if conn.pipe() >= conn.cwnd {
                return;
            }
            let mut seg = conn.next_lost();
            let retx = seg.is_some();
            if seg.is_none() {
                // New data, as ns-3's SendPendingData: the usable window is min(cwnd − pipe, rwnd − flight);
                // wait for a full-segment window while more data than the window is waiting (silly-window
                // avoidance); otherwise send up to one MSS of what the application has written (Nagle off).
                let limit = conn.app_write();
                let start = conn.high_tx.max(conn.snd_nxt);
                let wnd_end = conn.snd_una + conn.peer_rwnd;
                if start >= limit || start >= wnd_end {
                    return;
                }
                let avail = (conn.cwnd - conn.pipe()).min(wnd_end - start);
                let data = limit - start;
                if avail < conn.mss && data > avail {
                    return;
                }
                seg = Some((start, conn.mss.min(avail).min(data)));
            }
            let (seq, len) = seg.unwrap();
            if retx {
                if conn.ca == CaState::Loss {
                    conn.snd_nxt = seq + len;
                }
                conn.rtx_high = conn.rtx_high.max(seq + len);
            } else {
                conn.high_tx = seq + len;
                conn.snd_nxt = conn.high_tx;
            }
            if conn.ca == CaState::Recovery {
                conn.prr_out += len;
            }
            let hdr = TcpHdr { seq, len: len as u32, ack: 0, flags: ACK, ts_val: now.0, ts_ecr: 0, rwnd: 0, sack: [(0, 0); 3], n_sack: 0 };
            let flow = conn.data_flow;
            let arm = conn.rto_ev.is_none();
            self.tcp_emit(c, flow, hdr);
            if arm {
                self.tcp_arm_rto(c);
            }
        }
    }

    pub(crate) fn tcp_rto(&mut self, c: u32) {
        let c = c as usize;
        let now = self.now;
        let conn = &mut self.tcp.conns[c];
        conn.rto_ev = None;
        match conn.phase {
            Phase::SynSent => {
                conn.rto = Time(conn.rto.0 * 2);
                self.tcp_send_syn(c);
            }
            Phase::Established => {
                if conn.snd_una >= conn.high_tx {
                    return;
                }
                conn.ssthresh = conn.ss_thresh_on_loss();
                conn.cwnd = conn.mss;
                conn.ca = CaState::Loss;
                if conn.cfg.cc == TcpCc::Cubic {
                    conn.cubic = Cubic::default();
                    conn.hystart_reset(now);
                }
                conn.recover = conn.high_tx;
                conn.sacked.clear();
                conn.rtx_high = conn.snd_una;
                conn.snd_nxt = conn.snd_una;
                conn.dupacks = 0;
                conn.rto = Time(conn.rto.0.saturating_mul(2)).min(Time::from_s(60));
                self.tcp_send(c);
                self.tcp_arm_rto(c);
            }
            Phase::Idle => {}
        }
    }

    /// A segment (or SYN) of connection c reached the receiver.
    pub(crate) fn tcp_rx_data(&mut self, c: usize, h: TcpHdr) {
        let now = self.now;
        if h.flags & SYN != 0 {
            let conn = &mut self.tcp.conns[c];
            conn.ts_recent = h.ts_val;
            let flow = conn.ack_flow;
            let rwnd = conn.cfg.rcv_buf_bytes;
            self.tcp_emit(c, flow, TcpHdr { flags: SYN | ACK, ts_val: now.0, ts_ecr: h.ts_val, rwnd, ..Default::default() });
            return;
        }
        if h.len == 0 {
            return; // the handshake's final ACK
        }
        let conn = &mut self.tcp.conns[c];
        let (a, b) = (h.seq, h.seq + h.len as u64);
        let mut immediate = false;
        if b <= conn.rcv_nxt {
            immediate = true; // duplicate
        } else if a <= conn.rcv_nxt {
            if conn.unacked == 0 {
                conn.ts_recent = h.ts_val;
            }
            conn.rcv_nxt = b;
            if !conn.ooo.is_empty() {
                immediate = true; // filled (part of) a hole
                if let Some(&(s, e)) = conn.ooo.0.first() {
                    if s <= conn.rcv_nxt {
                        conn.rcv_nxt = conn.rcv_nxt.max(e);
                    }
                }
                let nxt = conn.rcv_nxt;
                conn.ooo.trim_below(nxt);
            }
            conn.unacked += 1;
        } else {
            conn.ooo.add(a, b);
            conn.last_sack_block = Some((a, b));
            immediate = true;
        }
        if immediate || conn.unacked >= conn.cfg.delack_count {
            self.tcp_send_ack(c);
        } else if conn.delack_ev.is_none() {
            let at = now + Time(conn.cfg.delack_timeout_ps);
            self.tcp.conns[c].delack_ev = Some(self.q.schedule(at, timer(T_DELACK, c as u32)));
        }
    }

    pub(crate) fn tcp_delack(&mut self, c: u32) {
        let c = c as usize;
        self.tcp.conns[c].delack_ev = None;
        if self.tcp.conns[c].unacked > 0 {
            self.tcp_send_ack(c);
        }
    }

    fn tcp_send_ack(&mut self, c: usize) {
        let now = self.now;
        let conn = &mut self.tcp.conns[c];
        if let Some(id) = conn.delack_ev.take() {
            self.q.cancel(id);
        }
        let conn = &mut self.tcp.conns[c];
        conn.unacked = 0;
        let mut hdr = TcpHdr {
            ack: conn.rcv_nxt,
            flags: ACK,
            ts_val: now.0,
            ts_ecr: conn.ts_recent,
            rwnd: conn.cfg.rcv_buf_bytes.saturating_sub(conn.ooo.total()),
            ..Default::default()
        };
        if conn.cfg.sack && !conn.ooo.is_empty() {
            // RFC 2018: the block holding the latest segment first, then the others (highest first).
            let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(3);
            if let Some((a, _)) = conn.last_sack_block {
                if let Some(&blk) = conn.ooo.0.iter().find(|&&(s, e)| s <= a && a < e) {
                    blocks.push(blk);
                }
            }
            for &blk in conn.ooo.0.iter().rev() {
                if blocks.len() == 3 {
                    break;
                }
                if !blocks.contains(&blk) {
                    blocks.push(blk);
                }
            }
            for (i, b) in blocks.iter().enumerate() {
                hdr.sack[i] = *b;
            }
            hdr.n_sack = blocks.len() as u8;
        }
        let flow = conn.ack_flow;
        self.tcp_emit(c, flow, hdr);
    }

    /// An ACK (or SYN-ACK) of connection c reached the sender.
    pub(crate) fn tcp_rx_ack(&mut self, c: usize, h: TcpHdr) {
        let now = self.now;
        let conn = &mut self.tcp.conns[c];
        if h.flags & SYN != 0 {
            if conn.phase != Phase::SynSent {
                return;
            }
            conn.phase = Phase::Established;
            conn.peer_rwnd = h.rwnd;
            if h.ts_ecr > 0 || now.0 > h.ts_ecr {
                conn.update_rtt(Time(now.0 - h.ts_ecr));
            }
            conn.hystart_reset(now);
            let flow = conn.data_flow;
            self.tcp_cancel_rto(c);
            self.tcp_emit(c, flow, TcpHdr { flags: ACK, ts_val: now.0, ts_ecr: h.ts_val, ..Default::default() });
            self.tcp_send(c);
            return;
        }
        if conn.phase != Phase::Established {
            return;
        }
        conn.peer_rwnd = h.rwnd;
        let rtt = Time(now.0.saturating_sub(h.ts_ecr));
        let mut newly_sacked = 0;
        if conn.cfg.sack {
            for i in 0..h.n_sack as usize {
                let (a, b) = h.sack[i];
                let a = a.max(conn.snd_una.max(h.ack));
                if a < b {
                    newly_sacked += conn.sacked.add(a, b);
                }
            }
        }
        if h.ack > conn.snd_una {
            let acked = h.ack - conn.snd_una;
            let acked_sacked = conn.sacked.above(conn.snd_una) - conn.sacked.above(h.ack);
            conn.snd_una = h.ack;
            conn.sacked.trim_below(h.ack);
            if conn.snd_nxt < conn.snd_una {
                conn.snd_nxt = conn.snd_una;
            }
            conn.dupacks = 0;
            conn.update_rtt(rtt);
            conn.pkts_acked(now, rtt);
            let delivered = acked - acked_sacked.min(acked) + newly_sacked;
            match conn.ca {
                CaState::Recovery => {
                    if conn.snd_una >= conn.recover {
                        conn.cwnd = conn.ssthresh;
                        conn.ca = CaState::Open;
                        conn.rtx_high = 0;
                    } else {
                        conn.prr(delivered);
                    }
                }
                CaState::Loss => {
                    let segs = ((acked + conn.bytes_acked_rem) / conn.mss) as u32;
                    conn.bytes_acked_rem = (acked + conn.bytes_acked_rem) % conn.mss;
                    conn.increase_window(now, segs);
                    if conn.snd_una >= conn.recover {
                        conn.ca = CaState::Open;
                        conn.rtx_high = 0;
                    }
                }
                CaState::Open | CaState::Disorder => {
                    conn.ca = CaState::Open;
                    let segs = ((acked + conn.bytes_acked_rem) / conn.mss) as u32;
                    conn.bytes_acked_rem = (acked + conn.bytes_acked_rem) % conn.mss;
                    conn.increase_window(now, segs);
                }
            }
            let done = conn.cfg.max_bytes.is_some_and(|m| conn.snd_una >= m);
            if done && conn.complete.is_none() {
                conn.complete = Some(now);
            }
            if conn.snd_una >= conn.high_tx {
                self.tcp_cancel_rto(c);
            } else {
                self.tcp_arm_rto(c);
            }
        } else if h.ack == conn.snd_una && conn.high_tx > conn.snd_una {
            conn.dupacks += 1;
            match conn.ca {
                CaState::Open | CaState::Disorder => {
                    conn.ca = CaState::Disorder;
                    let lost = conn.dupacks >= conn.cfg.dupack_threshold || (conn.cfg.sack && conn.is_lost(conn.snd_una));
                    if lost {
                        conn.ssthresh = conn.ss_thresh_on_loss();
                        conn.ca = CaState::Recovery;
                        conn.recover = conn.high_tx;
                        conn.rtx_high = conn.snd_una;
                        conn.prr_delivered = 0;
                        conn.prr_out = 0;
                        conn.recovery_flight = conn.high_tx - conn.snd_una;
                        conn.prr(newly_sacked.max(conn.mss));
                        // Fast retransmit of the first hole, regardless of the window.
                        let seq = conn.snd_una;
                        let len = conn.mss.min(conn.high_tx - seq);
                        conn.rtx_high = seq + len;
                        conn.prr_out += len;
                        let flow = conn.data_flow;
                        let hdr = TcpHdr { seq, len: len as u32, flags: ACK, ts_val: now.0, ..Default::default() };
                        self.tcp_emit(c, flow, hdr);
                        self.tcp_arm_rto(c);
                    } else if conn.dupacks <= 2 {
                        // Limited transmit (RFC 3042): one new segment per early duplicate ACK.
                        conn.cwnd += conn.mss;
                        self.tcp_send(c);
                        let conn = &mut self.tcp.conns[c];
                        conn.cwnd -= conn.mss;
                        return;
                    }
                }
                CaState::Recovery => conn.prr(newly_sacked.max(if conn.cfg.sack { 0 } else { conn.mss })),
                CaState::Loss => {}
            }
        }
        self.tcp_send(c);
    }
}

impl TcpConn {
    /// PRR (RFC 6937, slow-start reduction bound): set cwnd so that sending follows delivery.
    fn prr(&mut self, delivered: u64) {
        if delivered == 0 {
            return;
        }
        self.prr_delivered += delivered;
        let pipe = self.pipe();
        let send: i64 = if pipe > self.ssthresh {
            ((self.prr_delivered as u128 * self.ssthresh as u128).div_ceil(self.recovery_flight.max(1) as u128) as i64) - self.prr_out as i64
        } else {
            let limit = (self.prr_delivered as i64 - self.prr_out as i64).max(delivered as i64) + self.mss as i64;
            (self.ssthresh as i64 - pipe as i64).min(limit)
        };
        let send = send.max(if self.prr_out > 0 { 0 } else { self.mss as i64 });
        self.cwnd = pipe + send as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::Ranges;

    #[test]
    fn ranges_merge_and_measure() {
        let mut r = Ranges::default();
        assert_eq!(r.add(10, 20), 10);
        assert_eq!(r.add(30, 40), 10);
        assert_eq!(r.add(15, 35), 10);
        assert_eq!(r.0, vec![(10, 40)]);
        assert_eq!(r.add(40, 50), 10);
        assert_eq!(r.0, vec![(10, 50)]);
        assert_eq!(r.above(45), 5);
        r.add(60, 70);
        assert_eq!(r.next_gap(0, 100), Some((0, 10)));
        assert_eq!(r.next_gap(10, 100), Some((50, 60)));
        assert_eq!(r.next_gap(60, 70), None);
        r.trim_below(55);
        assert_eq!(r.0, vec![(60, 70)]);
    }
}
