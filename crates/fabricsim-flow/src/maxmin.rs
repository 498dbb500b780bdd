//! Max-min fair rates by progressive filling over capacitated resources, re-solved per connected component.
//!
//! Flows use resources (directed links) with weights (1 on a single path; fractions when a flow is spread
//! over several paths) and may carry their own rate cap. The allocation is the weighted max-min fair one:
//! every flow is frozen at the level where one of its resources (or its cap) saturates. Because max-min
//! fairness decomposes over the connected components of the flow–resource graph, a change (a flow starting
//! or finishing) only re-solves the component it touches; the other rates are unchanged by construction.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A heap entry: (level, item, version); items < n_res are resources, the rest flow caps.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry(f64, u32, u32);

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on the level; ties by item for determinism.
        o.0.total_cmp(&self.0).then_with(|| o.1.cmp(&self.1))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The solver state. Invariants: `on_res[r]` lists exactly the active flows using r, and `rate[f]` is the
/// max-min fair rate of every active flow f after each `solve`.
#[derive(Clone, Debug, Default)]
pub struct MaxMin {
    cap: Vec<f64>,
    /// Per flow: (resource, weight) pairs; empty when inactive.
    uses: Vec<Vec<(u32, f64)>>,
    flow_cap: Vec<f64>,
    pub rate: Vec<f64>,
    on_res: Vec<Vec<u32>>,
    // Scratch, indexed by resource / flow, valid where the matching epoch is current.
    rem: Vec<f64>,
    wsum: Vec<f64>,
    ver: Vec<u32>,
    res_epoch: Vec<u32>,
    flow_epoch: Vec<u32>,
    frozen_epoch: Vec<u32>,
    epoch: u32,
    comp_flows: Vec<u32>,
    comp_res: Vec<u32>,
    heap: BinaryHeap<Entry>,
    /// Total flow entries visited by `solve` (a measure of the incremental work).
    pub work: u64,
}

impl MaxMin {
    /// A solver over resources with capacities `cap` (bits/s) and room for `n_flows` flows.
    pub fn new(cap: Vec<f64>, n_flows: usize) -> MaxMin {
        let n = cap.len();
        MaxMin {
            cap,
            uses: vec![Vec::new(); n_flows],
            flow_cap: vec![f64::INFINITY; n_flows],
            rate: vec![0.0; n_flows],
            on_res: vec![Vec::new(); n],
            rem: vec![0.0; n],
            wsum: vec![0.0; n],
            ver: vec![0; n],
            res_epoch: vec![0; n],
            flow_epoch: vec![0; n_flows],
            frozen_epoch: vec![0; n_flows],
            ..Default::default()
        }
    }

    /// Activate flow f on `uses` (resource, weight > 0) with an optional rate cap. O(path length).
    pub fn add(&mut self, f: u32, uses: Vec<(u32, f64)>, cap: Option<f64>) {
        debug_assert!(self.uses[f as usize].is_empty(), "flow {f} is already active");
        debug_assert!(uses.iter().all(|&(_, w)| w > 0.0), "weights must be positive");
        for &(r, _) in &uses {
            self.on_res[r as usize].push(f);
        }
        self.uses[f as usize] = uses;
        self.flow_cap[f as usize] = cap.unwrap_or(f64::INFINITY);
    }

    /// Deactivate flow f; returns its resources (to seed the re-solve). O(Σ flows on its resources).
    pub fn remove(&mut self, f: u32) -> Vec<(u32, f64)> {
        let uses = std::mem::take(&mut self.uses[f as usize]);
        for &(r, _) in &uses {
            let list = &mut self.on_res[r as usize];
            let i = list.iter().position(|&x| x == f).expect("an active flow is listed on its resources");
            list.swap_remove(i);
        }
        self.rate[f as usize] = 0.0;
        uses
    }

    /// Set resource r's capacity (bits/s) from the next `solve` on; the caller seeds r into the re-solve. O(1).
    pub fn set_cap(&mut self, r: u32, cap: f64) {
        self.cap[r as usize] = cap;
    }

    /// Whether flow f is active.
    #[inline]
    pub fn active(&self, f: u32) -> bool {
        !self.uses[f as usize].is_empty()
    }

    #[inline]
    pub fn uses(&self, f: u32) -> &[(u32, f64)] {
        &self.uses[f as usize]
    }

    /// Collect the connected component(s) reached from the seed flows and seed resources (active flows only).
    /// Returns the component's flows; `solve` then re-solves exactly them. O(component size).
    pub fn component(&mut self, seed_flows: &[u32], seed_res: &[u32]) -> &[u32] {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.res_epoch.iter_mut().for_each(|e| *e = 0);
            self.flow_epoch.iter_mut().for_each(|e| *e = 0);
            self.frozen_epoch.iter_mut().for_each(|e| *e = 0);
            self.epoch = 1;
        }
        let e = self.epoch;
        self.comp_flows.clear();
        self.comp_res.clear();
        let mut stack: Vec<u32> = Vec::new();
        for &r in seed_res {
            self.visit_res(r, &mut stack);
        }
        for &f in seed_flows {
            if self.active(f) && self.flow_epoch[f as usize] != e {
                self.flow_epoch[f as usize] = e;
                stack.push(f);
            }
        }
        while let Some(f) = stack.pop() {
            self.comp_flows.push(f);
            for k in 0..self.uses[f as usize].len() {
                let r = self.uses[f as usize][k].0;
                self.visit_res(r, &mut stack);
            }
        }
        &self.comp_flows
    }

    /// Add resource r to the component being collected (once per epoch) and push its unvisited flows.
    /// O(flows on r).
    #[inline]
    fn visit_res(&mut self, r: u32, stack: &mut Vec<u32>) {
        let e = self.epoch;
        if self.res_epoch[r as usize] == e {
            return;
        }
        self.res_epoch[r as usize] = e;
        self.comp_res.push(r);
        for &f in &self.on_res[r as usize] {
            if self.flow_epoch[f as usize] != e {
                self.flow_epoch[f as usize] = e;
                stack.push(f);
            }
        }
    }

    /// Progressive filling on the component last returned by `component`: sets `rate` of its flows.
    /// O((Σ path lengths) · log(resources)) for the component.
    pub fn solve(&mut self) {
        let e = self.epoch;
        self.heap.clear();
        for &r in &self.comp_res {
            let ri = r as usize;
            self.rem[ri] = self.cap[ri];
            self.wsum[ri] = self.on_res[ri].iter().map(|&f| weight(&self.uses[f as usize], r)).sum();
            self.ver[ri] = self.ver[ri].wrapping_add(1);
            if self.wsum[ri] > 0.0 {
                self.heap.push(Entry(self.rem[ri] / self.wsum[ri], r, self.ver[ri]));
            }
        }
        let n_res = self.cap.len() as u32;
        for &f in &self.comp_flows {
            if self.flow_cap[f as usize].is_finite() {
                self.heap.push(Entry(self.flow_cap[f as usize], n_res + f, 0));
            }
        }
        let mut level = 0.0f64;
        while let Some(Entry(key, item, ver)) = self.heap.pop() {
            if item >= n_res {
                let f = item - n_res;
                if self.frozen_epoch[f as usize] != e {
                    level = level.max(key);
                    self.freeze(f, level);
                }
                continue;
            }
            let ri = item as usize;
            if ver != self.ver[ri] || self.wsum[ri] <= 0.0 {
                continue;
            }
            level = level.max(key);
            let flows = std::mem::take(&mut self.on_res[ri]);
            for &f in &flows {
                if self.frozen_epoch[f as usize] != e {
                    self.freeze(f, level);
                }
            }
            self.on_res[ri] = flows;
        }
        debug_assert!(self.comp_flows.iter().all(|&f| self.frozen_epoch[f as usize] == e), "every flow is frozen");
    }

    fn freeze(&mut self, f: u32, level: f64) {
        self.frozen_epoch[f as usize] = self.epoch;
        self.rate[f as usize] = level;
        self.work += self.uses[f as usize].len() as u64;
        for k in 0..self.uses[f as usize].len() {
            let (r, w) = self.uses[f as usize][k];
            let ri = r as usize;
            self.rem[ri] -= w * level;
            self.wsum[ri] -= w;
            self.ver[ri] = self.ver[ri].wrapping_add(1);
            if self.wsum[ri] > 1e-12 {
                self.heap.push(Entry((self.rem[ri] / self.wsum[ri]).max(level), r, self.ver[ri]));
            } else {
                self.wsum[ri] = 0.0;
            }
        }
    }
}

#[inline]
fn weight(uses: &[(u32, f64)], r: u32) -> f64 {
    uses.iter().filter(|&&(x, _)| x == r).map(|&(_, w)| w).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve_all(mm: &mut MaxMin, flows: &[u32]) {
        mm.component(flows, &[]);
        mm.solve();
    }

    /// Three flows on a 10 and a 4 unit link: f0 on both, f1 on the 10, f2 on the 4.
    /// The 4-link saturates first at 2 each (f0, f2); f1 then takes 10 - 2 = 8.
    #[test]
    fn hand_computed_allocation() {
        let mut mm = MaxMin::new(vec![10.0, 4.0], 3);
        mm.add(0, vec![(0, 1.0), (1, 1.0)], None);
        mm.add(1, vec![(0, 1.0)], None);
        mm.add(2, vec![(1, 1.0)], None);
        solve_all(&mut mm, &[0, 1, 2]);
        assert_eq!(mm.rate, vec![2.0, 8.0, 2.0]);
        // f2 leaves: the 4-link (share 4) still saturates before the 10-link (share 5): f0 = 4, f1 = 6.
        let res: Vec<u32> = mm.remove(2).iter().map(|&(r, _)| r).collect();
        mm.component(&[], &res);
        mm.solve();
        assert_eq!(&mm.rate[..2], &[4.0, 6.0]);
    }

    /// A cap below the fair share frees capacity for the others; weights count fractional use.
    #[test]
    fn caps_and_weights() {
        let mut mm = MaxMin::new(vec![12.0], 3);
        mm.add(0, vec![(0, 1.0)], Some(2.0));
        mm.add(1, vec![(0, 1.0)], None);
        mm.add(2, vec![(0, 0.5)], None);
        solve_all(&mut mm, &[0, 1, 2]);
        // 2 + x + 0.5x = 12  =>  x = 20/3 for f1 and f2 alike.
        assert_eq!(mm.rate[0], 2.0);
        assert!((mm.rate[1] - 20.0 / 3.0).abs() < 1e-12 && (mm.rate[2] - 20.0 / 3.0).abs() < 1e-12);
    }

    /// Components are independent: solving one leaves the other's rates alone.
    #[test]
    fn components_are_solved_separately() {
        let mut mm = MaxMin::new(vec![10.0, 10.0], 3);
        mm.add(0, vec![(0, 1.0)], None);
        mm.add(1, vec![(1, 1.0)], None);
        assert_eq!(mm.component(&[0], &[]), &[0]);
        mm.solve();
        assert_eq!(mm.rate, vec![10.0, 0.0, 0.0]);
        mm.add(2, vec![(1, 1.0)], None);
        let mut comp = mm.component(&[2], &[]).to_vec();
        comp.sort();
        assert_eq!(comp, vec![1, 2]);
        mm.solve();
        assert_eq!(mm.rate, vec![10.0, 5.0, 5.0]);
    }
}
