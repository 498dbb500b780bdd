//! Virtual output queues of an input-buffered (lossless, credit-based) switch output, round-robin arbitrated.

use std::collections::VecDeque;

/// The virtual output queues feeding one output port, one per input port of the switch, served by a
/// round-robin arbiter. Invariant: `len`/`bytes` are the totals over all queues.
pub(crate) struct Voq {
    /// Per input (local port index): (packet, size, upstream port that holds the credit).
    pub(crate) q: Vec<VecDeque<(u32, u32, u32)>>,
    pub(crate) rr: usize,
    pub(crate) len: u64,
    pub(crate) bytes: u64,
}

impl Voq {
    pub(crate) fn new(inputs: usize) -> Voq {
        Voq {
            q: (0..inputs).map(|_| VecDeque::new()).collect(),
            rr: 0,
            len: 0,
            bytes: 0,
        }
    }
    /// The input the arbiter serves next and its head packet's size. O(inputs).
    #[inline]
    pub(crate) fn peek(&self) -> Option<(usize, u32)> {
        if self.len == 0 {
            return None;
        }
        let n = self.q.len();
        (0..n)
            .map(|k| (self.rr + k) % n)
            .find_map(|i| self.q[i].front().map(|&(_, s, _)| (i, s)))
    }
    #[inline]
    pub(crate) fn pop(&mut self, i: usize) -> (u32, u32, u32) {
        let e = self.q[i].pop_front().expect("peeked input has a packet");
        self.rr = (i + 1) % self.q.len();
        self.len -= 1;
        self.bytes -= e.1 as u64;
        e
    }
    #[inline]
    pub(crate) fn push(&mut self, input: usize, pkt: u32, size: u32, upstream: u32) {
        self.q[input].push_back((pkt, size, upstream));
        self.len += 1;
        self.bytes += size as u64;
    }
}
