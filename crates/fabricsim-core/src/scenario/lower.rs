//! The scenario's own workload rows lowered to engine columns, exactly as Python's `fabricsim.Workload.add_rows` lowers them.
//!
//! Order (Python's): messages, then barriers, then one completion barrier reserved per named collective,
//! then compute steps, then each collective's messages and internal barriers (and, for an unnamed one, a
//! completion barrier). Dependencies are tagged references (`Dep`), names one pool in call order (an
//! unnamed compute step is named "None", as Python's `str(None)`). Any problem Python reports is a `Decline`.

use super::wire::Resolved;
use super::{Decline, Scenario};
use crate::workload::collectives::{expand, Base, CollectiveSpec};
use crate::workload::{Workload, NONE};
use std::collections::HashMap;

const MSG: u32 = 0;
const SENT: u32 = 1 << 30;
const BARRIER: u32 = 2 << 30;
const COMPUTE: u32 = 3 << 30;

fn no(why: impl Into<String>) -> Decline {
    Decline::new(why)
}

fn u32_of(x: u64) -> Result<u32, Decline> {
    u32::try_from(x).map_err(|_| no(format!("{x} is too large")))
}

/// The columns Python's `scenario.workload().columns()` hands the engine, or None where Python hands none
/// (no workload rows and no streams). O(rows + dependencies + collective messages).
pub fn workload(sc: &Scenario, r: &Resolved) -> Result<Option<Workload>, Decline> {
    if !sc.has_workload_rows() && sc.streams.is_empty() {
        return Ok(None);
    }
    let mut by_name: HashMap<&str, u32> = HashMap::new();
    fn claim<'a>(by_name: &mut HashMap<&'a str, u32>, name: Option<&'a str>, rf: u32) -> Result<(), Decline> {
        match name {
            Some(n) if by_name.insert(n, rf).is_some() => Err(no(format!("duplicate name '{n}'"))),
            _ => Ok(()),
        }
    }
    let nb_rows = sc.barriers.len() as u32;
    for (i, m) in sc.messages.iter().enumerate() {
        claim(&mut by_name, Some(&m.name), MSG | i as u32)?;
    }
    for (i, b) in sc.barriers.iter().enumerate() {
        claim(&mut by_name, Some(&b.name), BARRIER | i as u32)?;
    }
    let named: Vec<usize> = sc.collectives.iter().enumerate().filter(|(_, c)| c.name.is_some()).map(|(i, _)| i).collect();
    for (j, &i) in named.iter().enumerate() {
        claim(&mut by_name, sc.collectives[i].name.as_deref(), BARRIER | (nb_rows + j as u32))?;
    }
    for (i, c) in sc.compute.iter().enumerate() {
        claim(&mut by_name, c.name.as_deref(), COMPUTE | i as u32)?;
    }
    let refs = |names: &[String], me: Option<&str>, sent: bool| -> Result<Vec<u32>, Decline> {
        names
            .iter()
            .map(|n| {
                if Some(n.as_str()) == me {
                    return Err(no("a row cannot wait for itself"));
                }
                let rf = *by_name.get(n.as_str()).ok_or_else(|| no(format!("unknown name '{n}'")))?;
                if sent && rf >> 30 != 0 {
                    return Err(no(format!("'{n}' is not a message")));
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
    for m in &sc.messages {
        let mut deps = refs(&m.after, Some(&m.name), false)?;
        deps.extend(refs(&m.after_sent, Some(&m.name), true)?);
        let path = match &m.path {
            None => NONE,
            Some(p) => {
                paths.push(p.iter().map(|n| r.node(n)).collect::<Result<Vec<u32>, _>>()?);
                paths.len() as u32 - 1
            }
        };
        w.src.push(r.node(&m.src)?);
        w.dst.push(r.node(&m.dst)?);
        w.src_nic.push(u32_of(m.src_nic)?);
        w.dst_nic.push(u32_of(m.dst_nic)?);
        w.size.push(m.size);
        w.packet.push(u32_of(m.packet_size)?);
        w.header.push(u32_of(m.header)?);
        w.start_ps.push(m.start);
        w.delay_ps.push(m.delay);
        w.path.push(path);
        msg_deps.push(deps);
        msg_names.push(w.names.len() as u32);
        w.names.push(m.name.clone());
        named_msgs = true;
    }
    let mut named_barriers = false;
    for b in &sc.barriers {
        barrier_deps.push(refs(&b.after, Some(&b.name), false)?);
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
    for c in &sc.compute {
        let h = r.node(&c.host)?;
        if !r.host[h as usize] {
            return Err(no(format!("'{}' is a switch; compute runs on hosts", c.host)));
        }
        compute_deps.push(refs(&c.after, c.name.as_deref(), false)?);
        w.compute_host.push(h);
        w.compute_ps.push(c.duration);
        compute_names.push(w.names.len() as u32);
        w.names.push(c.name.clone().unwrap_or_else(|| "None".into()));
    }
    for (i, c) in sc.collectives.iter().enumerate() {
        let ranks: Vec<(u32, u64)> = match &c.ranks {
            super::Ranks::All => r.host.iter().enumerate().filter(|(_, h)| **h).map(|(v, _)| (v as u32, 0)).collect(),
            super::Ranks::List(l) => l.iter().map(|(n, nic)| Ok((r.node(n)?, *nic))).collect::<Result<_, Decline>>()?,
        };
        let after = refs(&c.after, c.name.as_deref(), false)?;
        let algorithm = c.algorithm.unwrap_or(if c.kind == "all_to_all" { "direct" } else { "ring" });
        let spec = serde_json::json!({
            "kind": c.kind, "algorithm": algorithm, "ranks": ranks, "size_bytes": c.size, "packet_bytes": c.packet_size,
            "header_bytes": c.header, "chunks": c.chunks, "order": c.order, "ag_order": c.ag_order, "barrier": c.barrier,
            "root": c.root, "start_ps": c.start, "local": c.local, "inter": c.inter, "after": after,
        });
        let spec: CollectiveSpec = serde_json::from_value(spec).map_err(|e| no(format!("collectives[{i}]: {e}")))?;
        let base = Base { msgs: w.size.len() as u32, barriers: barrier_deps.len() as u32, compute: w.compute_ps.len() as u32 };
        let x = expand(&spec, 0, base).map_err(|e| no(format!("collectives[{i}]: {e}")))?;
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
        w.streams.push((r.node(host)?, u32_of(*count)?));
    }
    w.n_barriers = barrier_deps.len() as u32;
    let nodes = msg_deps.len() + barrier_deps.len() + compute_deps.len();
    if [&msg_deps, &barrier_deps, &compute_deps].iter().any(|d| d.iter().any(|x| !x.is_empty())) {
        w.pred_start.reserve(nodes + 1);
        w.pred_start.push(0);
        for d in msg_deps.iter().chain(&barrier_deps).chain(&compute_deps) {
            w.pred.extend(d);
            w.pred_start.push(u32::try_from(w.pred.len()).map_err(|_| no("more than 2^32 dependencies"))?);
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
