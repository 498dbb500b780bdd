//! The `fat_tree3` family: the k-ary three-tier fat-tree (Al-Fares et al.), edge ports optionally oversubscribed.

use super::{link, Network, Node, Switches};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;

/// Hosts below each edge switch: floor(oversubscription·k/2 + 0.5), as Python computes it in floats.
fn hosts_per_edge(k: u64, over: f64) -> f64 {
    (over * k as f64 / 2.0 + 0.5).floor()
}

/// Hosts (pod, edge, host), edge, aggregation and core switches; host links, edge–aggregation links (pod,
/// edge, aggregation), aggregation–core links (pod, aggregation, core). O(hosts + k³).
pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let k = t.req("k", read::pos_int)?;
    let rate = t.req("rate", read::link_rate)?;
    let delay = t.or("delay", 0, read::duration)?;
    let over = t.or("oversubscription", 1.0, read::number)?;
    let sw = Switches::read(t)?;
    if k % 2 == 1 {
        return Err(Decline::invalid("topology.k", format!("must be even (a k-ary fat-tree switch has k/2 ports down and k/2 up), got {k}")));
    }
    if over <= 0.0 {
        return Err(Decline::invalid("topology.oversubscription", "Input should be greater than 0"));
    }
    let hpe = hosts_per_edge(k, over);
    if hpe < 1.0 {
        let (r, half) = (crate::record_json::py_g6(over), crate::record_json::py_g6(over * k as f64 / 2.0));
        return Err(Decline::invalid("topology.oversubscription", format!("{r}·k/2 = {half} rounds to no host per edge switch (k = {k})")));
    }
    let edges = k.saturating_mul(k / 2);
    // Hosts, k²/2 edge and k²/2 aggregation switches, k²/4 cores; a link per host, k³/4 edge–aggregation and
    // k³/4 aggregation–core links.
    let hosts = edges.saturating_mul(hpe as u64);
    let up = edges.saturating_mul(k / 2);
    super::fits(
        hosts.saturating_add(edges.saturating_mul(2)).saturating_add((k / 2).saturating_mul(k / 2)),
        hosts.saturating_add(up.saturating_mul(2)),
    )?;
    let (half, hpe) = (k / 2, hpe as u64);
    let edges: Vec<String> = (0..k).flat_map(|q| (0..half).map(move |j| format!("p{q}.e{j}"))).collect();
    let aggs: Vec<String> = (0..k).flat_map(|q| (0..half).map(move |j| format!("p{q}.a{j}"))).collect();
    let hosts: Vec<(String, &String)> = edges.iter().flat_map(|e| (0..hpe).map(move |i| (format!("{e}.h{i}"), e))).collect();
    let mut net = Network::default();
    net.nodes.extend(hosts.iter().map(|(h, _)| Node::host(h.clone())));
    net.nodes.extend(edges.iter().map(|e| sw.node(e.clone(), None)));
    net.nodes.extend(aggs.iter().map(|a| sw.node(a.clone(), None)));
    net.nodes.extend((0..half * half).map(|i| sw.node(format!("c{i}"), None)));
    net.links.extend(hosts.iter().map(|(h, e)| link(h.clone(), (*e).clone(), rate, delay)));
    for q in 0..k {
        for e in 0..half {
            for j in 0..half {
                net.links.push(link(format!("p{q}.e{e}"), format!("p{q}.a{j}"), rate, delay));
            }
        }
    }
    for q in 0..k {
        for j in 0..half {
            for m in 0..half {
                net.links.push(link(format!("p{q}.a{j}"), format!("c{}", j * half + m), rate, delay));
            }
        }
    }
    Ok(net)
}
