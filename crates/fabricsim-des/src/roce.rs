//! RoCE set-up: the shared-buffer switches' MMUs, ECN thresholds per switch port, and the RDMA queue pairs
//! with their base RTT and window, from the scenario's `[pfc]`, `[ecn]` and `[rdma]`.

use crate::events::Ev;
use crate::net::pfc::Mmu;
use crate::net::RocePort;
use crate::queues::Egress;
use crate::sim::Sim;
use crate::transport::rdma::{Qp, RdmaCfg};
use fabricsim_core::spec::{EgressSpec, RdmaCc, RunSpec, SwitchModel};
use fabricsim_core::topology::NONE;
use fabricsim_core::workload::Workload;
use fabricsim_core::Time;

impl Sim {
    /// Build the RoCE state when the scenario has PFC, ECN or RDMA; otherwise leave `roce` off. O(ports + messages
    /// × path length).
    pub(crate) fn setup_roce(&mut self, spec: &RunSpec, wl: &Workload, n_tcp: u32) {
        let shared = spec.network.nodes.iter().any(|n| n.model == SwitchModel::SharedBuffer);
        if spec.pfc.is_none() && spec.ecn.is_none() && spec.rdma.is_none() && spec.uec.is_none() && !shared {
            return;
        }
        self.net.roce = true;
        let n_ports = self.net.ports.len();
        self.net.roce_ports = (0..n_ports).map(|_| RocePort::default()).collect();
        if let Some(ecn) = &spec.ecn {
            for p in 0..n_ports {
                let tp = &self.net.topo.ports[p];
                if self.net.topo.is_switch(tp.node) {
                    let t = ecn.for_rate(tp.rate.0);
                    self.net.roce_ports[p].ecn = Some((t.kmin_bytes, t.kmax_bytes, t.pmax));
                }
            }
        }
        let nic_rate = self.net.topo.ports.iter().filter(|p| !self.net.topo.is_switch(p.node)).map(|p| p.rate.0).max().unwrap_or(0);
        self.pfc.mmu_of = vec![NONE; self.net.topo.n_nodes()];
        if let Some(pfc) = &spec.pfc {
            self.pfc.on = pfc.enabled;
            self.pfc.frame = pfc.frame_bytes;
            self.pfc.watchdog_every = Time(pfc.watchdog_ps);
            let unlimited = EgressSpec { limit_packets: None, limit_bytes: None, qdisc: None };
            for (v, node) in spec.network.nodes.iter().enumerate() {
                if node.model == SwitchModel::SharedBuffer && self.net.topo.is_switch(v as u32) {
                    self.pfc.mmu_of[v] = self.pfc.mmus.len() as u32;
                    self.pfc.mmus.push(Mmu::new(pfc, &self.net.topo, v as u32, nic_rate));
                    // The MMU is the only admission: the egress queues of a shared-buffer switch are unlimited.
                    for p in self.net.topo.ports_of(v as u32) {
                        self.net.ports[p as usize].egress = Egress::from_spec(&unlimited, 0);
                    }
                }
            }
            if self.pfc.on {
                self.q.schedule(self.pfc.watchdog_every, Ev::Watchdog);
                self.pfc.watchdog_pending = true;
            }
        }
        if let Some(r) = &spec.rdma {
            let n_msg = wl.n_msgs();
            let ack_base = (spec.sources.len() + n_msg) as u32 + 2 * n_tcp;
            // Base RTT: the largest over the QPs of 2 × propagation + payload serialisation per hop, one way
            // (HPCC's GLOBAL_T); the window is that RTT at the path's slowest link (its BDP).
            let (mut rtt, mut bdp) = (0u64, 0u64);
            let mut seen = std::collections::HashSet::new();
            for i in 0..n_msg {
                let f = &self.flows[spec.sources.len() + i];
                if !seen.insert((f.src_port, f.dst_ep, wl.packet[i])) {
                    continue;
                }
                let (delay, tx, bw) = self.path_figures(spec.sources.len() + i, wl.packet[i]);
                let t = 2 * delay + tx;
                rtt = rtt.max(t);
                bdp = bdp.max((t as u128 * bw as u128 / 8 / 1_000_000_000_000) as u64);
            }
            let base_rtt = Time(r.base_rtt_ps.unwrap_or(rtt).max(1));
            if let Some(t) = r.base_rtt_ps {
                bdp = (t as u128 * nic_rate as u128 / 8 / 1_000_000_000_000) as u64;
            }
            let win = if r.window { bdp.max(1) } else { 0 };
            self.rdma.qps = (0..n_msg)
                .map(|i| {
                    let flow = (spec.sources.len() + i) as u32;
                    let line = self.net.ports[self.flows[flow as usize].src_port as usize].rate.0 as f64;
                    Qp::new(flow, ack_base + i as u32, wl.size[i], wl.packet[i], wl.header[i], line, win)
                })
                .collect();
            self.rdma.hpcc_on = r.cc == RdmaCc::Hpcc;
            self.rdma.cfg = Some(RdmaCfg { spec: r.clone(), base_rtt, bdp: bdp.max(1) });
        }
        if spec.uec.is_some() {
            let ack_base = (spec.sources.len() + wl.n_msgs()) as u32 + 2 * n_tcp;
            self.setup_uec(spec, wl.n_msgs(), ack_base);
        }
    }

    /// One-way propagation delay, payload serialisation summed over the hops, and the slowest rate on flow f's
    /// route (its explicit path, or the tables' walk with its salt).
    pub(crate) fn path_figures(&self, f: usize, payload: u32) -> (u64, u64, u64) {
        let (delay, tx, bw, _) = self.path_walk(f, payload);
        (delay, tx, bw)
    }

    /// `path_figures` plus the nodes' traversal latencies along the path (ps), which HPCC's base RTT leaves out
    /// and a round trip through the simulated switches includes.
    pub(crate) fn path_walk(&self, f: usize, payload: u32) -> (u64, u64, u64, u64) {
        let fl = &self.flows[f];
        let mut port = fl.src_port;
        let (mut delay, mut tx, mut bw, mut latency) = (0u64, 0u64, u64::MAX, 0u64);
        let mut hop = 0u32;
        for _ in 0..=self.net.topo.n_nodes() {
            let tp = &self.net.topo.ports[port as usize];
            delay += tp.delay.0;
            tx += tp.rate.tx_time(payload as u64).0;
            bw = bw.min(tp.rate.0);
            let v = tp.peer_node;
            latency += self.net.topo.latency[v as usize].0;
            if !self.net.topo.is_switch(v) {
                break;
            }
            hop += 1;
            let next = if fl.path != NONE {
                self.net.paths.hop_ports(fl.path, hop)[0]
            } else {
                let c = self.net.fib.next_hops(v, fl.dst_ep);
                c[fabricsim_core::routing::ecmp_index(fl.salt, v, c.len())]
            };
            port = next;
        }
        (delay, tx, bw, latency)
    }
}
