//! Routing policies that pick a flow's whole path at compile time (Valiant, PXN) on top of the forwarding tables.
//!
//! A policy path is an explicit node path, resolved into the compiled path table like a user's own, so both
//! engines follow it hop by hop. Its random choices are hashes of the flow's salt: a seed routes identically in
//! every engine and on every run.

use crate::error::{Error, Result};
use crate::routing::{mix64, Fib};
use crate::spec::PolicySpec;
use crate::topology::{Topology, NONE};

/// What a policy needs per node, precomputed from the spec. Memory O(nodes).
#[derive(Clone, Debug)]
pub enum PathPolicy {
    /// Forwarding tables only (least-cost or dimension-order).
    Tables,
    /// Valiant: the group of each router (NONE elsewhere), the routers of each group, and an endpoint attached
    /// to each router (NONE if it has no host), the target of the walk to the intermediate router.
    Valiant { group_of: Vec<u32>, groups: Vec<Vec<u32>>, router_ep: Vec<u32> },
    /// PXN: the (server, rail) of each GPU host (NONE elsewhere), and each server's NVSwitch and NIC switches.
    Pxn { server_of: Vec<u32>, rail_of: Vec<u32>, nvswitch: Vec<u32>, nics: Vec<Vec<u32>> },
}

impl PathPolicy {
    /// Precompute the policy's node maps. O(nodes + endpoints + listed nodes).
    pub fn new(policy: &PolicySpec, topo: &Topology) -> PathPolicy {
        let n = topo.n_nodes();
        match policy {
            PolicySpec::Minimal | PolicySpec::DimensionOrder { .. } => PathPolicy::Tables,
            PolicySpec::Valiant { groups } => {
                let mut group_of = vec![NONE; n];
                for (g, rs) in groups.iter().enumerate() {
                    for &r in rs {
                        group_of[r as usize] = g as u32;
                    }
                }
                let mut router_ep = vec![NONE; n];
                for (ep, &nic) in topo.endpoints.iter().enumerate() {
                    let r = topo.ports[nic as usize].peer_node as usize;
                    if router_ep[r] == NONE {
                        router_ep[r] = ep as u32;
                    }
                }
                PathPolicy::Valiant { group_of, groups: groups.clone(), router_ep }
            }
            PolicySpec::Pxn { servers } => {
                let (mut server_of, mut rail_of) = (vec![NONE; n], vec![NONE; n]);
                for (s, srv) in servers.iter().enumerate() {
                    for (r, &gpu) in srv.gpus.iter().enumerate() {
                        server_of[gpu as usize] = s as u32;
                        rail_of[gpu as usize] = r as u32;
                    }
                }
                PathPolicy::Pxn {
                    server_of,
                    rail_of,
                    nvswitch: servers.iter().map(|s| s.nvswitch).collect(),
                    nics: servers.iter().map(|s| s.nics.clone()).collect(),
                }
            }
        }
    }

    /// The policy's node path for a flow from NIC port `src_port` to endpoint `dst_ep`, or `None` where the
    /// forwarding tables route it (same group, same server or same rail, or no policy). `field` names the flow
    /// in errors (formatted only for an error). O(path length).
    pub fn path(&self, fib: &Fib, topo: &Topology, src_port: u32, dst_ep: u32, salt: u64, field: &dyn Fn() -> String) -> Result<Option<Vec<u32>>> {
        let src = topo.ports[src_port as usize].node;
        let dst_port = topo.endpoints[dst_ep as usize];
        let dst = topo.ports[dst_port as usize].node;
        let unreachable =
            || Error::spec(format!("{}.dst", field()), format!("'{}' is unreachable from '{}'", topo.names[dst as usize], topo.names[src as usize]));
        match self {
            PathPolicy::Tables => Ok(None),
            PathPolicy::Valiant { group_of, groups, router_ep } => {
                let (rs, rd) = (topo.ports[src_port as usize].peer_node, topo.ports[dst_port as usize].peer_node);
                let (gs, gd) = (group_of[rs as usize], group_of[rd as usize]);
                if gs == NONE || gd == NONE || gs == gd || groups.len() < 3 {
                    return Ok(None);
                }
                // A third group uniformly (skipping the two ends), then one of its routers uniformly.
                let mut gi = (mix64(salt ^ 0x7661_6C69_616E_7431) % (groups.len() as u64 - 2)) as u32;
                for skip in [gs.min(gd), gs.max(gd)] {
                    if gi >= skip {
                        gi += 1;
                    }
                }
                let rs_of = &groups[gi as usize];
                let ri = rs_of[(mix64(salt ^ 0x7661_6C69_616E_7432) % rs_of.len() as u64) as usize];
                let ep_i = router_ep[ri as usize];
                if ep_i == NONE {
                    return Err(Error::spec(
                        "routing.policy.groups",
                        format!("router '{}' has no host: Valiant routing walks the tables toward a router's host", topo.names[ri as usize]),
                    ));
                }
                let mut path = fib.walk(topo, src_port, ep_i, salt).ok_or_else(unreachable)?;
                let at = path.iter().position(|&v| v == ri).ok_or_else(unreachable)?;
                path.truncate(at);
                fib.walk_from(topo, ri, dst_ep, salt.rotate_left(17), &mut path).ok_or_else(unreachable)?;
                Ok(Some(without_loops(path)))
            }
            PathPolicy::Pxn { server_of, rail_of, nvswitch, nics } => {
                let (ss, sd) = (server_of[src as usize], server_of[dst as usize]);
                if ss == NONE || sd == NONE || ss == sd || rail_of[src as usize] == rail_of[dst as usize] {
                    return Ok(None);
                }
                let (nic_src, nic_via) = (nics[ss as usize][rail_of[src as usize] as usize], nics[ss as usize][rail_of[dst as usize] as usize]);
                if topo.ports[src_port as usize].peer_node != nic_src {
                    return Ok(None); // the flow leaves by another port than the GPU's own NIC switch
                }
                let mut path = vec![src, nic_src, nvswitch[ss as usize]];
                fib.walk_from(topo, nic_via, dst_ep, salt, &mut path).ok_or_else(unreachable)?;
                Ok(Some(without_loops(path)))
            }
        }
    }
}

/// The path with every cycle cut out: from the first visit of a node straight to its last. O(len²) worst case,
/// paths being a handful of hops.
fn without_loops(path: Vec<u32>) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(path.len());
    for v in path {
        if let Some(k) = out.iter().position(|&u| u == v) {
            out.truncate(k);
        }
        out.push(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{LinkSpec, NetworkSpec, NodeKind, NodeSpec, PolicySpec, PortSpec, RailServerSpec};

    /// A network from names (a leading 'h' marks a host) and weighted links by name.
    fn net(names: &[&str], links: &[(&str, &str, u32)]) -> (Topology, Vec<String>) {
        let idx = |n: &str| names.iter().position(|&x| x == n).unwrap() as u32;
        let spec = NetworkSpec {
            nodes: names.iter().map(|n| NodeSpec::new(*n, if n.starts_with('h') { NodeKind::Host } else { NodeKind::Switch }, 0)).collect(),
            links: links
                .iter()
                .map(|&(a, b, w)| LinkSpec {
                    a: idx(a),
                    b: idx(b),
                    rate_bps: 1_000_000_000,
                    delay_ps: 0,
                    weight: w,
                    a_end: PortSpec::default(),
                    b_end: PortSpec::default(),
                })
                .collect(),
            default_queue: Default::default(),
            topology: None,
        };
        (Topology::build(&spec).unwrap(), names.iter().map(|s| s.to_string()).collect())
    }

    fn names(topo: &Topology, path: &[u32]) -> Vec<String> {
        path.iter().map(|&v| topo.names[v as usize].clone()).collect()
    }

    fn ep(topo: &Topology, host: &str) -> u32 {
        let v = topo.names.iter().position(|n| n == host).unwrap() as u32;
        topo.port_ep[topo.nic_port(v, 0) as usize]
    }

    fn port(topo: &Topology, host: &str) -> u32 {
        topo.nic_port(topo.names.iter().position(|n| n == host).unwrap() as u32, 0)
    }

    /// Weights steer the tables: s0 reaches s3 via s1 (cost 2) and never via s2 (cost 1 + 5 = 6).
    #[test]
    fn least_cost_tables_follow_the_weights() {
        let (topo, _) = net(
            &["ha", "s0", "s1", "s2", "s3", "hb"],
            &[("ha", "s0", 1), ("s0", "s1", 1), ("s1", "s3", 1), ("s0", "s2", 1), ("s2", "s3", 5), ("s3", "hb", 1)],
        );
        let fib = Fib::build(&topo);
        for salt in 0..16 {
            assert_eq!(names(&topo, &fib.walk(&topo, port(&topo, "ha"), ep(&topo, "hb"), salt).unwrap()), ["ha", "s0", "s1", "s3", "hb"]);
        }
    }

    /// A ring of 5 routers (dims [5]) with a host each: from r0 toward r3 the negative way is shorter (2 < 3
    /// steps), so the path is r0, r4, r3; toward r2 positive (2 < 3): r0, r1, r2. On a ring of 4, r0 to r2 ties
    /// (2 and 2): the positive way.
    #[test]
    fn dimension_order_takes_the_shorter_way_around() {
        for (k, dst, want) in [(5, 3, vec!["r0", "r4", "r3"]), (5, 2, vec!["r0", "r1", "r2"]), (4, 2, vec!["r0", "r1", "r2"])] {
            let rs: Vec<String> = (0..k).map(|i| format!("r{i}")).collect();
            let hs: Vec<String> = (0..k).map(|i| format!("h{i}")).collect();
            let all: Vec<&str> = rs.iter().chain(&hs).map(|s| s.as_str()).collect();
            let mut links: Vec<(&str, &str, u32)> = (0..k).map(|i| (hs[i].as_str(), rs[i].as_str(), 1)).collect();
            links.extend((0..k).map(|i| (rs[i].as_str(), rs[(i + 1) % k].as_str(), 1)));
            let (topo, _) = net(&all, &links);
            let routers: Vec<u32> = (0..k as u32).collect();
            let fib = Fib::build_dimension_order(&topo, &[k as u32], &routers).unwrap();
            let p = fib.walk(&topo, port(&topo, "h0"), ep(&topo, &format!("h{dst}")), 7).unwrap();
            assert_eq!(names(&topo, &p[1..p.len() - 1]), want, "ring of {k} toward r{dst}");
        }
    }

    /// Three groups of one router each, fully connected: Valiant sends g0 → g1 through g2's router.
    #[test]
    fn valiant_goes_through_a_third_group() {
        let (topo, _) = net(
            &["h0", "h1", "h2", "r0", "r1", "r2"],
            &[("h0", "r0", 1), ("h1", "r1", 1), ("h2", "r2", 1), ("r0", "r1", 1), ("r1", "r2", 1), ("r0", "r2", 1)],
        );
        let fib = Fib::build(&topo);
        let pol = PathPolicy::new(&PolicySpec::Valiant { groups: vec![vec![3], vec![4], vec![5]] }, &topo);
        for salt in 0..8 {
            let p = pol.path(&fib, &topo, port(&topo, "h0"), ep(&topo, "h1"), salt, &|| "m".into()).unwrap().unwrap();
            assert_eq!(names(&topo, &p), ["h0", "r0", "r2", "r1", "h1"]);
        }
        // Within a group (here: a host on the same router) the tables route.
        assert!(pol.path(&fib, &topo, port(&topo, "h0"), ep(&topo, "h0"), 1, &|| "m".into()).unwrap().is_none());
    }

    /// Two servers × two rails: GPU (s0, rail 0) to GPU (s1, rail 1) crosses s0's NVSwitch to its rail-1 NIC and
    /// stays on rail 1; same-rail traffic keeps the tables.
    #[test]
    fn pxn_moves_to_the_destination_rail_over_nvlink() {
        let (topo, _) = net(
            &["h00", "h01", "h10", "h11", "n00", "n01", "n10", "n11", "v0", "v1", "rail0", "rail1", "spine"],
            &[
                ("h00", "n00", 1),
                ("h01", "n01", 1),
                ("h10", "n10", 1),
                ("h11", "n11", 1),
                ("n00", "v0", 3),
                ("n01", "v0", 3),
                ("n10", "v1", 3),
                ("n11", "v1", 3),
                ("n00", "rail0", 2),
                ("n10", "rail0", 2),
                ("n01", "rail1", 2),
                ("n11", "rail1", 2),
                ("rail0", "spine", 2),
                ("rail1", "spine", 2),
            ],
        );
        let fib = Fib::build(&topo);
        // Without PXN the tables cross rails at the spine (cost 2+2+2+2 = 8 < 3+3+2+2 = 10 via v0).
        let plain = fib.walk(&topo, port(&topo, "h00"), ep(&topo, "h11"), 3).unwrap();
        assert_eq!(names(&topo, &plain), ["h00", "n00", "rail0", "spine", "rail1", "n11", "h11"]);
        let servers = vec![
            RailServerSpec { nvswitch: 8, gpus: vec![0, 1], nics: vec![4, 5] },
            RailServerSpec { nvswitch: 9, gpus: vec![2, 3], nics: vec![6, 7] },
        ];
        let pol = PathPolicy::new(&PolicySpec::Pxn { servers }, &topo);
        let p = pol.path(&fib, &topo, port(&topo, "h00"), ep(&topo, "h11"), 3, &|| "m".into()).unwrap().unwrap();
        assert_eq!(names(&topo, &p), ["h00", "n00", "v0", "n01", "rail1", "n11", "h11"]);
        assert!(pol.path(&fib, &topo, port(&topo, "h00"), ep(&topo, "h10"), 3, &|| "m".into()).unwrap().is_none());
        assert!(pol.path(&fib, &topo, port(&topo, "h00"), ep(&topo, "h01"), 3, &|| "m".into()).unwrap().is_none());
    }

    #[test]
    fn loops_are_cut() {
        assert_eq!(without_loops(vec![1, 2, 3, 2, 4]), vec![1, 2, 4]);
        assert_eq!(without_loops(vec![1, 2, 3]), vec![1, 2, 3]);
    }
}
