//! The `fat_tree` family: the two-level fat-tree FT(2;M0,M1), M1 leaves of M0 servers, M0 spines.

use super::{link, Network, Node, Switches};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;

/// Hosts h{l·M0+j}, leaves, spines; host links, then leaf–spine links leaf by leaf. O(M0·M1).
pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let m0 = t.req("m0", read::pos_int)?;
    let m1 = t.req("m1", read::pos_int)?;
    let rate = t.req("rate", read::link_rate)?;
    let delay = t.or("delay", 0, read::duration)?;
    let sw = Switches::read(t)?;
    // M0·M1 hosts, M1 leaves, M0 spines; a link per host and per leaf–spine pair.
    let hosts = m0.saturating_mul(m1);
    super::fits(hosts.saturating_add(m1).saturating_add(m0), hosts.saturating_mul(2))?;
    let mut net = Network::default();
    for l in 0..m1 {
        for j in 0..m0 {
            net.nodes.push(Node::host(format!("h{}", l * m0 + j)));
        }
    }
    net.nodes.extend((0..m1).map(|l| sw.node(format!("leaf{l}"), None)));
    net.nodes.extend((0..m0).map(|s| sw.node(format!("spine{s}"), None)));
    for l in 0..m1 {
        for j in 0..m0 {
            net.links.push(link(format!("h{}", l * m0 + j), format!("leaf{l}"), rate, delay));
        }
    }
    for l in 0..m1 {
        for s in 0..m0 {
            net.links.push(link(format!("leaf{l}"), format!("spine{s}"), rate, delay));
        }
    }
    Ok(net)
}
