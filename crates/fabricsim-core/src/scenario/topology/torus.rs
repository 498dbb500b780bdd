//! The `torus` family: a 2- or 3-dimensional torus of routers with wrap-around links, hosts on each router, dimension-order routing.

use super::{link, Network, Node, Policy, Switches};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;
use toml::Value;

/// Router names `r{x0}.{x1}[.{x2}]` in linear order, the first coordinate x0 fastest (Python's `router_names`).
fn router_names(dims: &[u64]) -> Vec<String> {
    let total: u64 = dims.iter().product();
    (0..total)
        .map(|i| {
            let mut c = Vec::with_capacity(dims.len());
            let mut rest = i;
            for &d in dims {
                c.push(rest % d);
                rest /= d;
            }
            let parts: Vec<String> = c.iter().map(u64::to_string).collect();
            format!("r{}", parts.join("."))
        })
        .collect()
}

/// Hosts (router by router), routers; host links, then per dimension each router's link to its next
/// neighbour (size 2: from coordinate 0 only; size 1: none). O(nodes + links).
pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let dims = t.req("dims", |v: &Value| read::list_of(v, read::pos_int))?;
    let rate = t.req("rate", read::link_rate)?;
    let delay = t.or("delay", 0, read::duration)?;
    let hpr = t.or("hosts_per_router", 1, read::pos_int)?;
    let sw = Switches::read(t)?;
    if !(2..=3).contains(&dims.len()) {
        let listed: Vec<String> = dims.iter().map(u64::to_string).collect();
        return Err(Decline::invalid("topology.dims", format!("a torus has 2 or 3 dimensions, got {} ([{}])", dims.len(), listed.join(", "))));
    }
    let routers = dims.iter().fold(1u64, |n, &d| n.saturating_mul(d));
    // Hosts and routers; a link per host, and per dimension one per router (size ≥ 3), per router pair (2)
    // or none (1).
    let hosts = routers.saturating_mul(hpr);
    let rings = dims
        .iter()
        .map(|&d| {
            if d >= 3 {
                routers
            } else if d == 2 {
                routers / 2
            } else {
                0
            }
        })
        .fold(0u64, u64::saturating_add);
    super::fits(hosts.saturating_add(routers), hosts.saturating_add(rings))?;
    let names = router_names(&dims);
    let mut net = Network::default();
    for r in &names {
        for i in 0..hpr {
            net.nodes.push(Node::host(format!("{r}.h{i}")));
        }
    }
    net.nodes.extend(names.iter().map(|r| sw.node(r.clone(), None)));
    for r in &names {
        for i in 0..hpr {
            net.links.push(link(format!("{r}.h{i}"), r.clone(), rate, delay));
        }
    }
    let mut stride = 1u64;
    for &d in &dims {
        for (i, r) in names.iter().enumerate() {
            let x = (i as u64 / stride) % d;
            if d >= 3 || (d == 2 && x == 0) {
                let j = (i as i64 + (((x + 1) % d) as i64 - x as i64) * stride as i64) as usize;
                net.links.push(link(r.clone(), names[j].clone(), rate, delay));
            }
        }
        stride *= d;
    }
    net.policy = Some(Policy::DimensionOrder { dims, routers: names, shapes: Vec::new(), switches: Vec::new() });
    Ok(net)
}
