//! The packet-level simulation: a plain value that owns its clock, event queue, RNG streams and packet slab, and
//! dispatches every event to the component it names (see `Sim`).
//!
//! Model: store-and-forward over full-duplex links. Every directed link end is a *port* with an egress
//! buffer (`Egress`), a transmitter and a *pipe* (packets propagating). A port keeps at most one pending
//! transmitter event and its pipe at most one pending delivery event (its head), so the event queue holds
//! O(ports + sources) entries however many packets are in flight. A packet entering node `v` arrives
//! `delay + latency(v)` after its last bit left the previous node. Message senders are *pulled* by their
//! NIC when it is free (round-robin across a NIC's active messages), so a message never overflows its own
//! host's queue; UDP sources *push* into their NIC's egress buffer and may be dropped there, as in ns-3.

use crate::events::{Ev, EventQueue};
use crate::measure::{FlowStat, Measure};
use crate::net::faults::Faults;
use crate::net::pfc::Pfc;
use crate::net::voq::Voq;
use crate::net::{Net, PortState};
use crate::packet::Packet;
use crate::queues::Egress;
use crate::transport::message::{Messages, MsgRt};
use crate::transport::rdma::Rdma;
use crate::transport::tcp::{self, Tcp, TcpConn};
use crate::transport::udp::{self, SourceRt, Udp};
use crate::transport::uec::Uec;
use crate::transport::{Binding, FlowRt, TransportKind, TransportModel};
use fabricsim_core::compile::{compile, Compiled};
use fabricsim_core::control::{Control, Progress};
use fabricsim_core::dag::Dag;
use fabricsim_core::record::{FlowKind, PacketTotals, RunRecord, SampleColumns};
use fabricsim_core::routing::mix64;
use fabricsim_core::spec::{Arbiter, EcmpMode, RetransmitSpec, RunSpec};
use fabricsim_core::workload::Workload;
use fabricsim_core::{Bps, Error, Result, Time};
use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// One packet-level simulation: a plain value that owns its clock, event queue, RNG streams and packet slab,
/// and dispatches each event to the component it names. Every other piece of state belongs to a component,
/// one file per mechanism: `net` (ports, pipes and forwarding; `net::credit` and `net::pfc` flow control;
/// `net::faults`), `queues` (egress buffering), each transport behind `transport::TransportModel` (`udp`,
/// `message`, `tcp`, `rdma`), and `measure` (statistics and the record). `shift` moves every pending event and
/// every absolute time of every component by Δ, one call per component.
pub struct Sim {
    pub(crate) now: Time,
    pub(crate) stop: Option<Time>,
    pub(crate) q: EventQueue,
    /// One RNG stream per node (per-packet ECMP, ECN marking and bit errors draw from the node that decides),
    /// seeded from the spec's seed and the node id, so a node's draws do not depend on other nodes' events.
    pub(crate) rngs: Vec<Pcg64Mcg>,
    pub(crate) seed: u64,
    pub(crate) ecmp: EcmpMode,
    /// Flowlet ECMP: the idle gap that re-draws a message's path (0 = off).
    pub(crate) flowlet_gap: u64,
    /// The packet slab: packets by dense id, the free list, and how many are alive.
    pub(crate) pkts: Vec<Packet>,
    pub(crate) free: Vec<u32>,
    pub(crate) live: u64,
    /// Per-flow routing state and the transport that owns each flow.
    pub(crate) flows: Vec<FlowRt>,
    pub(crate) flow_kind: Vec<FlowKind>,
    pub(crate) flow_name: Vec<u32>,
    pub(crate) flow_names: Vec<String>,
    /// The workload DAG (message and barrier dependencies), its scratch output, and each compute step's host.
    pub(crate) dag: Dag,
    pub(crate) dag_out: Vec<(u32, Time)>,
    pub(crate) comp_host: Vec<u32>,
    /// Events carried out so far, and the tie key of the last one (`Ev::tie_key`; 0 before the first): committing
    /// ports (`net::commit`) settle a pause point or a halt by it.
    pub(crate) events: u64,
    pub(crate) last_key: u64,
    /// Set when a run must stop with an error (checked only where it can be set).
    pub(crate) failure: Option<Error>,
    /// The transport the NICs pull messages from: `Message`, `Rdma` with `[rdma]`, `Uec` with `[uec]`.
    pub(crate) pulled: TransportKind,
    /// The components.
    pub(crate) net: Net,
    pub(crate) pfc: Pfc,
    pub(crate) faults: Faults,
    pub(crate) udp: Udp,
    pub(crate) msg: Messages,
    pub(crate) tcp: Tcp,
    pub(crate) rdma: Rdma,
    pub(crate) uec: Uec,
    pub(crate) measure: Measure,
    /// Hybrid fidelity's steady-state detector (None at packet fidelity; `hybrid.rs`).
    pub(crate) hybrid: Option<Box<crate::hybrid::Hybrid>>,
}

impl Sim {
    /// Build a simulation from a spec (compiled and validated here; see `new_compiled`).
    pub fn new(spec: &RunSpec) -> Result<Sim> {
        Sim::new_compiled(compile(spec.clone(), Workload::default())?)
    }

    /// Build a simulation from a compiled scenario. O(ports + flows + workload).
    pub fn new_compiled(c: Compiled) -> Result<Sim> {
        let flow_kind: Vec<FlowKind> = (0..c.flows.len() as u32).map(|f| c.flow_kind(f)).collect();
        let Compiled { spec, wl, topo, fib, paths, flows: routes, n_src, n_msg, n_tcp, flow_names, flow_name, limits } = c;
        let ports: Vec<PortState> = topo
            .ports
            .iter()
            .map(|p| PortState {
                peer_node: p.peer_node,
                peer_is_switch: topo.is_switch(p.peer_node),
                rate: p.rate,
                ser: (0, Time::ZERO),
                arrive: p.delay + topo.latency[p.peer_node as usize],
                delay: p.delay,
                cap: p.rate_cap,
                egress: Egress::from_spec(&p.queue, mix64(spec.seed ^ 0xF0C0_DE1A)),
                busy_until: Time::ZERO,
                pending: false,
                commits: false,
                head_start: Time::ZERO,
                pulls_ahead: false,
                ahead: None,
                next_start: Time::ZERO,
                pipe: VecDeque::new(),
                senders: VecDeque::new(),
                tx_packets: 0,
                tx_bytes: 0,
                drops: 0,
                peak_packets: 0,
                peak_bytes: 0,
                drop_list: p.drop_packets.iter().rev().copied().collect(),
                arrivals: 0,
                credits: if topo.is_lossless(p.peer_node) { topo.input_buffer[p.peer_node as usize] } else { u64::MAX },
                credit_pipe: VecDeque::new(),
                credit_inflight: 0,
                credit_need: 0,
                credit_ev: Time::MAX,
                voq: topo.is_lossless(p.node).then(|| {
                    let up = topo.ports_of(p.node).map(|q| topo.ports[q as usize].peer_port).collect();
                    Box::new(Voq::new(up, spec.network.nodes[p.node as usize].arbiter == Arbiter::Fifo))
                }),
            })
            .collect();
        // The flow's transport from its compiled kind (compile numbers flows by kind); the index is into its
        // transport's state.
        let pulled = if spec.rdma.is_some() {
            TransportKind::Rdma
        } else if spec.uec.is_some() {
            TransportKind::Uec
        } else {
            TransportKind::Message
        };
        let bind = |kind, ack, idx| Binding { kind, ack, idx };
        let transport = |f: u32| match flow_kind[f as usize] {
            FlowKind::Cbr | FlowKind::Onoff => bind(TransportKind::Udp, false, f),
            FlowKind::Message => bind(pulled, false, f - n_src),
            FlowKind::Tcp => bind(TransportKind::Tcp, false, f - n_src - n_msg),
            FlowKind::TcpAck => bind(TransportKind::Tcp, true, f - n_src - n_msg - n_tcp),
            FlowKind::RdmaAck => bind(TransportKind::Rdma, true, f - n_src - n_msg - 2 * n_tcp),
            FlowKind::UecAck => bind(TransportKind::Uec, true, f - n_src - n_msg - 2 * n_tcp),
        };
        let flows: Vec<FlowRt> = routes
            .iter()
            .enumerate()
            .map(|(f, r)| FlowRt {
                src: r.src,
                dst: r.dst,
                src_port: r.src_port,
                dst_ep: r.dst_ep,
                path: r.path,
                salt: r.salt,
                transport: transport(f as u32),
                last_tx: u64::MAX,
            })
            .collect();
        let tcp_base = n_src + n_msg;
        let n_nodes = topo.n_nodes();
        let tcps: Vec<TcpConn> =
            spec.tcp.iter().enumerate().map(|(i, t)| TcpConn::new(t, tcp_base + i as u32, tcp_base + n_tcp + i as u32)).collect();
        let srcs = spec
            .sources
            .iter()
            .enumerate()
            .map(|(i, s)| SourceRt {
                flow: i as u32,
                kind: s.kind,
                rate: Bps(s.rate_bps),
                payload: s.packet_bytes as u32,
                header: s.header_bytes as u32,
                on: Time(s.on_ps),
                off: Time(s.off_ps),
                max_bytes: s.max_bytes,
                tot_bytes: 0,
                residual_bits: 0,
                last_start: Time::ZERO,
                send_ev: None,
                toggle_ev: None,
            })
            .collect();
        let msgs: Vec<MsgRt> = (0..wl.n_msgs())
            .map(|i| MsgRt {
                flow: n_src + i as u32,
                size: wl.size[i],
                payload: wl.packet[i],
                header: wl.header[i],
                remaining: wl.size[i],
                received: 0,
                started: None,
                complete: None,
                last_tx: 0,
            })
            .collect();
        let sample_ports = match &spec.measure.sample_ports {
            Some(list) => list.iter().map(|&(n, p)| topo.port_start[n as usize] + p).collect(),
            None => (0..topo.ports.len() as u32).filter(|&p| topo.is_switch(topo.ports[p as usize].node)).collect(),
        };
        let n_flows = flows.len();
        let mut sim = Sim {
            now: Time::ZERO,
            stop: spec.stop_ps.map(Time),
            q: EventQueue::default(),
            rngs: (0..n_nodes as u64).map(|v| Pcg64Mcg::seed_from_u64(mix64(spec.seed ^ mix64(v ^ 0x5E_ED0F_A0DE)))).collect(),
            seed: spec.seed,
            ecmp: spec.routing.ecmp,
            flowlet_gap: if spec.routing.ecmp == EcmpMode::Flowlet { spec.routing.flowlet_gap_ps.unwrap_or(0) } else { 0 },
            pkts: Vec::new(),
            free: Vec::new(),
            live: 0,
            flows,
            flow_kind,
            flow_name,
            flow_names,
            dag: Dag::new(&wl, n_nodes),
            dag_out: Vec::new(),
            comp_host: wl.compute_host.clone(),
            events: 0,
            last_key: 0,
            failure: None,
            pulled,
            net: Net { topo, fib, paths, ports, roce: false, roce_ports: Vec::new() },
            pfc: Pfc::default(),
            faults: Faults::new(&spec),
            udp: Udp { srcs },
            msg: Messages {
                total_bytes: msgs.iter().map(|m| m.size).sum(),
                msgs,
                rx_bytes: 0,
                done: 0,
                rto: Time(spec.retransmit.as_ref().map_or(RetransmitSpec::default().rto_ps, |r| r.rto_ps)),
                max_retries: spec.retransmit.as_ref().map_or(RetransmitSpec::default().max_retries, |r| r.max_retries),
                epoch: 0,
                retx: Default::default(),
                stats: None,
            },
            tcp: Tcp { conns: tcps, hdrs: Vec::new() },
            rdma: Rdma::default(),
            uec: Uec::default(),
            measure: Measure {
                stats: vec![FlowStat::default(); n_flows],
                totals: PacketTotals::default(),
                hops: Vec::new(),
                sample_every: spec.measure.queue_sample_ps.map(Time),
                sample_ports,
                samples: SampleColumns::default(),
                bin: spec.measure.throughput_bin_ps.map(Time),
                rx_bins: Vec::new(),
                max_bins: limits.max_bins,
                max_sample_rows: limits.max_sample_rows.min(crate::MAX_SAMPLE_ROWS as u64),
                budget_said: limits.budget.said(),
                sample_pending: false,
            },
            hybrid: None,
        };
        sim.setup_roce(&spec, &wl, n_tcp);
        if !sim.net.roce {
            for (p, port) in sim.net.ports.iter_mut().enumerate() {
                port.commits = sim.net.topo.is_switch(sim.net.topo.ports[p].node)
                    && port.egress.qdisc.is_none()
                    && port.cap.is_none()
                    && port.voq.is_none()
                    && port.credits == u64::MAX
                    && port.drop_list.is_empty();
            }
            sim.mark_pulls_ahead();
            sim.pin_rated_ports();
        }
        for (i, e) in spec.events.iter().enumerate() {
            sim.q.schedule(Time(e.at_ps), Ev::Net(i as u32));
        }
        for (i, t) in spec.tcp.iter().enumerate() {
            sim.q.schedule(Time(t.start_ps), tcp::timer(tcp::T_START, i as u32));
            if let Some(stop) = t.stop_ps {
                sim.q.schedule(Time(stop), tcp::timer(tcp::T_STOP, i as u32));
            }
        }
        for (i, s) in spec.sources.iter().enumerate() {
            sim.q.schedule(Time(s.start_ps), Ev::Timer(TransportKind::Udp, udp::START, i as u32));
            if let Some(stop) = s.stop_ps {
                sim.q.schedule(Time(stop), Ev::Timer(TransportKind::Udp, udp::STOP, i as u32));
            }
        }
        let mut out = std::mem::take(&mut sim.dag_out);
        sim.dag.initial(&mut out);
        sim.start_released(&mut out);
        if let Some(dt) = sim.measure.sample_every {
            sim.q.schedule(Time::ZERO + dt, Ev::Sample);
            sim.measure.sample_pending = true;
        }
        Ok(sim)
    }

    /// Run to completion (no event left, or the stop time) and return the record. Checks conservation.
    pub fn run(self) -> Result<RunRecord> {
        self.run_with(Control::default())
    }

    /// Carry out one event (the clock already at its time); the watchdog is the callers' (it does not move the
    /// clock).
    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        self.last_key = ev.tie_key();
        match ev {
            Ev::Port(p) => self.on_port(p),
            Ev::Pipe(p) => self.on_pipe(p),
            Ev::Credit(p) => self.on_credit(p),
            Ev::Timer(kind, timer, i) => self.on_timer(kind, timer, i),
            Ev::MsgStart(m) => self.msg_start(m),
            Ev::ComputeDone(c) => {
                let mut out = std::mem::take(&mut self.dag_out);
                self.dag.compute_done(c, self.now, &mut out);
                self.start_released(&mut out);
            }
            Ev::Net(e) => self.net_event(e),
            Ev::Reroute(e) => self.reroute(e),
            Ev::Pfc(p) => self.on_pfc(p),
            Ev::Sample => self.sample(),
            Ev::Window => self.on_window(),
            Ev::Watchdog => unreachable!("the callers handle the watchdog"),
        }
    }

    /// Pop and carry out the next event, for tools that watch a run event by event (the parallel-engine probe,
    /// `examples/parallel_probe.rs`): no stop time, limits or observer, and no record — `run` gives the record.
    /// Returns the event's time and what it was, or None when no event is left.
    pub fn step(&mut self) -> Option<(Time, Ev)> {
        let (t, ev) = self.q.pop()?;
        if ev == Ev::Watchdog {
            // As in `run_with`: the watchdog observes without moving the clock.
            let before = self.now;
            self.now = t;
            self.watchdog();
            self.now = before;
        } else {
            self.now = t;
            self.events += 1;
            self.dispatch(ev);
        }
        Some((t, ev))
    }

    /// The time of the next pending event, without carrying it out (for tools that stop a run before a given time:
    /// pause it there with `shift`, or bound a jump). The next thing the caller does with the queue must be to pop
    /// (`step`, `run`) or `shift`.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.q.peek_time()
    }

    /// The node whose state event `ev` changes: the transmitting node of a port event, the receiving node of a
    /// pipe event, the sending host of a source or message event; None for events of the whole network
    /// (samples, network events, the watchdog) and for TCP and RDMA timers. O(1).
    pub fn event_node(&self, ev: Ev) -> Option<u32> {
        let port = |p: u32| self.net.topo.ports[p as usize].node;
        match ev {
            Ev::Port(p) | Ev::Credit(p) | Ev::Pfc(p) => Some(port(p)),
            Ev::Pipe(p) => Some(self.net.ports[p as usize].peer_node),
            Ev::Timer(TransportKind::Udp, _, s) => Some(self.flows[self.udp.srcs[s as usize].flow as usize].src),
            Ev::MsgStart(m) | Ev::Timer(TransportKind::Message, _, m) => Some(self.flows[self.msg.msgs[m as usize].flow as usize].src),
            Ev::ComputeDone(c) => Some(self.comp_host[c as usize]),
            _ => None,
        }
    }

    /// The number of nodes and each port's (node, peer node, propagation delay + the peer's latency in ps), for
    /// partitioning tools.
    pub fn port_links(&self) -> (usize, Vec<(u32, u32, u64)>) {
        let links = self.net.topo.ports.iter().zip(&self.net.ports).map(|(tp, p)| (tp.node, p.peer_node, p.arrive.0)).collect();
        (self.net.topo.n_nodes(), links)
    }

    /// Delay everything still to happen by `dt`, as if the network paused for `dt` now: every pending event, and
    /// every absolute time a component holds that a later decision reads (transmitters, pipes, credit returns,
    /// shapers, queue disciplines' clocks, PFC frames and pauses, transport timers, pacing, timestamps in flight,
    /// the workload's pending releases and running compute steps), one `shift` per component. History and
    /// statistics (when a flow started, what was delivered when, samples) stay where they happened, and so does
    /// the run's stop time. Afterwards the run unfolds exactly as it would have, `dt` later. O(pending events +
    /// ports + packets + flows + workload). Issue 30's fast-forward jumps a steady interval with it.
    pub fn shift(&mut self, dt: Time) {
        self.q.shift(dt);
        self.dag.shift(self.now, dt);
        self.shift_network(dt);
    }

    /// The network's part of `shift` (everything but the event queue and the workload): every absolute time the
    /// ports, transports and packets in flight hold, and the clock. A hybrid jump (`hybrid.rs`) moves the
    /// network's pending events itself and leaves the workload where it is.
    pub(crate) fn shift_network(&mut self, dt: Time) {
        let now = self.now;
        // Committing ports: the packets that started at the pause leave their queue before it moves.
        for (p, port) in self.net.ports.iter_mut().enumerate() {
            if port.commits {
                port.settle(now, Ev::Port(p as u32).tie_key() <= self.last_key);
            }
        }
        self.shift_ahead(dt);
        self.net.shift(dt);
        self.udp.shift(dt);
        self.msg.shift(dt);
        self.tcp.shift(dt);
        self.rdma.shift(dt);
        for p in &mut self.pkts {
            p.tx_time += dt.0;
        }
        if self.flowlet_gap != 0 {
            // Only flowlet routing stamps `last_tx` (a pass over every flow of a 200,000-message trace per jump
            // was a seventh of a hybrid run).
            for f in &mut self.flows {
                if f.last_tx != u64::MAX {
                    f.last_tx += dt.0;
                }
            }
        }
        self.now = now + dt;
    }

    /// Pending events that only observe the run (the deadlock watchdog, queue sampling, the hybrid detector's
    /// window), apart from the one being carried out: a periodic observer keeps going only while more than these
    /// are pending, so that observers never keep each other alive.
    pub(crate) fn observers_pending(&self) -> usize {
        self.pfc.watchdog_pending as usize + self.measure.sample_pending as usize + self.hybrid.as_ref().is_some_and(|h| h.window_pending) as usize
    }

    /// Where the run stands, for the run's observer.
    fn progress(&self, wall_s: f64) -> Progress {
        Progress {
            events: self.events,
            now_ps: self.now.0,
            stop_ps: self.stop.map(|t| t.0),
            msgs_done: self.msg.done,
            msgs_total: self.msg.msgs.len() as u64,
            bytes_done: if self.msg.done == self.msg.msgs.len() as u64 { self.msg.total_bytes } else { self.msg.rx_bytes.min(self.msg.total_bytes) },
            bytes_total: self.msg.total_bytes,
            wall_s,
        }
    }

    /// `run` under `ctl`'s limits and observer: a halted run returns its record so far, marked `halted`
    /// (packets still queued count as in flight).
    pub fn run_with(mut self, mut ctl: Control) -> Result<RunRecord> {
        let wall = std::time::Instant::now();
        ctl.start();
        let mut halted = None;
        let mut reached_stop = false;
        while let Some((t, ev)) = self.q.pop() {
            if ctl.due(self.events) {
                // A measurement that ran out of budget (throughput bins) stops the run at the next check.
                if let Some(e) = self.failure.take() {
                    return Err(e);
                }
                if let Some(h) = ctl.check(|w| self.progress(w), self.events) {
                    halted = Some(h);
                    break;
                }
            }
            if let Some(stop) = self.stop {
                if t > stop {
                    reached_stop = true;
                    break;
                }
            }
            if t == Time::MAX {
                return Err(Error::spec(
                    "time",
                    "simulated time would pass 2^64 ps (213 days): start times, delays and latencies add up to too much",
                ));
            }
            debug_assert!(t >= self.now, "time went backwards: {t} < {}", self.now);
            if ev == Ev::Watchdog {
                // The watchdog observes; it neither counts as an event nor moves the record's end time.
                let before = self.now;
                self.now = t;
                self.watchdog();
                self.now = before;
                if self.pfc.deadlock.is_some() {
                    break;
                }
                continue;
            }
            if ev == Ev::Window {
                if let Some(h) = self.hybrid.as_mut() {
                    h.window_pending = false;
                }
                if self.q.live() <= self.observers_pending() {
                    // Only observers are left: the detector stops, without moving the record's end time.
                    continue;
                }
            }
            self.now = t;
            self.events += 1;
            self.dispatch(ev);
            if ev == Ev::Sample {
                // Sampling is where a run can fail midway (too many rows).
                if let Some(e) = self.failure.take() {
                    return Err(e);
                }
            }
        }
        if let Some(e) = self.failure.take() {
            // A measurement ran out of budget after the last check.
            return Err(e);
        }
        if self.pfc.on && self.pfc.deadlock.is_none() && self.live > 0 && halted.is_none() && !reached_stop {
            // The events ran out with packets held: a cycle of paused ports is the usual reason.
            self.pfc.deadlock = self.paused_cycle();
        }
        self.settle_ports(reached_stop);
        let wall_s = wall.elapsed().as_secs_f64();
        ctl.finish(self.progress(wall_s));
        let ff = self.settle_hybrid();
        let mut rec = self.finish(wall_s, halted)?;
        rec.reached_stop = reached_stop;
        if ff.is_some() {
            rec.fidelity = "hybrid".into();
            rec.fast_forward = ff;
        }
        Ok(rec)
    }
}
