//! The compiled topology: nodes, and ports as the two directed ends of every full-duplex link (dense ids).

use crate::error::{Error, Result};
use crate::spec::{EgressSpec, NetworkSpec, NodeKind, SwitchModel};
use crate::units::{Bps, Time};

pub const NONE: u32 = u32::MAX;

/// One direction of a link, owned by the node that transmits on it.
#[derive(Clone, Debug)]
pub struct Port {
    pub node: u32,
    /// Index of this port among its node's ports (a host's NIC number).
    pub local: u32,
    pub peer_node: u32,
    /// Global id of the peer's port on the same link (the reverse direction).
    pub peer_port: u32,
    pub link: u32,
    pub rate: Bps,
    pub delay: Time,
    /// Routing cost of the link (least-cost ECMP).
    pub weight: u32,
    pub rate_cap: Option<Bps>,
    pub queue: EgressSpec,
    /// Arrival indices to drop (sorted, deduplicated).
    pub drop_packets: Vec<u64>,
}

/// Nodes and ports in CSR form. Invariant: the ports of node `v` are `port_start[v]..port_start[v+1]`,
/// in the order of the node's links in the spec; `ports[p].peer_port` points back (`ports[q].peer_port == p`).
#[derive(Clone, Debug)]
pub struct Topology {
    pub names: Vec<String>,
    pub kinds: Vec<NodeKind>,
    pub latency: Vec<Time>,
    /// Switch model of each node (hosts: OutputQueued, unused).
    pub models: Vec<SwitchModel>,
    /// Input buffer per input port of each input-buffered switch, in bytes.
    pub input_buffer: Vec<u64>,
    pub port_start: Vec<u32>,
    pub ports: Vec<Port>,
    /// Endpoint index of each port (host ports only), or `NONE`.
    pub port_ep: Vec<u32>,
    /// Global port id of each endpoint (host NIC).
    pub endpoints: Vec<u32>,
}

impl Topology {
    /// Build from the wire spec. O(nodes + links).
    pub fn build(net: &NetworkSpec) -> Result<Topology> {
        let n = net.nodes.len();
        let mut deg = vec![0u32; n];
        for (i, l) in net.links.iter().enumerate() {
            if l.a as usize >= n || l.b as usize >= n {
                return Err(Error::spec(format!("network.links[{i}]"), "node index out of range"));
            }
            deg[l.a as usize] += 1;
            deg[l.b as usize] += 1;
        }
        let mut port_start = vec![0u32; n + 1];
        for v in 0..n {
            port_start[v + 1] = port_start[v] + deg[v];
        }
        let total = port_start[n] as usize;
        let mut fill = port_start.clone();
        let mut slots: Vec<Option<Port>> = vec![None; total];
        for (li, l) in net.links.iter().enumerate() {
            let pa = fill[l.a as usize];
            fill[l.a as usize] += 1;
            let pb = fill[l.b as usize];
            fill[l.b as usize] += 1;
            let mk = |node: u32, p: u32, peer: u32, peer_port: u32, end: &crate::spec::PortSpec| Port {
                node,
                local: p - port_start[node as usize],
                peer_node: peer,
                peer_port,
                link: li as u32,
                rate: Bps(l.rate_bps),
                delay: Time(l.delay_ps),
                weight: l.weight,
                rate_cap: end.rate_cap_bps.map(Bps),
                queue: end.queue.clone().unwrap_or_else(|| net.default_queue.clone()),
                drop_packets: {
                    let mut v = end.drop_packets.clone();
                    v.sort_unstable();
                    v.dedup();
                    v
                },
            };
            slots[pa as usize] = Some(mk(l.a, pa, l.b, pb, &l.a_end));
            slots[pb as usize] = Some(mk(l.b, pb, l.a, pa, &l.b_end));
        }
        let ports: Vec<Port> = slots.into_iter().map(|p| p.expect("every port slot is filled")).collect();
        let kinds: Vec<NodeKind> = net.nodes.iter().map(|x| x.kind).collect();
        let mut port_ep = vec![NONE; total];
        let mut endpoints = Vec::new();
        for (p, port) in ports.iter().enumerate() {
            if kinds[port.node as usize] == NodeKind::Host {
                port_ep[p] = endpoints.len() as u32;
                endpoints.push(p as u32);
            }
        }
        Ok(Topology {
            names: net.nodes.iter().map(|x| x.name.clone()).collect(),
            kinds,
            latency: net.nodes.iter().map(|x| Time(x.latency_ps)).collect(),
            models: net.nodes.iter().map(|x| x.model).collect(),
            input_buffer: net.nodes.iter().map(|x| x.input_buffer_bytes).collect(),
            port_start,
            ports,
            port_ep,
            endpoints,
        })
    }

    #[inline]
    pub fn n_nodes(&self) -> usize {
        self.kinds.len()
    }

    #[inline]
    pub fn ports_of(&self, v: u32) -> std::ops::Range<u32> {
        self.port_start[v as usize]..self.port_start[v as usize + 1]
    }

    /// Global id of NIC `nic` of host `v`.
    #[inline]
    pub fn nic_port(&self, v: u32, nic: u32) -> u32 {
        self.port_start[v as usize] + nic
    }

    #[inline]
    pub fn is_lossless(&self, v: u32) -> bool {
        self.models[v as usize] == SwitchModel::InputBuffered && self.is_switch(v)
    }

    #[inline]
    pub fn is_switch(&self, v: u32) -> bool {
        self.kinds[v as usize] == NodeKind::Switch
    }

    /// Human name of a port, `node->peer` (with `#k` for the k-th parallel link).
    pub fn port_name(&self, p: u32) -> String {
        let port = &self.ports[p as usize];
        let mut k = 0;
        for q in self.ports_of(port.node) {
            if q == p {
                break;
            }
            if self.ports[q as usize].peer_node == port.peer_node {
                k += 1;
            }
        }
        let base = format!("{}->{}", self.names[port.node as usize], self.names[port.peer_node as usize]);
        if k > 0 {
            format!("{base}#{k}")
        } else {
            base
        }
    }
}
