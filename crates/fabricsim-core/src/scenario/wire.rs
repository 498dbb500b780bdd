//! The wire RunSpec of a scenario as JSON (names resolved to indices, cross-references checked): the one translation, for the native front door and for Python's `Scenario.header()` / `to_wire()`.
//!
//! Every problem found here (a duplicate or unknown name, a port without a link, a packet over 64 KiB, ...) is
//! an invalid-input `Decline` naming the user's field (`messages[0].dst: unknown node 'ghost'`). Dependency
//! cycles are the engine's check (`validate`).

use super::topology::{Network, Policy};
use super::{Decline, Queue, Scenario};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

/// Largest packet (payload + header) and message.
pub const MAX_PACKET_BYTES: u64 = 65_536;
pub const MAX_MESSAGE_BYTES: u64 = 1 << 40;

/// An invalid input at `field`.
fn no(field: &str, why: impl std::fmt::Display) -> Decline {
    Decline::invalid(field, why)
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
    /// The network of a topology of kind `kind` (errors name `topology`, or `topology (kind)` for a built
    /// family).
    pub fn new(net: &Network, kind: &str) -> Result<Resolved, Decline> {
        let topo = if kind == "custom" { "topology".to_string() } else { format!("topology ({kind})") };
        let mut index = HashMap::with_capacity(net.nodes.len());
        for (i, n) in net.nodes.iter().enumerate() {
            if index.contains_key(&n.name) {
                return Err(no(&format!("{topo}.nodes[{i}].name"), format!("duplicate node name '{}'", n.name)));
            }
            if n.host && n.model != "output_queued" {
                return Err(no(&format!("{topo}.nodes[{i}].model"), "only switches have a switch model"));
            }
            index.insert(n.name.clone(), i as u32);
        }
        let mut ports_of = vec![Vec::new(); net.nodes.len()];
        for (i, l) in net.links.iter().enumerate() {
            let a = *index.get(&l.a).ok_or_else(|| no(&format!("{topo}.links[{i}].a"), format!("unknown node '{}'", l.a)))?;
            let b = *index.get(&l.b).ok_or_else(|| no(&format!("{topo}.links[{i}].b"), format!("unknown node '{}'", l.b)))?;
            if a == b {
                return Err(no(&format!("{topo}.links[{i}].b"), "a link cannot connect a node to itself"));
            }
            ports_of[a as usize].push((i, b, "a_end"));
            ports_of[b as usize].push((i, a, "b_end"));
        }
        Ok(Resolved { index, host: net.nodes.iter().map(|n| n.host).collect(), ports_of })
    }

    /// The node named `name`, an unknown one an error at `field`.
    pub fn node(&self, name: &str, field: &str) -> Result<u32, Decline> {
        self.index.get(name).copied().ok_or_else(|| no(field, format!("unknown node '{name}'")))
    }

    /// A traffic endpoint: a host (named at `field`) with NIC `nic` (named at `nic_field`).
    pub fn endpoint(&self, name: &str, field: &str, nic: u64, nic_field: &str) -> Result<u32, Decline> {
        let v = self.node(name, field)?;
        if !self.host[v as usize] {
            return Err(no(field, format!("'{name}' is a switch; traffic starts and ends at hosts")));
        }
        let nics = self.ports_of[v as usize].len();
        if nic >= nics as u64 {
            return Err(no(nic_field, format!("'{name}' has {nics} NIC(s); NIC {nic} does not exist")));
        }
        Ok(v)
    }

    /// A route's nodes (`field[k]` names a bad one).
    pub fn path(&self, names: &[String], field: &str) -> Result<Vec<u32>, Decline> {
        names.iter().enumerate().map(|(k, n)| self.node(n, &format!("{field}[{k}]"))).collect()
    }

    fn path_wire(&self, names: &Option<Vec<String>>, field: &str) -> Result<Value, Decline> {
        match names {
            None => Ok(Value::Null),
            Some(p) => Ok(json!(self.path(p, field)?)),
        }
    }

    /// "node->peer" or "node->peer#k" (k-th parallel link) as (node, local port index); errors at `field`.
    fn port_ref(&self, r: &str, field: &str) -> Result<(u32, usize), Decline> {
        let (node_name, rest) = r.split_once("->").ok_or_else(|| no(field, format!("'{r}' is not a port name of the form 'node->peer'")))?;
        let (peer_name, k) = match rest.split_once('#') {
            Some((p, k)) => (p, Some(k)),
            None => (rest, None),
        };
        let trim = |s: &str| s.trim_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']).to_string();
        let node = self.node(&trim(node_name), field)?;
        let peer = self.node(&trim(peer_name), field)?;
        let matches: Vec<usize> = self.ports_of[node as usize].iter().enumerate().filter(|(_, p)| p.1 == peer).map(|(i, _)| i).collect();
        let nth = match k {
            Some(k) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => k.parse::<usize>().unwrap_or(usize::MAX),
            Some(_) => return Err(no(field, format!("'{r}': the parallel-link number after '#' must be an integer"))),
            None => 0,
        };
        let numbered = match k {
            Some(k) if !k.is_empty() => format!(" numbered #{k}"),
            _ => String::new(),
        };
        matches.get(nth).map(|&p| (node, p)).ok_or_else(|| no(field, format!("'{node_name}' has no link to '{peer_name}'{numbered}")))
    }
}

fn policy_wire(p: &Option<Policy>, r: &Resolved, kind: &str) -> Result<Map<String, Value>, Decline> {
    let at = format!("topology ({kind}).policy");
    let ids = |names: &[String], f: &str| r.path(names, &format!("{at}.{f}"));
    let mut out = Map::new();
    let pol = match p {
        None => return Ok(out),
        Some(Policy::DimensionOrder { dims, routers, shapes, switches }) => {
            let mut p = json!({"kind": "dimension_order", "dims": dims, "routers": ids(routers, "routers")?});
            if !shapes.is_empty() {
                p["shapes"] = json!(shapes);
                p["switches"] = json!(switches.iter().enumerate().map(|(k, s)| ids(s, &format!("switches[{k}]"))).collect::<Result<Vec<_>, _>>()?);
            }
            p
        }
        Some(Policy::Valiant { groups }) => json!({"kind": "valiant",
            "groups": groups.iter().enumerate().map(|(k, g)| ids(g, &format!("groups[{k}]"))).collect::<Result<Vec<_>, _>>()?}),
        Some(Policy::Pxn { servers }) => json!({"kind": "pxn", "servers": servers.iter().enumerate().map(|(k, s)| Ok(json!({
            "nvswitch": r.node(&s.nvswitch, &format!("{at}.servers[{k}].nvswitch"))?,
            "gpus": ids(&s.gpus, &format!("servers[{k}].gpus"))?, "nics": ids(&s.nics, &format!("servers[{k}].nics"))?})))
            .collect::<Result<Vec<_>, Decline>>()?}),
    };
    out.insert("policy".into(), pol);
    Ok(out)
}

fn packet(field: &str, size: u64, header: u64) -> Result<(), Decline> {
    if size + header > MAX_PACKET_BYTES {
        return Err(no(field, format!("a packet of {} B exceeds the {MAX_PACKET_BYTES} B limit", size + header)));
    }
    Ok(())
}

/// The wire spec (`rows`: messages and barriers included, as `Scenario.to_wire()`; else the header alone,
/// as `Scenario.header()`). O(nodes + links + rows).
pub fn to_wire(sc: &Scenario, rows: bool) -> Result<Value, Decline> {
    let net = &sc.network;
    let r = Resolved::new(net, sc.topology_kind)?;
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
    for (i, p) in sc.ports.iter().enumerate() {
        let f = format!("ports[{i}]");
        let node = r.node(&p.node, &format!("{f}.node"))?;
        let peer = r.node(&p.peer, &format!("{f}.peer"))?;
        let ends: Vec<(usize, &str)> = r.ports_of[node as usize].iter().filter(|x| x.1 == peer).map(|x| (x.0, x.2)).collect();
        if ends.is_empty() {
            return Err(no(&format!("{f}.peer"), format!("'{}' has no link to '{}'", p.node, p.peer)));
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
        let f = format!("sources[{i}]");
        let flow_name = s.name.clone().unwrap_or_else(|| format!("{}{i}", s.kind));
        if !source_names.insert(flow_name.clone()) {
            return Err(no(&format!("{f}.name"), format!("duplicate source name '{flow_name}' (flows are reported by name)")));
        }
        let src = r.endpoint(&s.src, &format!("{f}.src"), s.src_nic, &format!("{f}.src_nic"))?;
        let dst = r.endpoint(&s.dst, &format!("{f}.dst"), s.dst_nic, &format!("{f}.dst_nic"))?;
        if src == dst && s.src_nic == s.dst_nic {
            return Err(no(&format!("{f}.dst_nic"), "source and destination are the same NIC of one host"));
        }
        packet(&format!("{f}.packet_size"), s.packet_size, s.header)?;
        if s.kind == "onoff" && (s.on.is_none() || s.off.is_none()) {
            return Err(no(&format!("{f}.{}", if s.on.is_none() { "on" } else { "off" }), "an onoff source needs both 'on' and 'off'"));
        }
        if s.kind == "cbr" && (s.on.is_some() || s.off.is_some()) {
            return Err(no(&format!("{f}.{}", if s.on.is_some() { "on" } else { "off" }), "a cbr source has no on/off times"));
        }
        if matches!(s.stop, Some(stop) if stop < s.start) {
            return Err(no(&format!("{f}.stop"), "stop is before start"));
        }
        sources.push(json!({
            "name": flow_name, "kind": s.kind, "src": src, "src_nic": s.src_nic, "dst": dst, "dst_nic": s.dst_nic,
            "rate_bps": s.rate, "packet_bytes": s.packet_size, "header_bytes": s.header,
            "on_ps": s.on.unwrap_or(0), "off_ps": s.off.unwrap_or(0), "start_ps": s.start, "stop_ps": s.stop,
            "max_bytes": s.max_bytes, "path": r.path_wire(&s.path, &format!("{f}.path"))?,
        }));
    }
    if !rows {
        for (i, m) in sc.messages.iter().enumerate() {
            if source_names.contains(&m.name) {
                return Err(no(&format!("messages[{i}].name"), format!("'{}' already names a source (flows are reported by name)", m.name)));
            }
        }
    }
    let mut msg_index: HashMap<&str, usize> = HashMap::new();
    let mut barrier_index: HashMap<&str, usize> = HashMap::new();
    let mut messages = Vec::new();
    let mut barriers = Vec::new();
    if rows {
        for (i, m) in sc.messages.iter().enumerate() {
            let f = format!("messages[{i}].name");
            if msg_index.contains_key(m.name.as_str()) {
                return Err(no(&f, format!("duplicate message name '{}'", m.name)));
            }
            if source_names.contains(&m.name) {
                return Err(no(&f, format!("'{}' already names a source (flows are reported by name)", m.name)));
            }
            msg_index.insert(&m.name, i);
        }
        for (i, b) in sc.barriers.iter().enumerate() {
            if msg_index.contains_key(b.name.as_str()) || source_names.contains(&b.name) || barrier_index.contains_key(b.name.as_str()) {
                return Err(no(&format!("barriers[{i}].name"), format!("'{}' already names a flow or barrier", b.name)));
            }
            barrier_index.insert(&b.name, i);
        }
        for (i, b) in sc.barriers.iter().enumerate() {
            let (mut deps, mut bdeps) = (Vec::new(), Vec::new());
            for (k, name) in b.after.iter().enumerate() {
                if let Some(&k) = msg_index.get(name.as_str()) {
                    deps.push(k);
                } else if let Some(&k) = barrier_index.get(name.as_str()) {
                    bdeps.push(k);
                } else {
                    return Err(no(&format!("barriers[{i}].after[{k}]"), format!("unknown message or barrier '{name}'")));
                }
            }
            barriers.push(json!({"name": b.name, "deps": deps, "barriers": bdeps}));
        }
        for (i, m) in sc.messages.iter().enumerate() {
            let f = format!("messages[{i}]");
            let src = r.endpoint(&m.src, &format!("{f}.src"), m.src_nic, &format!("{f}.src_nic"))?;
            let dst = r.endpoint(&m.dst, &format!("{f}.dst"), m.dst_nic, &format!("{f}.dst_nic"))?;
            if src == dst && m.src_nic == m.dst_nic {
                return Err(no(&format!("{f}.dst_nic"), "source and destination are the same NIC of one host"));
            }
            if m.size > MAX_MESSAGE_BYTES {
                return Err(no(&format!("{f}.size"), format!("{} B exceeds the 1 TiB limit", m.size)));
            }
            packet(&format!("{f}.packet_size"), m.packet_size, m.header)?;
            let (mut deps, mut sent_deps, mut mbarriers) = (Vec::new(), Vec::new(), Vec::new());
            for (after, names) in [(true, &m.after), (false, &m.after_sent)] {
                let key = if after { "after" } else { "after_sent" };
                for (j, name) in names.iter().enumerate() {
                    if after {
                        if let Some(&k) = barrier_index.get(name.as_str()) {
                            mbarriers.push(k);
                            continue;
                        }
                    }
                    let at = format!("{f}.{key}[{j}]");
                    let k = *msg_index.get(name.as_str()).ok_or_else(|| no(&at, format!("unknown message '{name}'")))?;
                    if *name == m.name {
                        return Err(no(&at, "a message cannot wait for itself"));
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
                "deps": deps, "sent_deps": sent_deps, "barriers": mbarriers, "delay_ps": m.delay, "path": r.path_wire(&m.path, &format!("{f}.path"))?,
            }));
        }
    }
    let mut tcp = Vec::new();
    for (i, t) in sc.tcp.iter().enumerate() {
        let f = format!("tcp[{i}]");
        let flow_name = t.name.clone().unwrap_or_else(|| format!("tcp{i}"));
        if source_names.contains(&flow_name)
            || msg_index.contains_key(flow_name.as_str())
            || (!rows && sc.messages.iter().any(|m| m.name == flow_name))
        {
            return Err(no(&format!("{f}.name"), format!("'{flow_name}' already names another flow (flows are reported by name)")));
        }
        source_names.insert(flow_name.clone());
        let src = r.endpoint(&t.src, &format!("{f}.src"), t.src_nic, &format!("{f}.src_nic"))?;
        let dst = r.endpoint(&t.dst, &format!("{f}.dst"), t.dst_nic, &format!("{f}.dst_nic"))?;
        if src == dst && t.src_nic == t.dst_nic {
            return Err(no(&format!("{f}.dst_nic"), "source and destination are the same NIC of one host"));
        }
        packet(&format!("{f}.mss"), t.mss, t.header)?;
        if matches!(t.stop, Some(stop) if stop < t.start) {
            return Err(no(&format!("{f}.stop"), "stop is before start"));
        }
        if t.rcv_buf < t.mss {
            return Err(no(&format!("{f}.rcv_buf"), "must hold at least one segment"));
        }
        if t.snd_buf < t.app_write {
            return Err(no(&format!("{f}.snd_buf"), "must hold at least one application write"));
        }
        tcp.push(json!({
            "name": flow_name, "src": src, "src_nic": t.src_nic, "dst": dst, "dst_nic": t.dst_nic,
            "cc": if t.cc == "newreno" { "new_reno" } else { t.cc },
            "start_ps": t.start, "stop_ps": t.stop, "max_bytes": t.max_bytes, "mss_bytes": t.mss,
            "header_bytes": t.header, "initial_cwnd": t.initial_cwnd, "min_rto_ps": t.min_rto,
            "initial_rto_ps": t.initial_rto, "clock_granularity_ps": t.clock_granularity,
            "delack_count": t.delack_count, "delack_timeout_ps": t.delack_timeout, "rcv_buf_bytes": t.rcv_buf,
            "snd_buf_bytes": t.snd_buf, "app_write_bytes": t.app_write,
            "dupack_threshold": t.dupack_threshold, "sack": t.sack, "path": r.path_wire(&t.path, &format!("{f}.path"))?,
        }));
    }
    let sample_ports = match &sc.measure.queues {
        None => Value::Null,
        Some(qs) => json!(qs.iter().enumerate().map(|(k, q)| r.port_ref(q, &format!("measure.queues[{k}]"))).collect::<Result<Vec<_>, _>>()?),
    };
    let mut events = Vec::new();
    for (i, e) in sc.events.iter().enumerate() {
        let f = format!("events[{i}]");
        let links: Vec<usize> = if e.kind == "switch_down" {
            let node = e.node.as_ref().ok_or_else(|| no(&format!("{f}.node"), "a switch_down names its switch: node = \"spine0\""))?;
            let v = r.node(node, &format!("{f}.node"))?;
            let mut l: Vec<usize> = r.ports_of[v as usize].iter().map(|p| p.0).collect();
            l.sort_unstable();
            if l.is_empty() {
                return Err(no(&format!("{f}.node"), format!("'{node}' has no link")));
            }
            l
        } else {
            let pair =
                e.link.as_ref().filter(|l| l.len() == 2).ok_or_else(|| {
                    no(&format!("{f}.link"), format!("a {} names its link by its two nodes: link = [\"leaf0\", \"spine1\"]", e.kind))
                })?;
            let (a, b) = (r.node(&pair[0], &format!("{f}.link[0]"))?, r.node(&pair[1], &format!("{f}.link[1]"))?);
            let l: Vec<usize> = r.ports_of[a as usize].iter().filter(|p| p.1 == b).map(|p| p.0).collect();
            if l.is_empty() {
                return Err(no(&format!("{f}.link"), format!("there is no link between '{}' and '{}'", pair[0], pair[1])));
            }
            l
        };
        if e.kind == "ber" && !(0.0..1.0).contains(&e.ber) {
            return Err(no(&format!("{f}.ber"), format!("{} is not a bit error rate in [0, 1)", super::units::py_float(e.ber))));
        }
        match (e.kind, e.rate) {
            ("link_rate", None) => return Err(no(&format!("{f}.rate"), "a link_rate event sets the link's new rate: rate = \"25Gbps\"")),
            ("link_rate", Some(_)) | (_, None) => {}
            (kind, Some(_)) => return Err(no(&format!("{f}.rate"), format!("only a link_rate event sets a rate, not a {kind}"))),
        }
        let kind = if e.kind == "switch_down" { "link_down" } else { e.kind };
        let mut ev = json!({"at_ps": e.at, "kind": kind, "links": links, "ber": e.ber});
        if let Some(r) = e.rate {
            ev["rate_bps"] = json!(r);
        }
        events.push(ev);
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
    routing.extend(policy_wire(&net.policy, &r, sc.topology_kind)?);
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
    for (key, v) in [("pfc", &sc.pfc), ("ecn", &sc.ecn), ("rdma", &sc.rdma), ("hybrid", &sc.hybrid), ("retransmit", &sc.retransmit), ("uec", &sc.uec)]
    {
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
