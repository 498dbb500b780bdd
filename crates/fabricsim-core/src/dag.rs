//! The workload DAG executor shared by every engine: messages wait for deliveries, send completions and barriers.
//!
//! Nodes are the messages (0..M) and the barriers (M..M+B). A message becomes startable `delay` after the
//! later of its `start` time and the completion of its last dependency; a barrier completes, carrying no
//! traffic, as soon as its last dependency completes, and releases its own dependents at that instant.
//! Engines report `delivered(m)` and `sent(m)` and start the messages the DAG hands back.

use crate::spec::RunSpec;
use crate::units::Time;

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
/// `ready[x]` is the latest time among x's own start time and its satisfied dependencies.
#[derive(Clone, Debug)]
pub struct Dag {
    n_msgs: u32,
    left: Vec<u32>,
    ready: Vec<Time>,
    delay: Vec<Time>,
    /// Dependents waiting for a node's completion (a message's delivery, a barrier's completion).
    on_done: Csr,
    /// Dependents waiting for a message to be fully sent.
    on_sent: Csr,
    /// Scratch stack for barrier cascades.
    stack: Vec<(u32, Time)>,
}

impl Dag {
    /// Build from a validated spec. O(messages + barriers + dependencies).
    pub fn new(spec: &RunSpec) -> Dag {
        let m = spec.messages.len() as u32;
        let n = m as usize + spec.barriers.len();
        let done_edges = spec
            .messages
            .iter()
            .enumerate()
            .flat_map(move |(i, msg)| {
                msg.deps.iter().map(move |&d| (d, i as u32)).chain(msg.barriers.iter().map(move |&b| (m + b, i as u32)))
            })
            .chain(spec.barriers.iter().enumerate().flat_map(move |(i, b)| {
                b.deps.iter().map(move |&d| (d, m + i as u32)).chain(b.barriers.iter().map(move |&x| (m + x, m + i as u32)))
            }));
        let sent_edges = spec.messages.iter().enumerate().flat_map(|(i, msg)| msg.sent_deps.iter().map(move |&d| (d, i as u32)));
        let mut left: Vec<u32> = spec.messages.iter().map(|x| (x.deps.len() + x.sent_deps.len() + x.barriers.len()) as u32).collect();
        left.extend(spec.barriers.iter().map(|b| (b.deps.len() + b.barriers.len()) as u32));
        let mut ready: Vec<Time> = spec.messages.iter().map(|x| Time(x.start_ps)).collect();
        ready.resize(n, Time::ZERO);
        let mut delay: Vec<Time> = spec.messages.iter().map(|x| Time(x.delay_ps)).collect();
        delay.resize(n, Time::ZERO);
        Dag {
            n_msgs: m,
            left,
            ready,
            delay,
            on_done: Csr::build(n, done_edges),
            on_sent: Csr::build(m as usize, sent_edges),
            stack: Vec::new(),
        }
    }

    /// The messages startable from the beginning, with their start times (barriers without dependencies
    /// complete at time 0 and release theirs). Call once.
    pub fn initial(&mut self, out: &mut Vec<(u32, Time)>) {
        for x in 0..self.left.len() as u32 {
            if self.left[x as usize] == 0 {
                if x < self.n_msgs {
                    out.push((x, self.ready[x as usize] + self.delay[x as usize]));
                } else {
                    self.complete_barrier(x, Time::ZERO, out);
                }
            }
        }
    }

    /// Message m was delivered at `now`: append the messages that become startable, with start times.
    pub fn delivered(&mut self, m: u32, now: Time, out: &mut Vec<(u32, Time)>) {
        self.stack.push((m, now));
        self.drain(out);
    }

    /// Whether anything waits for message m to be fully sent (engines skip the call otherwise).
    #[inline]
    pub fn has_sent_dependents(&self, m: u32) -> bool {
        !self.on_sent.of(m).is_empty()
    }

    /// Message m was fully handed to its NIC at `now`: append the messages that become startable.
    pub fn sent(&mut self, m: u32, now: Time, out: &mut Vec<(u32, Time)>) {
        for i in self.on_sent.start[m as usize]..self.on_sent.start[m as usize + 1] {
            let d = self.on_sent.list[i as usize];
            self.satisfy(d, now, out);
        }
        self.drain(out);
    }

    fn complete_barrier(&mut self, b: u32, now: Time, out: &mut Vec<(u32, Time)>) {
        self.stack.push((b, now));
        self.drain(out);
    }

    /// Release the dependents of every completed node on the stack (barriers cascade). O(edges released).
    fn drain(&mut self, out: &mut Vec<(u32, Time)>) {
        while let Some((x, t)) = self.stack.pop() {
            for i in self.on_done.start[x as usize]..self.on_done.start[x as usize + 1] {
                let d = self.on_done.list[i as usize];
                self.satisfy(d, t, out);
            }
        }
    }

    #[inline]
    fn satisfy(&mut self, d: u32, t: Time, out: &mut Vec<(u32, Time)>) {
        let di = d as usize;
        debug_assert!(self.left[di] > 0, "node {d} released more often than it has dependencies");
        self.left[di] -= 1;
        self.ready[di] = self.ready[di].max(t);
        if self.left[di] == 0 {
            if d < self.n_msgs {
                out.push((d, self.ready[di] + self.delay[di]));
            } else {
                self.stack.push((d, self.ready[di]));
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
        let network = NetworkSpec { nodes: vec![], links: vec![], default_queue: Default::default() };
        RunSpec { messages, barriers, ..RunSpec::new(1, network) }
    }

    /// m0, m1 -> barrier b0 -> m2 (delay 5), m3; b1 (no deps) -> m4 starting at 7.
    #[test]
    fn barriers_release_after_their_last_dependency() {
        let s = spec(
            vec![msg(vec![], vec![], 0, 0), msg(vec![], vec![], 3, 0), msg(vec![], vec![0], 0, 5), msg(vec![1], vec![0], 0, 0), msg(vec![], vec![1], 7, 0)],
            vec![BarrierSpec { name: "b0".into(), deps: vec![0, 1], barriers: vec![] }, BarrierSpec { name: "b1".into(), deps: vec![], barriers: vec![] }],
        );
        let mut dag = Dag::new(&s);
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
}
