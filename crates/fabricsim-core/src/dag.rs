//! The workload DAG executor shared by every engine: messages wait for deliveries, send completions and barriers.
//!
//! Nodes are the messages (0..M), the barriers (M..M+B) and the compute steps (M+B..M+B+C). A message becomes startable `delay` after the
//! later of its `start` time and the completion of its last dependency; a barrier completes, carrying no
//! traffic, as soon as its last dependency completes, and releases its own dependents at that instant.
//! Engines report `delivered(m)` and `sent(m)` and start the messages the DAG hands back.

use crate::units::Time;
use crate::workload::{Dep, Workload};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// CSR adjacency: the dependents of node x are `list[start[x]..start[x + 1]]`.
#[derive(Clone, Debug, Default)]
struct Csr {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Csr {
    /// Build from (predecessor, dependent) edges over `n` nodes. O(n + edges).
    fn build(n: usize, edges: impl Iterator<Item = (u32, u32)> + Clone) -> Csr {
        let mut start = vec![0u32; n + 1];
        for (p, _) in edges.clone() {
            start[p as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; start[n] as usize];
        for (p, d) in edges {
            list[fill[p as usize] as usize] = d;
            fill[p as usize] += 1;
        }
        Csr { start, list }
    }

    #[inline]
    fn of(&self, x: u32) -> &[u32] {
        &self.list[self.start[x as usize] as usize..self.start[x as usize + 1] as usize]
    }
}

/// Dependency state of one run. Invariant: `left[x]` counts the dependencies of x not yet satisfied, and
/// `ready[x]` is the latest time among x's own start time and its satisfied dependencies. A compute step
/// whose dependencies are met waits in its host's queue (lowest index first) until one of the host's
/// streams is free; it completes `duration` after it starts.
#[derive(Clone, Debug)]
pub struct Dag {
    n_msgs: u32,
    /// First compute node (M + B).
    comp0: u32,
    left: Vec<u32>,
    ready: Vec<Time>,
    delay: Vec<Time>,
    /// Dependents waiting for a node's completion (a message's delivery, a barrier's or compute step's end).
    on_done: Csr,
    /// Dependents waiting for a message to be fully sent.
    on_sent: Csr,
    /// Scratch stack for barrier cascades.
    stack: Vec<(u32, Time)>,
    comp_host: Vec<u32>,
    comp_dur: Vec<Time>,
    /// Free compute streams per network node, and the ready steps waiting for one (min-heap of step index).
    free: Vec<u32>,
    waiting: Vec<BinaryHeap<Reverse<u32>>>,
    dirty: Vec<u32>,
    /// Start and end of every compute step (Time::MAX until known).
    pub comp_start: Vec<Time>,
    pub comp_end: Vec<Time>,
}

/// What an engine must do with an item the DAG hands back: `(x, t)` with x < M starts message x at t;
/// x ≥ M is compute step `x − M` ending at t (the engine calls `compute_done` then).
pub type Released = (u32, Time);

impl Dag {
    /// Build from a validated workload over a network of `n_nodes` nodes. O(messages + barriers + compute
    /// steps + dependencies + nodes).
    pub fn new(wl: &Workload, n_nodes: usize) -> Dag {
        let m = wl.n_msgs() as u32;
        let n = wl.n_nodes();
        let comp0 = m + wl.n_barriers;
        let node = |d: u32| wl.node_of(Dep::decode(d)) as u32;
        let done_edges =
            (0..n as u32).flat_map(|x| wl.preds(x as usize).iter().filter(|&&d| !matches!(Dep::decode(d), Dep::Sent(_))).map(move |&d| (node(d), x)));
        // Any node (message, barrier, compute step) may wait for a message to be fully sent.
        let sent_edges = (0..n as u32).flat_map(|x| {
            wl.preds(x as usize).iter().filter_map(move |&d| match Dep::decode(d) {
                Dep::Sent(i) => Some((i, x)),
                _ => None,
            })
        });
        let left: Vec<u32> = (0..n).map(|x| wl.preds(x).len() as u32).collect();
        let mut ready: Vec<Time> = wl.start_ps.iter().map(|&t| Time(t)).collect();
        ready.resize(n, Time::ZERO);
        let delay: Vec<Time> = wl.delay_ps.iter().map(|&t| Time(t)).collect();
        let has_compute = wl.n_compute() > 0;
        Dag {
            n_msgs: m,
            comp0,
            left,
            ready,
            delay,
            on_done: Csr::build(n, done_edges),
            on_sent: Csr::build(m as usize, sent_edges),
            stack: Vec::new(),
            comp_host: wl.compute_host.clone(),
            comp_dur: wl.compute_ps.iter().map(|&t| Time(t)).collect(),
            free: if has_compute { wl.streams_per_node(n_nodes) } else { vec![] },
            waiting: if has_compute { (0..n_nodes).map(|_| BinaryHeap::new()).collect() } else { vec![] },
            dirty: Vec::new(),
            comp_start: vec![Time::MAX; wl.n_compute()],
            comp_end: vec![Time::MAX; wl.n_compute()],
        }
    }

    /// The messages startable from the beginning with their start times, and the compute steps that start
    /// at time 0 with their end times (barriers without dependencies complete at 0). Call once.
    pub fn initial(&mut self, out: &mut Vec<Released>) {
        // The roots are fixed before any is released: a barrier without dependencies releases its dependents
        // at once, and a dependent whose count drops to zero here must not be released a second time as a root.
        let roots: Vec<u32> = (0..self.left.len() as u32).filter(|&x| self.left[x as usize] == 0).collect();
        for x in roots {
            {
                if x < self.n_msgs {
                    out.push((x, self.ready[x as usize] + self.delay[x as usize]));
                } else if x < self.comp0 {
                    self.stack.push((x, Time::ZERO));
                    self.drain(out);
                } else {
                    self.enqueue_compute(x);
                }
            }
        }
        self.start_compute(Time::ZERO, out);
    }

    /// Message m was delivered at `now`: append what becomes startable.
    pub fn delivered(&mut self, m: u32, now: Time, out: &mut Vec<Released>) {
        self.stack.push((m, now));
        self.drain(out);
        self.start_compute(now, out);
    }

    /// Whether anything waits for message m to be fully sent (engines skip the call otherwise).
    #[inline]
    pub fn has_sent_dependents(&self, m: u32) -> bool {
        !self.on_sent.of(m).is_empty()
    }

    /// Message m was fully handed to its NIC at `now`: append what becomes startable.
    pub fn sent(&mut self, m: u32, now: Time, out: &mut Vec<Released>) {
        for i in self.on_sent.start[m as usize]..self.on_sent.start[m as usize + 1] {
            let d = self.on_sent.list[i as usize];
            self.satisfy(d, now, out);
        }
        self.drain(out);
        self.start_compute(now, out);
    }

    /// Compute step c (0-based among compute steps) ended at `now`: free its stream, release its dependents
    /// and start the next waiting steps.
    pub fn compute_done(&mut self, c: u32, now: Time, out: &mut Vec<Released>) {
        let h = self.comp_host[c as usize];
        self.free[h as usize] += 1;
        self.dirty.push(h);
        self.stack.push((self.comp0 + c, now));
        self.drain(out);
        self.start_compute(now, out);
    }

    /// Number of messages (DAG items below this are messages, the rest compute completions).
    #[inline]
    pub fn n_msgs(&self) -> u32 {
        self.n_msgs
    }

    fn enqueue_compute(&mut self, x: u32) {
        let c = x - self.comp0;
        let h = self.comp_host[c as usize];
        self.waiting[h as usize].push(Reverse(c));
        self.dirty.push(h);
    }

    /// Start waiting compute steps on every host touched since the last call, while streams are free.
    fn start_compute(&mut self, now: Time, out: &mut Vec<Released>) {
        while let Some(h) = self.dirty.pop() {
            let h = h as usize;
            while self.free[h] > 0 {
                let Some(Reverse(c)) = self.waiting[h].pop() else { break };
                self.free[h] -= 1;
                let end = now + self.comp_dur[c as usize];
                self.comp_start[c as usize] = now;
                self.comp_end[c as usize] = end;
                out.push((self.n_msgs + c, end));
            }
        }
    }

    /// Delay the workload's future by `dt` at time `now`: the ready times of nodes not yet released and the ends
    /// of running compute steps that lie after `now` (history stays). O(nodes).
    pub fn shift(&mut self, now: Time, dt: Time) {
        for (x, r) in self.ready.iter_mut().enumerate() {
            if self.left[x] > 0 && *r > now {
                *r = *r + dt;
            }
        }
        for e in self.comp_end.iter_mut() {
            if *e != Time::MAX && *e > now {
                *e = *e + dt;
            }
        }
    }

    /// Release the dependents of every completed node on the stack (barriers cascade). O(edges released).
    fn drain(&mut self, out: &mut Vec<Released>) {
        while let Some((x, t)) = self.stack.pop() {
            for i in self.on_done.start[x as usize]..self.on_done.start[x as usize + 1] {
                let d = self.on_done.list[i as usize];
                self.satisfy(d, t, out);
            }
        }
    }

    #[inline]
    fn satisfy(&mut self, d: u32, t: Time, out: &mut Vec<Released>) {
        let di = d as usize;
        debug_assert!(self.left[di] > 0, "node {d} released more often than it has dependencies");
        self.left[di] -= 1;
        self.ready[di] = self.ready[di].max(t);
        if self.left[di] == 0 {
            if d < self.n_msgs {
                out.push((d, self.ready[di] + self.delay[di]));
            } else if d < self.comp0 {
                self.stack.push((d, self.ready[di]));
            } else {
                self.enqueue_compute(d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{BarrierSpec, MessageSpec, NetworkSpec, RunSpec};

    fn msg(deps: Vec<u32>, barriers: Vec<u32>, start: u64, delay: u64) -> MessageSpec {
        MessageSpec {
            name: String::new(),
            src: 0,
            src_nic: 0,
            dst: 1,
            dst_nic: 0,
            size_bytes: 1,
            packet_bytes: 1,
            header_bytes: 0,
            start_ps: start,
            deps,
            sent_deps: vec![],
            barriers,
            delay_ps: delay,
            path: None,
        }
    }

    fn spec(messages: Vec<MessageSpec>, barriers: Vec<BarrierSpec>) -> RunSpec {
        let network = NetworkSpec { nodes: vec![], links: vec![], default_queue: Default::default(), topology: None };
        RunSpec { messages, barriers, ..RunSpec::new(1, network) }
    }

    /// m0, m1 -> barrier b0 -> m2 (delay 5), m3; b1 (no deps) -> m4 starting at 7.
    #[test]
    fn barriers_release_after_their_last_dependency() {
        let s = spec(
            vec![
                msg(vec![], vec![], 0, 0),
                msg(vec![], vec![], 3, 0),
                msg(vec![], vec![0], 0, 5),
                msg(vec![1], vec![0], 0, 0),
                msg(vec![], vec![1], 7, 0),
            ],
            vec![
                BarrierSpec { name: "b0".into(), deps: vec![0, 1], barriers: vec![] },
                BarrierSpec { name: "b1".into(), deps: vec![], barriers: vec![] },
            ],
        );
        let mut dag = Dag::new(&Workload::from_rows(&s.messages, &s.barriers), 2);
        let mut out = vec![];
        dag.initial(&mut out);
        out.sort();
        assert_eq!(out, vec![(0, Time(0)), (1, Time(3)), (4, Time(7))]);
        out.clear();
        dag.delivered(0, Time(10), &mut out);
        assert!(out.is_empty(), "b0 still waits for m1");
        dag.delivered(1, Time(20), &mut out);
        out.sort();
        assert_eq!(out, vec![(2, Time(25)), (3, Time(20))]);
    }

    /// b0 has no dependencies; b1 waits for b0; compute step c0 (10) waits for b1. Every node lies after the
    /// barrier that releases it, so `initial` meets b1 and c0 again after b0's cascade released them: each must
    /// be released once (c0 from 0 to 10, not run twice, from 10 to 20 the second time).
    #[test]
    fn a_barrier_without_dependencies_releases_later_nodes_once() {
        let mut wl = Workload::from_rows(&[], &[]);
        wl.n_barriers = 2;
        wl.compute_host = vec![0];
        wl.compute_ps = vec![10];
        // Predecessors in node order: b0 none; b1 <- b0; c0 <- b1.
        wl.pred_start = vec![0, 0, 1, 2];
        wl.pred = vec![Dep::Barrier(0).encode(), Dep::Barrier(1).encode()];
        let mut dag = Dag::new(&wl, 1);
        let mut out = vec![];
        dag.initial(&mut out);
        assert_eq!(out, vec![(0, Time(10))], "c0 (item 0 + its index) ends at 10, released once");
        assert_eq!((dag.comp_start[0], dag.comp_end[0]), (Time(0), Time(10)));
    }

    /// Host 0 runs one stream: c0 (10) and c1 (5) are ready at 0 and run in index order, c1 from 10 to 15;
    /// c2 (3) on host 1 waits for m0, delivered at 4. m0 waits for c0: it starts at 10 (+ delay 2 = 12).
    #[test]
    fn compute_steps_queue_per_host_in_index_order() {
        let mut s = spec(vec![msg(vec![], vec![], 0, 2)], vec![]);
        s.messages[0].start_ps = 0;
        let mut wl = Workload::from_rows(&s.messages, &[]);
        wl.compute_host = vec![0, 0, 1];
        wl.compute_ps = vec![10, 5, 3];
        // Predecessors in node order: m0 <- c0; c0, c1 none; c2 <- m0.
        wl.pred_start = vec![0, 1, 1, 1, 2];
        wl.pred = vec![Dep::Compute(0).encode(), Dep::Msg(0).encode()];
        let mut dag = Dag::new(&wl, 2);
        let mut out = vec![];
        dag.initial(&mut out);
        assert_eq!(out, vec![(1, Time(10))], "only c0 (item M + 0 = 1) starts; c1 waits for the stream");
        out.clear();
        dag.compute_done(0, Time(10), &mut out);
        out.sort();
        assert_eq!(out, vec![(0, Time(12)), (2, Time(15))], "m0 starts at 10 + 2; c1 runs 10..15");
        out.clear();
        dag.delivered(0, Time(4 + 12), &mut out);
        assert_eq!(out, vec![(3, Time(19))], "c2 starts when m0 is delivered, at 16, and ends at 19");
        assert_eq!(dag.comp_start, vec![Time(0), Time(10), Time(16)]);
    }

    /// A barrier may wait for a message to be fully sent: b0 <- sent(m0) and delivered(m1); m2 <- b0.
    #[test]
    fn barriers_wait_for_sent_messages() {
        let s = spec(
            vec![msg(vec![], vec![], 0, 0), msg(vec![], vec![], 0, 0), msg(vec![], vec![0], 0, 0)],
            vec![BarrierSpec { name: "b0".into(), deps: vec![1], barriers: vec![] }],
        );
        let mut wl = Workload::from_rows(&s.messages, &s.barriers);
        // Barrier b0 (node 3) waits for m1 delivered and m0 sent.
        wl.pred = vec![Dep::Barrier(0).encode(), Dep::Msg(1).encode(), Dep::Sent(0).encode()];
        wl.pred_start = vec![0, 0, 0, 1, 3];
        let mut dag = Dag::new(&wl, 2);
        let mut out = vec![];
        dag.initial(&mut out);
        out.clear();
        dag.delivered(1, Time(5), &mut out);
        assert!(out.is_empty(), "b0 still waits for m0 to be sent");
        dag.sent(0, Time(7), &mut out);
        assert_eq!(out, vec![(2, Time(7))]);
    }
}
