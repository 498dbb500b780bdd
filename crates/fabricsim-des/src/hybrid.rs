//! Hybrid fidelity: the packet engine plus a steady-state detector that jumps over steady intervals (issue 30).
//!
//! Every `window` of simulated time (`Ev::Window`, the last event of its picosecond) the detector takes a
//! snapshot: the flows that sent or received a packet during the window with their FlowMonitor counters, every
//! port's queue (egress + virtual output queue + control queue bytes) and its counters. The network is *steady*
//! when the last `windows` windows had the same active flows, each flow's packets sent and delivered per window
//! stayed within `tolerance` of their mean (or 2 packets), and every queue at the window boundaries stayed
//! within `tolerance` of its largest value plus two packets. Averages over whole windows make periodic steady
//! states count too (DCQCN's sawtooth, a credit or PFC loop) when the window covers a period.
//!
//! Then the run jumps n whole windows, as far as the next change allows: n stops one window before the
//! earliest flow would run out of packets to send at its rate, and before the next event of the workload or the
//! network (a message start, a compute end, a link event, a UDP toggle, the stop time); a `link_rate` event also
//! clears the snapshots (`Hybrid::forget`), as the windows before it describe the old capacity. The jump advances
//! each active flow by its mean per-window counts × n (its transport's sequence state with it: `TransportModel::skip`),
//! extrapolates the counters of ports and the run (pauses, ECN marks, CNPs, hop histogram, throughput bins, queue
//! samples), and moves every pending network event and every absolute time of the network's components by
//! Δ = n·window (`Sim::jump`), leaving the workload's events where they are. Packet-by-packet simulation resumes
//! from the same in-flight state, Δ later. Everything a jump adds is counted in `FastForward`, so a record says
//! what was extrapolated; conservation holds across jumps (a jump adds as many packets sent as delivered + lost).

use crate::events::Ev;
use crate::measure::FlowStat;
use crate::net::pfc::paused_total;
use crate::sim::Sim;
use crate::transport::{with_transport, TransportKind, TransportModel};
use fabricsim_core::record::FastForward;
use fabricsim_core::spec::{HybridSpec, RdmaCc};
use fabricsim_core::Time;

/// Counters of a port that a jump extrapolates: tx packets, tx bytes, drops, PAUSE frames sent and received,
/// paused time (ps) and ECN marks.
const PORT_CTRS: usize = 7;

/// One detector snapshot at a window boundary.
#[derive(Default)]
struct Snap {
    /// When it was taken (ps).
    t: u64,
    /// The flows active during the window that ended here (ascending) and their counters now.
    flows: Vec<u32>,
    stats: Vec<FlowStat>,
    /// Each flow's congestion-control state now (None: its transport has none).
    cc: Vec<Option<[f64; 3]>>,
    /// Per port: bytes queued now, and its counters now.
    queued: Vec<u64>,
    ports: Vec<[u64; PORT_CTRS]>,
    hops: Vec<u64>,
    cnps: u64,
}

/// The detector's state and what the jumps skipped.
pub(crate) struct Hybrid {
    pub(crate) window: Time,
    tolerance: f64,
    windows: usize,
    /// Flows that sent or received during the current window (flag and list).
    touched: Vec<bool>,
    touched_list: Vec<u32>,
    /// The last snapshots with the same active flows (at most `windows + 1`), and used ones to refill.
    hist: Vec<Snap>,
    spare: Vec<Snap>,
    /// Counters a jump added to ports (applied to the record at the end).
    port_add: Vec<[u64; PORT_CTRS]>,
    /// Why the run goes packet by packet (None: jumps allowed).
    pub(crate) off: Option<String>,
    /// Whether an `Ev::Window` is pending.
    pub(crate) window_pending: bool,
    /// RDMA timers slower than the window (see `moves_with_network`).
    slow_rdma: u8,
    pub(crate) ff: FastForward,
}

impl Hybrid {
    /// Drop the snapshots taken so far: the network changed (a `link_rate` event), so the windows before the
    /// change say nothing of the steady state after it, and detection starts afresh from the next window.
    pub(crate) fn forget(&mut self) {
        self.spare.append(&mut self.hist);
    }

    #[inline]
    pub(crate) fn touch(&mut self, flow: u32) {
        let t = &mut self.touched[flow as usize];
        if !*t {
            *t = true;
            self.touched_list.push(flow);
        }
    }
}

/// Whether an event belongs to the network's steady dynamics (moved by a jump) rather than to the workload, the
/// network's scheduled changes, the run's measurement or a slow control loop (kept at its absolute time, and
/// bounding the jump). `slow_rdma` has bit t set when RDMA timer t's period is longer than the window: the
/// windows cannot average it (DCQCN's rate-increase timer, 900 µs in HPCC's preset), so it bounds the jump
/// instead of moving with it.
fn moves_with_network(ev: Ev, slow_rdma: u8) -> bool {
    match ev {
        Ev::Port(_) | Ev::Pipe(_) | Ev::Credit(_) | Ev::Pfc(_) | Ev::Watchdog | Ev::Window => true,
        Ev::Timer(TransportKind::Udp, t, _) => t == crate::transport::udp::SEND,
        Ev::Timer(TransportKind::Rdma, t, _) => slow_rdma & (1 << t) == 0,
        Ev::Timer(_, _, _) => false,
        Ev::MsgStart(_) | Ev::ComputeDone(_) | Ev::Net(_) | Ev::Reroute(_) | Ev::Sample => false,
    }
}

/// A flow's sending rate between snapshots taken at `sa` and `sb` with counters a and b (packets per ps): the
/// packets sent between its last sends before each, over the exact time between those two sends (a paced or
/// ACK-clocked flow has no window quantisation), when both sends came within two mean send intervals of their
/// snapshot (a NIC that pulls one packet ahead stamps a send up to one packet after it); else (the flow paused before a snapshot, as a credit- or pause-blocked sender does, and the exact
/// figure would overstate it) the packets over the whole span.
fn send_rate(a: &FlowStat, b: &FlowStat, sa: u64, sb: u64) -> f64 {
    let sent = (b.tx_packets - a.tx_packets) as f64;
    let counted = sent / (sb - sa) as f64;
    match (a.last_tx, b.last_tx) {
        (Some(t0), Some(t1)) if t1 > t0 && sent > 0.0 => {
            let gap = (t1 - t0) as f64 / sent;
            if (sa.saturating_sub(t0) as f64) <= 2.0 * gap && (sb.saturating_sub(t1) as f64) <= 2.0 * gap {
                sent / (t1 - t0) as f64
            } else {
                counted
            }
        }
        _ => counted,
    }
}

/// max − min of `v`, and its mean.
fn spread(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let (mut lo, mut hi, mut sum, mut n) = (f64::MAX, f64::MIN, 0.0, 0.0);
    for x in v {
        lo = lo.min(x);
        hi = hi.max(x);
        sum += x;
        n += 1.0;
    }
    (hi - lo, if n > 0.0 { sum / n } else { 0.0 })
}

impl Sim {
    /// Turn hybrid fidelity on with `spec`'s knobs (defaults when None). Returns the one line to tell the user
    /// when a feature of the scenario makes the run go packet by packet (TCP), else None.
    pub fn enable_hybrid(&mut self, spec: Option<&HybridSpec>) -> Option<String> {
        let spec = spec.cloned().unwrap_or_default();
        let window = Time(spec.window_ps.unwrap_or_else(|| self.auto_window()));
        let off = (!self.tcp.conns.is_empty()).then(|| "hybrid fidelity: TCP connections run packet by packet (no steady-state jumps)".to_string());
        self.hybrid = Some(Box::new(Hybrid {
            window,
            tolerance: spec.tolerance,
            windows: spec.windows as usize,
            touched: vec![false; self.flows.len()],
            touched_list: Vec::new(),
            hist: Vec::new(),
            spare: Vec::new(),
            port_add: vec![[0; PORT_CTRS]; self.net.ports.len()],
            off: off.clone(),
            window_pending: off.is_none(),
            slow_rdma: self.slow_rdma_timers(window),
            ff: FastForward { window_ps: window.0, flow_skipped_packets: vec![0; self.flows.len()], ..Default::default() },
        }));
        if off.is_none() {
            self.q.schedule(self.now + window, Ev::Window);
        }
        off
    }

    /// The automatic window: 4 × the longest base round trip (2 × (propagation + switch traversal) + one packet's
    /// serialisation per hop) over the workload's distinct routes (up to 4,096 of them), at least 1 µs; with DCQCN at least twice
    /// its alpha-update and rate-decrease periods (its rate-increase timer, 900 µs in HPCC's preset, is longer
    /// than most phases: the tolerance test, not the window, guards its slow climb).
    fn auto_window(&self) -> u64 {
        let n_src = self.udp.srcs.len();
        let mut seen = std::collections::HashSet::new();
        let mut rtt = 0u64;
        for (i, m) in self.msg.msgs.iter().enumerate() {
            let f = &self.flows[n_src + i];
            if seen.len() >= 4_096 {
                break;
            }
            if seen.insert((f.src_port, f.dst_ep, m.payload)) {
                let (delay, tx, _, latency) = self.path_walk(n_src + i, m.payload);
                rtt = rtt.max(2 * (delay + latency) + tx);
            }
        }
        for s in &self.udp.srcs {
            let (delay, tx, _, latency) = self.path_walk(s.flow as usize, s.payload);
            rtt = rtt.max(2 * (delay + latency) + tx);
        }
        let mut w = (4 * rtt).max(1_000_000);
        if let Some(cfg) = &self.rdma.cfg {
            if cfg.spec.cc == RdmaCc::Dcqcn {
                let s = &cfg.spec;
                w = w.max(2 * s.alpha_resume_interval_ps.max(s.rate_decrease_interval_ps));
            }
        }
        w
    }

    /// The RDMA timers (bit per timer) whose period is longer than `window`.
    fn slow_rdma_timers(&self, window: Time) -> u8 {
        use crate::transport::rdma::{T_ALPHA, T_DECREASE, T_INCREASE};
        let Some(cfg) = &self.rdma.cfg else { return 0 };
        let s = &cfg.spec;
        [(T_ALPHA, s.alpha_resume_interval_ps), (T_DECREASE, s.rate_decrease_interval_ps), (T_INCREASE, s.rp_timer_ps)]
            .iter()
            .filter(|&&(_, period)| period > window.0)
            .fold(0, |m, &(t, _)| m | 1 << t)
    }

    /// A snapshot of the flows in `flows` and of every port, into `s` (its buffers reused: a window allocates
    /// nothing once the detector runs).
    fn snapshot_into(&self, s: &mut Snap, flows: Vec<u32>) {
        let now = self.now;
        s.t = now.0;
        s.stats.clear();
        s.stats.extend(flows.iter().map(|&f| self.measure.stats[f as usize]));
        s.cc.clear();
        s.cc.extend(flows.iter().map(|&f| {
            let b = self.flows[f as usize].transport;
            with_transport!(b.kind, T => T::cc_state(self, b.idx, b.ack))
        }));
        s.flows = flows;
        s.queued.clear();
        s.ports.clear();
        for (p, ps) in self.net.ports.iter().enumerate() {
            let mut q = ps.egress.bytes() + ps.voq.as_ref().map_or(0, |v| v.bytes);
            let mut c = [ps.tx_packets, ps.tx_bytes, ps.drops, 0, 0, 0, 0];
            if self.net.roce {
                let r = &self.net.roce_ports[p];
                q += r.ctrl_bytes;
                c[3] = r.pause_tx;
                c[4] = r.pause_rx;
                c[5] = paused_total(r.paused, r.paused_since, r.paused_ps, now);
                c[6] = r.ecn_marks;
            }
            s.queued.push(q);
            s.ports.push(c);
        }
        s.hops.clear();
        s.hops.extend_from_slice(&self.measure.hops);
        s.cnps = self.rdma.cnps;
    }

    /// A snapshot now of `flows` and every port, in a recycled buffer when there is one.
    fn take_snapshot(&self, h: &mut Hybrid, flows: Vec<u32>) -> Snap {
        let mut snap = h.spare.pop().unwrap_or_default();
        let old = std::mem::take(&mut snap.flows);
        self.snapshot_into(&mut snap, flows);
        if h.touched_list.capacity() == 0 {
            h.touched_list = old; // the next window's list reuses the old flow list's buffer
            h.touched_list.clear();
        }
        snap
    }

    /// The end of a detector window: snapshot, test for a steady state, jump when there is room.
    pub(crate) fn on_window(&mut self) {
        let Some(mut h) = self.hybrid.take() else { return };
        let now = self.now;
        for port in &mut self.net.ports {
            port.settle_if_commits(now); // the window is the last event of its picosecond
        }
        let mut flows = std::mem::take(&mut h.touched_list);
        for &f in &flows {
            h.touched[f as usize] = false;
        }
        flows.sort_unstable();
        let snap = self.take_snapshot(&mut h, flows);
        if h.hist.last().is_some_and(|s| s.flows != snap.flows) || snap.flows.is_empty() {
            h.spare.append(&mut h.hist);
        }
        h.hist.push(snap);
        if h.hist.len() > h.windows + 1 {
            let old = h.hist.remove(0);
            h.spare.push(old);
        }
        if h.hist.len() == h.windows + 1 {
            if let Some(n) = self.steady_jump(&h) {
                self.jump(&mut h, n);
            }
        }
        self.q.schedule(self.now + h.window, Ev::Window);
        h.window_pending = true;
        self.hybrid = Some(h);
    }

    /// Whether the snapshots show a steady state, and if so how many windows the run may jump (None: none).
    fn steady_jump(&mut self, h: &Hybrid) -> Option<u64> {
        let k = h.windows;
        let (first, last) = (&h.hist[0], &h.hist[k]);
        let tol = h.tolerance;
        let mut n_max = u64::MAX;
        for (j, &f) in last.flows.iter().enumerate() {
            let d = |w: usize, x: fn(&FlowStat) -> u64| (x(&h.hist[w + 1].stats[j]) - x(&h.hist[w].stats[j])) as f64;
            for x in [|s: &FlowStat| s.tx_packets, |s: &FlowStat| s.rx_packets] {
                let (sp, mean) = spread((0..k).map(|w| d(w, x)));
                if sp > (tol * mean).max(2.0) {
                    return None;
                }
            }
            if last.cc[j].is_some() {
                // The congestion control's own state must have held (a sawtooth slower than the window, a slow
                // climb or convergence toward fairness shows here before it shows in packet counts).
                for i in 0..3 {
                    let at = |w: usize| h.hist[w].cc[j].map_or(0.0, |c| c[i]);
                    let (sp, mean) = spread((0..=k).map(at));
                    if sp > tol * mean {
                        return None;
                    }
                    // A drift within the tolerance still accumulates over a jump: the state moved by `drift` (of
                    // its mean) over k windows, so a jump of n windows may extrapolate a state up to drift·n/k
                    // away; n stops where that reaches the tolerance (no bound when it did not move).
                    let drift = (at(k) - at(0)).abs() / mean;
                    if drift > 0.0 {
                        n_max = n_max.min((tol * k as f64 / drift).floor() as u64);
                    }
                }
            }
            let b = self.flows[f as usize].transport;
            let lost = last.stats[j].lost - first.stats[j].lost;
            if lost > 0 && b.kind != TransportKind::Udp {
                return None; // a transport recovering from loss is not in a steady state
            }
            let tx_per_w = send_rate(&first.stats[j], &last.stats[j], first.t, last.t) * h.window.0 as f64;
            let remaining = with_transport!(b.kind, T => T::remaining(self, b.idx, b.ack));
            if let Some(r) = remaining {
                if tx_per_w <= 0.0 {
                    return None;
                }
                let n = (r as f64 / tx_per_w).floor() as u64;
                n_max = n_max.min(n.saturating_sub(1));
            }
        }
        for p in 0..self.net.ports.len() {
            let (lo, hi) = (0..=k).fold((u64::MAX, 0), |(lo, hi), w| (lo.min(h.hist[w].queued[p]), hi.max(h.hist[w].queued[p])));
            let pkt = self.net.ports[p].ser.0.max(64) as f64;
            if (hi - lo) as f64 > tol * hi as f64 + 2.0 * pkt {
                return None;
            }
        }
        // The next change of the workload or the network bounds the jump; so does the stop time.
        let w = h.window.0;
        let slow = h.slow_rdma;
        let mut bound = self.q.earliest(|ev| !moves_with_network(ev, slow) && ev != Ev::Sample).unwrap_or(u64::MAX);
        if let Some(s) = self.stop {
            bound = bound.min(s.0);
        }
        if bound != u64::MAX {
            n_max = n_max.min((bound - self.now.0) / w);
        }
        (n_max >= 1 && n_max != u64::MAX).then_some(n_max)
    }

    /// Jump n windows from a steady state (see the module's documentation).
    fn jump(&mut self, h: &mut Hybrid, n: u64) {
        let k = h.windows as u64;
        let dt = Time(n * h.window.0);
        let (first, last) = (&h.hist[0], &h.hist[h.windows]);
        let scale = |a: u64, b: u64| ((b - a) as f64 * n as f64 / k as f64).round() as u64;
        let mut skipped = 0u64;
        let mut payload_added = 0u64;
        let mut psn_adv: Vec<(u32, u64)> = Vec::new();
        for (j, &f) in last.flows.iter().enumerate() {
            let (a, b) = (first.stats[j], last.stats[j]);
            // Packets sent in the jump, at the rate the bound in `steady_jump` used (`send_rate`), and never the
            // last packets the transport has (the flow ends packet by packet).
            let bd = self.flows[f as usize].transport;
            let mut tx = (send_rate(&a, &b, first.t, last.t) * dt.0 as f64).round() as u64;
            if let Some(r) = with_transport!(bd.kind, T => T::remaining(self, bd.idx, bd.ack)) {
                tx = tx.min(r.saturating_sub(1));
            }
            let lost = scale(a.lost, b.lost).min(tx);
            let rx = tx - lost;
            let per = |x: u64, y: u64, pk: u64| if pk == 0 { 0.0 } else { (y - x) as f64 / pk as f64 };
            let (dtxp, drxp) = (b.tx_packets - a.tx_packets, b.rx_packets - a.rx_packets);
            let st = &mut self.measure.stats[f as usize];
            st.tx_packets += tx;
            st.rx_packets += rx;
            st.lost += lost;
            st.tx_bytes += (tx as f64 * per(a.tx_bytes, b.tx_bytes, dtxp)).round() as u64;
            st.rx_bytes += (rx as f64 * per(a.rx_bytes, b.rx_bytes, drxp)).round() as u64;
            let pay = (rx as f64 * per(a.rx_payload, b.rx_payload, drxp)).round() as u64;
            st.rx_payload += pay;
            payload_added += pay;
            st.delay_sum += (rx as f64 * per(a.delay_sum, b.delay_sum, drxp)).round() as u64;
            if let Some(t) = st.last_tx.as_mut() {
                *t += dt.0;
            }
            if let Some(t) = st.last_rx.as_mut() {
                *t += dt.0;
            }
            self.measure.totals.tx += tx;
            self.measure.totals.rx += rx;
            self.measure.totals.dropped += lost;
            h.ff.flow_skipped_packets[f as usize] += rx;
            skipped += rx;
            let adv = with_transport!(bd.kind, T => T::skip(self, bd.idx, bd.ack, tx, rx));
            if adv != 0 {
                psn_adv.push((f, adv));
            }
        }
        if !psn_adv.is_empty() {
            // Sequence numbers carried by packets in flight move with their transport's state.
            let mut by_flow = vec![0u64; self.flows.len()];
            for &(f, a) in &psn_adv {
                by_flow[f as usize] = a;
            }
            for p in &mut self.pkts {
                let a = by_flow[p.flow as usize];
                if a != 0 {
                    p.psn = p.psn.wrapping_add(a as u32);
                }
            }
        }
        for (p, add) in h.port_add.iter_mut().enumerate() {
            for (c, slot) in add.iter_mut().enumerate() {
                *slot += scale(first.ports[p][c], last.ports[p][c]);
            }
        }
        for (i, hcount) in last.hops.iter().enumerate() {
            let before = first.hops.get(i).copied().unwrap_or(0);
            self.measure.hops[i] += scale(before, *hcount);
        }
        self.rdma.cnps += scale(first.cnps, last.cnps);
        self.fill_measurements(dt, payload_added);
        self.jump_clock(dt, h.slow_rdma);
        h.ff.jumps += 1;
        h.ff.skipped_ps += dt.0;
        h.ff.skipped_packets += skipped;
        // Start the detection afresh from the state after the jump (same flows, advanced counters).
        let mut last = h.hist.pop().expect("a jump follows a full history");
        h.spare.append(&mut h.hist);
        let flows = std::mem::take(&mut last.flows);
        h.spare.push(last);
        let snap = self.take_snapshot(h, flows);
        h.hist.push(snap);
    }

    /// Queue samples and throughput bins over the skipped interval [now, now + dt): samples repeat the queues as
    /// they stand (steady), bins share the extrapolated payload evenly.
    fn fill_measurements(&mut self, dt: Time, payload: u64) {
        let (t0, t1) = (self.now.0, self.now.0 + dt.0);
        if let Some(b) = self.measure.bin {
            let last = ((t1 - 1) / b.0) as usize;
            if self.measure.rx_bins.len() <= last && !self.grow_bins(last) {
                return;
            }
            let mut given = 0u64;
            let mut k = (t0 / b.0) as usize;
            while k <= last {
                // Payload delivered by the end of bin k's share of the jump, minus what earlier bins took.
                let hi = ((k as u64 + 1) * b.0).min(t1);
                let upto = ((hi - t0) as u128 * payload as u128 / dt.0 as u128) as u64;
                self.measure.rx_bins[k] += upto - given;
                given = upto;
                k += 1;
            }
        }
        if let Some(every) = self.measure.sample_every {
            if let Some(mut ts) = self.q.earliest(|ev| ev == Ev::Sample) {
                while ts < t1 {
                    if (self.measure.samples.t_ps.len() + self.measure.sample_ports.len()) as u64 > self.measure.max_sample_rows {
                        break; // the next real sample reports the limit
                    }
                    self.sample_rows(ts);
                    ts += every.0;
                }
                self.q.retime(|ev, t| if ev == Ev::Sample { ts.max(t) } else { t });
            }
        }
    }

    /// Move the network dt later and the clock with it: the network's pending events, and every absolute time of
    /// the ports, transports and packets in flight (`Sim::shift_network`); the workload, its pending events and
    /// the run's stop time stay where they are.
    fn jump_clock(&mut self, dt: Time, slow: u8) {
        self.q.retime(|ev, t| if moves_with_network(ev, slow) { t + dt.0 } else { t });
        self.shift_network(dt);
    }

    /// At the end of a hybrid run: the counters the jumps extrapolated join the ports' own, and the record's
    /// fast-forward summary is handed over.
    pub(crate) fn settle_hybrid(&mut self) -> Option<FastForward> {
        let h = self.hybrid.take()?;
        for (p, add) in h.port_add.iter().enumerate() {
            let ps = &mut self.net.ports[p];
            ps.tx_packets += add[0];
            ps.tx_bytes += add[1];
            ps.drops += add[2];
            if self.net.roce {
                let r = &mut self.net.roce_ports[p];
                r.pause_tx += add[3];
                r.pause_rx += add[4];
                r.paused_ps += add[5];
                r.ecn_marks += add[6];
            }
        }
        let mut ff = h.ff;
        ff.note = h.off;
        Some(ff)
    }
}
