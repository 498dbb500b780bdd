//! Spec + workload columns → the one compiled scenario both engines run: topology, forwarding tables, paths, flows, DAG input.
//!
//! `compile` is the only validator of a scenario: the header (`RunSpec::validate`), then the workload columns
//! (rows from the JSON form, columns from Python, and the collectives expanded here), then what needs the
//! built network: reachability of every flow and the explicit paths. Flows are numbered sources, messages,
//! TCP data flows, TCP ACK flows, RDMA or UEC ACK flows (one per message when `spec.rdma` or `spec.uec` is set); each carries its NIC port, destination endpoint, path and ECMP salt.

use crate::error::{Error, Result};
use crate::policy::PathPolicy;
use crate::record::FlowKind;
use crate::routing::{flow_salt, message_salt, Fib, PathTable};
use crate::spec::{EcmpMode, NodeKind, PolicySpec, RunSpec, SourceKind, SwitchModel};
use crate::topology::{Topology, NONE};
use crate::workload::collectives::{expand, Base};
use crate::workload::Workload;
use std::collections::HashMap;

/// Explicit paths already added to the path table, keyed by (workload path id, source NIC port, destination NIC
/// port): messages sharing a path and endpoints share one entry.
type PathCache = HashMap<(u32, u32, u32), u32>;

/// The route of one flow: where it enters the network, where it goes and how it is hashed.
#[derive(Clone, Copy, Debug)]
pub struct FlowRoute {
    /// The sender's NIC port, and the destination endpoint (a host NIC).
    pub src_port: u32,
    pub dst_ep: u32,
    /// Explicit path id in `Compiled::paths`, or NONE (forwarding tables).
    pub path: u32,
    /// ECMP salt: per message (`message_salt`) under per-message ECMP, else per flow (`flow_salt`).
    pub salt: u64,
    /// Source and destination nodes.
    pub src: u32,
    pub dst: u32,
}

/// A validated scenario ready to simulate. Invariant: every flow is reachable or has a valid explicit path,
/// and `wl` has passed `Workload::validate` against `spec.network`.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The header: network, routing, sources, TCP, measurement (its message and barrier rows moved to `wl`).
    pub spec: RunSpec,
    pub wl: Workload,
    pub topo: Topology,
    pub fib: Fib,
    pub paths: PathTable,
    pub flows: Vec<FlowRoute>,
    pub n_src: u32,
    pub n_msg: u32,
    pub n_tcp: u32,
    /// Names of flows that have one (sources, TCP connections and their ACK flows, named messages); the
    /// record's `name` column indexes this list.
    pub flow_names: Vec<String>,
    pub flow_name: Vec<u32>,
    /// The throughput bins and queue-sample rows the engines may allocate within the memory budget.
    pub limits: crate::budget::Limits,
}

impl Compiled {
    /// What kind of flow flow f is (sources, messages, TCP data, TCP ACK, in that order).
    pub fn flow_kind(&self, f: u32) -> FlowKind {
        let (s, m, t) = (self.n_src, self.n_src + self.n_msg, self.n_src + self.n_msg + self.n_tcp);
        if f < s {
            match self.spec.sources[f as usize].kind {
                SourceKind::Cbr => FlowKind::Cbr,
                SourceKind::Onoff => FlowKind::Onoff,
            }
        } else if f < m {
            FlowKind::Message
        } else if f < t {
            FlowKind::Tcp
        } else if f < t + self.n_tcp {
            FlowKind::TcpAck
        } else if self.spec.uec.is_some() {
            FlowKind::UecAck
        } else {
            FlowKind::RdmaAck
        }
    }
}

/// Validate and compile. `columns` are appended after the spec's own message and barrier rows, then every
/// `spec.collectives` entry is expanded and appended in order. O(nodes + links + workload + the forwarding
/// tables' build: classes × (nodes + ports) plus each group's local region, see `Fib`).
pub fn compile(mut spec: RunSpec, columns: Workload) -> Result<Compiled> {
    spec.validate()?;
    // The memory budget, estimated from the spec before anything of the run's size is built.
    let limits = crate::budget::run(&spec, &columns)?;
    let mut wl = Workload::from_rows(&spec.messages, &spec.barriers);
    spec.messages = Vec::new();
    spec.barriers = Vec::new();
    wl.append(columns);
    for (i, c) in spec.collectives.iter().enumerate() {
        let base = Base { msgs: wl.n_msgs() as u32, barriers: wl.n_barriers, compute: wl.n_compute() as u32 };
        wl.append_absolute(expand(c, i, base)?);
    }
    wl.validate(&spec)?;
    let largest = largest_packet(&spec, &wl);
    for (i, node) in spec.network.nodes.iter().enumerate() {
        if node.model == SwitchModel::InputBuffered && node.kind == NodeKind::Switch && node.input_buffer_bytes < largest {
            return Err(Error::spec(
                spec.network.node_field(i, ".input_buffer"),
                format!("{} B cannot hold the largest packet of the scenario ({largest} B)", node.input_buffer_bytes),
            ));
        }
    }
    let topo = Topology::build(&spec.network)?;
    let fib = match &spec.routing.policy {
        PolicySpec::DimensionOrder { dims, routers, shapes, switches } => Fib::build_dimension_order_with(&topo, dims, routers, shapes, switches)?,
        _ => Fib::build(&topo),
    };
    let policy = PathPolicy::new(&spec.routing.policy, &topo);
    let mut paths = PathTable::default();
    let n_src = spec.sources.len() as u32;
    let n_msg = wl.n_msgs() as u32;
    let n_tcp = spec.tcp.len() as u32;
    let mut flows = Vec::with_capacity((n_src + n_msg + 2 * n_tcp) as usize);
    let per_message = matches!(spec.routing.ecmp, EcmpMode::PerMessage | EcmpMode::Flowlet);
    let seed = spec.seed;
    let salt_of = |f: u32| if per_message { message_salt(seed, f) } else { flow_salt(seed, f) };
    let mut route = |f: u32,
                     field: &dyn Fn() -> String,
                     src: u32,
                     src_nic: u32,
                     dst: u32,
                     dst_nic: u32,
                     path: Option<&[u32]>,
                     cache: Option<(&mut PathCache, u32)>|
     -> Result<FlowRoute> {
        let src_port = topo.nic_port(src, src_nic);
        let dst_port = topo.nic_port(dst, dst_nic);
        let dst_ep = topo.port_ep[dst_port as usize];
        let salt = salt_of(f);
        let path_id = match path {
            Some(nodes) => match cache {
                Some((map, key)) => match map.get(&(key, src_port, dst_port)) {
                    Some(&id) => id,
                    None => {
                        let id = paths.add(&topo, &format!("{}.path", field()), nodes, src_port, dst_port)?;
                        map.insert((key, src_port, dst_port), id);
                        id
                    }
                },
                None => paths.add(&topo, &format!("{}.path", field()), nodes, src_port, dst_port)?,
            },
            None => {
                if !fib.reachable(&topo, src_port, dst_ep) {
                    return Err(Error::spec(
                        format!("{}.dst", field()),
                        format!(
                            "'{}' (NIC {dst_nic}) is unreachable from '{}' (NIC {src_nic}): the network is disconnected",
                            topo.names[dst as usize], topo.names[src as usize]
                        ),
                    ));
                }
                match policy.path(&fib, &topo, src_port, dst_ep, salt, field)? {
                    Some(nodes) => paths.add(&topo, &format!("{}.path", field()), &nodes, src_port, dst_port)?,
                    None => NONE,
                }
            }
        };
        Ok(FlowRoute { src_port, dst_ep, path: path_id, salt, src, dst })
    };
    let mut flow_names: Vec<String> = Vec::new();
    let mut flow_name: Vec<u32> = Vec::with_capacity(flows.capacity());
    let name = |names: &mut Vec<String>, s: String| -> u32 {
        names.push(s);
        names.len() as u32 - 1
    };
    for (i, s) in spec.sources.iter().enumerate() {
        flows.push(route(i as u32, &|| format!("sources[{i}]"), s.src, s.src_nic, s.dst, s.dst_nic, s.path.as_deref(), None)?);
        flow_name.push(name(&mut flow_names, s.name.clone()));
    }
    let mut path_cache: PathCache = HashMap::new();
    let msg_name_base = flow_names.len() as u32;
    flow_names.extend(wl.names.iter().cloned());
    for i in 0..n_msg as usize {
        let p = wl.path[i];
        let nodes = (p != NONE).then(|| &wl.path_nodes[wl.path_start[p as usize] as usize..wl.path_start[p as usize + 1] as usize]);
        flows.push(route(
            n_src + i as u32,
            &|| format!("messages[{i}]"),
            wl.src[i],
            wl.src_nic[i],
            wl.dst[i],
            wl.dst_nic[i],
            nodes,
            Some((&mut path_cache, p)),
        )?);
        flow_name.push(match wl.msg_name.get(i) {
            Some(&k) if k != NONE => msg_name_base + k,
            _ => NONE,
        });
    }
    for (i, t) in spec.tcp.iter().enumerate() {
        flows.push(route(n_src + n_msg + i as u32, &|| format!("tcp[{i}]"), t.src, t.src_nic, t.dst, t.dst_nic, t.path.as_deref(), None)?);
        flow_name.push(name(&mut flow_names, t.name.clone()));
    }
    for (i, t) in spec.tcp.iter().enumerate() {
        let rev = t.path.as_ref().map(|p| p.iter().rev().copied().collect::<Vec<u32>>());
        flows.push(route(n_src + n_msg + n_tcp + i as u32, &|| format!("tcp[{i}]"), t.dst, t.dst_nic, t.src, t.src_nic, rev.as_deref(), None)?);
        flow_name.push(name(&mut flow_names, format!("{}/ack", t.name)));
    }
    if spec.rdma.is_some() || spec.uec.is_some() {
        // One ACK flow per message (its QP's or connection's reverse direction), named after a named message.
        for i in 0..n_msg as usize {
            let p = wl.path[i];
            let rev: Option<Vec<u32>> = (p != NONE)
                .then(|| wl.path_nodes[wl.path_start[p as usize] as usize..wl.path_start[p as usize + 1] as usize].iter().rev().copied().collect());
            let f = n_src + n_msg + 2 * n_tcp + i as u32;
            flows.push(route(f, &|| format!("messages[{i}]"), wl.dst[i], wl.dst_nic[i], wl.src[i], wl.src_nic[i], rev.as_deref(), None)?);
            flow_name.push(match wl.msg_name.get(i) {
                Some(&k) if k != NONE => name(&mut flow_names, format!("{}/ack", wl.names[k as usize])),
                _ => NONE,
            });
        }
    }
    Ok(Compiled { spec, wl, topo, fib, paths, flows, n_src, n_msg, n_tcp, flow_names, flow_name, limits })
}

/// The largest packet any flow sends (payload + header), in bytes.
pub fn largest_packet(spec: &RunSpec, wl: &Workload) -> u64 {
    let s = spec.sources.iter().map(|x| x.packet_bytes + x.header_bytes);
    let m = (0..wl.n_msgs()).map(|i| (wl.packet[i] as u64).min(wl.size[i]) + wl.header[i] as u64);
    let t = spec.tcp.iter().map(|x| x.mss_bytes + x.header_bytes + 40);
    s.chain(m).chain(t).max().unwrap_or(0)
}
