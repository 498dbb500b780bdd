//! The scenario's own workload rows lowered to engine columns, every name resolved: the one lowering, for the native front door and for Python's `Scenario.columns()` (which `fabricsim.Workload` starts from).
//!
//! Order (Python's): messages, then barriers, then one completion barrier reserved per named collective,
//! then compute steps, then each collective's messages and internal barriers (and, for an unnamed one, a
//! completion barrier). Dependencies are tagged references (`Dep`), names one pool in call order (an
//! unnamed compute step is named "None", as Python's `str(None)`). Any problem Python reports is an invalid-input
//! `Decline` with Python's field and words (`compute[0].after[0]: unknown message, barrier, ...`).

use super::wire::Resolved;
use super::{Decline, Scenario};
use crate::workload::collectives::{expand, Base, CollectiveSpec};
use crate::workload::{Workload, NONE};
use std::collections::HashMap;

const MSG: u32 = 0;
const SENT: u32 = 1 << 30;
const BARRIER: u32 = 2 << 30;
const COMPUTE: u32 = 3 << 30;

/// An invalid input at `field` (the row as the user wrote it).
fn no(field: &str, why: impl std::fmt::Display) -> Decline {
    Decline::invalid(field, why)
}

/// `x` as a u32 column value, else `field: x is too large` (Python's `_ints` check).
fn u32_of(x: u64, field: &str) -> Result<u32, Decline> {
    u32::try_from(x).map_err(|_| no(field, format!("{x} is too large")))
}

/// The kind of reference a `by_name` value is (its top two bits), as Python's `claim` compares them.
fn what_of(field: &str) -> &'static str {
    match field.split('[').next() {
        Some("messages") => "message",
        Some("barriers") => "barrier",
        Some("compute") => "compute step",
        _ => "collective",
    }
}

/// Collective `c` as the engine's spec, its ranks resolved and `after` its references.
fn collective_spec(c: &super::Collective, r: &Resolved, after: Vec<u32>, at: &str) -> Result<CollectiveSpec, Decline> {
    let ranks: Vec<(u32, u64)> = match &c.ranks {
        super::Ranks::All => r.host.iter().enumerate().filter(|(_, h)| **h).map(|(v, _)| (v as u32, 0)).collect(),
        // Python names a bad rank `collective[k].ranks` (k: the rank's index).
        super::Ranks::List(l) => {
            l.iter().enumerate().map(|(k, (n, nic))| Ok((r.node(n, &format!("collective[{k}].ranks"))?, *nic))).collect::<Result<_, Decline>>()?
        }
    };
    let algorithm = c.algorithm.unwrap_or(if c.kind == "all_to_all" { "direct" } else { "ring" });
    let spec = serde_json::json!({
        "kind": c.kind, "algorithm": algorithm, "ranks": ranks, "size_bytes": c.size, "packet_bytes": c.packet_size,
        "header_bytes": c.header, "chunks": c.chunks, "order": c.order, "ag_order": c.ag_order, "barrier": c.barrier,
        "root": c.root, "start_ps": c.start, "local": c.local, "inter": c.inter, "after": after,
    });
    serde_json::from_value(spec).map_err(|e| no(at, e))
}

/// Refuse a workload whose messages (rows, and each collective counted without expanding it) pass the memory
/// budget, naming the row that makes the most (`budget::messages`). A collective that is invalid is left to
/// the lowering, which names its problem in Python's order. O(rows + ranks).
fn within_budget(sc: &Scenario, r: &Resolved) -> Result<(), Decline> {
    let mut total = sc.messages.len() as u64;
    let mut biggest = ("messages".to_string(), total);
    for (i, c) in sc.collectives.iter().enumerate() {
        let Ok(spec) = collective_spec(c, r, Vec::new(), "") else { continue };
        let Ok((msgs, _)) = crate::workload::collectives::volume(&spec, i) else { continue };
        total = total.saturating_add(msgs);
        if msgs > biggest.1 {
            biggest = (format!("collectives[{i}]"), msgs);
        }
    }
    crate::budget::messages(&biggest.0, total).map_err(Decline::from_error)
}

/// The columns Python's `scenario.workload().columns()` hands the engine, or None where Python hands none
/// (no workload rows and no streams). O(rows + dependencies + collective messages).
pub fn workload(sc: &Scenario, r: &Resolved) -> Result<Option<Workload>, Decline> {
    if !sc.has_workload_rows() && sc.streams.is_empty() {
        return Ok(None);
    }
    within_budget(sc, r)?;
    let mut by_name: HashMap<&str, u32> = HashMap::new();
    fn claim<'a>(by_name: &mut HashMap<&'a str, u32>, name: Option<&'a str>, rf: u32, field: &str) -> Result<(), Decline> {
        let Some(n) = name else { return Ok(()) };
        match by_name.get(n) {
            Some(&old) => {
                let kind = match field.split('[').next() {
                    Some("messages") => Some(0),
                    Some("barriers") => Some(2),
                    Some("compute") => Some(3),
                    _ => None,
                };
                Err(no(
                    field,
                    if kind == Some(old >> 30) {
                        format!("duplicate {} name '{n}'", what_of(field))
                    } else {
                        format!("'{n}' already names another message, barrier, compute step or collective")
                    },
                ))
            }
            None => {
                by_name.insert(n, rf);
                Ok(())
            }
        }
    }
    let nb_rows = sc.barriers.len() as u32;
    for (i, m) in sc.messages.iter().enumerate() {
        claim(&mut by_name, Some(&m.name), MSG | i as u32, &format!("messages[{i}].name"))?;
    }
    for (i, b) in sc.barriers.iter().enumerate() {
        claim(&mut by_name, Some(&b.name), BARRIER | i as u32, &format!("barriers[{i}].name"))?;
    }
    let named: Vec<usize> = sc.collectives.iter().enumerate().filter(|(_, c)| c.name.is_some()).map(|(i, _)| i).collect();
    for (j, &i) in named.iter().enumerate() {
        claim(&mut by_name, sc.collectives[i].name.as_deref(), BARRIER | (nb_rows + j as u32), &format!("collectives[{i}].name"))?;
    }
    for (i, c) in sc.compute.iter().enumerate() {
        claim(&mut by_name, c.name.as_deref(), COMPUTE | i as u32, &format!("compute[{i}].name"))?;
    }
    // `field` is the list's path ("messages[3].after"); a bad name is `field[j]`, in Python's words.
    let refs = |names: &[String], field: &str, me: Option<&str>, sent: bool| -> Result<Vec<u32>, Decline> {
        let msgs = field.starts_with("messages");
        names
            .iter()
            .enumerate()
            .map(|(j, n)| {
                let at = format!("{field}[{j}]");
                if Some(n.as_str()) == me {
                    return Err(no(&at, if msgs { "a message cannot wait for itself" } else { "a row cannot wait for itself" }));
                }
                let what = if msgs {
                    "message"
                } else if field.starts_with("barriers") {
                    "message or barrier"
                } else {
                    "message, barrier, compute step or collective"
                };
                let rf = *by_name.get(n.as_str()).ok_or_else(|| no(&at, format!("unknown {what} '{n}'")))?;
                if sent && rf >> 30 != 0 {
                    return Err(no(&at, format!("'{n}' is not a message (after_sent names messages)")));
                }
                Ok(if sent { rf | SENT } else { rf })
            })
            .collect()
    };
    let mut w = Workload::default();
    let mut msg_deps: Vec<Vec<u32>> = Vec::new();
    let mut barrier_deps: Vec<Vec<u32>> = Vec::new();
    let mut compute_deps: Vec<Vec<u32>> = Vec::new();
    let mut paths: Vec<Vec<u32>> = Vec::new();
    let (mut msg_names, mut barrier_names, mut compute_names): (Vec<u32>, Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new(), Vec::new());
    let mut named_msgs = false;
    // Python's order: every message's `after`, then every `after_sent`, then the routes, then the columns
    // (all sources, all destinations, then the integers).
    let [after, after_sent] = [("after", false), ("after_sent", true)].map(|(key, sent)| {
        sc.messages
            .iter()
            .enumerate()
            .map(|(i, m)| refs(if sent { &m.after_sent } else { &m.after }, &format!("messages[{i}].{key}"), Some(&m.name), sent))
            .collect::<Result<Vec<Vec<u32>>, _>>()
    });
    let (after, after_sent) = (after?, after_sent?);
    for (i, m) in sc.messages.iter().enumerate() {
        if let Some(p) = &m.path {
            r.path(p, &format!("messages[{i}].path"))?;
        }
    }
    for (key, pick) in [("src", true), ("dst", false)] {
        for (i, m) in sc.messages.iter().enumerate() {
            r.node(if pick { &m.src } else { &m.dst }, &format!("messages[{i}].{key}"))?;
        }
    }
    for (i, m) in sc.messages.iter().enumerate() {
        let mut deps = after[i].clone();
        deps.extend(&after_sent[i]);
        let path = match &m.path {
            None => NONE,
            Some(p) => {
                paths.push(r.path(p, &format!("messages[{i}].path"))?);
                paths.len() as u32 - 1
            }
        };
        let f = |key: &str| format!("messages[{i}].{key}");
        w.src.push(r.node(&m.src, &f("src"))?);
        w.dst.push(r.node(&m.dst, &f("dst"))?);
        w.src_nic.push(u32_of(m.src_nic, &f("src_nic"))?);
        w.dst_nic.push(u32_of(m.dst_nic, &f("dst_nic"))?);
        w.size.push(m.size);
        w.packet.push(u32_of(m.packet_size, &f("packet_size"))?);
        w.header.push(u32_of(m.header, &f("header"))?);
        w.start_ps.push(m.start);
        w.delay_ps.push(m.delay);
        w.path.push(path);
        msg_deps.push(deps);
        msg_names.push(w.names.len() as u32);
        w.names.push(m.name.clone());
        named_msgs = true;
    }
    let mut named_barriers = false;
    for (i, b) in sc.barriers.iter().enumerate() {
        barrier_deps.push(refs(&b.after, &format!("barriers[{i}].after"), Some(&b.name), false)?);
        barrier_names.push(w.names.len() as u32);
        w.names.push(b.name.clone());
        named_barriers = true;
    }
    let mut slots: HashMap<usize, usize> = HashMap::new();
    for &i in &named {
        slots.insert(i, barrier_deps.len());
        barrier_deps.push(Vec::new());
        barrier_names.push(w.names.len() as u32);
        w.names.push(sc.collectives[i].name.clone().unwrap_or_default());
        named_barriers = true;
    }
    // Python's order: every step's `after`, then the hosts.
    for (i, c) in sc.compute.iter().enumerate() {
        compute_deps.push(refs(&c.after, &format!("compute[{i}].after"), c.name.as_deref(), false)?);
    }
    let hosts: Vec<u32> = sc.compute.iter().enumerate().map(|(i, c)| r.node(&c.host, &format!("compute[{i}].host"))).collect::<Result<_, _>>()?;
    for (i, (c, &h)) in sc.compute.iter().zip(&hosts).enumerate() {
        if !r.host[h as usize] {
            return Err(no(&format!("compute[{i}].host"), format!("'{}' is a switch; compute runs on hosts", c.host)));
        }
    }
    for (c, &h) in sc.compute.iter().zip(&hosts) {
        w.compute_host.push(h);
        w.compute_ps.push(c.duration);
        compute_names.push(w.names.len() as u32);
        w.names.push(c.name.clone().unwrap_or_else(|| "None".into()));
    }
    for (i, c) in sc.collectives.iter().enumerate() {
        let after = refs(&c.after, &format!("collectives[{i}].after"), c.name.as_deref(), false)?;
        let at = format!("collectives[{i}]");
        let spec = collective_spec(c, r, after, &at)?;
        let base = Base { msgs: w.size.len() as u32, barriers: barrier_deps.len() as u32, compute: w.compute_ps.len() as u32 };
        let x = expand(&spec, 0, base).map_err(|e| match e {
            crate::error::Error::Spec { field, reason } if !field.is_empty() => no(&field.replace("collectives[0]", &at), reason),
            crate::error::Error::Spec { reason, .. } => no(&at, reason),
            other => no(&at, other),
        })?;
        let n = x.size.len();
        let nb = x.n_barriers as usize;
        let ps: Vec<u32> = if x.pred_start.is_empty() { vec![0; x.n_nodes() + 1] } else { x.pred_start.clone() };
        let deps_of = |k: usize| x.pred[ps[k] as usize..ps[k + 1] as usize].to_vec();
        let m0 = w.size.len() as u32;
        w.src.extend(&x.src);
        w.src_nic.extend(&x.src_nic);
        w.dst.extend(&x.dst);
        w.dst_nic.extend(&x.dst_nic);
        w.size.extend(&x.size);
        w.packet.extend(&x.packet);
        w.header.extend(&x.header);
        w.start_ps.extend(&x.start_ps);
        w.delay_ps.extend(&x.delay_ps);
        w.path.extend(&x.path);
        msg_names.extend(std::iter::repeat_n(NONE, n));
        msg_deps.extend((0..n).map(deps_of));
        barrier_deps.extend((0..nb).map(|j| deps_of(n + j)));
        barrier_names.extend(std::iter::repeat_n(NONE, nb));
        let all: Vec<u32> = (m0..m0 + n as u32).collect();
        match slots.get(&i) {
            Some(&slot) => barrier_deps[slot] = all,
            None => {
                barrier_deps.push(all);
                barrier_names.push(NONE);
            }
        }
    }
    for (host, count) in &sc.streams {
        w.streams.push((r.node(host, "streams[0].host")?, u32_of(*count, "streams.count")?));
    }
    w.n_barriers = barrier_deps.len() as u32;
    let nodes = msg_deps.len() + barrier_deps.len() + compute_deps.len();
    if [&msg_deps, &barrier_deps, &compute_deps].iter().any(|d| d.iter().any(|x| !x.is_empty())) {
        w.pred_start.reserve(nodes + 1);
        w.pred_start.push(0);
        for d in msg_deps.iter().chain(&barrier_deps).chain(&compute_deps) {
            w.pred.extend(d);
            w.pred_start.push(u32::try_from(w.pred.len()).map_err(|_| no("workload", "more than 2^32 dependencies"))?);
        }
    }
    if !paths.is_empty() {
        w.path_start.push(0);
        for p in &paths {
            w.path_nodes.extend(p);
            w.path_start.push(w.path_nodes.len() as u32);
        }
    }
    if named_msgs {
        w.msg_name = msg_names;
    }
    if named_barriers {
        w.barrier_name = barrier_names;
    }
    if !sc.compute.is_empty() {
        w.compute_name = compute_names;
    }
    Ok(Some(w))
}
