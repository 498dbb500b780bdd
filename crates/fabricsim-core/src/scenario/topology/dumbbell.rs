//! The `dumbbell` family: N senders -> leaf -> bottleneck -> spine -> receiver (study 001's incast).

use super::{link, Network, Node, Switches};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;

/// sender0…, leaf, spine, receiver; sender links, then leaf–spine, then spine–receiver. O(senders).
pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let senders = t.or("senders", 8, read::pos_int)?;
    let access_rate = t.or("access_rate", 1_000_000_000, read::link_rate)?;
    let access_delay = t.or("access_delay", 2_000_000_000, read::duration)?;
    let bottleneck_rate = t.or("bottleneck_rate", 100_000_000, read::link_rate)?;
    let bottleneck_delay = t.or("bottleneck_delay", 5_000_000_000, read::duration)?;
    let sw = Switches::read(t)?;
    // Senders, leaf, spine, receiver; a link per sender, the bottleneck, the receiver's.
    super::fits(senders.saturating_add(3), senders.saturating_add(2))?;
    let mut net = Network::default();
    net.nodes.extend((0..senders).map(|i| Node::host(format!("sender{i}"))));
    net.nodes.push(sw.node("leaf", None));
    net.nodes.push(sw.node("spine", None));
    net.nodes.push(Node::host("receiver".into()));
    net.links.extend((0..senders).map(|i| link(format!("sender{i}"), "leaf", access_rate, access_delay)));
    net.links.push(link("leaf", "spine", bottleneck_rate, bottleneck_delay));
    net.links.push(link("spine", "receiver", access_rate, access_delay));
    Ok(net)
}
