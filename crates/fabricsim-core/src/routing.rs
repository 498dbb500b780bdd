//! Shortest-path forwarding tables with ECMP sets, and explicit paths resolved to per-hop port sets.

use crate::error::{Error, Result};
use crate::spec::{dim_group, DimShape};
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

/// Flag in the length word of a class's base entry: some group of the class has its own entry (an exception)
/// at this switch, so `next_hops` looks there first.
const SPECIAL: u32 = 1 << 31;

/// A class key: the attachment switch's cheapest live switch neighbours with that link cost, sorted.
type Key = Vec<(u32, u64)>;

/// A slot of the exception index: key (group << 32 | switch index), or EMPTY_KEY, and the port list.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    off: u32,
    len: u32,
}

/// Key of a free slot (no group has index u32::MAX).
const EMPTY_KEY: u64 = u64::MAX;

/// Largest groups × switches for which the tables are also expanded into a dense array (8 MiB of entries):
/// small fabrics, where the packet engine's per-hop lookup should be a single load.
const DENSE_MAX_ENTRIES: usize = 1 << 20;

/// One group's own port list at one switch, where it differs from its class's base entry.
#[derive(Clone, Copy, Debug)]
struct Exception {
    /// Dense switch index.
    sw: u32,
    /// Range into `Fib::hops`.
    off: u32,
    len: u32,
}

/// For every switch and every destination endpoint (host NIC), the equal-cost egress ports.
/// Invariant: every listed port lies on a least-cost path through switches only (hosts never transit), and
/// the list at switch v toward endpoint e is exactly the ports p of v, in port order, whose peer w is a live
/// switch with dist(w, attach(e)) + weight(p) = dist(v, attach(e)); empty if unreachable.
///
/// Endpoints attached to the same switch (a *group*) share every entry but their attachment switch's, which is
/// their own NIC's port. Groups are stored hierarchically: a group's *key* is the set of its attachment switch's
/// cheapest live neighbours (with that link cost); groups with the same key (a fat-tree pod's edge switches, a
/// rail switch's NICs) form a *class* with one base table per switch, computed from one multi-source search of the
/// key. The base distance bounds every member's true distance from above and equals it outside a small region
/// around the member, found by a search from the member pruned wherever it does not beat the base; the member's
/// entries that differ from the base (the region and its neighbours) are its *exceptions*.
/// Memory O(classes × switches + exceptions + distinct port lists + endpoints), against O(groups × switches)
/// for dense tables. Small fabrics (groups × switches ≤ DENSE_MAX_ENTRIES) are also expanded into dense
/// entries, so that the packet engine's per-hop lookup stays one load; both lookups give the same lists.
#[derive(Clone, Debug)]
pub struct Fib {
    /// Dense switch index of each node, or NONE for hosts.
    switch_idx: Vec<u32>,
    /// Group of each endpoint (NONE for a host-to-host cable), and the attachment switch of each group.
    ep_group: Vec<u32>,
    group_attach: Vec<u32>,
    n_groups: usize,
    n_switches: usize,
    /// Class of each group.
    group_class: Vec<u32>,
    /// (offset, len | SPECIAL?) into `hops` for (class * n_switches + switch_idx); len 0 = unreachable.
    base: Vec<(u32, u32)>,
    /// Per group: its exceptions, `exc[start..end]`, sorted by switch index (ranges replaced by a reroute stay
    /// unused in `exc`).
    group_exc: Vec<(u32, u32)>,
    exc: Vec<Exception>,
    /// The live exceptions again, as an open-addressing hash table (linear probing, at most half full, a power
    /// of two long) so that `next_hops` finds one in O(1) expected.
    exc_index: Vec<Slot>,
    /// When groups × switches ≤ DENSE_MAX_ENTRIES: every group's entries expanded, (offset, len) for
    /// (group * n_switches + switch_idx), the attachment switch's own entry empty (unused); else empty.
    dense: Vec<(u32, u32)>,
    /// Whether `dense` may be filled (see `set_dense`).
    dense_allowed: bool,
    /// Index into `hops` of each endpoint's last hop (its attachment switch's port toward it).
    ep_hop: Vec<u32>,
    hops: Vec<u32>,
}

/// What the searches read, compacted from the topology (Port is large), plus scratch reused across searches.
struct Graph {
    /// Per port: its peer when that is a switch and the link is live, else NONE; and its weight.
    peer: Vec<u32>,
    weight: Vec<u64>,
    /// Dial's ring of buckets (largest weight + 1 of them).
    buckets: Vec<Vec<u32>>,
}

impl Graph {
    /// O(ports).
    fn new(topo: &Topology, up: Option<&[bool]>) -> Graph {
        let peer = topo
            .ports
            .iter()
            .map(|p| if topo.is_switch(p.peer_node) && up.is_none_or(|u| u[p.link as usize]) { p.peer_node } else { NONE })
            .collect();
        let weight: Vec<u64> = topo.ports.iter().map(|p| p.weight.max(1) as u64).collect();
        let wmax = weight.iter().copied().max().unwrap_or(1) as usize;
        Graph { peer, weight, buckets: vec![Vec::new(); wmax + 1] }
    }

    /// Give node v the distance d if that improves on its label and stays below its bound (appending it to `order`
    /// the first time it is labelled) and queue it in d's bucket; whether it did. O(1).
    #[inline]
    fn label(&mut self, v: u32, d: u64, bound: Option<&[u64]>, dist: &mut [u64], order: &mut Vec<u32>) -> bool {
        if d >= dist[v as usize] || bound.is_some_and(|b| d >= b[v as usize]) {
            return false;
        }
        if dist[v as usize] == u64::MAX {
            order.push(v);
        }
        dist[v as usize] = d;
        let nb = self.buckets.len() as u64;
        self.buckets[(d % nb) as usize].push(v);
        true
    }

    /// Least-cost search from `seeds` (node, starting distance ≤ the largest weight) with Dial's bucket ring
    /// (weights are small integers). A node gets a distance only if it is below `bound[node]`; every node given
    /// one is appended to `order` once. `dist` must be u64::MAX wherever the caller wants a fresh label.
    /// O(labelled nodes' ports + largest distance).
    fn search(&mut self, topo: &Topology, seeds: &[(u32, u64)], bound: Option<&[u64]>, dist: &mut [u64], order: &mut Vec<u32>) {
        let nb = self.buckets.len() as u64;
        let mut pending = 0usize;
        for &(v, d0) in seeds {
            pending += self.label(v, d0, bound, dist, order) as usize;
        }
        let mut d = 0u64;
        while pending > 0 {
            let slot = (d % nb) as usize;
            let mut bucket = std::mem::take(&mut self.buckets[slot]);
            pending -= bucket.len();
            for &v in &bucket {
                if dist[v as usize] != d {
                    continue; // improved since it was queued
                }
                for p in topo.ports_of(v) {
                    let w = self.peer[p as usize];
                    if w == NONE {
                        continue;
                    }
                    let nd = d + self.weight[p as usize];
                    pending += self.label(w, nd, bound, dist, order) as usize;
                }
            }
            bucket.clear();
            if self.buckets[slot].is_empty() {
                self.buckets[slot] = bucket;
            }
            d += 1;
        }
    }

    /// Append to `out` the ports of switch `v` (at distance `dv`) on least-cost paths: live switch peer w with
    /// dist(w) + weight = dv, in port order. O(ports of v).
    #[inline]
    fn entry(&self, topo: &Topology, v: u32, dv: u64, dist: impl Fn(u32) -> u64, out: &mut Vec<u32>) {
        if dv == u64::MAX {
            return;
        }
        for p in topo.ports_of(v) {
            let w = self.peer[p as usize];
            if w != NONE {
                let dw = dist(w);
                if dw != u64::MAX && dw + self.weight[p as usize] == dv {
                    out.push(p);
                }
            }
        }
    }
}

impl Fib {
    /// Least-cost tables (see the type's invariant): one multi-source search per class and one pruned search
    /// per group. O(classes × (nodes + ports) + Σ groups' regions' ports) time; O(classes × switches) entries.
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

    /// Allow (the default) or forbid the dense expansion of small fabrics' tables; forbidden, `next_hops`
    /// always answers from the classes and exceptions (same lists, less memory; tests use it to check that path).
    /// O(groups × switches) when it expands.
    pub fn set_dense(&mut self, allow: bool) {
        self.dense_allowed = allow;
        self.expand_dense();
    }

    /// Whether the tables are currently expanded into the dense array.
    pub fn is_dense(&self) -> bool {
        !self.dense.is_empty()
    }

    /// Number of classes (base tables) currently held.
    pub fn n_classes(&self) -> usize {
        self.base.len() / self.n_switches.max(1)
    }

    /// Bytes held by the tables (allocated capacity of every array). O(1).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        (self.switch_idx.capacity()
            + self.ep_group.capacity()
            + self.group_attach.capacity()
            + self.group_class.capacity()
            + self.ep_hop.capacity()
            + self.hops.capacity())
            * size_of::<u32>()
            + self.base.capacity() * size_of::<(u32, u32)>()
            + self.group_exc.capacity() * size_of::<(u32, u32)>()
            + self.exc.capacity() * size_of::<Exception>()
            + self.exc_index.capacity() * size_of::<Slot>()
            + self.dense.capacity() * size_of::<(u32, u32)>()
    }

    /// The groups whose tables use a port of one of `links` (after those links go down, only these change:
    /// a link on no least-cost path leaves every distance as it was). Links out of range are ignored.
    /// O(base entries + exceptions + groups × log exceptions).
    pub fn groups_using(&self, topo: &Topology, links: &[u32]) -> Vec<u32> {
        let mut down = vec![false; topo.ports.iter().map(|p| p.link as usize + 1).max().unwrap_or(0)];
        for &l in links {
            if let Some(x) = down.get_mut(l as usize) {
                *x = true;
            }
        }
        let uses = |o: u32, l: u32| self.hops[o as usize..(o + (l & !SPECIAL)) as usize].iter().any(|&p| down[topo.ports[p as usize].link as usize]);
        let ns = self.n_switches;
        // Per class, the switches whose base entry uses a down link.
        let mut hit_at: Vec<Vec<u32>> = vec![Vec::new(); self.n_classes()];
        for (k, &(o, l)) in self.base.iter().enumerate() {
            if uses(o, l) {
                hit_at[k / ns].push((k % ns) as u32);
            }
        }
        (0..self.n_groups as u32)
            .filter(|&g| {
                let (s, e) = self.group_exc[g as usize];
                let ex = &self.exc[s as usize..e as usize];
                if ex.iter().any(|x| uses(x.off, x.len)) {
                    return true;
                }
                let own = self.switch_idx[self.group_attach[g as usize] as usize];
                hit_at[self.group_class[g as usize] as usize].iter().any(|&sw| sw != own && ex.binary_search_by_key(&sw, |x| x.sw).is_err())
            })
            .collect()
    }

    /// Recompute the least-cost tables of `groups` over the links with `up[link]`; the other groups keep
    /// theirs. Replaced port lists stay unused in `hops`; base tables no group uses any more are dropped.
    /// O(new classes × (nodes + ports) + Σ regions + classes × switches).
    pub fn reroute(&mut self, topo: &Topology, up: &[bool], groups: &[u32]) {
        self.fill(topo, Some(up), groups);
        self.drop_unused_classes();
    }

    /// Least-cost tables for `groups` over the live links: groups are sorted into classes by key (see the type),
    /// each class gets a new base table, and each group its exceptions.
    fn fill(&mut self, topo: &Topology, up: Option<&[bool]>, groups: &[u32]) {
        let mut graph = Graph::new(topo, up);
        let ns = self.n_switches;
        let n = topo.n_nodes();
        // Classes in order of first appearance, each with its key and members.
        let mut class_of_key: std::collections::HashMap<Key, usize> = std::collections::HashMap::new();
        let mut classes: Vec<(Key, Vec<u32>)> = Vec::new();
        let mut cheapest = vec![u64::MAX; n];
        for &g in groups {
            let a = self.group_attach[g as usize];
            let mut key: Key = Vec::new();
            for p in topo.ports_of(a) {
                let w = graph.peer[p as usize];
                if w != NONE && w != a {
                    if cheapest[w as usize] == u64::MAX {
                        key.push((w, 0));
                    }
                    cheapest[w as usize] = cheapest[w as usize].min(graph.weight[p as usize]);
                }
            }
            for s in key.iter_mut() {
                s.1 = cheapest[s.0 as usize];
                cheapest[s.0 as usize] = u64::MAX;
            }
            let c = key.iter().map(|s| s.1).min().unwrap_or(0);
            key.retain(|s| s.1 == c);
            key.sort_unstable();
            let next = classes.len();
            let k = *class_of_key.entry(key.clone()).or_insert(next);
            if k == next {
                classes.push((key, Vec::new()));
            }
            classes[k].1.push(g);
        }
        let mut bdist = vec![u64::MAX; n];
        let mut ldist = vec![u64::MAX; n];
        let mut order: Vec<u32> = Vec::new();
        let mut region: Vec<u32> = Vec::new();
        let mut cand_mark = vec![u32::MAX; n];
        let mut cand: Vec<u32> = Vec::new();
        let mut scratch: Vec<u32> = Vec::new();
        let mut mine: Vec<Exception> = Vec::new();
        let mut last = vec![(0u32, 0u32); ns];
        for (key, members) in &classes {
            let k = self.base.len() / ns.max(1);
            // Base table of the class: one multi-source search from the key.
            for &v in &order {
                bdist[v as usize] = u64::MAX;
            }
            order.clear();
            graph.search(topo, key, None, &mut bdist, &mut order);
            self.base.resize(self.base.len() + ns, (0, 0));
            for &v in &order {
                let start = self.hops.len() as u32;
                graph.entry(topo, v, bdist[v as usize], |w| bdist[w as usize], &mut self.hops);
                let len = self.hops.len() as u32 - start;
                let si = self.switch_idx[v as usize] as usize;
                // Share the port list of this switch's previous entry when equal (an edge switch lists the same
                // uplinks toward every remote class): the tables stay O(distinct sets), not O(entries × ECMP).
                let (po, pl) = last[si];
                let entry = if pl == len && len > 1 && self.hops[po as usize..(po + pl) as usize] == self.hops[start as usize..] {
                    self.hops.truncate(start as usize);
                    (po, pl)
                } else {
                    (start, len)
                };
                last[si] = entry;
                self.base[k * ns + si] = entry;
            }
            // Each member: its true distances beat the base only in the region its pruned search labels; entries
            // can differ only there and next to it.
            for &g in members {
                let a = self.group_attach[g as usize];
                for &v in &region {
                    ldist[v as usize] = u64::MAX;
                }
                region.clear();
                graph.search(topo, &[(a, 0)], Some(&bdist), &mut ldist, &mut region);
                cand.clear();
                for &r in &region {
                    for v in std::iter::once(r).chain(topo.ports_of(r).map(|p| graph.peer[p as usize])) {
                        if v != NONE && v != a && cand_mark[v as usize] != g {
                            cand_mark[v as usize] = g;
                            cand.push(v);
                        }
                    }
                }
                mine.clear();
                for &v in &cand {
                    scratch.clear();
                    let dist = |w: u32| ldist[w as usize].min(bdist[w as usize]);
                    graph.entry(topo, v, dist(v), dist, &mut scratch);
                    let si = self.switch_idx[v as usize] as usize;
                    let (o, l) = self.base[k * ns + si];
                    if self.hops[o as usize..(o + (l & !SPECIAL)) as usize] != scratch[..] {
                        let off = self.hops.len() as u32;
                        self.hops.extend_from_slice(&scratch);
                        mine.push(Exception { sw: si as u32, off, len: scratch.len() as u32 });
                        self.base[k * ns + si].1 |= SPECIAL;
                    }
                }
                mine.sort_unstable_by_key(|x| x.sw);
                let start = self.exc.len() as u32;
                self.exc.extend_from_slice(&mine);
                self.group_exc[g as usize] = (start, self.exc.len() as u32);
                self.group_class[g as usize] = k as u32;
            }
        }
        self.base.shrink_to_fit();
        self.exc.shrink_to_fit();
        self.hops.shrink_to_fit();
        self.index_exceptions();
        self.expand_dense();
    }

    /// Fill `dense` from the classes and exceptions when the fabric is small enough (see DENSE_MAX_ENTRIES),
    /// else leave it empty. O(groups × switches) when filled.
    fn expand_dense(&mut self) {
        let ns = self.n_switches;
        if !self.dense_allowed || self.n_groups.saturating_mul(ns) > DENSE_MAX_ENTRIES {
            self.dense = Vec::new();
            return;
        }
        let mut dense = Vec::with_capacity(self.n_groups * ns);
        for g in 0..self.n_groups {
            let k = self.group_class[g] as usize;
            let row = dense.len();
            dense.extend(self.base[k * ns..(k + 1) * ns].iter().map(|&(o, l)| (o, l & !SPECIAL)));
            let (s, e) = self.group_exc[g];
            for x in &self.exc[s as usize..e as usize] {
                dense[row + x.sw as usize] = (x.off, x.len);
            }
            dense[row + self.switch_idx[self.group_attach[g] as usize] as usize] = (0, 0);
        }
        self.dense = dense;
    }

    /// Home slot of `key` in a table of 2^`bits` slots (Fibonacci hashing). O(1).
    #[inline]
    fn home(key: u64, bits: u32) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// The index's size exponent: 2^bits slots.
    #[inline]
    fn index_bits(&self) -> u32 {
        self.exc_index.len().trailing_zeros()
    }

    /// Rebuild `exc_index` from every group's live exceptions. O(exceptions).
    fn index_exceptions(&mut self) {
        let live: usize = self.group_exc.iter().map(|&(s, e)| (e - s) as usize).sum();
        let bits = (2 * live.max(1)).next_power_of_two().trailing_zeros().max(1);
        let mask = (1usize << bits) - 1;
        let mut index = vec![Slot { key: EMPTY_KEY, off: 0, len: 0 }; 1 << bits];
        for (g, &(s, e)) in self.group_exc.iter().enumerate() {
            for x in &self.exc[s as usize..e as usize] {
                let key = (g as u64) << 32 | x.sw as u64;
                let mut h = Fib::home(key, bits);
                while index[h].key != EMPTY_KEY {
                    h = (h + 1) & mask;
                }
                index[h] = Slot { key, off: x.off, len: x.len };
            }
        }
        self.exc_index = index;
    }

    /// Drop the base tables no group refers to (after a reroute moved groups to new classes) and renumber the
    /// rest. O(classes × switches).
    fn drop_unused_classes(&mut self) {
        let ns = self.n_switches.max(1);
        let nk = self.n_classes();
        let mut used = vec![false; nk];
        for &k in &self.group_class {
            used[k as usize] = true;
        }
        if used.iter().all(|&u| u) {
            return;
        }
        let mut renum = vec![NONE; nk];
        let mut kept = 0usize;
        for k in 0..nk {
            if used[k] {
                renum[k] = kept as u32;
                if kept != k {
                    self.base.copy_within(k * ns..(k + 1) * ns, kept * ns);
                }
                kept += 1;
            }
        }
        self.base.truncate(kept * ns);
        self.base.shrink_to_fit();
        for k in self.group_class.iter_mut() {
            *k = renum[*k as usize];
        }
    }

    /// Dimension-order tables on a torus whose router at linear coordinate i is `routers[i]` (first
    /// dimension fastest): `build_dimension_order_with`, every dimension a ring.
    pub fn build_dimension_order(topo: &Topology, dims: &[u32], routers: &[u32]) -> Result<Fib> {
        Fib::build_dimension_order_with(topo, dims, routers, &[], &[])
    }

    /// Dimension-order tables on routers at linear coordinates (`routers[i]` at i, the first dimension fastest),
    /// each dimension's groups (routers that differ only in its coordinate) joined as `shapes[k]` says (empty:
    /// every one a ring). Toward a host on router t, router v takes its link toward the first dimension k where
    /// their coordinates differ: on a ring to the neighbour one step the shorter way around (positive on a
    /// tie), fully connected to the router with t's coordinate k, switched to its group's switch
    /// (`switches[k][group]`), which sends it on to the member with t's coordinate k. Each group is its own
    /// class (dense tables: such fabrics are small). Errors name a host attached to a switch off the grid, or a
    /// missing link. O(groups × (routers × dims + switches)).
    pub fn build_dimension_order_with(topo: &Topology, dims: &[u32], routers: &[u32], shapes: &[DimShape], switches: &[Vec<u32>]) -> Result<Fib> {
        let mut fib = Fib::skeleton(topo);
        let ns = fib.n_switches;
        let mut coord_of = vec![NONE; topo.n_nodes()];
        for (i, &r) in routers.iter().enumerate() {
            coord_of[r as usize] = i as u32;
        }
        let shape = |k: usize| shapes.get(k).copied().unwrap_or(DimShape::Ring);
        let strides: Vec<usize> = dims
            .iter()
            .scan(1usize, |s, &d| {
                let here = *s;
                *s *= d as usize;
                Some(here)
            })
            .collect();
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
        let hops_to = |fib: &mut Fib, g: usize, v: u32, w: u32| -> Result<()> {
            let start = fib.hops.len() as u32;
            for p in topo.ports_of(v) {
                if topo.ports[p as usize].peer_node == w {
                    fib.hops.push(p);
                }
            }
            if fib.hops.len() as u32 == start {
                return Err(Error::spec(
                    "routing.policy.routers",
                    format!("no link from '{}' to its dimension-order next hop '{}'", topo.names[v as usize], topo.names[w as usize]),
                ));
            }
            fib.base[g * ns + fib.switch_idx[v as usize] as usize] = (start, fib.hops.len() as u32 - start);
            Ok(())
        };
        fib.base = vec![(0, 0); fib.n_groups * ns];
        for g in 0..fib.n_groups {
            fib.group_class[g] = g as u32;
            let attach = fib.group_attach[g];
            let t = coord_of[attach as usize];
            if t == NONE {
                return Err(Error::spec(
                    "routing.policy.routers",
                    format!("hosts attach to '{}', which is not a router of the dimension-order grid", topo.names[attach as usize]),
                ));
            }
            let tc = coords(t);
            for (i, &v) in routers.iter().enumerate() {
                if v == attach {
                    continue;
                }
                let mut c = coords(i as u32);
                let Some(k) = (0..dims.len()).find(|&k| c[k] != tc[k]) else {
                    return Err(Error::spec("routing.policy.routers", format!("'{}' is listed twice", topo.names[v as usize])));
                };
                let d = dims[k];
                let w = match shape(k) {
                    DimShape::Ring => {
                        let up = (tc[k] + d - c[k]) % d; // steps the positive way
                        c[k] = if up <= d - up { (c[k] + 1) % d } else { (c[k] + d - 1) % d };
                        routers[linear(&c) as usize]
                    }
                    DimShape::FullyConnected => {
                        c[k] = tc[k];
                        routers[linear(&c) as usize]
                    }
                    DimShape::Switch => switches[k][dim_group(i, strides[k], d as usize)],
                };
                hops_to(&mut fib, g, v, w)?;
            }
            for (k, sws) in switches.iter().enumerate() {
                for (gi, &s) in sws.iter().enumerate() {
                    let (stride, d) = (strides[k], dims[k] as usize);
                    let first = gi % stride + gi / stride * stride * d;
                    hops_to(&mut fib, g, s, routers[first + tc[k] as usize * stride])?;
                }
            }
        }
        fib.expand_dense();
        Ok(fib)
    }

    /// Switch indices, endpoint groups and their last hops, with no class yet. O(nodes + endpoints).
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
        Fib {
            switch_idx,
            ep_group,
            group_attach,
            n_groups,
            n_switches: ns as usize,
            group_class: vec![0; n_groups],
            base: Vec::new(),
            group_exc: vec![(0, 0); n_groups],
            exc: Vec::new(),
            exc_index: vec![Slot { key: EMPTY_KEY, off: 0, len: 0 }; 2],
            dense: Vec::new(),
            dense_allowed: true,
            ep_hop,
            hops,
        }
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

    /// Equal-cost egress ports at switch `v` toward endpoint `ep` (empty if unreachable): the group's own
    /// exception where the class entry is flagged (one hash probe, expected O(1)), else the class entry. O(1).
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
        let si = self.switch_idx[v as usize];
        if !self.dense.is_empty() {
            let (o, l) = self.dense[g as usize * self.n_switches + si as usize];
            return &self.hops[o as usize..(o + l) as usize];
        }
        let (o, l) = self.base[self.group_class[g as usize] as usize * self.n_switches + si as usize];
        if l & SPECIAL == 0 {
            return &self.hops[o as usize..(o + l) as usize];
        }
        let key = (g as u64) << 32 | si as u64;
        let bits = self.index_bits();
        let mask = self.exc_index.len() - 1;
        let mut h = Fib::home(key, bits);
        loop {
            let x = self.exc_index[h];
            if x.key == key {
                return &self.hops[x.off as usize..(x.off + x.len) as usize];
            }
            if x.key == EMPTY_KEY {
                return &self.hops[o as usize..(o + (l & !SPECIAL)) as usize];
            }
            h = (h + 1) & mask;
        }
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
            return Err(Error::spec(
                field,
                format!("path ends at '{}', not at the destination '{}'", name(topo, *nodes.last().unwrap()), name(topo, dst)),
            ));
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
            topology: None,
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
