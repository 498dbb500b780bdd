//! The flow-level simulation: a plain value owning its clock, event heap, RNG, routes and max-min solver.
//!
//! Model: every message (and every CBR source) is a fluid flow on the path the packet engine would pick
//! (the same forwarding tables and ECMP hashing; per-packet ECMP spreads a flow evenly over its equal-cost
//! paths). Rates are max-min fair over directed links, a link's capacity being its rate (or its NIC
//! injection cap), a CBR source capped at its wire rate. Rates change only when a flow starts or finishes,
//! and only the connected component it touches is re-solved. A message is fully sent when its last bit
//! leaves the NIC; it is delivered one path latency later: propagation and switch latency at every hop,
//! plus the store-and-forward of its last packet at every hop after the first. Lossless by construction:
//! no queues, no drops, no transport dynamics (TCP, OnOff sources, error models and queue sampling are
//! rejected with an error naming the field). A `link_rate` network event sets both directions of its links to
//! the new rate at its time: the flows settle what they sent at the old rates, and the component of those links
//! is re-solved with the new capacities (an event like a flow's start or end).

use crate::maxmin::MaxMin;
use fabricsim_core::compile::{compile, Compiled};
use fabricsim_core::control::{Control, Halt, Progress};
use fabricsim_core::dag::Dag;
use fabricsim_core::record::{FlowColumns, FlowKind, NetEventRow, PacketTotals, QueueColumns, RunRecord, SampleColumns, WorkTimes};
use fabricsim_core::routing::{ecmp_index, Fib, PathTable};
use fabricsim_core::spec::{EcmpMode, NetEventKind, NetEventSpec, RunSpec, SourceKind};
use fabricsim_core::topology::{Topology, NONE};
use fabricsim_core::workload::Workload;
use fabricsim_core::{Bps, Error, Result, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    MsgStart(u32),
    /// (flow, version): valid only while the flow's version is unchanged.
    TxDone(u32, u32),
    Delivered(u32),
    /// Compute step c ends.
    ComputeDone(u32),
    SrcStart(u32),
    SrcStop(u32),
    /// Network event e (a `link_rate`) takes effect.
    LinkRate(u32),
}

/// One flow (a CBR source or a message). Bits are wire bits (payload + headers).
#[derive(Clone, Debug, Default)]
struct FlowRt {
    src: u32,
    dst: u32,
    src_port: u32,
    dst_ep: u32,
    path: u32,
    salt: u64,
    /// Payload and header bytes of a full packet, and the wire bytes of the first and last packets.
    pkt_payload: u64,
    header: u64,
    first_pkt: u64,
    last_pkt: u64,
    /// Packets of a bounded flow (a message, or a source with max_bytes).
    n_pkts: u64,
    /// Total wire bits (infinite for an unbounded source) and what is left to send.
    total: f64,
    remaining: f64,
    sent: f64,
    last: Time,
    version: u32,
    cap: Option<f64>,
    uses: Vec<(u32, f64)>,
    switches: u16,
    /// From the end of sending to delivery, and a lone packet's delay (no queueing).
    tail: Time,
    pkt_delay: Time,
    started: Option<Time>,
    tx_done: Option<Time>,
    complete: Option<Time>,
}

pub struct FlowSim {
    now: Time,
    stop: Option<Time>,
    seed: u64,
    q: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    seq: u64,
    ecmp: EcmpMode,
    topo: Topology,
    fib: Fib,
    paths: PathTable,
    mm: MaxMin,
    flows: Vec<FlowRt>,
    flow_names: Vec<String>,
    flow_name: Vec<u32>,
    comp_host: Vec<u32>,
    n_src: u32,
    dag: Dag,
    dag_out: Vec<(u32, Time)>,
    events: u64,
    /// Messages delivered so far (progress reports only).
    msgs_done: u64,
    /// Wire bits the messages sent so far and in all (progress reports only: reported as payload bytes in proportion).
    msg_bits_sent: f64,
    msg_bits_total: f64,
    msg_payload_total: u64,
    /// The scenario's network events (`link_rate` only), each port's rate now (the topology's until an event
    /// changes it), and when the last event changed one (a flow that started before then re-derives its tail).
    net_events: Vec<NetEventSpec>,
    link_ends: Vec<(u32, u32)>,
    port_rate: Vec<Bps>,
    rates_changed: Option<Time>,
    seed_flows: Vec<u32>,
    seed_res: Vec<u32>,
}

fn unsupported(field: impl Into<String>, what: &str) -> Error {
    Error::spec(field, format!("{what} is not modelled at flow fidelity; use fidelity = \"packet\""))
}

/// Reject what the flow model cannot represent (TCP, OnOff sources, queue sampling, error models). O(flows + links).
pub fn check_supported(spec: &RunSpec) -> Result<()> {
    if !spec.tcp.is_empty() {
        return Err(unsupported("tcp[0]", "TCP (congestion control, loss recovery)"));
    }
    if let Some(i) = spec.sources.iter().position(|s| s.kind == SourceKind::Onoff) {
        return Err(unsupported(format!("sources[{i}].kind"), "an OnOff source"));
    }
    if spec.measure.throughput_bin_ps.is_some() {
        return Err(unsupported("measure.throughput_interval", "throughput over time (bins of delivered bytes)"));
    }
    if spec.routing.ecmp == EcmpMode::Flowlet {
        return Err(unsupported("routing.ecmp", "flowlet ECMP (flowlets start at packet gaps, which flows do not have)"));
    }
    if spec.rdma.is_some() {
        return Err(Error::spec(
            "transport",
            "the RDMA transport (ACKs, congestion control, PFC) runs only in the packet engine; use fidelity = \"packet\"",
        ));
    }
    if let Some(u) = &spec.uec {
        if u.spray != fabricsim_core::spec::UecSpray::Ecmp {
            return Err(Error::spec(
                "uec.spray",
                "packet spraying is not modelled at flow fidelity (a flow follows one route, at its max-min fair rate); use spray = \"ecmp\" or fidelity = \"packet\"",
            ));
        }
    }
    if spec.pfc.is_some() {
        return Err(unsupported("pfc", "PFC (pause frames are a packet-level mechanism)"));
    }
    if spec.ecn.is_some() {
        return Err(unsupported("ecn", "ECN marking (the flow model has no queues)"));
    }
    if let Some(i) = spec.events.iter().position(|e| e.kind != NetEventKind::LinkRate) {
        return Err(unsupported(
            format!("events[{i}]"),
            "link failures and bit errors during a run (the flow model has no loss; it takes link_rate events)",
        ));
    }
    if spec.measure.queue_sample_ps.is_some() {
        return Err(unsupported("measure.queue_interval", "queue sampling (the flow model has no queues)"));
    }
    if let Some(i) = spec.network.links.iter().position(|l| !l.a_end.drop_packets.is_empty() || !l.b_end.drop_packets.is_empty()) {
        return Err(unsupported(spec.network.link_field(i, ".drop_packets"), "an error model (the flow model has no loss)"));
    }
    Ok(())
}

impl FlowSim {
    /// Build from a spec (compiled and validated here; see `new_compiled`).
    pub fn new(spec: &RunSpec) -> Result<FlowSim> {
        FlowSim::new_compiled(compile(spec.clone(), Workload::default())?)
    }

    /// Build from a compiled scenario; reject what the flow model cannot represent. O(flows + workload).
    pub fn new_compiled(c: Compiled) -> Result<FlowSim> {
        check_supported(&c.spec)?;
        let Compiled { spec, wl, topo, fib, paths, flows: mut routes, n_src, n_msg, n_tcp: _, flow_names, mut flow_name, limits: _ } = c;
        if spec.uec.is_some() {
            // A UEC connection is one fluid flow at its max-min fair share (what NSCC and RCCC converge to): its
            // ACK flow carries nothing at this fidelity, and its packets are the transport's MTU.
            routes.truncate((n_src + n_msg) as usize);
            flow_name.truncate((n_src + n_msg) as usize);
        }
        let mut flows: Vec<FlowRt> = routes
            .iter()
            .map(|r| FlowRt { src: r.src, dst: r.dst, src_port: r.src_port, dst_ep: r.dst_ep, path: r.path, salt: r.salt, ..Default::default() })
            .collect();
        for (i, s) in spec.sources.iter().enumerate() {
            let f = &mut flows[i];
            let pkt = s.packet_bytes + s.header_bytes;
            f.pkt_payload = s.packet_bytes;
            f.header = s.header_bytes;
            (f.first_pkt, f.last_pkt) = (pkt, pkt);
            f.cap = Some(s.rate_bps as f64 * pkt as f64 / s.packet_bytes as f64);
            f.n_pkts = s.max_bytes.map_or(0, |b| b.div_ceil(s.packet_bytes));
            f.total = s.max_bytes.map_or(f64::INFINITY, |b| (b.div_ceil(s.packet_bytes) * pkt * 8) as f64);
        }
        for i in 0..wl.n_msgs() {
            let f = &mut flows[n_src as usize + i];
            let (size, packet, header) = match &spec.uec {
                Some(u) => (wl.size[i], u.mss() as u64, u.header_bytes as u64),
                None => (wl.size[i], wl.packet[i] as u64, wl.header[i] as u64),
            };
            let n_pkts = size.div_ceil(packet);
            f.pkt_payload = packet;
            f.header = header;
            f.first_pkt = packet.min(size) + header;
            f.last_pkt = size - (n_pkts - 1) * packet + header;
            f.n_pkts = n_pkts;
            f.total = ((size + n_pkts * header) * 8) as f64;
        }
        for f in flows.iter_mut() {
            f.remaining = f.total;
        }
        let msg_bits_total: f64 = flows[n_src as usize..].iter().map(|f| f.total).sum();
        let topo_nodes = topo.n_nodes();
        let comp_host = wl.compute_host.clone();
        let cap: Vec<f64> = topo.ports.iter().map(|p| p.rate_cap.map_or(p.rate.0, |c| c.0.min(p.rate.0)) as f64).collect();
        let mm = MaxMin::new(cap, flows.len());
        let mut sim = FlowSim {
            now: Time::ZERO,
            stop: spec.stop_ps.map(Time),
            seed: spec.seed,
            q: BinaryHeap::new(),
            seq: 0,
            ecmp: spec.routing.ecmp,
            topo,
            fib,
            paths,
            mm,
            flows,
            flow_names,
            flow_name,
            n_src,
            dag: Dag::new(&wl, topo_nodes),
            dag_out: Vec::new(),
            comp_host,
            events: 0,
            msgs_done: 0,
            msg_bits_sent: 0.0,
            msg_bits_total,
            msg_payload_total: wl.size.iter().sum(),
            net_events: spec.events.clone(),
            link_ends: if spec.events.is_empty() { Vec::new() } else { spec.network.links.iter().map(|l| (l.a, l.b)).collect() },
            port_rate: Vec::new(),
            rates_changed: None,
            seed_flows: Vec::new(),
            seed_res: Vec::new(),
        };
        for (i, s) in spec.sources.iter().enumerate() {
            sim.schedule(Time(s.start_ps), Ev::SrcStart(i as u32));
            if let Some(stop) = s.stop_ps {
                sim.schedule(Time(stop), Ev::SrcStop(i as u32));
            }
        }
        sim.port_rate = sim.topo.ports.iter().map(|p| p.rate).collect();
        for (i, e) in spec.events.iter().enumerate() {
            sim.schedule(Time(e.at_ps), Ev::LinkRate(i as u32));
        }
        let mut out = Vec::new();
        sim.dag.initial(&mut out);
        sim.release(&mut out);
        Ok(sim)
    }

    #[inline]
    fn schedule(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        self.q.push(Reverse((at, self.seq, ev)));
    }

    /// Run to completion (or the stop time) and return the record.
    pub fn run(self) -> Result<RunRecord> {
        self.run_with(Control::default())
    }

    /// Where the run stands, for the run's observer.
    fn progress(&self, wall_s: f64) -> Progress {
        Progress {
            events: self.events,
            now_ps: self.now.0,
            stop_ps: self.stop.map(|t| t.0),
            msgs_done: self.msgs_done,
            msgs_total: (self.flows.len() as u32 - self.n_src) as u64,
            bytes_done: if self.msgs_done == (self.flows.len() as u32 - self.n_src) as u64 {
                self.msg_payload_total
            } else if self.msg_bits_total > 0.0 {
                ((self.msg_bits_sent / self.msg_bits_total).min(1.0) * self.msg_payload_total as f64) as u64
            } else {
                0
            },
            bytes_total: self.msg_payload_total,
            wall_s,
        }
    }

    /// `run` under `ctl`'s limits and observer, checked between instants (every 64 events: an instant
    /// re-solves rates); a halted run returns its record so far, marked `halted`.
    pub fn run_with(mut self, mut ctl: Control) -> Result<RunRecord> {
        let wall = std::time::Instant::now();
        ctl.set_every(64);
        ctl.start();
        let mut halted = None;
        let mut reached_stop = false;
        while let Some(&Reverse((t, _, _))) = self.q.peek() {
            if self.stop.is_some_and(|s| t > s) {
                reached_stop = true;
                break;
            }
            if ctl.due(self.events) {
                if let Some(h) = ctl.check(|w| self.progress(w), self.events) {
                    halted = Some(h);
                    break;
                }
            }
            if t == Time::MAX {
                return Err(Error::spec("time", "simulated time would pass 2^64 ps (213 days)"));
            }
            self.now = t;
            // Every event of this instant first, then one re-solve for all of them.
            while let Some(&Reverse((t2, _, ev))) = self.q.peek() {
                if t2 != t {
                    break;
                }
                self.q.pop();
                self.events += 1;
                self.handle(ev);
            }
            if !self.seed_flows.is_empty() || !self.seed_res.is_empty() {
                self.resolve();
            }
        }
        if let (Some(stop), None) = (self.stop, halted) {
            if self.now < stop && self.flows.iter().any(|f| f.started.is_some() && f.tx_done.is_none()) {
                self.now = stop;
            }
        }
        for f in 0..self.flows.len() as u32 {
            if self.mm.active(f) {
                self.settle(f);
            }
        }
        let wall_s = wall.elapsed().as_secs_f64();
        ctl.finish(self.progress(wall_s));
        Ok(RunRecord { reached_stop, ..self.finish(wall_s, halted) })
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::MsgStart(m) => self.start(self.n_src + m),
            Ev::SrcStart(s) => self.start(s),
            Ev::SrcStop(s) => {
                if self.mm.active(s) {
                    self.settle(s);
                    self.end(s);
                }
            }
            Ev::TxDone(f, ver) => {
                if self.flows[f as usize].version != ver || !self.mm.active(f) {
                    return;
                }
                self.settle(f);
                self.flows[f as usize].remaining = 0.0;
                if self.rates_changed.is_some_and(|t| self.flows[f as usize].started.is_some_and(|s| s <= t)) {
                    // A link's rate changed while it sent: its last packet crosses the hops at today's rates.
                    self.flows[f as usize].tail = self.route(f).2;
                }
                self.end(f);
                if f >= self.n_src {
                    let m = f - self.n_src;
                    let at = self.now + self.flows[f as usize].tail;
                    self.schedule(at, Ev::Delivered(m));
                    if self.dag.has_sent_dependents(m) {
                        let mut out = std::mem::take(&mut self.dag_out);
                        self.dag.sent(m, self.now, &mut out);
                        self.release(&mut out);
                    }
                }
            }
            Ev::ComputeDone(c) => {
                let mut out = std::mem::take(&mut self.dag_out);
                self.dag.compute_done(c, self.now, &mut out);
                self.release(&mut out);
            }
            Ev::LinkRate(e) => self.link_rate(e),
            Ev::Delivered(m) => {
                let f = (self.n_src + m) as usize;
                self.flows[f].complete = Some(self.now);
                self.msgs_done += 1;
                let mut out = std::mem::take(&mut self.dag_out);
                self.dag.delivered(m, self.now, &mut out);
                self.release(&mut out);
            }
        }
    }

    /// Network event e: its links' ports (both directions) run at its rate, a port's NIC cap still applying;
    /// their component is re-solved at the end of this instant (`resolve` settles the flows at the old rates
    /// first). O(Σ degree of the a ends of its links).
    fn link_rate(&mut self, e: u32) {
        let rate = Bps(self.net_events[e as usize].rate_bps);
        for k in 0..self.net_events[e as usize].links.len() {
            let l = self.net_events[e as usize].links[k];
            let a = self.link_ends[l as usize].0;
            let p = self.topo.ports_of(a).find(|&q| self.topo.ports[q as usize].link == l).expect("a link is a port of its a end");
            for q in [p, self.topo.ports[p as usize].peer_port] {
                let port = &self.topo.ports[q as usize];
                self.port_rate[q as usize] = rate;
                self.mm.set_cap(q, port.rate_cap.map_or(rate.0, |c| c.0.min(rate.0)) as f64);
                self.seed_res.push(q);
            }
        }
        self.rates_changed = Some(self.now);
    }

    /// Schedule the messages the DAG released and the ends of the compute steps it started.
    fn release(&mut self, out: &mut Vec<(u32, Time)>) {
        let n = self.dag.n_msgs();
        for &(m, at) in out.iter() {
            let ev = if m < n { Ev::MsgStart(m) } else { Ev::ComputeDone(m - n) };
            self.schedule(at.max(self.now), ev);
        }
        out.clear();
        self.dag_out = std::mem::take(out);
    }

    /// Route flow f and put it on its links.
    fn start(&mut self, f: u32) {
        let (uses, switches, tail, pkt_delay) = self.route(f);
        let fl = &mut self.flows[f as usize];
        fl.uses = uses.clone();
        fl.switches = switches;
        fl.tail = tail;
        fl.pkt_delay = pkt_delay;
        fl.started = Some(self.now);
        fl.last = self.now;
        let cap = fl.cap;
        self.mm.add(f, uses, cap);
        self.seed_flows.push(f);
    }

    /// Take flow f off its links (finished or stopped).
    fn end(&mut self, f: u32) {
        self.flows[f as usize].tx_done = Some(self.now);
        self.flows[f as usize].version += 1;
        let uses = self.mm.remove(f);
        self.seed_res.extend(uses.iter().map(|&(r, _)| r));
    }

    /// The links flow f uses with their weights (a DAG of equal-cost paths under per-packet ECMP), its
    /// switch count, the delay from its last bit leaving the NIC to delivery, and a lone packet's delay.
    /// O(path length × ECMP width).
    fn route(&self, f: u32) -> (Vec<(u32, f64)>, u16, Time, Time) {
        let fl = &self.flows[f as usize];
        let mut uses: Vec<(u32, f64)> = Vec::with_capacity(8);
        let mut level: Vec<(u32, f64)> = vec![(fl.src_port, 1.0)];
        let mut next: Vec<(u32, f64)> = Vec::new();
        let (mut tail, mut pkt_delay) = (Time::ZERO, Time::ZERO);
        let mut hop = 0u32;
        loop {
            let (mut lvl_tail, mut lvl_pkt) = (Time::ZERO, Time::ZERO);
            next.clear();
            for &(p, w) in &level {
                uses.push((p, w));
                let port = &self.topo.ports[p as usize];
                let rate = self.port_rate[p as usize];
                let arrive = port.delay + self.topo.latency[port.peer_node as usize];
                let last_ser = if hop > 0 { rate.tx_time(fl.last_pkt) } else { Time::ZERO };
                lvl_tail = lvl_tail.max(arrive + last_ser);
                lvl_pkt = lvl_pkt.max(arrive + rate.tx_time(fl.first_pkt));
                let v = port.peer_node;
                if !self.topo.is_switch(v) {
                    continue;
                }
                let cands: &[u32] = if fl.path != NONE { self.paths.hop_ports(fl.path, hop + 1) } else { self.fib.next_hops(v, fl.dst_ep) };
                match (cands.len(), self.ecmp) {
                    (1, _) => push_merge(&mut next, cands[0], w),
                    (n, EcmpMode::PerPacket | EcmpMode::Adaptive) => cands.iter().for_each(|&c| push_merge(&mut next, c, w / n as f64)),
                    (n, _) => push_merge(&mut next, cands[ecmp_index(fl.salt, v, n)], w),
                }
            }
            tail = tail + lvl_tail;
            pkt_delay = pkt_delay + lvl_pkt;
            if next.is_empty() {
                break;
            }
            std::mem::swap(&mut level, &mut next);
            hop += 1;
        }
        (uses, hop as u16, tail, pkt_delay)
    }

    /// Account for what flow f sent since its last update at its current rate. O(1).
    #[inline]
    fn settle(&mut self, f: u32) {
        let rate = self.mm.rate[f as usize];
        let fl = &mut self.flows[f as usize];
        let dt = (self.now - fl.last).0 as f64;
        if dt > 0.0 && rate > 0.0 {
            let bits = (rate * dt / Time::PS_PER_S as f64).min(fl.remaining);
            fl.sent += bits;
            fl.remaining -= bits;
            fl.last = self.now;
            if f >= self.n_src {
                self.msg_bits_sent += bits;
            }
            return;
        }
        fl.last = self.now;
    }

    /// Re-solve the component(s) touched at this instant and reschedule the flows whose rate changed.
    fn resolve(&mut self) {
        let comp = self.mm.component(&self.seed_flows, &self.seed_res).to_vec();
        self.seed_flows.clear();
        self.seed_res.clear();
        for &f in &comp {
            self.settle(f);
        }
        let old: Vec<f64> = comp.iter().map(|&f| self.mm.rate[f as usize]).collect();
        for &f in &comp {
            self.mm.rate[f as usize] = 0.0;
        }
        self.mm.solve();
        for (i, &f) in comp.iter().enumerate() {
            let rate = self.mm.rate[f as usize];
            if rate == old[i] && self.flows[f as usize].version > 0 {
                continue;
            }
            let fl = &mut self.flows[f as usize];
            fl.version += 1;
            if fl.remaining.is_finite() && rate > 0.0 {
                let ps = (fl.remaining * Time::PS_PER_S as f64 / rate).ceil();
                let at = self.now + Time(ps as u64);
                let ev = Ev::TxDone(f, fl.version);
                self.schedule(at, ev);
            }
        }
    }

    fn finish(self, wall_s: f64, halted: Option<Halt>) -> RunRecord {
        let mut cols = FlowColumns::with_capacity(self.flows.len());
        let mut totals = PacketTotals::default();
        let mut hops: Vec<u64> = Vec::new();
        let n_ports = self.topo.ports.len();
        let (mut q_bytes, mut q_pkts) = (vec![0f64; n_ports], vec![0f64; n_ports]);
        for (i, fl) in self.flows.iter().enumerate() {
            let pkt_bits = (fl.pkt_payload + fl.header) as f64 * 8.0;
            let delivered = fl.complete.is_some() || (i < self.n_src as usize && fl.tx_done.is_some_and(|t| t + fl.tail <= self.now));
            let (tx_pkts, rx_pkts, tx_bytes, rx_bytes) = if fl.started.is_none() {
                (0, 0, 0, 0)
            } else if delivered {
                let pkts = if fl.total.is_finite() { fl.n_pkts } else { (fl.sent / pkt_bits).ceil() as u64 };
                let bytes = if fl.total.is_finite() { (fl.total / 8.0) as u64 } else { (fl.sent / 8.0).round() as u64 };
                (pkts, pkts, bytes, bytes)
            } else {
                let rate = self.mm.rate[i];
                let in_flight = rate * fl.tail.0 as f64 / Time::PS_PER_S as f64;
                let tx = (fl.sent / pkt_bits).ceil() as u64;
                let rx = ((fl.sent - in_flight).max(0.0) / pkt_bits).floor() as u64;
                (tx, rx.min(tx), (fl.sent / 8.0).round() as u64, (rx as f64 * pkt_bits / 8.0) as u64)
            };
            let rx_payload = if rx_pkts == 0 { 0 } else { rx_bytes.saturating_sub(rx_pkts * fl.header) };
            totals.tx += tx_pkts;
            totals.rx += rx_pkts;
            if rx_pkts > 0 {
                let h = fl.switches as usize;
                if hops.len() <= h {
                    hops.resize(h + 1, 0);
                }
                hops[h] += rx_pkts;
            }
            for &(r, w) in &fl.uses {
                q_bytes[r as usize] += w * tx_bytes as f64;
                q_pkts[r as usize] += w * tx_pkts as f64;
            }
            let last_tx = fl.tx_done.or(fl.started.map(|_| self.now));
            cols.name.push(self.flow_name[i]);
            cols.kind.push(if i < self.n_src as usize { FlowKind::Cbr } else { FlowKind::Message });
            cols.src.push(fl.src);
            cols.dst.push(fl.dst);
            cols.tx_packets.push(tx_pkts);
            cols.rx_packets.push(rx_pkts);
            cols.lost_packets.push(0);
            cols.tx_bytes.push(tx_bytes);
            cols.rx_bytes.push(rx_bytes);
            cols.rx_payload_bytes.push(rx_payload);
            cols.first_tx_ps.push(fl.started.map(|t| t.0));
            cols.last_tx_ps.push(last_tx.map(|t| t.0));
            cols.first_rx_ps.push((rx_pkts > 0).then(|| (fl.started.unwrap_or_default() + fl.pkt_delay).0));
            let last_rx = fl.complete.or(fl.tx_done.filter(|_| delivered).map(|t| t + fl.tail)).unwrap_or(self.now);
            cols.last_rx_ps.push((rx_pkts > 0).then_some(last_rx.0));
            cols.delay_sum_ps.push(rx_pkts * fl.pkt_delay.0);
            cols.max_delay_ps.push(if rx_pkts > 0 { fl.pkt_delay.0 } else { 0 });
            let is_msg = i >= self.n_src as usize;
            cols.complete_ps.push(if is_msg { fl.complete.map(|t| t.0) } else { None });
            cols.start_ps.push(if is_msg { fl.started.map(|t| t.0) } else { None });
        }
        totals.in_flight = totals.tx - totals.rx;
        let mut queues = QueueColumns::default();
        for p in 0..n_ports {
            let tp = &self.topo.ports[p];
            queues.name.push(self.topo.port_name(p as u32));
            queues.node.push(tp.node);
            queues.port.push(tp.local);
            queues.tx_packets.push(q_pkts[p].round() as u64);
            queues.tx_bytes.push(q_bytes[p].round() as u64);
            queues.drops.push(0);
            queues.peak_packets.push(0);
            queues.peak_bytes.push(0);
            queues.rate_bps.push(tp.rate.0);
        }
        let work = WorkTimes {
            msgs: self.flows[self.n_src as usize..].iter().map(|f| ((f.src, f.dst), f.started, f.complete)).collect(),
            comp_host: &self.comp_host,
            comp_start: &self.dag.comp_start,
            comp_end: &self.dag.comp_end,
        };
        let (completion_ps, compute, hosts) = work.summarize(self.topo.n_nodes(), self.now);
        RunRecord {
            fidelity: "flow".into(),
            seed: self.seed,
            end_ps: self.now.0,
            completion_ps,
            events: self.events,
            packets: totals,
            hops,
            flows: cols,
            queues,
            samples: SampleColumns::default(),
            compute,
            hosts,
            node_names: self.topo.names.clone(),
            flow_names: self.flow_names.clone(),
            wall_s,
            halted,
            reached_stop: false,
            rx_bins: Vec::new(),
            bin_ps: None,
            roce: None,
            deadlock: None,
            fast_forward: None,
            retransmit: None,
            uec: None,
            net_events: NetEventRow::of_spec(&self.net_events, &self.link_ends, &self.topo.names),
        }
    }
}

#[inline]
fn push_merge(level: &mut Vec<(u32, f64)>, p: u32, w: f64) {
    match level.iter_mut().find(|(q, _)| *q == p) {
        Some(e) => e.1 += w,
        None => level.push((p, w)),
    }
}
