//! The `multi_dim` family: ASTRA-sim's multi-dimensional networks. NPUs on a grid, each dimension joining the
//! NPUs that differ only in its coordinate as a ring, fully connected, or through a switch; dimension-order
//! routing, dimension 0 first.
//!
//! An NPU forwards in ASTRA-sim (a ring's chunk crosses the NPUs between), a fabricsim host does not: NPU i is
//! host `npu{i}` on its own router `npu{i}.r` (a switch with no latency of its own), which holds the NPU's links
//! of every dimension. The host–router link carries what the NPU sends and receives: by default as fast as all
//! its dimension links together (`npu_rate`), with no delay.

use super::{link, Network, Node, Policy, Switches};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;
use crate::spec::dim_group;
use toml::Value;

/// The building blocks of a dimension (ASTRA-sim's Ring, FullyConnected, Switch).
pub const SHAPES: &[&str] = &["ring", "fully_connected", "switch"];

/// One dimension: its shape, NPUs per group, and the rate and delay of its links.
struct Dim {
    shape: &'static str,
    npus: u64,
    rate: u64,
    delay: u64,
}

impl Dim {
    /// Links of one NPU in this dimension: a ring's two neighbours (one when the ring has two NPUs), n − 1 when
    /// fully connected, one to the switch.
    fn links_per_npu(&self) -> u64 {
        match self.shape {
            "ring" => self.npus.min(3) - 1,
            "fully_connected" => self.npus - 1,
            _ => 1,
        }
    }

    /// Links of one group: a ring of n (one for n = 2), n(n − 1)/2 pairs, n to the switch.
    fn links_per_group(&self) -> u64 {
        match self.shape {
            "ring" if self.npus == 2 => 1,
            "ring" | "switch" => self.npus,
            _ => self.npus.saturating_mul(self.npus - 1) / 2,
        }
    }
}

fn dim(mut t: Tab) -> Result<Dim, Decline> {
    let at = t.at.clone();
    let d = Dim {
        shape: t.req("shape", read::literal(SHAPES))?,
        npus: t.req("npus", read::pos_int)?,
        rate: t.req("rate", read::link_rate)?,
        delay: t.or("delay", 0, read::duration)?,
    };
    t.finish()?;
    if d.npus < 2 {
        return Err(Decline::invalid(&format!("{at}.npus"), "a dimension needs at least 2 NPUs"));
    }
    Ok(d)
}

/// Hosts `npu{i}` (i the linear index, dimension 0 fastest), their routers `npu{i}.r`, then each switched
/// dimension's switches `d{k}.sw{g}` (g: the group, numbered in the order of its first NPU). Links: host–router,
/// then dimension by dimension each router (in linear order) to its ring neighbour (coordinate + 1; for 2 NPUs
/// from coordinate 0 only), to every member with a larger coordinate, or to its group's switch.
/// O(nodes + links).
pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let dims = t.req("dims", |v: &Value| {
        let dims = read::tables(v, "topology.dims")?.into_iter().map(dim).collect::<Result<Vec<_>, _>>()?;
        if dims.is_empty() {
            return Err(Decline::invalid("topology.dims", "needs at least one dimension"));
        }
        Ok(dims)
    })?;
    let npu_rate = t.opt("npu_rate", read::link_rate)?;
    let sw = Switches::read(t)?;
    let n = dims.iter().fold(1u64, |n, d| n.saturating_mul(d.npus));
    // Hosts and their routers, a switch per switched group; host–router links and each group's links.
    let (mut nodes, mut links) = (n.saturating_mul(2), n);
    for d in &dims {
        let groups = n / d.npus.max(1);
        links = links.saturating_add(groups.saturating_mul(d.links_per_group()));
        if d.shape == "switch" {
            nodes = nodes.saturating_add(groups);
        }
    }
    super::fits(nodes, links)?;
    let npu_rate = npu_rate.unwrap_or_else(|| dims.iter().fold(0u64, |r, d| r.saturating_add(d.links_per_npu().saturating_mul(d.rate))));
    let n = n as usize;
    let hosts: Vec<String> = (0..n).map(|i| format!("npu{i}")).collect();
    let routers: Vec<String> = (0..n).map(|i| format!("npu{i}.r")).collect();
    let switches: Vec<Vec<String>> = dims
        .iter()
        .enumerate()
        .map(|(k, d)| if d.shape == "switch" { (0..n / d.npus as usize).map(|g| format!("d{k}.sw{g}")).collect() } else { Vec::new() })
        .collect();
    let mut net = Network::default();
    net.nodes.extend(hosts.iter().map(|h| Node::host(h.clone())));
    net.nodes.extend(routers.iter().map(|r| sw.node(r.clone(), Some(0))));
    net.nodes.extend(switches.iter().flatten().map(|s| sw.node(s.clone(), None)));
    net.links.extend(hosts.iter().zip(&routers).map(|(h, r)| link(h.clone(), r.clone(), npu_rate, 0)));
    let mut stride = 1usize;
    for (k, d) in dims.iter().enumerate() {
        let size = d.npus as usize;
        for (i, r) in routers.iter().enumerate() {
            let x = (i / stride) % size;
            let at = |y: usize| &routers[i + (y - x) * stride];
            match d.shape {
                "ring" if size >= 3 || x == 0 => {
                    let next = (x + 1) % size;
                    net.links.push(link(r.clone(), routers[i + next * stride - x * stride].clone(), d.rate, d.delay));
                }
                "ring" => {}
                "fully_connected" => net.links.extend((x + 1..size).map(|y| link(r.clone(), at(y).clone(), d.rate, d.delay))),
                _ => net.links.push(link(r.clone(), switches[k][dim_group(i, stride, size)].clone(), d.rate, d.delay)),
            }
        }
        stride *= size;
    }
    net.policy = Some(Policy::DimensionOrder {
        dims: dims.iter().map(|d| d.npus).collect(),
        routers,
        shapes: dims.iter().map(|d| d.shape).collect(),
        switches,
    });
    Ok(net)
}
