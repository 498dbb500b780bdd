//! The hierarchical forwarding tables give, for every (switch, endpoint), exactly the port list of dense least-cost tables (brute-force Dijkstra), before and after link failures.

use fabricsim_core::routing::{mix64, Fib};
use fabricsim_core::spec::{LinkSpec, NetworkSpec, NodeKind, NodeSpec, PortSpec};
use fabricsim_core::topology::Topology;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A network under construction: nodes by name, links with weights.
#[derive(Default)]
struct Net {
    nodes: Vec<NodeSpec>,
    links: Vec<LinkSpec>,
}

impl Net {
    fn add(&mut self, name: String, kind: NodeKind) -> u32 {
        self.nodes.push(NodeSpec::new(name, kind, 0));
        self.nodes.len() as u32 - 1
    }
    fn host(&mut self, name: impl Into<String>) -> u32 {
        self.add(name.into(), NodeKind::Host)
    }
    fn switch(&mut self, name: impl Into<String>) -> u32 {
        self.add(name.into(), NodeKind::Switch)
    }
    fn link(&mut self, a: u32, b: u32, weight: u32) {
        self.links.push(LinkSpec { a, b, rate_bps: 1_000_000_000, delay_ps: 0, weight, a_end: PortSpec::default(), b_end: PortSpec::default() });
    }
    fn topo(self) -> Topology {
        Topology::build(&NetworkSpec { nodes: self.nodes, links: self.links, default_queue: Default::default(), topology: None })
            .expect("test topology builds")
    }
}

/// Leaf-spine: `leaves` leaves of `hpl` hosts each, every leaf linked `mult` times to every spine.
fn leaf_spine(leaves: u32, spines: u32, hpl: u32, mult: u32) -> Topology {
    let mut n = Net::default();
    let sp: Vec<u32> = (0..spines).map(|i| n.switch(format!("spine{i}"))).collect();
    for l in 0..leaves {
        let leaf = n.switch(format!("leaf{l}"));
        for &s in &sp {
            for _ in 0..mult {
                n.link(leaf, s, 1);
            }
        }
        for h in 0..hpl {
            let host = n.host(format!("h{l}.{h}"));
            n.link(host, leaf, 1);
        }
    }
    n.topo()
}

/// Three-tier k-ary fat-tree (k pods of k/2 edge and k/2 aggregation switches, (k/2)² cores, k/2 hosts per edge).
fn fat_tree3(k: u32) -> Topology {
    let h = k / 2;
    let mut n = Net::default();
    let cores: Vec<u32> = (0..h * h).map(|i| n.switch(format!("core{i}"))).collect();
    for p in 0..k {
        let aggs: Vec<u32> = (0..h).map(|i| n.switch(format!("p{p}.agg{i}"))).collect();
        for (i, &a) in aggs.iter().enumerate() {
            for j in 0..h {
                n.link(a, cores[i * h as usize + j as usize], 1);
            }
        }
        for e in 0..h {
            let edge = n.switch(format!("p{p}.edge{e}"));
            for &a in &aggs {
                n.link(edge, a, 1);
            }
            for x in 0..h {
                let host = n.host(format!("p{p}.e{e}.h{x}"));
                n.link(host, edge, 1);
            }
        }
    }
    n.topo()
}

/// Rail-optimized cluster as the Python family builds it: GPU–NIC weight 1, NVSwitch–NIC 3, NIC–rail, rail–spine
/// and spine–core 2, ⌈servers/spines⌉ parallel rail–spine links; one or two spine tiers.
fn rail(sus: u32, servers: u32, gpus: u32, spines: u32, tiers: u32) -> Topology {
    let mut n = Net::default();
    let mult = servers.div_ceil(spines);
    let mut nics = Vec::new();
    for u in 0..sus {
        for s in 0..servers {
            for g in 0..gpus {
                let gpu = n.host(format!("su{u}.s{s}.g{g}"));
                let nic = n.switch(format!("su{u}.s{s}.g{g}.nic"));
                n.link(gpu, nic, 1);
                nics.push(nic);
            }
        }
    }
    let mut nvs = Vec::new();
    for u in 0..sus {
        for s in 0..servers {
            nvs.push(n.switch(format!("su{u}.s{s}.nvs")));
        }
    }
    for (i, &nic) in nics.iter().enumerate() {
        n.link(nvs[i / gpus as usize], nic, 3);
    }
    let rails: Vec<u32> = (0..sus * gpus).map(|i| n.switch(format!("rail{i}"))).collect();
    for (i, &nic) in nics.iter().enumerate() {
        let i = i as u32;
        n.link(nic, rails[((i / (servers * gpus)) * gpus + i % gpus) as usize], 2);
    }
    let spine_names: Vec<u32> = (0..if tiers == 1 { spines } else { spines * sus }).map(|i| n.switch(format!("spine{i}"))).collect();
    for (i, &r) in rails.iter().enumerate() {
        let ups: &[u32] =
            if tiers == 1 { &spine_names } else { &spine_names[(i / gpus as usize) * spines as usize..(i / gpus as usize + 1) * spines as usize] };
        for &s in ups {
            for _ in 0..mult {
                n.link(r, s, 2);
            }
        }
    }
    if tiers == 2 {
        let cores: Vec<u32> = (0..gpus * mult).map(|i| n.switch(format!("core{i}"))).collect();
        for &s in &spine_names {
            for &c in &cores {
                n.link(s, c, 2);
            }
        }
    }
    n.topo()
}

/// Torus of routers (first dimension fastest), one host per router; returns the routers in linear order.
fn torus(dims: &[u32]) -> (Topology, Vec<u32>) {
    let mut n = Net::default();
    let total: u32 = dims.iter().product();
    let routers: Vec<u32> = (0..total).map(|i| n.switch(format!("r{i}"))).collect();
    let mut stride = 1;
    for &d in dims {
        for i in 0..total {
            let c = (i / stride) % d;
            let j = i - c * stride + ((c + 1) % d) * stride;
            if d > 2 || c == 0 {
                n.link(routers[i as usize], routers[j as usize], 1);
            }
        }
        stride *= d;
    }
    for i in 0..total {
        let h = n.host(format!("h{i}"));
        n.link(h, routers[i as usize], 1);
    }
    (n.topo(), routers)
}

/// A random graph with unequal weights (1..=5), parallel links, multi-homed hosts, a host-to-host cable and a
/// switch island unreachable from the rest.
fn random_weighted(seed: u64, switches: u32, hosts: u32) -> Topology {
    let mut r = seed;
    let mut next = |m: u64| {
        r = mix64(r);
        r % m
    };
    let mut n = Net::default();
    let sw: Vec<u32> = (0..switches).map(|i| n.switch(format!("s{i}"))).collect();
    for i in 1..switches {
        let j = next(i as u64) as u32;
        let w = 1 + next(5) as u32;
        n.link(sw[i as usize], sw[j as usize], w);
    }
    for _ in 0..switches * 2 {
        let (i, j) = (next(switches as u64) as u32, next(switches as u64) as u32);
        if i != j {
            let w = 1 + next(5) as u32;
            n.link(sw[i as usize], sw[j as usize], w);
        }
    }
    for x in 0..hosts {
        let h = n.host(format!("h{x}"));
        n.link(h, sw[next(switches as u64) as usize], 1);
        if x % 3 == 0 {
            n.link(h, sw[next(switches as u64) as usize], 1);
        }
    }
    let (a, b) = (n.host("cable_a"), n.host("cable_b"));
    n.link(a, b, 1);
    let island = n.switch("island");
    let hi = n.host("island_host");
    n.link(hi, island, 1);
    n.topo()
}

/// Dense reference tables, one per endpoint: per switch (node id) the expected candidate list, by Dijkstra from
/// the endpoint's attachment switch over the live links between switches. `None` marks a row to skip (an
/// endpoint whose group keeps other tables, e.g. dimension order).
fn reference(topo: &Topology, up: &[bool]) -> Vec<Vec<Vec<u32>>> {
    let n = topo.n_nodes();
    let live = |p: u32| {
        let port = &topo.ports[p as usize];
        topo.is_switch(port.peer_node) && up[port.link as usize]
    };
    let mut by_attach: Vec<Option<Vec<u64>>> = vec![None; n];
    let mut out = Vec::new();
    for &nic in &topo.endpoints {
        let attach = topo.ports[nic as usize].peer_node;
        let mut rows = vec![Vec::new(); n];
        if !topo.is_switch(attach) {
            out.push(rows);
            continue;
        }
        let dist = by_attach[attach as usize].get_or_insert_with(|| {
            let mut dist = vec![u64::MAX; n];
            let mut heap = BinaryHeap::new();
            dist[attach as usize] = 0;
            heap.push(Reverse((0u64, attach)));
            while let Some(Reverse((d, v))) = heap.pop() {
                if d != dist[v as usize] {
                    continue;
                }
                for p in topo.ports_of(v) {
                    if live(p) {
                        let w = topo.ports[p as usize].peer_node;
                        let nd = d + topo.ports[p as usize].weight as u64;
                        if nd < dist[w as usize] {
                            dist[w as usize] = nd;
                            heap.push(Reverse((nd, w)));
                        }
                    }
                }
            }
            dist
        });
        for v in 0..n as u32 {
            if !topo.is_switch(v) {
                continue;
            }
            if v == attach {
                rows[v as usize] = vec![topo.ports[nic as usize].peer_port];
            } else if dist[v as usize] != u64::MAX {
                rows[v as usize] = topo
                    .ports_of(v)
                    .filter(|&p| {
                        let w = topo.ports[p as usize].peer_node;
                        live(p) && dist[w as usize] != u64::MAX && dist[w as usize] + topo.ports[p as usize].weight as u64 == dist[v as usize]
                    })
                    .collect();
            }
        }
        out.push(rows);
    }
    out
}

/// Assert `fib` gives the reference list at every (switch, endpoint) whose group is in `groups` (None: all).
fn assert_same(name: &str, topo: &Topology, fib: &Fib, want: &[Vec<Vec<u32>>], groups: Option<&[bool]>) -> usize {
    let mut checked = 0;
    for (ep, rows) in want.iter().enumerate() {
        let attach = topo.ports[topo.endpoints[ep] as usize].peer_node;
        if let Some(g) = groups {
            if topo.is_switch(attach) && !g[group_index(topo, attach)] {
                continue;
            }
        }
        for v in 0..topo.n_nodes() as u32 {
            if topo.is_switch(v) {
                assert_eq!(fib.next_hops(v, ep as u32), &rows[v as usize][..], "{name}: switch {} toward endpoint {ep}", topo.names[v as usize]);
                checked += 1;
            }
        }
    }
    checked
}

/// The group index Fib gives an attachment switch: groups are numbered by first endpoint.
fn group_index(topo: &Topology, attach: u32) -> usize {
    let mut seen: Vec<u32> = Vec::new();
    for &nic in &topo.endpoints {
        let a = topo.ports[nic as usize].peer_node;
        if topo.is_switch(a) && !seen.contains(&a) {
            seen.push(a);
        }
    }
    seen.iter().position(|&a| a == attach).expect("attachment switch has a group")
}

/// Groups whose reference tables use a port of one of `links` (excluding the last hop to the endpoint).
fn reference_groups_using(topo: &Topology, want: &[Vec<Vec<u32>>], links: &[u32], n_groups: usize) -> Vec<u32> {
    let mut hit = vec![false; n_groups];
    for (ep, rows) in want.iter().enumerate() {
        let attach = topo.ports[topo.endpoints[ep] as usize].peer_node;
        if !topo.is_switch(attach) {
            continue;
        }
        if rows.iter().enumerate().any(|(v, r)| v as u32 != attach && r.iter().any(|&p| links.contains(&topo.ports[p as usize].link))) {
            hit[group_index(topo, attach)] = true;
        }
    }
    (0..n_groups as u32).filter(|&g| hit[g as usize]).collect()
}

/// Build, compare; then fail links in four rounds (rerouting the groups `groups_using` names, and once every
/// group), comparing after each. Both lookups are checked: the dense expansion and the classes with exceptions.
fn check(name: &str, topo: &Topology, seed: u64) {
    for dense in [true, false] {
        check_one(&format!("{name} ({})", if dense { "dense" } else { "hierarchical" }), topo, seed, dense);
    }
}

fn check_one(name: &str, topo: &Topology, seed: u64, dense: bool) {
    let n_links = topo.ports.iter().map(|p| p.link + 1).max().unwrap_or(0) as usize;
    let mut up = vec![true; n_links];
    let mut fib = Fib::build(topo);
    fib.set_dense(dense);
    assert_eq!(fib.is_dense(), dense, "{name}: small test fabrics expand unless told not to");
    let mut want = reference(topo, &up);
    let checked = assert_same(name, topo, &fib, &want, None);
    assert!(checked > 0, "{name}: nothing compared");
    assert!(fib.n_classes() <= fib.n_groups(), "{name}: more classes than groups");
    let mut r = seed;
    for round in 0..4 {
        let mut failed = Vec::new();
        for _ in 0..1 + round {
            r = mix64(r);
            let l = (r % n_links as u64) as u32;
            if up[l as usize] {
                up[l as usize] = false;
                failed.push(l);
            }
        }
        let groups = fib.groups_using(topo, &failed);
        assert_eq!(groups, reference_groups_using(topo, &want, &failed, fib.n_groups()), "{name}: groups using {failed:?}");
        let groups = if round == 2 { (0..fib.n_groups() as u32).collect() } else { groups };
        fib.reroute(topo, &up, &groups);
        assert_eq!(fib.is_dense(), dense, "{name}: a reroute keeps the lookup mode");
        want = reference(topo, &up);
        assert_same(&format!("{name} after failing {failed:?}"), topo, &fib, &want, None);
    }
}

#[test]
fn leaf_spine_tables_match_dense_reference() {
    check("leaf-spine", &leaf_spine(4, 3, 2, 1), 1);
    check("leaf-spine x2", &leaf_spine(5, 2, 3, 2), 2);
}

#[test]
fn two_and_three_tier_fat_tree_tables_match_dense_reference() {
    check("2-tier k=6", &leaf_spine(6, 3, 3, 1), 3);
    check("fat_tree3 k=4", &fat_tree3(4), 4);
    check("fat_tree3 k=6", &fat_tree3(6), 5);
}

#[test]
fn rail_optimized_tables_match_dense_reference() {
    check("rail 1 tier", &rail(2, 3, 4, 2, 1), 6);
    check("rail 2 tiers", &rail(3, 2, 2, 2, 2), 7);
    let topo = rail(4, 4, 8, 4, 1);
    let fib = Fib::build(&topo);
    // The NICs of one rail of one SU share a class: far fewer base tables than groups.
    assert_eq!(fib.n_groups(), 4 * 4 * 8);
    assert_eq!(fib.n_classes(), 4 * 8, "one class per rail switch");
}

#[test]
fn unequal_weight_tables_match_dense_reference() {
    for seed in 0..6 {
        check(&format!("random weighted {seed}"), &random_weighted(seed, 14 + seed as u32, 12), 100 + seed);
    }
}

#[test]
fn torus_least_cost_and_dimension_order_tables_match_reference() {
    let dims = [4u32, 3];
    let (topo, routers) = torus(&dims);
    check("torus least-cost", &topo, 8);
    for dense in [true, false] {
        let mut fib = Fib::build_dimension_order(&topo, &dims, &routers).expect("torus builds");
        fib.set_dense(dense);
        // Reference: one step along the first differing dimension, the shorter way (positive on a tie).
        let coord = |i: usize| [(i % 4) as u32, (i / 4) as u32];
        let expect = |v: usize, t: usize| -> Vec<u32> {
            let (mut c, tc) = (coord(v), coord(t));
            let k = (0..2).find(|&k| c[k] != tc[k]).expect("distinct routers");
            let d = dims[k];
            let upw = (tc[k] + d - c[k]) % d;
            c[k] = if upw <= d - upw { (c[k] + 1) % d } else { (c[k] + d - 1) % d };
            let w = routers[(c[0] + 4 * c[1]) as usize];
            topo.ports_of(routers[v]).filter(|&p| topo.ports[p as usize].peer_node == w).collect()
        };
        let check_dor = |fib: &Fib, skip: &[u32]| {
            for (ep, &nic) in topo.endpoints.iter().enumerate() {
                let t = routers.iter().position(|&r| r == topo.ports[nic as usize].peer_node).expect("host on a router");
                if skip.contains(&(group_index(&topo, routers[t]) as u32)) {
                    continue;
                }
                for (v, &rv) in routers.iter().enumerate() {
                    let want = if v == t { vec![topo.ports[nic as usize].peer_port] } else { expect(v, t) };
                    assert_eq!(fib.next_hops(rv, ep as u32), &want[..], "dimension order at r{v} toward h{t}");
                }
            }
        };
        check_dor(&fib, &[]);
        // A failure reroutes the groups it touches with least-cost tables; the others keep dimension order.
        let n_links = topo.ports.iter().map(|p| p.link + 1).max().unwrap_or(0) as usize;
        let mut up = vec![true; n_links];
        up[0] = false;
        let groups = fib.groups_using(&topo, &[0]);
        assert!(!groups.is_empty(), "a torus link carries some group's traffic");
        fib.reroute(&topo, &up, &groups);
        let mut mask = vec![false; fib.n_groups()];
        for &g in &groups {
            mask[g as usize] = true;
        }
        assert_same("torus rerouted groups", &topo, &fib, &reference(&topo, &up), Some(&mask));
        check_dor(&fib, &groups);
    }
}

#[test]
fn hierarchical_tables_are_far_smaller_than_dense() {
    let topo = fat_tree3(24);
    let mut fib = Fib::build(&topo);
    fib.set_dense(false);
    let switches = topo.kinds.iter().filter(|&&k| k == NodeKind::Switch).count();
    let dense = switches * fib.n_groups() * 8;
    assert!(fib.bytes() * 3 < dense, "{} B hierarchical against {dense} B dense", fib.bytes());
    assert_eq!(fib.n_classes(), 24, "one class per pod");
}
