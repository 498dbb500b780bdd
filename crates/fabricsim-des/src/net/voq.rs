//! Virtual output queues of an input-buffered (lossless, credit-based) switch output, round-robin or oldest-first.

use std::collections::VecDeque;

/// The virtual output queues feeding one output port, one per input port of the switch, served by a
/// round-robin arbiter, or oldest first when `arrivals` is kept. Invariant: `len`/`bytes` are the totals over
/// all queues; `arrivals[i]` (FIFO arbiter only) holds the arrival numbers of `q[i]`'s packets, in order.
pub(crate) struct Voq {
    /// Per input (local port index): (packet, size, upstream port that holds the credit).
    pub(crate) q: Vec<VecDeque<(u32, u32, u32)>>,
    pub(crate) rr: usize,
    pub(crate) len: u64,
    pub(crate) bytes: u64,
    /// Oldest-first arbitration: each queued packet's arrival number at this output, and the next number.
    arrivals: Option<Vec<VecDeque<u64>>>,
    next_arrival: u64,
}

impl Voq {
    /// Empty queues for `inputs` inputs; `fifo` selects the oldest-first arbiter.
    pub(crate) fn new(inputs: usize, fifo: bool) -> Voq {
        Voq {
            q: (0..inputs).map(|_| VecDeque::new()).collect(),
            rr: 0,
            len: 0,
            bytes: 0,
            arrivals: fifo.then(|| (0..inputs).map(|_| VecDeque::new()).collect()),
            next_arrival: 0,
        }
    }

    /// The input the arbiter serves next and its head packet's size. O(inputs).
    #[inline]
    pub(crate) fn peek(&self) -> Option<(usize, u32)> {
        if self.len == 0 {
            return None;
        }
        if let Some(arr) = &self.arrivals {
            let i = (0..arr.len()).filter(|&i| !arr[i].is_empty()).min_by_key(|&i| arr[i][0])?;
            return Some((i, self.q[i][0].1));
        }
        let n = self.q.len();
        (0..n).map(|k| (self.rr + k) % n).find_map(|i| self.q[i].front().map(|&(_, s, _)| (i, s)))
    }

    #[inline]
    pub(crate) fn pop(&mut self, i: usize) -> (u32, u32, u32) {
        let e = self.q[i].pop_front().expect("peeked input has a packet");
        if let Some(arr) = &mut self.arrivals {
            arr[i].pop_front();
        }
        self.rr = (i + 1) % self.q.len();
        self.len -= 1;
        self.bytes -= e.1 as u64;
        e
    }

    #[inline]
    pub(crate) fn push(&mut self, input: usize, pkt: u32, size: u32, upstream: u32) {
        self.q[input].push_back((pkt, size, upstream));
        if let Some(arr) = &mut self.arrivals {
            arr[input].push_back(self.next_arrival);
            self.next_arrival += 1;
        }
        self.len += 1;
        self.bytes += size as u64;
    }
}
