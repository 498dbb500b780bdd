//! The `dragonfly` family: groups of fully connected routers, every pair of groups joined by global links (Kim et al.).

use super::{link, Network, Node, Policy, Switches};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;
use toml::Value;

/// Routing weight of a global link.
const GLOBAL_WEIGHT: u64 = 3;

/// Where global port `port` of group `group` leads in the consecutive arrangement of g groups.
fn global_peer(group: u64, port: u64, g: u64) -> (u64, u64) {
    let (t, d) = (port / (g - 1), port % (g - 1));
    ((group + d + 1) % g, t * (g - 1) + g - d - 2)
}

/// Hosts (group, router, host), routers; host links, local links (group, pairs r < r'), global links (each
/// once from its lower (group, port) end). O(nodes + links).
pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let p = t.req("p", read::pos_int)?;
    let a = t.req("a", read::pos_int)?;
    let h = t.req("h", read::pos_int)?;
    let g = t.opt("g", read::pos_int)?;
    let rate = t.req("rate", read::link_rate)?;
    let delay = t.or("delay", 0, read::duration)?;
    let routing = t.or("routing", "minimal", |v: &Value| match v {
        Value::String(s) if s == "minimal" => Ok("minimal"),
        Value::String(s) if s == "valiant" => Ok("valiant"),
        Value::String(s) => {
            let what = if s.to_lowercase().starts_with("ugal") {
                "UGAL (adaptive) routing is not supported".to_string()
            } else {
                format!("unknown routing {}", read::py_repr(v))
            };
            Err(Decline::new(format!("{what}; the supported routings are 'minimal' and 'valiant'")))
        }
        _ => read::literal(&["minimal", "valiant"])(v),
    })?;
    let sw = Switches::read(t)?;
    if let Some(g) = g.filter(|g| !(2..=a.saturating_mul(h).saturating_add(1)).contains(g)) {
        let ah = a.saturating_mul(h);
        return Err(Decline::invalid(
            "topology.g",
            format!("must be from 2 to a·h + 1 = {} (each group has a·h = {ah} global ports, one per other group at the most), got {g}", ah + 1),
        ));
    }
    let g = g.unwrap_or(a.saturating_mul(h).saturating_add(1));
    // Hosts and routers; a link per host, a(a−1)/2 local links per group, and at most g·a·h/2 global links
    // (exactly that many when g = a·h + 1, every global port used).
    let routers_n = g.saturating_mul(a);
    let hosts = routers_n.saturating_mul(p);
    let local = g.saturating_mul(a.saturating_mul(a.saturating_sub(1)) / 2);
    super::fits(hosts.saturating_add(routers_n), hosts.saturating_add(local).saturating_add(routers_n.saturating_mul(h) / 2))?;
    let routers: Vec<Vec<String>> = (0..g).map(|gr| (0..a).map(|r| format!("g{gr}.r{r}")).collect()).collect();
    let mut net = Network::default();
    for grp in &routers {
        for r in grp {
            for i in 0..p {
                net.nodes.push(Node::host(format!("{r}.h{i}")));
            }
        }
    }
    net.nodes.extend(routers.iter().flatten().map(|r| sw.node(r.clone(), None)));
    for grp in &routers {
        for r in grp {
            for i in 0..p {
                net.links.push(link(format!("{r}.h{i}"), r.clone(), rate, delay));
            }
        }
    }
    for grp in &routers {
        for i in 0..a as usize {
            for j in i + 1..a as usize {
                net.links.push(link(grp[i].clone(), grp[j].clone(), rate, delay));
            }
        }
    }
    for gr in 0..g {
        for k in 0..a * h {
            let (g2, k2) = global_peer(gr, k, g);
            if k2 < a * h && (gr, k) < (g2, k2) {
                let mut l = link(routers[gr as usize][(k / h) as usize].clone(), routers[g2 as usize][(k2 / h) as usize].clone(), rate, delay);
                l.weight = GLOBAL_WEIGHT;
                net.links.push(l);
            }
        }
    }
    if routing == "valiant" {
        net.policy = Some(Policy::Valiant { groups: routers });
    }
    Ok(net)
}
