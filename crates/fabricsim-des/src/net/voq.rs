//! Virtual output queues of an input-buffered (lossless, credit-based) switch output, round-robin or oldest-first.

use std::collections::VecDeque;

/// The virtual output queues feeding one output port, one per input port of the switch, served by a
/// round-robin arbiter, or oldest first when `arrivals` is kept. Invariant: `len`/`bytes` are the totals over
/// all queues; bit i of `busy` is set exactly when `q[i]` is non-empty; `arrivals[i]` (FIFO arbiter only) holds
/// the arrival numbers of `q[i]`'s packets, in order.
pub(crate) struct Voq {
    /// Per input (local port index): (packet, size), 8 bytes a packet.
    pub(crate) q: Vec<VecDeque<(u32, u32)>>,
    /// Per input: the upstream port that holds the credit (the input's peer, fixed by the wiring).
    up: Vec<u32>,
    /// The non-empty inputs, 64 to a word, so the arbiter skips empty ones without visiting them.
    busy: Vec<u64>,
    pub(crate) rr: usize,
    pub(crate) len: u64,
    pub(crate) bytes: u64,
    /// Oldest-first arbitration: each queued packet's arrival number at this output, and the next number.
    arrivals: Option<Vec<VecDeque<u64>>>,
    next_arrival: u64,
}

impl Voq {
    /// Empty queues for the inputs whose upstream ports are `up` (input i's peer port); `fifo` selects the
    /// oldest-first arbiter.
    pub(crate) fn new(up: Vec<u32>, fifo: bool) -> Voq {
        let inputs = up.len();
        Voq {
            q: (0..inputs).map(|_| VecDeque::new()).collect(),
            up,
            busy: vec![0; inputs.div_ceil(64)],
            rr: 0,
            len: 0,
            bytes: 0,
            arrivals: fifo.then(|| (0..inputs).map(|_| VecDeque::new()).collect()),
            next_arrival: 0,
        }
    }

    /// The non-empty inputs in increasing order.
    #[inline]
    fn busy_inputs(&self) -> impl Iterator<Item = usize> + '_ {
        self.busy.iter().enumerate().flat_map(|(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                (b != 0).then(|| {
                    let i = b.trailing_zeros() as usize;
                    b &= b - 1;
                    w * 64 + i
                })
            })
        })
    }

    /// The first non-empty input at or after `from`, wrapping around (round-robin). Precondition: `len > 0`.
    /// O(inputs / 64).
    #[inline]
    fn next_busy(&self, from: usize) -> usize {
        let w0 = from / 64;
        let here = self.busy[w0] & (!0u64 << (from % 64));
        if here != 0 {
            return w0 * 64 + here.trailing_zeros() as usize;
        }
        let n = self.busy.len();
        (1..=n)
            .map(|k| (w0 + k) % n)
            .find(|&w| self.busy[w] != 0)
            .map(|w| w * 64 + self.busy[w].trailing_zeros() as usize)
            .expect("len > 0 means a non-empty input")
    }

    /// The input the arbiter serves next and its head packet's size. O(inputs / 64) round-robin; O(busy inputs)
    /// oldest-first.
    #[inline]
    pub(crate) fn peek(&self) -> Option<(usize, u32)> {
        if self.len == 0 {
            return None;
        }
        let i = match &self.arrivals {
            Some(arr) => self.busy_inputs().min_by_key(|&i| arr[i][0])?,
            None => self.next_busy(self.rr),
        };
        Some((i, self.q[i][0].1))
    }

    #[inline]
    pub(crate) fn pop(&mut self, i: usize) -> (u32, u32, u32) {
        let (pkt, size) = self.q[i].pop_front().expect("peeked input has a packet");
        if self.q[i].is_empty() {
            self.busy[i / 64] &= !(1u64 << (i % 64));
        }
        if let Some(arr) = &mut self.arrivals {
            arr[i].pop_front();
        }
        self.rr = if i + 1 == self.q.len() { 0 } else { i + 1 };
        self.len -= 1;
        self.bytes -= size as u64;
        (pkt, size, self.up[i])
    }

    #[inline]
    pub(crate) fn push(&mut self, input: usize, pkt: u32, size: u32) {
        self.q[input].push_back((pkt, size));
        self.busy[input / 64] |= 1u64 << (input % 64);
        if let Some(arr) = &mut self.arrivals {
            arr[input].push_back(self.next_arrival);
            self.next_arrival += 1;
        }
        self.len += 1;
        self.bytes += size as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round-robin over 70 inputs (two bitset words): after serving input i the arbiter looks from i + 1 and
    /// wraps past 69 to 0, skipping empty inputs.
    #[test]
    fn round_robin_skips_empty_inputs_and_wraps() {
        let mut v = Voq::new(vec![0; 70], false);
        for (pkt, input) in [(1, 3), (2, 66), (3, 3), (4, 40)] {
            v.push(input, pkt, 100);
        }
        let served: Vec<(usize, u32)> = std::iter::from_fn(|| {
            let (i, _) = v.peek()?;
            Some((i, v.pop(i).0))
        })
        .collect();
        // From 0: input 3 (pkt 1); from 4: 40 (pkt 4); from 41: 66 (pkt 2); from 67 wrap: 3 (pkt 3).
        assert_eq!(served, vec![(3, 1), (40, 4), (66, 2), (3, 3)]);
        assert_eq!((v.len, v.bytes), (0, 0));
    }

    /// Oldest first: the input whose head arrived earliest, whatever its index.
    #[test]
    fn oldest_first_serves_by_arrival() {
        let mut v = Voq::new(vec![0; 70], true);
        for (pkt, input) in [(1, 66), (2, 3), (3, 66), (4, 0)] {
            v.push(input, pkt, 100);
        }
        let order: Vec<u32> = std::iter::from_fn(|| {
            let (i, _) = v.peek()?;
            Some(v.pop(i).0)
        })
        .collect();
        assert_eq!(order, vec![1, 2, 3, 4]);
    }
}
