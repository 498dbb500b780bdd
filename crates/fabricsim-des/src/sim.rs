//! The packet-level simulation: a plain value that owns its clock, event queue, RNG, network and statistics.
//!
//! Model: store-and-forward over full-duplex links. Every directed link end is a *port* with an egress
//! buffer (`Egress`), a transmitter and a *pipe* (packets propagating). A port keeps at most one pending
//! transmitter event and its pipe at most one pending delivery event (its head), so the event queue holds
//! O(ports + sources) entries however many packets are in flight. A packet entering node `v` arrives
//! `delay + latency(v)` after its last bit left the previous node. Message senders are *pulled* by their
//! NIC when it is free (round-robin across a NIC's active messages), so a message never overflows its own
//! host's queue; UDP sources *push* into their NIC's egress buffer and may be dropped there, as in ns-3.

mod tcp;

use crate::events::{Ev, EventId, EventQueue};
use tcp::{TcpConn, TcpHdr};
use crate::queues::Egress;
use fabricsim_core::compile::{compile, Compiled};
use fabricsim_core::control::{Control, Halt, Progress};
use fabricsim_core::dag::Dag;
use fabricsim_core::record::{FlowColumns, FlowKind, PacketTotals, QueueColumns, RunRecord, SampleColumns, WorkTimes};
use fabricsim_core::routing::{ecmp_index, mix64, Fib, PathTable};
use fabricsim_core::workload::Workload;
use fabricsim_core::spec::{EcmpMode, NetEventKind, NetEventSpec, RunSpec, SourceKind};
use fabricsim_core::topology::{Topology, NONE};
use fabricsim_core::{Bps, Error, Result, Time};
use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// A packet in flight. Invariant: it lives in exactly one place (an egress buffer, a transmitter or a pipe).
#[derive(Clone, Copy, Debug, Default)]
struct Packet {
    flow: u32,
    dst_ep: u32,
    /// Bytes on the wire (payload + header).
    size: u32,
    payload: u32,
    /// When the packet was handed to the sender's NIC (FlowMonitor's send time).
    tx_time: u64,
    /// Explicit path id or NONE; `hop` indexes its hops (0 = leaving the source NIC).
    path: u32,
    hop: u16,
    /// Switches traversed so far.
    switches: u16,
}

struct PortState {
    peer_node: u32,
    peer_is_switch: bool,
    rate: Bps,
    /// Propagation delay plus the peer node's traversal latency.
    arrive: Time,
    cap: Option<Bps>,
    egress: Egress,
    /// Packet being serialised, or NONE.
    cur: u32,
    /// Whether a `Ev::Port` is scheduled (serialisation end or shaper wake-up).
    pending: bool,
    /// Shaper: earliest start of the next serialisation.
    next_start: Time,
    pipe: VecDeque<(Time, u32)>,
    /// Active messages pulled by this NIC, round-robin.
    senders: VecDeque<u32>,
    tx_packets: u64,
    tx_bytes: u64,
    drops: u64,
    peak_packets: u64,
    peak_bytes: u64,
    /// Error model: arrival indices still to drop, in descending order (popped from the back).
    drop_list: Vec<u64>,
    arrivals: u64,
    /// Bytes the peer's input buffer can still take (u64::MAX unless the peer is an input-buffered switch).
    credits: u64,
    /// Credit returns travelling toward this port: (arrival time, bytes); the head alone is scheduled.
    credit_pipe: VecDeque<(Time, u32)>,
    /// Output ports of input-buffered switches: the virtual output queues at the switch's inputs.
    voq: Option<Voq>,
}

/// The virtual output queues feeding one output port, one per input port of the switch, served by a
/// round-robin arbiter. Invariant: `len`/`bytes` are the totals over all queues.
struct Voq {
    /// Per input (local port index): (packet, size, upstream port that holds the credit).
    q: Vec<VecDeque<(u32, u32, u32)>>,
    rr: usize,
    len: u64,
    bytes: u64,
}

impl Voq {
    fn new(inputs: usize) -> Voq {
        Voq { q: (0..inputs).map(|_| VecDeque::new()).collect(), rr: 0, len: 0, bytes: 0 }
    }
    /// The input the arbiter serves next and its head packet's size. O(inputs).
    #[inline]
    fn peek(&self) -> Option<(usize, u32)> {
        if self.len == 0 {
            return None;
        }
        let n = self.q.len();
        (0..n).map(|k| (self.rr + k) % n).find_map(|i| self.q[i].front().map(|&(_, s, _)| (i, s)))
    }
    #[inline]
    fn pop(&mut self, i: usize) -> (u32, u32, u32) {
        let e = self.q[i].pop_front().expect("peeked input has a packet");
        self.rr = (i + 1) % self.q.len();
        self.len -= 1;
        self.bytes -= e.1 as u64;
        e
    }
    #[inline]
    fn push(&mut self, input: usize, pkt: u32, size: u32, upstream: u32) {
        self.q[input].push_back((pkt, size, upstream));
        self.len += 1;
        self.bytes += size as u64;
    }
}

#[derive(Clone, Copy, Default)]
struct FlowStat {
    tx_packets: u64,
    rx_packets: u64,
    lost: u64,
    tx_bytes: u64,
    rx_bytes: u64,
    rx_payload: u64,
    first_tx: Option<u64>,
    last_tx: Option<u64>,
    first_rx: Option<u64>,
    last_rx: Option<u64>,
    delay_sum: u64,
    max_delay: u64,
}

/// Per-flow routing state shared by sources and messages (flow id = source index, or n_sources + message index).
struct FlowRt {
    src: u32,
    dst: u32,
    src_port: u32,
    dst_ep: u32,
    path: u32,
    /// ECMP salt (per_flow: hash of id and seed; per_message: drawn from the RNG when the flow starts).
    salt: u64,
}

struct SourceRt {
    flow: u32,
    kind: SourceKind,
    rate: Bps,
    payload: u32,
    header: u32,
    on: Time,
    off: Time,
    max_bytes: Option<u64>,
    tot_bytes: u64,
    residual_bits: u64,
    last_start: Time,
    send_ev: Option<EventId>,
    toggle_ev: Option<EventId>,
}

struct MsgRt {
    flow: u32,
    size: u64,
    payload: u32,
    header: u32,
    remaining: u64,
    received: u64,
    started: Option<Time>,
    complete: Option<Time>,
}


pub struct Sim {
    now: Time,
    stop: Option<Time>,
    q: EventQueue,
    rng: Pcg64Mcg,
    seed: u64,
    ecmp: EcmpMode,
    topo: Topology,
    fib: Fib,
    paths: PathTable,
    ports: Vec<PortState>,
    pkts: Vec<Packet>,
    free: Vec<u32>,
    live: u64,
    flows: Vec<FlowRt>,
    stats: Vec<FlowStat>,
    srcs: Vec<SourceRt>,
    msgs: Vec<MsgRt>,
    /// The workload DAG (message and barrier dependencies) and its scratch output.
    dag: Dag,
    dag_out: Vec<(u32, Time)>,
    /// Messages delivered so far (progress reports only).
    msgs_done: u64,
    totals: PacketTotals,
    hops: Vec<u64>,
    events: u64,
    sample_every: Option<Time>,
    sample_ports: Vec<u32>,
    samples: SampleColumns,
    flow_kind: Vec<FlowKind>,
    flow_name: Vec<u32>,
    flow_names: Vec<String>,
    comp_host: Vec<u32>,
    /// Set when a run must stop with an error (checked only where it can be set).
    failure: Option<Error>,
    /// TCP connections; connection c's data flow is `tcps[c].data_flow`, its ACK flow `tcps[c].ack_flow`.
    tcps: Vec<TcpConn>,
    /// TCP headers, indexed by packet id (only meaningful for packets of TCP flows).
    hdrs: Vec<TcpHdr>,
    /// Network events, whether each link is up, each link's bit error rate, and the tables' detection delay;
    /// `faults` is whether there are any, so a run without them skips the per-packet link checks.
    faults: bool,
    net_events: Vec<NetEventSpec>,
    link_up: Vec<bool>,
    link_ber: Vec<f64>,
    detection: Time,
    /// Throughput bins: their width, and the payload bytes delivered in each.
    bin: Option<Time>,
    rx_bins: Vec<u64>,
}

/// Most queue-sample rows one run may record (about 1.6 GB of columns).
pub const MAX_SAMPLE_ROWS: usize = 50_000_000;

impl Sim {
    /// Build a simulation from a spec (compiled and validated here; see `new_compiled`).
    pub fn new(spec: &RunSpec) -> Result<Sim> {
        Sim::new_compiled(compile(spec.clone(), Workload::default())?)
    }

    /// Build a simulation from a compiled scenario. O(ports + flows + workload).
    pub fn new_compiled(c: Compiled) -> Result<Sim> {
        let flow_kind: Vec<FlowKind> = (0..c.flows.len() as u32).map(|f| c.flow_kind(f)).collect();
        let Compiled { spec, wl, topo, fib, paths, flows: routes, n_src: _, n_msg: _, n_tcp, flow_names, flow_name } = c;
        let ports: Vec<PortState> = topo
            .ports
            .iter()
            .map(|p| PortState {
                peer_node: p.peer_node,
                peer_is_switch: topo.is_switch(p.peer_node),
                rate: p.rate,
                arrive: p.delay + topo.latency[p.peer_node as usize],
                cap: p.rate_cap,
                egress: Egress::from_spec(&p.queue, mix64(spec.seed ^ 0xF0C0_DE1A)),
                cur: NONE,
                pending: false,
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
                voq: topo.is_lossless(p.node).then(|| Voq::new(topo.ports_of(p.node).len())),
            })
            .collect();
        let flows: Vec<FlowRt> = routes.iter().map(|r| FlowRt { src: r.src, dst: r.dst, src_port: r.src_port, dst_ep: r.dst_ep, path: r.path, salt: r.salt }).collect();
        let tcp_base = (spec.sources.len() + wl.n_msgs()) as u32;
        let n_nodes = topo.n_nodes();
        let tcps: Vec<TcpConn> =
            spec.tcp.iter().enumerate().map(|(i, t)| TcpConn::new(t, tcp_base + i as u32, tcp_base + n_tcp + i as u32)).collect();
        let n_src = spec.sources.len() as u32;
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
            rng: Pcg64Mcg::seed_from_u64(spec.seed),
            seed: spec.seed,
            ecmp: spec.routing.ecmp,
            topo,
            fib,
            paths,
            ports,
            pkts: Vec::new(),
            free: Vec::new(),
            live: 0,
            flows,
            stats: vec![FlowStat::default(); n_flows],
            srcs,
            msgs,
            dag: Dag::new(&wl, n_nodes),
            dag_out: Vec::new(),
            msgs_done: 0,
            totals: PacketTotals::default(),
            hops: Vec::new(),
            events: 0,
            sample_every: spec.measure.queue_sample_ps.map(Time),
            sample_ports,
            samples: SampleColumns::default(),
            flow_kind,
            flow_name,
            flow_names,
            comp_host: wl.compute_host.clone(),
            failure: None,
            tcps,
            hdrs: Vec::new(),
            faults: !spec.events.is_empty(),
            net_events: spec.events.clone(),
            link_up: vec![true; spec.network.links.len()],
            link_ber: vec![0.0; spec.network.links.len()],
            detection: Time(spec.routing.detection_delay_ps),
            bin: spec.measure.throughput_bin_ps.map(Time),
            rx_bins: Vec::new(),
        };
        for (i, e) in spec.events.iter().enumerate() {
            sim.q.schedule(Time(e.at_ps), Ev::Net(i as u32));
        }
        for (i, t) in spec.tcp.iter().enumerate() {
            sim.q.schedule(Time(t.start_ps), Ev::TcpStart(i as u32));
            if let Some(stop) = t.stop_ps {
                sim.q.schedule(Time(stop), Ev::TcpStop(i as u32));
            }
        }
        for (i, s) in spec.sources.iter().enumerate() {
            sim.q.schedule(Time(s.start_ps), Ev::SrcStart(i as u32));
            if let Some(stop) = s.stop_ps {
                sim.q.schedule(Time(stop), Ev::SrcStop(i as u32));
            }
        }
        let mut out = std::mem::take(&mut sim.dag_out);
        sim.dag.initial(&mut out);
        sim.start_released(&mut out);
        if let Some(dt) = sim.sample_every {
            sim.q.schedule(Time::ZERO + dt, Ev::Sample);
        }
        Ok(sim)
    }

    /// Run to completion (no event left, or the stop time) and return the record. Checks conservation.
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
            msgs_total: self.msgs.len() as u64,
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
            self.now = t;
            self.events += 1;
            match ev {
                Ev::Port(p) => self.on_port(p),
                Ev::Pipe(p) => self.on_pipe(p),
                Ev::Credit(p) => self.on_credit(p),
                Ev::SrcSend(s) => self.src_send(s),
                Ev::SrcOn(s) => self.src_on(s),
                Ev::SrcOff(s) => self.src_off(s),
                Ev::SrcStart(s) => {
                    self.src_cancel(s);
                    self.src_schedule_on(s);
                }
                Ev::SrcStop(s) => self.src_cancel(s),
                Ev::MsgStart(m) => self.msg_start(m),
                Ev::ComputeDone(c) => {
                    let mut out = std::mem::take(&mut self.dag_out);
                    self.dag.compute_done(c, self.now, &mut out);
                    self.start_released(&mut out);
                }
                Ev::TcpStart(c) => self.tcp_start(c),
                Ev::TcpStop(c) => self.tcp_stop(c),
                Ev::TcpRto(c) => self.tcp_rto(c),
                Ev::TcpDelAck(c) => self.tcp_delack(c),
                Ev::Net(e) => self.net_event(e),
                Ev::Reroute(e) => self.reroute(e),
                Ev::Sample => {
                    self.sample();
                    if let Some(e) = self.failure.take() {
                        return Err(e);
                    }
                }
            }
        }
        let wall_s = wall.elapsed().as_secs_f64();
        ctl.finish(self.progress(wall_s));
        let mut rec = self.finish(wall_s, halted)?;
        rec.reached_stop = reached_stop;
        Ok(rec)
    }

    // ---- packets -------------------------------------------------------------------------------------

    #[inline]
    fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        self.totals.tx += 1;
        match self.free.pop() {
            Some(i) => {
                self.pkts[i as usize] = p;
                i
            }
            None => {
                self.pkts.push(p);
                (self.pkts.len() - 1) as u32
            }
        }
    }

    #[inline]
    fn release(&mut self, id: u32) {
        self.live -= 1;
        self.free.push(id);
    }

    /// Create a packet of `flow` handed to its NIC now, counting it as sent.
    #[inline]
    fn new_packet(&mut self, flow: u32, payload: u32, header: u32) -> u32 {
        let f = &self.flows[flow as usize];
        let pkt = Packet {
            flow,
            dst_ep: f.dst_ep,
            size: payload + header,
            payload,
            tx_time: self.now.0,
            path: f.path,
            hop: 0,
            switches: 0,
        };
        let st = &mut self.stats[flow as usize];
        st.tx_packets += 1;
        st.tx_bytes += pkt.size as u64;
        st.first_tx.get_or_insert(self.now.0);
        st.last_tx = Some(self.now.0);
        self.alloc(pkt)
    }

    #[inline]
    fn drop_packet(&mut self, pkt: u32, port: u32) {
        let flow = self.pkts[pkt as usize].flow;
        self.stats[flow as usize].lost += 1;
        self.ports[port as usize].drops += 1;
        self.totals.dropped += 1;
        self.release(pkt);
    }

    // ---- ports ---------------------------------------------------------------------------------------

    /// Offer a packet to port p's egress buffer; start the transmitter if idle.
    #[inline]
    fn enqueue(&mut self, p: u32, pkt: u32) {
        let (size, key) = {
            let pk = &self.pkts[pkt as usize];
            (pk.size, pk.flow)
        };
        let now = self.now;
        let port = &mut self.ports[p as usize];
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
        if !self.ports[p as usize].pending {
            self.try_start(p);
        }
    }

    /// Account for every packet port p's buffering dropped since the last call.
    #[inline]
    fn drain_drops(&mut self, p: u32) {
        while let Some((pkt, _)) = self.ports[p as usize].egress.drops.pop() {
            self.drop_packet(pkt, p);
        }
    }

    /// Start serialising the next packet if the transmitter is idle and the shaper allows.
    /// Precondition: no `Ev::Port(p)` pending and nothing in serialisation.
    #[inline]
    fn try_start(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        debug_assert!(!port.pending && port.cur == NONE, "try_start on a busy port {p}");
        if port.cap.is_some() && now < port.next_start {
            if port.egress.len() > 0 || !port.senders.is_empty() || port.voq.as_ref().is_some_and(|v| v.len > 0) {
                port.pending = true;
                let at = port.next_start;
                self.q.schedule(at, Ev::Port(p));
            }
            return;
        }
        if let Some(voq) = &mut port.voq {
            // Input-buffered switch: the arbiter picks the next input; the packet leaves its input buffer,
            // so that buffer's credit goes back to the upstream port.
            let Some((input, size)) = voq.peek() else { return };
            if (size as u64) > port.credits {
                return; // wait for credit from downstream
            }
            let (pkt, size, upstream) = voq.pop(input);
            self.return_credit(upstream, size);
            self.start_tx(p, pkt);
            return;
        }
        if port.credits != u64::MAX {
            let head = match port.egress.dev_head_size() {
                Some(s) => Some(s),
                None => self.next_message_size(p),
            };
            let port = &self.ports[p as usize];
            match head {
                Some(s) if (s as u64) <= port.credits => {}
                _ => return,
            }
        }
        let port = &mut self.ports[p as usize];
        let next = match port.egress.dequeue(now) {
            Some((pkt, _)) => Some(pkt),
            None => self.pull_message(p),
        };
        if !self.ports[p as usize].egress.drops.is_empty() {
            self.drain_drops(p);
        }
        if let Some(pkt) = next {
            self.start_tx(p, pkt);
        }
    }

    /// Begin serialising `pkt` on port p (consumes downstream credit on lossless links).
    #[inline]
    fn start_tx(&mut self, p: u32, pkt: u32) {
        let now = self.now;
        let size = self.pkts[pkt as usize].size;
        let port = &mut self.ports[p as usize];
        port.cur = pkt;
        port.pending = true;
        port.tx_packets += 1;
        port.tx_bytes += size as u64;
        if port.credits != u64::MAX {
            port.credits -= size as u64;
        }
        if let Some(cap) = port.cap {
            port.next_start = now + cap.tx_time(size as u64);
        }
        let done = now + port.rate.tx_time(size as u64);
        self.q.schedule(done, Ev::Port(p));
    }

    /// Send `bytes` of credit back to upstream port `u`; it arrives after the link's propagation delay.
    #[inline]
    fn return_credit(&mut self, u: u32, bytes: u32) {
        let at = self.now + self.topo.ports[u as usize].delay;
        let port = &mut self.ports[u as usize];
        if port.credit_pipe.is_empty() {
            self.q.schedule(at, Ev::Credit(u));
        }
        port.credit_pipe.push_back((at, bytes));
    }

    fn on_credit(&mut self, u: u32) {
        let port = &mut self.ports[u as usize];
        let (_, bytes) = port.credit_pipe.pop_front().expect("a credit event implies a credit in flight");
        port.credits += bytes as u64;
        if let Some(&(t, _)) = port.credit_pipe.front() {
            self.q.schedule(t, Ev::Credit(u));
        }
        if !port.pending {
            self.try_start(u);
        }
    }

    /// Wire size of the next packet the NIC would pull from its active messages.
    #[inline]
    fn next_message_size(&self, p: u32) -> Option<u32> {
        let m = *self.ports[p as usize].senders.front()?;
        let msg = &self.msgs[m as usize];
        Some((msg.payload as u64).min(msg.remaining) as u32 + msg.header)
    }

    /// Next packet of the NIC's active messages (round-robin), or None.
    #[inline]
    fn pull_message(&mut self, p: u32) -> Option<u32> {
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

    fn on_port(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        port.pending = false;
        if port.cur != NONE {
            let pkt = port.cur;
            port.cur = NONE;
            let at = now + port.arrive;
            if port.pipe.is_empty() {
                self.q.schedule(at, Ev::Pipe(p));
            }
            port.pipe.push_back((at, pkt));
        }
        self.try_start(p);
    }

    fn on_pipe(&mut self, p: u32) {
        let port = &mut self.ports[p as usize];
        let (_, pkt) = port.pipe.pop_front().expect("a pipe event implies a packet in the pipe");
        if let Some(&(t, _)) = port.pipe.front() {
            self.q.schedule(t, Ev::Pipe(p));
        }
        let (v, to_switch) = (port.peer_node, port.peer_is_switch);
        if self.faults {
            let link = self.topo.ports[p as usize].link as usize;
            if !self.link_up[link] || (self.link_ber[link] > 0.0 && self.bit_error(pkt, link)) {
                return self.lose_on_link(pkt, p);
            }
        }
        if to_switch {
            self.forward(v, pkt, p);
        } else {
            self.receive(pkt);
        }
    }

    /// Whether a bit error corrupts `pkt` on `link`: probability 1 − (1 − ber)^bits, one RNG draw.
    fn bit_error(&mut self, pkt: u32, link: usize) -> bool {
        let bits = 8.0 * self.pkts[pkt as usize].size as f64;
        let p = -(bits * (-self.link_ber[link]).ln_1p()).exp_m1();
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < p
    }

    /// A packet lost on the link of port p (dead, or corrupted): counted at p; on a lossless link the credit it
    /// held comes back, as the receiver discards it.
    fn lose_on_link(&mut self, pkt: u32, p: u32) {
        if self.ports[p as usize].credits != u64::MAX {
            let size = self.pkts[pkt as usize].size;
            self.return_credit(p, size);
        }
        self.drop_packet(pkt, p);
    }

    /// Network event e takes effect: links go down or up (the tables follow after the detection delay), or
    /// take a bit error rate. O(links of the event).
    fn net_event(&mut self, e: u32) {
        let ev = &self.net_events[e as usize];
        match ev.kind {
            NetEventKind::Ber => {
                for &l in &ev.links {
                    self.link_ber[l as usize] = ev.ber;
                }
            }
            NetEventKind::LinkDown | NetEventKind::LinkUp => {
                let up = ev.kind == NetEventKind::LinkUp;
                for &l in &ev.links {
                    self.link_up[l as usize] = up;
                }
                let at = self.now + self.detection;
                self.q.schedule(at, Ev::Reroute(e));
            }
        }
    }

    /// The tables catch up with network event e: after links went down only the destinations whose tables
    /// used them are recomputed; after links came up, every destination (a new link can shorten any path).
    fn reroute(&mut self, e: u32) {
        let ev = &self.net_events[e as usize];
        let groups: Vec<u32> = if ev.kind == NetEventKind::LinkDown {
            self.fib.groups_using(&self.topo, &ev.links)
        } else {
            (0..self.fib.n_groups() as u32).collect()
        };
        self.fib.reroute(&self.topo, &self.link_up, &groups);
    }

    /// A packet fully arrived at switch v from upstream port `from`: pick the output port and queue it
    /// (in the output's egress buffer, or in its virtual output queue at the input on a lossless switch).
    #[inline]
    fn forward(&mut self, v: u32, pkt: u32, from: u32) {
        let pk = &mut self.pkts[pkt as usize];
        pk.switches += 1;
        if pk.path != NONE && self.ecmp == EcmpMode::Adaptive {
            // Adaptive routing over a static route (InfiniBand AR over Ftree): keep the route's port unless
            // another equal-cost port has less queued; once the packet deviates it follows the FIB.
            pk.hop += 1;
            let (path, hop, dst) = (pk.path, pk.hop as u32, pk.dst_ep);
            let pref = self.paths.hop_ports(path, hop)[0];
            let cands = self.fib.next_hops(v, dst);
            let load = |p: u32| {
                let port = &self.ports[p as usize];
                port.egress.bytes() + port.voq.as_ref().map_or(0, |q| q.bytes)
            };
            // Least loaded; the route's port comes first, so it wins ties (min_by_key keeps the first minimum).
            let best = std::iter::once(pref).chain(cands.iter().copied()).min_by_key(|&c| load(c)).expect("pref");
            if best != pref {
                self.pkts[pkt as usize].path = NONE;
            }
            return self.queue_at(best, pkt, from);
        }
        let mut cands: &[u32] = if pk.path != NONE {
            pk.hop += 1;
            self.paths.hop_ports(pk.path, pk.hop as u32)
        } else {
            self.fib.next_hops(v, pk.dst_ep)
        };
        if self.faults && pk.path != NONE && cands.iter().all(|&c| !self.link_up[self.topo.ports[c as usize].link as usize]) {
            // The explicit path's next link is dead: the packet leaves its path for the tables.
            pk.path = NONE;
            cands = self.fib.next_hops(v, pk.dst_ep);
        }
        let out = match cands.len() {
            1 => cands[0],
            0 => return self.drop_packet(pkt, from), // no route left after a failure: lost where it arrived
            n => {
                match self.ecmp {
                    EcmpMode::PerPacket => cands[(self.rng.next_u64() % n as u64) as usize],
                    EcmpMode::Adaptive => {
                        let first = ecmp_index(self.flows[pk.flow as usize].salt, v, n);
                        let load = |p: u32| {
                            let port = &self.ports[p as usize];
                            port.egress.bytes() + port.voq.as_ref().map_or(0, |q| q.bytes)
                        };
                        (0..n).map(|k| cands[(first + k) % n]).min_by_key(|&p| load(p)).expect("n > 1 candidates")
                    }
                    _ => cands[ecmp_index(self.flows[pk.flow as usize].salt, v, n)],
                }
            }
        };
        self.queue_at(out, pkt, from);
    }

    /// Queue a packet that arrived from port `from` for output port `out` (its egress buffer, or its virtual
    /// output queue at the input on a lossless switch).
    #[inline]
    fn queue_at(&mut self, out: u32, pkt: u32, from: u32) {
        if self.ports[out as usize].voq.is_some() {
            let size = self.pkts[pkt as usize].size;
            let input = self.topo.ports[self.topo.ports[from as usize].peer_port as usize].local as usize;
            let port = &mut self.ports[out as usize];
            let voq = port.voq.as_mut().expect("checked above");
            voq.push(input, pkt, size, from);
            port.peak_packets = port.peak_packets.max(voq.len);
            port.peak_bytes = port.peak_bytes.max(voq.bytes);
            if !port.pending {
                self.try_start(out);
            }
        } else {
            self.enqueue(out, pkt);
        }
    }

    /// A packet reached its destination host.
    #[inline]
    fn receive(&mut self, pkt: u32) {
        let pk = self.pkts[pkt as usize];
        let now = self.now.0;
        let delay = now - pk.tx_time;
        let st = &mut self.stats[pk.flow as usize];
        st.rx_packets += 1;
        st.rx_bytes += pk.size as u64;
        st.rx_payload += pk.payload as u64;
        st.first_rx.get_or_insert(now);
        st.last_rx = Some(now);
        st.delay_sum += delay;
        st.max_delay = st.max_delay.max(delay);
        self.totals.rx += 1;
        if let Some(b) = self.bin {
            let k = (now / b.0) as usize;
            if self.rx_bins.len() <= k {
                self.rx_bins.resize(k + 1, 0);
            }
            self.rx_bins[k] += pk.payload as u64;
        }
        let h = pk.switches as usize;
        if self.hops.len() <= h {
            self.hops.resize(h + 1, 0);
        }
        self.hops[h] += 1;
        self.release(pkt);
        let n_src = self.srcs.len() as u32;
        let (tcp_lo, tcp_hi) = self.tcp_flow_range();
        if pk.flow >= tcp_lo {
            let h = self.hdrs[pkt as usize];
            if pk.flow < tcp_hi {
                self.tcp_rx_data((pk.flow - tcp_lo) as usize, h);
            } else {
                self.tcp_rx_ack((pk.flow - tcp_hi) as usize, h);
            }
        } else if pk.flow >= n_src {
            let m = pk.flow - n_src;
            let msg = &mut self.msgs[m as usize];
            msg.received += pk.payload as u64;
            if msg.received == msg.size {
                self.msg_complete(m);
            }
        }
    }

    // ---- messages and the workload DAG ---------------------------------------------------------------

    fn msg_start(&mut self, m: u32) {
        let now = self.now;
        let msg = &mut self.msgs[m as usize];
        msg.started = Some(now);
        let flow = msg.flow as usize;
        let p = self.flows[flow].src_port;
        let port = &mut self.ports[p as usize];
        port.senders.push_back(m);
        if !port.pending {
            self.try_start(p);
        }
    }

    fn msg_complete(&mut self, m: u32) {
        let now = self.now;
        self.msgs[m as usize].complete = Some(now);
        self.msgs_done += 1;
        let mut out = std::mem::take(&mut self.dag_out);
        self.dag.delivered(m, now, &mut out);
        self.start_released(&mut out);
    }

    /// Schedule the messages the DAG released and the ends of the compute steps it started (and hand the
    /// scratch buffer back, emptied).
    fn start_released(&mut self, out: &mut Vec<(u32, Time)>) {
        let m = self.dag.n_msgs();
        for &(d, at) in out.iter() {
            let ev = if d < m { Ev::MsgStart(d) } else { Ev::ComputeDone(d - m) };
            self.q.schedule(at, ev);
        }
        out.clear();
        self.dag_out = std::mem::take(out);
    }

    // ---- UDP sources (ns-3 OnOffApplication semantics) -----------------------------------------------

    /// ns-3 ScheduleStartEvent: the on period begins after an off period (zero for CBR).
    fn src_schedule_on(&mut self, s: u32) {
        let src = &self.srcs[s as usize];
        let off = if src.kind == SourceKind::Cbr { Time::ZERO } else { src.off };
        let id = self.q.schedule(self.now + off, Ev::SrcOn(s));
        self.srcs[s as usize].toggle_ev = Some(id);
    }

    /// ns-3 StartSending: first packet after (packet bits − residual bits)/rate, then the on timer.
    fn src_on(&mut self, s: u32) {
        let now = self.now;
        let src = &mut self.srcs[s as usize];
        src.toggle_ev = None;
        src.last_start = now;
        self.src_next_tx(s);
        let src = &mut self.srcs[s as usize];
        if src.kind == SourceKind::Onoff {
            let id = self.q.schedule(now + src.on, Ev::SrcOff(s));
            self.srcs[s as usize].toggle_ev = Some(id);
        }
    }

    fn src_next_tx(&mut self, s: u32) {
        let src = &self.srcs[s as usize];
        if src.max_bytes.is_none_or(|m| src.tot_bytes < m) {
            let bits = (src.payload as u64 * 8).saturating_sub(src.residual_bits);
            let at = self.now + src.rate.bits_time_round(bits);
            let id = self.q.schedule(at, Ev::SrcSend(s));
            self.srcs[s as usize].send_ev = Some(id);
        } else {
            self.src_cancel(s);
        }
    }

    fn src_send(&mut self, s: u32) {
        let src = &mut self.srcs[s as usize];
        src.send_ev = None;
        let (flow, payload, header) = (src.flow, src.payload, src.header);
        src.tot_bytes += payload as u64;
        src.last_start = self.now;
        src.residual_bits = 0;
        let pkt = self.new_packet(flow, payload, header);
        let port = self.flows[flow as usize].src_port;
        self.enqueue(port, pkt);
        self.src_next_tx(s);
    }

    fn src_off(&mut self, s: u32) {
        self.srcs[s as usize].toggle_ev = None;
        self.src_cancel(s);
        self.src_schedule_on(s);
    }

    /// ns-3 CancelEvents: remember the bits accrued since the last packet, cancel send and toggle timers.
    fn src_cancel(&mut self, s: u32) {
        let now = self.now;
        let src = &mut self.srcs[s as usize];
        if let Some(id) = src.send_ev.take() {
            let dt = (now - src.last_start).0 as u128;
            let bits = (dt * src.rate.0 as u128 / Time::PS_PER_S as u128) as u64;
            src.residual_bits = (src.residual_bits + bits).min(src.payload as u64 * 8);
            self.q.cancel(id);
        }
        if let Some(id) = src.toggle_ev.take() {
            self.q.cancel(id);
        }
    }

    // ---- measurement ---------------------------------------------------------------------------------

    fn sample(&mut self) {
        if self.samples.t_ps.len() + self.sample_ports.len() > MAX_SAMPLE_ROWS {
            self.failure = Some(Error::spec(
                "measure.queue_sample_ps",
                format!(
                    "queue sampling would exceed {MAX_SAMPLE_ROWS} rows at t = {} s: raise the interval, sample fewer queues or set a stop time",
                    self.now.as_secs_f64()
                ),
            ));
            return;
        }
        let now = self.now.0;
        for &p in &self.sample_ports {
            let port = &self.ports[p as usize];
            let (vl, vb) = port.voq.as_ref().map_or((0, 0), |v| (v.len, v.bytes));
            self.samples.t_ps.push(now);
            self.samples.port.push(p);
            self.samples.packets.push(port.egress.len() + vl);
            self.samples.bytes.push(port.egress.bytes() + vb);
        }
        if self.q.has_live() {
            let dt = self.sample_every.expect("sampling is configured");
            self.q.schedule(self.now + dt, Ev::Sample);
        }
    }

    fn finish(self, wall_s: f64, halted: Option<Halt>) -> Result<RunRecord> {
        let t = self.totals;
        let in_flight = self.live;
        if t.tx != t.rx + t.dropped + in_flight {
            return Err(Error::Conservation(format!(
                "sent {} != received {} + dropped {} + in flight {}",
                t.tx, t.rx, t.dropped, in_flight
            )));
        }
        let (ftx, frx, flost) = self.stats.iter().fold((0, 0, 0), |a, s| (a.0 + s.tx_packets, a.1 + s.rx_packets, a.2 + s.lost));
        if ftx != t.tx || frx != t.rx || flost != t.dropped {
            return Err(Error::Conservation(format!(
                "per-flow sums (tx {ftx}, rx {frx}, lost {flost}) differ from totals (tx {}, rx {}, dropped {})",
                t.tx, t.rx, t.dropped
            )));
        }
        let mut flows = FlowColumns::with_capacity(self.flows.len());
        let n_src = self.srcs.len();
        for (i, st) in self.stats.iter().enumerate() {
            flows.name.push(self.flow_name[i]);
            flows.kind.push(self.flow_kind[i]);
            flows.src.push(self.flows[i].src);
            flows.dst.push(self.flows[i].dst);
            flows.tx_packets.push(st.tx_packets);
            flows.rx_packets.push(st.rx_packets);
            flows.lost_packets.push(st.lost);
            flows.tx_bytes.push(st.tx_bytes);
            flows.rx_bytes.push(st.rx_bytes);
            flows.rx_payload_bytes.push(st.rx_payload);
            flows.first_tx_ps.push(st.first_tx);
            flows.last_tx_ps.push(st.last_tx);
            flows.first_rx_ps.push(st.first_rx);
            flows.last_rx_ps.push(st.last_rx);
            flows.delay_sum_ps.push(st.delay_sum);
            flows.max_delay_ps.push(st.max_delay);
            let msg = i.checked_sub(n_src).and_then(|m| self.msgs.get(m));
            let conn = i.checked_sub(n_src + self.msgs.len()).and_then(|c| self.tcps.get(c));
            let (complete, start) = match (msg, conn) {
                (Some(m), _) => (m.complete, m.started),
                (None, Some(c)) => (c.complete, c.started),
                _ => (None, None),
            };
            flows.complete_ps.push(complete.map(|t| t.0));
            flows.start_ps.push(start.map(|t| t.0));
        }
        let mut queues = QueueColumns::default();
        for (p, ps) in self.ports.iter().enumerate() {
            let tp = &self.topo.ports[p];
            queues.name.push(self.topo.port_name(p as u32));
            queues.node.push(tp.node);
            queues.port.push(tp.local);
            queues.tx_packets.push(ps.tx_packets);
            queues.tx_bytes.push(ps.tx_bytes);
            queues.drops.push(ps.drops);
            queues.peak_packets.push(ps.peak_packets);
            queues.peak_bytes.push(ps.peak_bytes);
        }
        let work = WorkTimes {
            msgs: self.msgs.iter().zip(&self.flows[n_src..]).map(|(m, f)| ((f.src, f.dst), m.started, m.complete)).collect(),
            comp_host: &self.comp_host,
            comp_start: &self.dag.comp_start,
            comp_end: &self.dag.comp_end,
        };
        let (completion_ps, compute, hosts) = work.summarize(self.topo.n_nodes(), self.now);
        Ok(RunRecord {
            fidelity: "packet".into(),
            seed: self.seed,
            end_ps: self.now.0,
            completion_ps,
            events: self.events,
            packets: PacketTotals { in_flight, ..t },
            hops: self.hops,
            flows,
            queues,
            samples: self.samples,
            compute,
            hosts,
            node_names: self.topo.names,
            flow_names: self.flow_names,
            wall_s,
            halted,
            reached_stop: false,
            rx_bins: self.rx_bins,
            bin_ps: self.bin.map(|b| b.0),
        })
    }
}
