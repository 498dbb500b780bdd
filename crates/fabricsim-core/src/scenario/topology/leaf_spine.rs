//! The `leaf_spine` family: racks of hosts under one or more leaves each, every leaf linked to every spine.

use super::{link, Network, Node, Switches, ARBITERS};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;

/// Hosts h0… in rack order, then leaves (`leaf{r}` or `leaf{r}_{j}`), then spines; host links host by host
/// and NIC by NIC (NIC k on leaf k mod leaves_per_rack), then leaf–spine links leaf by leaf, spine by spine,
/// `parallel_links` each. O(nodes + links).
pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let racks = t.req("racks", read::pos_int)?;
    let per_rack = t.req("hosts_per_rack", read::pos_int)?;
    let spines = t.req("spines", read::pos_int)?;
    let lpr = t.or("leaves_per_rack", 1, read::pos_int)?;
    let nics = t.or("nics_per_host", 1, read::pos_int)?;
    let parallel = t.or("parallel_links", 1, read::pos_int)?;
    let host_rate = t.req("host_rate", read::link_rate)?;
    let fabric_rate = t.req("fabric_rate", read::link_rate)?;
    let host_delay = t.or("host_delay", 0, read::duration)?;
    let fabric_delay = t.or("fabric_delay", 0, read::duration)?;
    let spine_arbiter = t.or("spine_arbiter", "round_robin", read::literal(ARBITERS))?;
    let sw = Switches::read(t)?;
    // Hosts, leaves, spines; host links (one per NIC), leaf–spine links.
    let hosts = racks.saturating_mul(per_rack);
    let leaves = racks.saturating_mul(lpr);
    super::fits(
        hosts.saturating_add(leaves).saturating_add(spines),
        hosts.saturating_mul(nics).saturating_add(leaves.saturating_mul(spines).saturating_mul(parallel)),
    )?;
    let leaf = |r: u64, j: u64| if lpr == 1 { format!("leaf{r}") } else { format!("leaf{r}_{j}") };
    let mut net = Network::default();
    for h in 0..racks * per_rack {
        net.nodes.push(Node::host(format!("h{h}")));
    }
    for r in 0..racks {
        for j in 0..lpr {
            net.nodes.push(sw.node(leaf(r, j), None));
        }
    }
    for s in 0..spines {
        let mut n = sw.node(format!("spine{s}"), None);
        n.arbiter = spine_arbiter;
        net.nodes.push(n);
    }
    for r in 0..racks {
        for h in 0..per_rack {
            for k in 0..nics {
                net.links.push(link(format!("h{}", r * per_rack + h), leaf(r, k % lpr), host_rate, host_delay));
            }
        }
    }
    for r in 0..racks {
        for j in 0..lpr {
            for s in 0..spines {
                for _ in 0..parallel {
                    net.links.push(link(leaf(r, j), format!("spine{s}"), fabric_rate, fabric_delay));
                }
            }
        }
    }
    Ok(net)
}
