//! Shortest-path forwarding tables with ECMP sets, and explicit paths resolved to per-hop port sets.

use crate::error::{Error, Result};
use crate::topology::{Topology, NONE};

/// splitmix64 finaliser: a fast, well-mixed 64-bit hash.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The ECMP salt of flow `flow` under per-flow hashing: every engine picks the same paths for a seed.
#[inline]
pub fn flow_salt(seed: u64, flow: u32) -> u64 {
    mix64(seed ^ mix64(flow as u64))
}

/// The ECMP salt of a message (or UDP source) under per-message ECMP: independent of the per-flow salt and
/// of event order, so every engine routes a given (seed, message) identically.
#[inline]
pub fn message_salt(seed: u64, flow: u32) -> u64 {
    mix64(flow_salt(seed, flow) ^ 0x6D65_7373_6167_6521)
}

/// The ECMP choice at node `v` among `n` candidates for a flow or message with hash `salt`.
#[inline]
pub fn ecmp_index(salt: u64, v: u32, n: usize) -> usize {
    (mix64(salt ^ (v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) % n as u64) as usize
}

/// For every switch and every destination endpoint (host NIC), the equal-cost egress ports.
/// Invariant: every listed port lies on a minimum-hop path through switches only (hosts never transit).
/// Endpoints attached to the same switch (a *group*) share every table entry but their attachment switch's,
/// which is their own NIC's port; so the tables are stored per (switch, group).
/// Memory O(switches × groups + total ECMP entries + endpoints); build O(groups × (nodes + ports) + endpoints).
#[derive(Clone, Debug)]
pub struct Fib {
    /// Dense switch index of each node, or NONE for hosts.
    switch_idx: Vec<u32>,
    /// Group of each endpoint (NONE for a host-to-host cable), and the attachment switch of each group.
    ep_group: Vec<u32>,
    group_attach: Vec<u32>,
    n_groups: usize,
    n_switches: usize,
    /// (offset, len) into `hops` for (group * n_switches + switch_idx), group-major so that building one
    /// group's tables writes one contiguous block; len 0 = unreachable.
    entries: Vec<(u32, u32)>,
    /// Index into `hops` of each endpoint's last hop (its attachment switch's port toward it).
    ep_hop: Vec<u32>,
    hops: Vec<u32>,
}

impl Fib {
    /// Least-cost tables: one search per attachment switch, breadth-first when every link weight is 1 and
    /// Dial's bucket queue otherwise (weights are small integers). O(groups × (nodes + ports) · log) time, O(switches × groups) entries.
    pub fn build(topo: &Topology) -> Fib {
        let mut fib = Fib::skeleton(topo);
        let all: Vec<u32> = (0..fib.n_groups as u32).collect();
        fib.fill(topo, None, &all);
        fib
    }

    /// Number of endpoint groups (attachment switches).
    pub fn n_groups(&self) -> usize {
        self.n_groups
    }

    /// The groups whose tables use a port of one of `links` (after those links go down, only these change:
    /// a link on no least-cost path leaves every distance as it was). O(table entries).
    pub fn groups_using(&self, topo: &Topology, links: &[u32]) -> Vec<u32> {
        let mut hit = vec![false; self.n_groups];
        for (k, &(o, l)) in self.entries.iter().enumerate() {
            let g = k / self.n_switches.max(1);
            if !hit[g] && self.hops[o as usize..(o + l) as usize].iter().any(|&p| links.contains(&topo.ports[p as usize].link)) {
                hit[g] = true;
            }
        }
        (0..self.n_groups as u32).filter(|&g| hit[g as usize]).collect()
    }

    /// Recompute the least-cost tables of `groups` over the links with `up[link]`; the other groups keep
    /// theirs. Replaced entries leave their old port lists unused in `hops`. O(|groups| × (nodes + ports) · log).
    pub fn reroute(&mut self, topo: &Topology, up: &[bool], groups: &[u32]) {
        self.fill(topo, Some(up), groups);
    }

    /// Least-cost tables for `groups`: one search per attachment switch over the live links, breadth-first when
    /// every link weight is 1 and Dial's bucket queue otherwise.
    fn fill(&mut self, topo: &Topology, up: Option<&[bool]>, groups: &[u32]) {
        let unit = topo.ports.iter().all(|p| p.weight == 1);
        // Compact copies of what the searches read (Port is large): per port its peer, or NONE when the peer is
        // a host or the link is down, and its weight.
        let peer: Vec<u32> = topo
            .ports
            .iter()
            .map(|p| if topo.is_switch(p.peer_node) && up.map_or(true, |u| u[p.link as usize]) { p.peer_node } else { NONE })
            .collect();
        let weight: Vec<u64> = topo.ports.iter().map(|p| p.weight as u64).collect();
        let n = topo.n_nodes();
        let mut dist = vec![u64::MAX; n];
        let mut order: Vec<u32> = Vec::new();
        let mut frontier: Vec<u32> = Vec::new();
        let mut next: Vec<u32> = Vec::new();
        let wmax = weight.iter().copied().max().unwrap_or(1) as usize;
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); wmax + 1];
        let mut last = vec![(0u32, 0u32); self.switch_idx.iter().filter(|&&x| x != NONE).count()];
        for &g in groups {
            let g = g as usize;
            let attach = self.group_attach[g];
            for &v in &order {
                dist[v as usize] = u64::MAX;
            }
            order.clear();
            dist[attach as usize] = 0;
            order.push(attach);
            if unit {
                frontier.clear();
                frontier.push(attach);
                let mut d = 0;
                while !frontier.is_empty() {
                    next.clear();
                    for &v in &frontier {
                        for p in topo.ports_of(v) {
                            let w = peer[p as usize];
                            if w != NONE && dist[w as usize] == u64::MAX {
                                dist[w as usize] = d + 1;
                                next.push(w);
                                order.push(w);
                            }
                        }
                    }
                    std::mem::swap(&mut frontier, &mut next);
                    d += 1;
                }
            } else {
                // Dial's algorithm: link weights are small integers, so a ring of wmax + 1 buckets replaces the
                // heap (entries whose distance has improved since are skipped when their bucket comes up).
                let nb = buckets.len();
                buckets[0].push(attach);
                let (mut d, mut pending) = (0u64, 1usize);
                while pending > 0 {
                    let mut bucket = std::mem::take(&mut buckets[(d % nb as u64) as usize]);
                    pending -= bucket.len();
                    for &v in &bucket {
                        if dist[v as usize] != d {
                            continue;
                        }
                        for p in topo.ports_of(v) {
                            let w = peer[p as usize];
                            if w == NONE {
                                continue;
                            }
                            let nd = d + weight[p as usize];
                            if nd < dist[w as usize] {
                                if dist[w as usize] == u64::MAX {
                                    order.push(w);
                                }
                                dist[w as usize] = nd;
                                buckets[(nd % nb as u64) as usize].push(w);
                                pending += 1;
                            }
                        }
                    }
                    bucket.clear();
                    let slot = (d % nb as u64) as usize;
                    if buckets[slot].is_empty() {
                        buckets[slot] = bucket;
                    }
                    d += 1;
                }
            }
            let ns = last.len();
            self.entries[g * ns..(g + 1) * ns].fill((0, 0));
            for &v in &order[1..] {
                let start = self.hops.len() as u32;
                for p in topo.ports_of(v) {
                    let w = peer[p as usize];
                    if w != NONE && dist[w as usize] != u64::MAX && dist[w as usize] + weight[p as usize] == dist[v as usize] {
                        self.hops.push(p);
                    }
                }
                let len = self.hops.len() as u32 - start;
                let si = self.switch_idx[v as usize] as usize;
                // Share the port list of this switch's previous entry when equal (a fat-tree edge switch lists the
                // same uplinks toward every remote group): the tables stay O(distinct sets), not O(entries × ECMP).
                let (po, pl) = last[si];
                let entry = if pl == len && len > 1 && self.hops[po as usize..(po + pl) as usize] == self.hops[start as usize..] {
                    self.hops.truncate(start as usize);
                    (po, pl)
                } else {
                    (start, len)
                };
                last[si] = entry;
                self.entries[g * ns + si] = entry;
            }
        }
    }

    /// Dimension-order tables on a torus whose router at linear coordinate i is `routers[i]` (first
    /// dimension fastest): toward a host on router t, router v takes its link to the neighbour one step along
    /// the first dimension where their coordinates differ, the shorter way around (positive on a tie).
    /// Errors name a host attached to a switch off the torus, or a missing torus link. O(groups × routers × dims).
    pub fn build_dimension_order(topo: &Topology, dims: &[u32], routers: &[u32]) -> Result<Fib> {
        let mut fib = Fib::skeleton(topo);
        let ns = fib.n_switches;
        let mut coord_of = vec![NONE; topo.n_nodes()];
        for (i, &r) in routers.iter().enumerate() {
            coord_of[r as usize] = i as u32;
        }
        let coords = |mut i: u32| -> Vec<u32> {
            dims.iter()
                .map(|&d| {
                    let c = i % d;
                    i /= d;
                    c
                })
                .collect()
        };
        let linear = |c: &[u32]| -> u32 { c.iter().zip(dims).rev().fold(0, |acc, (&x, &d)| acc * d + x) };
        for g in 0..fib.n_groups {
            let attach = fib.group_attach[g];
            let t = coord_of[attach as usize];
            if t == NONE {
                return Err(Error::spec(
                    "routing.policy.routers",
                    format!("hosts attach to '{}', which is not a router of the torus", topo.names[attach as usize]),
                ));
            }
            let tc = coords(t);
            for (i, &v) in routers.iter().enumerate() {
                if v == attach {
                    continue;
                }
                let mut c = coords(i as u32);
                let k = (0..dims.len()).find(|&k| c[k] != tc[k]).expect("distinct routers differ somewhere");
                let d = dims[k];
                let up = (tc[k] + d - c[k]) % d; // steps the positive way
                c[k] = if up <= d - up { (c[k] + 1) % d } else { (c[k] + d - 1) % d };
                let w = routers[linear(&c) as usize];
                let start = fib.hops.len() as u32;
                for p in topo.ports_of(v) {
                    if topo.ports[p as usize].peer_node == w {
                        fib.hops.push(p);
                    }
                }
                if fib.hops.len() as u32 == start {
                    return Err(Error::spec(
                        "routing.policy.routers",
                        format!("no link from '{}' to its torus neighbour '{}'", topo.names[v as usize], topo.names[w as usize]),
                    ));
                }
                fib.entries[g * ns + fib.switch_idx[v as usize] as usize] = (start, fib.hops.len() as u32 - start);
            }
        }
        Ok(fib)
    }

    /// Switch indices, endpoint groups and their last hops, with every table entry empty. O(nodes + endpoints).
    fn skeleton(topo: &Topology) -> Fib {
        let n = topo.n_nodes();
        let mut switch_idx = vec![NONE; n];
        let mut ns = 0u32;
        for (v, idx) in switch_idx.iter_mut().enumerate() {
            if topo.is_switch(v as u32) {
                *idx = ns;
                ns += 1;
            }
        }
        let n_ep = topo.endpoints.len();
        let mut group_of_switch = vec![NONE; ns as usize];
        let mut group_attach: Vec<u32> = Vec::new();
        let mut ep_group = vec![NONE; n_ep];
        let mut ep_hop = vec![NONE; n_ep];
        let mut hops: Vec<u32> = Vec::new();
        for (ep, &nic) in topo.endpoints.iter().enumerate() {
            let attach = topo.ports[nic as usize].peer_node;
            if !topo.is_switch(attach) {
                continue; // host-to-host cable: no switch routes to it
            }
            let s = switch_idx[attach as usize] as usize;
            if group_of_switch[s] == NONE {
                group_of_switch[s] = group_attach.len() as u32;
                group_attach.push(attach);
            }
            ep_group[ep] = group_of_switch[s];
            ep_hop[ep] = hops.len() as u32;
            hops.push(topo.ports[nic as usize].peer_port);
        }
        let n_groups = group_attach.len();
        let entries = vec![(0u32, 0u32); ns as usize * n_groups];
        Fib { switch_idx, ep_group, group_attach, n_groups, n_switches: ns as usize, entries, ep_hop, hops }
    }

    /// A node path from the source NIC `src_port` to endpoint `dst_ep` over the tables, each ECMP choice a
    /// hash of `salt` and the node; `None` if the tables do not reach it. O(path length).
    pub fn walk(&self, topo: &Topology, src_port: u32, dst_ep: u32, salt: u64) -> Option<Vec<u32>> {
        let port = &topo.ports[src_port as usize];
        let mut path = vec![port.node];
        self.walk_from(topo, port.peer_node, dst_ep, salt, &mut path)?;
        Some(path)
    }

    /// Append the nodes from switch (or host) `v` to the host of `dst_ep` onto `path`. O(path length).
    pub fn walk_from(&self, topo: &Topology, mut v: u32, dst_ep: u32, salt: u64, path: &mut Vec<u32>) -> Option<()> {
        let dst = topo.ports[topo.endpoints[dst_ep as usize] as usize].node;
        let limit = path.len() + topo.n_nodes() + 1;
        while v != dst {
            if !topo.is_switch(v) || path.len() > limit {
                return None;
            }
            path.push(v);
            let c = self.next_hops(v, dst_ep);
            if c.is_empty() {
                return None;
            }
            v = topo.ports[c[ecmp_index(salt, v, c.len())] as usize].peer_node;
        }
        path.push(dst);
        Some(())
    }

    /// Equal-cost egress ports at switch `v` toward endpoint `ep` (empty if unreachable). O(1).
    #[inline]
    pub fn next_hops(&self, v: u32, ep: u32) -> &[u32] {
        let g = self.ep_group[ep as usize];
        if g == NONE {
            return &[];
        }
        if self.group_attach[g as usize] == v {
            let i = self.ep_hop[ep as usize] as usize;
            return &self.hops[i..i + 1];
        }
        let (o, l) = self.entries[g as usize * self.n_switches + self.switch_idx[v as usize] as usize];
        &self.hops[o as usize..(o + l) as usize]
    }

    /// Whether a packet leaving NIC port `src_port` can reach endpoint `dst_ep` over the tables.
    pub fn reachable(&self, topo: &Topology, src_port: u32, dst_ep: u32) -> bool {
        let port = &topo.ports[src_port as usize];
        if topo.port_ep[port.peer_port as usize] == dst_ep {
            return true;
        }
        topo.is_switch(port.peer_node) && !self.next_hops(port.peer_node, dst_ep).is_empty()
    }
}

/// Explicit paths, each resolved to one candidate-port set per hop (parallel links give several).
#[derive(Clone, Debug, Default)]
pub struct PathTable {
    /// Per path: range into `hops`.
    paths: Vec<(u32, u32)>,
    /// Per hop: range into `ports`.
    hops: Vec<(u32, u32)>,
    ports: Vec<u32>,
}

impl PathTable {
    /// Resolve a node path from NIC `src_port` to NIC `dst_port`; returns the path id.
    /// `field` names the spec field for errors. O(path length × node degree).
    pub fn add(&mut self, topo: &Topology, field: &str, nodes: &[u32], src_port: u32, dst_port: u32) -> Result<u32> {
        let src = topo.ports[src_port as usize].node;
        let dst = topo.ports[dst_port as usize].node;
        if nodes.len() < 2 {
            return Err(Error::spec(field, "a path needs at least the source and the destination"));
        }
        if nodes[0] != src {
            return Err(Error::spec(field, format!("path starts at '{}', not at the source '{}'", name(topo, nodes[0]), name(topo, src))));
        }
        if *nodes.last().unwrap() != dst {
            return Err(Error::spec(field, format!("path ends at '{}', not at the destination '{}'", name(topo, *nodes.last().unwrap()), name(topo, dst))));
        }
        let hop_start = self.hops.len() as u32;
        for i in 0..nodes.len() - 1 {
            let (u, w) = (nodes[i], nodes[i + 1]);
            if u as usize >= topo.n_nodes() || w as usize >= topo.n_nodes() {
                return Err(Error::spec(field, format!("node index out of range at hop {i}")));
            }
            if i > 0 && !topo.is_switch(u) {
                return Err(Error::spec(field, format!("'{}' is a host; hosts do not forward", name(topo, u))));
            }
            let start = self.ports.len() as u32;
            if i == 0 {
                if topo.ports[src_port as usize].peer_node != w {
                    return Err(Error::spec(field, format!("the source NIC is not connected to '{}'", name(topo, w))));
                }
                self.ports.push(src_port);
            } else if i == nodes.len() - 2 {
                let p = topo.ports[dst_port as usize].peer_port;
                if topo.ports[p as usize].node != u {
                    return Err(Error::spec(field, format!("the destination NIC is not connected to '{}'", name(topo, u))));
                }
                self.ports.push(p);
            } else {
                for p in topo.ports_of(u) {
                    if topo.ports[p as usize].peer_node == w {
                        self.ports.push(p);
                    }
                }
                if self.ports.len() as u32 == start {
                    return Err(Error::spec(field, format!("no link between '{}' and '{}'", name(topo, u), name(topo, w))));
                }
            }
            self.hops.push((start, self.ports.len() as u32 - start));
        }
        self.paths.push((hop_start, self.hops.len() as u32 - hop_start));
        Ok(self.paths.len() as u32 - 1)
    }

    /// Candidate ports for hop `hop` (0 = leaving the source NIC) of path `path`.
    #[inline]
    pub fn hop_ports(&self, path: u32, hop: u32) -> &[u32] {
        let (hs, hl) = self.paths[path as usize];
        debug_assert!(hop < hl, "hop {hop} beyond path length {hl}");
        let (o, l) = self.hops[(hs + hop) as usize];
        &self.ports[o as usize..(o + l) as usize]
    }
}

fn name(topo: &Topology, v: u32) -> String {
    topo.names.get(v as usize).cloned().unwrap_or_else(|| format!("#{v}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{LinkSpec, NetworkSpec, NodeKind, NodeSpec, PortSpec};

    fn link(a: u32, b: u32) -> LinkSpec {
        LinkSpec { a, b, rate_bps: 1_000_000_000, delay_ps: 0, weight: 1, a_end: PortSpec::default(), b_end: PortSpec::default() }
    }

    fn node(name: &str, kind: NodeKind) -> NodeSpec {
        NodeSpec::new(name, kind, 0)
    }

    /// h0 - s0 = {s1, s2} = s3 - h1: two equal-cost paths; s0's table toward h1 lists both.
    #[test]
    fn ecmp_sets_list_every_equal_cost_port() {
        let net = NetworkSpec {
            nodes: vec![
                node("h0", NodeKind::Host),
                node("s0", NodeKind::Switch),
                node("s1", NodeKind::Switch),
                node("s2", NodeKind::Switch),
                node("s3", NodeKind::Switch),
                node("h1", NodeKind::Host),
            ],
            links: vec![link(0, 1), link(1, 2), link(1, 3), link(2, 4), link(3, 4), link(4, 5)],
            default_queue: Default::default(),
        };
        let topo = Topology::build(&net).unwrap();
        let fib = Fib::build(&topo);
        let ep_h1 = topo.port_ep[topo.nic_port(5, 0) as usize];
        let hops: Vec<u32> = fib.next_hops(1, ep_h1).iter().map(|&p| topo.ports[p as usize].peer_node).collect();
        assert_eq!(hops, vec![2, 3]);
        assert_eq!(fib.next_hops(4, ep_h1).len(), 1);
        assert!(fib.reachable(&topo, topo.nic_port(0, 0), ep_h1));
        let mut paths = PathTable::default();
        let id = paths.add(&topo, "p", &[0, 1, 3, 4, 5], topo.nic_port(0, 0), topo.nic_port(5, 0)).unwrap();
        assert_eq!(topo.ports[paths.hop_ports(id, 1)[0] as usize].peer_node, 3);
        assert!(paths.add(&topo, "p", &[0, 1, 4, 5], topo.nic_port(0, 0), topo.nic_port(5, 0)).is_err());
    }
}
