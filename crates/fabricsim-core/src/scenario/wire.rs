//! The wire RunSpec of a scenario as JSON, exactly as Python's `spec.scenario._to_wire` builds it (names resolved to indices, cross-references checked).
//!
//! Every problem Python reports here (a duplicate or unknown name, a port without a link, a packet over
//! 64 KiB, ...) is a `Decline`: Python says it. Dependency cycles are left to the engine, as in Python's
//! load-time check.

use super::topology::{Network, Policy};
use super::{Decline, Queue, Scenario};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

/// Largest packet (payload + header) and message, as Python's `MAX_PACKET_BYTES` / `MAX_MESSAGE_BYTES`.
pub const MAX_PACKET_BYTES: u64 = 65_536;
pub const MAX_MESSAGE_BYTES: u64 = 1 << 40;

fn no(why: impl Into<String>) -> Decline {
    Decline::new(why)
}

/// A queue's wire object (`QueueDef.wire()`).
pub fn queue_wire(q: &Queue) -> Value {
    json!({"limit_packets": q.limit_packets, "limit_bytes": q.limit_bytes, "qdisc": q.qdisc})
}

/// The built network's name index and each node's ports as (link, peer, end), in link order.
pub struct Resolved {
    pub index: HashMap<String, u32>,
    pub host: Vec<bool>,
    pub ports_of: Vec<Vec<(usize, u32, &'static str)>>,
}

impl Resolved {
    pub fn new(net: &Network) -> Result<Resolved, Decline> {
        let mut index = HashMap::with_capacity(net.nodes.len());
        for (i, n) in net.nodes.iter().enumerate() {
            if index.insert(n.name.clone(), i as u32).is_some() {
                return Err(no(format!("duplicate node name '{}'", n.name)));
            }
            if n.host && n.model != "output_queued" {
                return Err(no("only switches have a switch model"));
            }
        }
        let mut ports_of = vec![Vec::new(); net.nodes.len()];
        for (i, l) in net.links.iter().enumerate() {
            let a = *index.get(&l.a).ok_or_else(|| no(format!("unknown node '{}'", l.a)))?;
            let b = *index.get(&l.b).ok_or_else(|| no(format!("unknown node '{}'", l.b)))?;
            if a == b {
                return Err(no("a link cannot connect a node to itself"));
            }
            ports_of[a as usize].push((i, b, "a_end"));
            ports_of[b as usize].push((i, a, "b_end"));
        }
        Ok(Resolved { index, host: net.nodes.iter().map(|n| n.host).collect(), ports_of })
    }

    pub fn node(&self, name: &str) -> Result<u32, Decline> {
        self.index.get(name).copied().ok_or_else(|| no(format!("unknown node '{name}'")))
    }

    /// A traffic endpoint: a host with NIC `nic`.
    pub fn endpoint(&self, name: &str, nic: u64) -> Result<u32, Decline> {
        let v = self.node(name)?;
        if !self.host[v as usize] {
            return Err(no(format!("'{name}' is a switch; traffic starts and ends at hosts")));
        }
        if nic >= self.ports_of[v as usize].len() as u64 {
            return Err(no(format!("'{name}' has no NIC {nic}")));
        }
        Ok(v)
    }

    fn path(&self, names: &Option<Vec<String>>) -> Result<Value, Decline> {
        match names {
            None => Ok(Value::Null),
            Some(p) => Ok(json!(p.iter().map(|n| self.node(n)).collect::<Result<Vec<u32>, _>>()?)),
        }
    }

    /// "node->peer" or "node->peer#k" (k-th parallel link) as (node, local port index).
    fn port_ref(&self, r: &str) -> Result<(u32, usize), Decline> {
        if !r.is_ascii() {
            return Err(no("non-ASCII port name"));
        }
        let (node_name, rest) = r.split_once("->").ok_or_else(|| no(format!("'{r}' is not a port name")))?;
        let (peer_name, k) = match rest.split_once('#') {
            Some((p, k)) => (p, Some(k)),
            None => (rest, None),
        };
        let trim = |s: &str| s.trim_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']).to_string();
        let node = self.node(&trim(node_name))?;
        let peer = self.node(&trim(peer_name))?;
        let matches: Vec<usize> = self.ports_of[node as usize].iter().enumerate().filter(|(_, p)| p.1 == peer).map(|(i, _)| i).collect();
        let nth = match k {
            Some(k) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) && k.len() < 10 => k.parse::<usize>().map_err(|_| no("bad #k"))?,
            Some(_) => return Err(no("the parallel-link number after '#' must be an integer")),
            None => 0,
        };
        matches.get(nth).map(|&p| (node, p)).ok_or_else(|| no(format!("'{node_name}' has no link to '{peer_name}'")))
    }
}

fn policy_wire(p: &Option<Policy>, r: &Resolved) -> Result<Map<String, Value>, Decline> {
    let ids = |names: &[String]| names.iter().map(|n| r.node(n)).collect::<Result<Vec<u32>, _>>();
    let mut out = Map::new();
    let pol = match p {
        None => return Ok(out),
        Some(Policy::DimensionOrder { dims, routers }) => json!({"kind": "dimension_order", "dims": dims, "routers": ids(routers)?}),
        Some(Policy::Valiant { groups }) => json!({"kind": "valiant", "groups": groups.iter().map(|g| ids(g)).collect::<Result<Vec<_>, _>>()?}),
        Some(Policy::Pxn { servers }) => json!({"kind": "pxn", "servers": servers.iter().map(|s| Ok(json!({
            "nvswitch": r.node(&s.nvswitch)?, "gpus": ids(&s.gpus)?, "nics": ids(&s.nics)?}))).collect::<Result<Vec<_>, Decline>>()?}),
    };
    out.insert("policy".into(), pol);
    Ok(out)
}

fn packet(size: u64, header: u64) -> Result<(), Decline> {
    if size + header > MAX_PACKET_BYTES {
        return Err(no(format!("a packet of {} B exceeds the {MAX_PACKET_BYTES} B limit", size + header)));
    }
    Ok(())
}

/// The wire spec (`rows`: messages and barriers included, as `Scenario.to_wire()`; else the header alone,
/// as `Scenario.header()`). O(nodes + links + rows).
pub fn to_wire(sc: &Scenario, rows: bool) -> Result<Value, Decline> {
    let net = &sc.network;
    let r = Resolved::new(net)?;
    let mut links: Vec<Value> = net
        .links
        .iter()
        .map(|l| {
            let mut o = json!({"a": r.index[&l.a], "b": r.index[&l.b], "rate_bps": l.rate_bps, "delay_ps": l.delay_ps, "a_end": {}, "b_end": {}});
            if l.weight != 1 {
                o["weight"] = json!(l.weight);
            }
            o
        })
        .collect();
    for p in &sc.ports {
        let node = r.node(&p.node)?;
        let peer = r.node(&p.peer)?;
        let ends: Vec<(usize, &str)> = r.ports_of[node as usize].iter().filter(|x| x.1 == peer).map(|x| (x.0, x.2)).collect();
        if ends.is_empty() {
            return Err(no(format!("'{}' has no link to '{}'", p.node, p.peer)));
        }
        for (li, end) in ends {
            let e = &mut links[li][end];
            if let Some(q) = &p.queue {
                e["queue"] = queue_wire(q);
            }
            if let Some(c) = p.rate_cap {
                e["rate_cap_bps"] = json!(c);
            }
            if !p.drop_packets.is_empty() {
                e["drop_packets"] = json!(p.drop_packets);
            }
        }
    }
    let mut sources = Vec::new();
    let mut source_names: HashSet<String> = HashSet::new();
    for (i, s) in sc.sources.iter().enumerate() {
        let flow_name = s.name.clone().unwrap_or_else(|| format!("{}{i}", s.kind));
        if !source_names.insert(flow_name.clone()) {
            return Err(no(format!("duplicate source name '{flow_name}'")));
        }
        let src = r.endpoint(&s.src, s.src_nic)?;
        let dst = r.endpoint(&s.dst, s.dst_nic)?;
        if src == dst && s.src_nic == s.dst_nic {
            return Err(no("source and destination are the same NIC of one host"));
        }
        packet(s.packet_size, s.header)?;
        if s.kind == "onoff" && (s.on.is_none() || s.off.is_none()) {
            return Err(no("an onoff source needs both 'on' and 'off'"));
        }
        if s.kind == "cbr" && (s.on.is_some() || s.off.is_some()) {
            return Err(no("a cbr source has no on/off times"));
        }
        if matches!(s.stop, Some(stop) if stop < s.start) {
            return Err(no("stop is before start"));
        }
        sources.push(json!({
            "name": flow_name, "kind": s.kind, "src": src, "src_nic": s.src_nic, "dst": dst, "dst_nic": s.dst_nic,
            "rate_bps": s.rate, "packet_bytes": s.packet_size, "header_bytes": s.header,
            "on_ps": s.on.unwrap_or(0), "off_ps": s.off.unwrap_or(0), "start_ps": s.start, "stop_ps": s.stop,
            "max_bytes": s.max_bytes, "path": r.path(&s.path)?,
        }));
    }
    if !rows {
        for m in &sc.messages {
            if source_names.contains(&m.name) {
                return Err(no(format!("'{}' already names a source", m.name)));
            }
        }
    }
    let mut msg_index: HashMap<&str, usize> = HashMap::new();
    let mut barrier_index: HashMap<&str, usize> = HashMap::new();
    let mut messages = Vec::new();
    let mut barriers = Vec::new();
    if rows {
        for (i, m) in sc.messages.iter().enumerate() {
            if msg_index.insert(&m.name, i).is_some() || source_names.contains(&m.name) {
                return Err(no(format!("duplicate flow name '{}'", m.name)));
            }
        }
        for (i, b) in sc.barriers.iter().enumerate() {
            if msg_index.contains_key(b.name.as_str()) || source_names.contains(&b.name) || barrier_index.insert(&b.name, i).is_some() {
                return Err(no(format!("'{}' already names a flow or barrier", b.name)));
            }
        }
        for b in &sc.barriers {
            let (mut deps, mut bdeps) = (Vec::new(), Vec::new());
            for name in &b.after {
                if let Some(&k) = msg_index.get(name.as_str()) {
                    deps.push(k);
                } else if let Some(&k) = barrier_index.get(name.as_str()) {
                    bdeps.push(k);
                } else {
                    return Err(no(format!("unknown message or barrier '{name}'")));
                }
            }
            barriers.push(json!({"name": b.name, "deps": deps, "barriers": bdeps}));
        }
        for m in &sc.messages {
            let src = r.endpoint(&m.src, m.src_nic)?;
            let dst = r.endpoint(&m.dst, m.dst_nic)?;
            if src == dst && m.src_nic == m.dst_nic {
                return Err(no("source and destination are the same NIC of one host"));
            }
            if m.size > MAX_MESSAGE_BYTES {
                return Err(no("a message over 1 TiB"));
            }
            packet(m.packet_size, m.header)?;
            let (mut deps, mut sent_deps, mut mbarriers) = (Vec::new(), Vec::new(), Vec::new());
            for (after, names) in [(true, &m.after), (false, &m.after_sent)] {
                for name in names {
                    if after {
                        if let Some(&k) = barrier_index.get(name.as_str()) {
                            mbarriers.push(k);
                            continue;
                        }
                    }
                    let k = *msg_index.get(name.as_str()).ok_or_else(|| no(format!("unknown message '{name}'")))?;
                    if *name == m.name {
                        return Err(no("a message cannot wait for itself"));
                    }
                    if after {
                        deps.push(k)
                    } else {
                        sent_deps.push(k)
                    }
                }
            }
            messages.push(json!({
                "name": m.name, "src": src, "src_nic": m.src_nic, "dst": dst, "dst_nic": m.dst_nic,
                "size_bytes": m.size, "packet_bytes": m.packet_size, "header_bytes": m.header, "start_ps": m.start,
                "deps": deps, "sent_deps": sent_deps, "barriers": mbarriers, "delay_ps": m.delay, "path": r.path(&m.path)?,
            }));
        }
    }
    let mut tcp = Vec::new();
    for (i, t) in sc.tcp.iter().enumerate() {
        let flow_name = t.name.clone().unwrap_or_else(|| format!("tcp{i}"));
        if source_names.contains(&flow_name)
            || msg_index.contains_key(flow_name.as_str())
            || (!rows && sc.messages.iter().any(|m| m.name == flow_name))
        {
            return Err(no(format!("'{flow_name}' already names another flow")));
        }
        source_names.insert(flow_name.clone());
        let src = r.endpoint(&t.src, t.src_nic)?;
        let dst = r.endpoint(&t.dst, t.dst_nic)?;
        if src == dst && t.src_nic == t.dst_nic {
            return Err(no("source and destination are the same NIC of one host"));
        }
        packet(t.mss, t.header)?;
        if matches!(t.stop, Some(stop) if stop < t.start) || t.rcv_buf < t.mss || t.snd_buf < t.app_write {
            return Err(no("a TCP connection's times or buffers are impossible"));
        }
        tcp.push(json!({
            "name": flow_name, "src": src, "src_nic": t.src_nic, "dst": dst, "dst_nic": t.dst_nic,
            "cc": if t.cc == "newreno" { "new_reno" } else { t.cc },
            "start_ps": t.start, "stop_ps": t.stop, "max_bytes": t.max_bytes, "mss_bytes": t.mss,
            "header_bytes": t.header, "initial_cwnd": t.initial_cwnd, "min_rto_ps": t.min_rto,
            "initial_rto_ps": t.initial_rto, "clock_granularity_ps": t.clock_granularity,
            "delack_count": t.delack_count, "delack_timeout_ps": t.delack_timeout, "rcv_buf_bytes": t.rcv_buf,
            "snd_buf_bytes": t.snd_buf, "app_write_bytes": t.app_write,
            "dupack_threshold": t.dupack_threshold, "sack": t.sack, "path": r.path(&t.path)?,
        }));
    }
    let sample_ports = match &sc.measure.queues {
        None => Value::Null,
        Some(qs) => json!(qs.iter().map(|q| r.port_ref(q)).collect::<Result<Vec<_>, _>>()?),
    };
    let mut events = Vec::new();
    for e in &sc.events {
        let links: Vec<usize> = if e.kind == "switch_down" {
            let node = e.node.as_ref().ok_or_else(|| no("a switch_down names its switch"))?;
            let v = r.node(node)?;
            let mut l: Vec<usize> = r.ports_of[v as usize].iter().map(|p| p.0).collect();
            l.sort_unstable();
            if l.is_empty() {
                return Err(no("a switch without links"));
            }
            l
        } else {
            let pair = e.link.as_ref().filter(|l| l.len() == 2).ok_or_else(|| no("an event names its link by its two nodes"))?;
            let (a, b) = (r.node(&pair[0])?, r.node(&pair[1])?);
            let l: Vec<usize> = r.ports_of[a as usize].iter().filter(|p| p.1 == b).map(|p| p.0).collect();
            if l.is_empty() {
                return Err(no("there is no such link"));
            }
            l
        };
        if e.kind == "ber" && !(0.0..1.0).contains(&e.ber) {
            return Err(no("not a bit error rate in [0, 1)"));
        }
        let kind = if e.kind == "switch_down" { "link_down" } else { e.kind };
        events.push(json!({"at_ps": e.at, "kind": kind, "links": links, "ber": e.ber}));
    }
    let nodes: Vec<Value> = net
        .nodes
        .iter()
        .map(|n| {
            let mut o = json!({"name": n.name, "kind": if n.host { "host" } else { "switch" }, "latency_ps": n.latency_ps,
                "model": n.model, "input_buffer_bytes": n.input_buffer});
            if n.arbiter != "round_robin" {
                o["arbiter"] = json!(n.arbiter);
            }
            o
        })
        .collect();
    let mut routing = Map::new();
    routing.insert("ecmp".into(), json!(sc.routing.ecmp));
    routing.extend(policy_wire(&net.policy, &r)?);
    if let Some(g) = sc.routing.flowlet_gap {
        routing.insert("flowlet_gap_ps".into(), json!(g));
    }
    let mut measure = json!({"queue_sample_ps": sc.measure.queue_interval, "sample_ports": sample_ports});
    if let Some(b) = sc.measure.throughput_interval {
        measure["throughput_bin_ps"] = json!(b);
    }
    let mut out = json!({
        "seed": sc.seed, "stop_ps": sc.stop,
        "network": {"nodes": nodes, "links": links, "default_queue": queue_wire(&sc.queue), "topology": sc.topology_kind},
        "sources": sources, "tcp": tcp, "measure": measure,
    });
    if !events.is_empty() {
        out["events"] = json!(events);
        routing.insert("detection_delay_ps".into(), json!(sc.routing.detection_delay));
    }
    out["routing"] = Value::Object(routing);
    for (key, v) in [("pfc", &sc.pfc), ("ecn", &sc.ecn), ("rdma", &sc.rdma), ("hybrid", &sc.hybrid)] {
        if let Some(v) = v {
            out[key] = v.clone();
        }
    }
    if rows {
        out["messages"] = json!(messages);
        out["barriers"] = json!(barriers);
    }
    Ok(out)
}
