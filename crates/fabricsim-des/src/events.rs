//! The event queue: a radix heap on time that pops equal times in a partition-invariant tie order, with lazy
//! cancellation.

pub use crate::transport::TransportKind;
use fabricsim_core::Time;
use std::collections::{BinaryHeap, HashSet};

/// What happens: a component and an index, with small `Copy` payloads, so the heap never allocates per event.
/// The network's components and the workload have a variant each; every transport timer is one `Timer`
/// naming its transport, so a new transport adds no variant here (it adds a `TransportKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// The transmitter of port p: a serialisation ended or the injection shaper allows the next start.
    Port(u32),
    /// The head packet of port p's pipe reaches the peer node.
    Pipe(u32),
    /// The credit return a blocked port p waits for has landed (lossless links).
    Credit(u32),
    /// The head PFC frame travelling toward port p arrives.
    Pfc(u32),
    /// Timer `.1` (the transport's own numbering) of instance `.2` of transport `.0` fires.
    Timer(TransportKind, u8, u32),
    /// Message m becomes active at its sender's NIC.
    MsgStart(u32),
    /// Compute step c ends (its host's stream becomes free).
    ComputeDone(u32),
    /// Network event e (`RunSpec::events`): links go down or up, or change bit error rate.
    Net(u32),
    /// The switches' tables catch up with network event e (its detection delay later).
    Reroute(u32),
    /// Periodic queue-depth sample.
    Sample,
    /// The deadlock watchdog (scenarios with PFC).
    Watchdog,
    /// The end of a steady-state detector window (hybrid fidelity only; `hybrid.rs`).
    Window,
}

impl Ev {
    /// The event's tie key: events at the same picosecond pop in increasing key order (then insertion order for
    /// equal keys). It is a function of the event alone (its kind in the high bits, its component's index in the
    /// low 32), never of the global insertion sequence, so that a partition of the network processing only its
    /// own events would order them as the serial engine does (benchmarks/PARALLEL.md). Kind-major: at one
    /// picosecond every transmitter decides (`Port`) before any packet, credit or frame lands, so departures
    /// at t come before arrivals at t, and a queue sample sees every event of its picosecond. Kinds: Port 0, Pipe
    /// 1, Credit 2, Pfc 3, then each transport's timers from its `timer_base` (UDP 4–8, TCP 11–14, RDMA 15–17,
    /// the message transport's retransmission timer 20, after the tables caught up with a failure of its
    /// picosecond), MsgStart 9, ComputeDone 10, Net 18, Reroute 19, Sample 21, Watchdog 22, Window 23 (a detector
    /// window sees every event of its picosecond but UEC's), UEC's timers 24–26 (hybrid fidelity does not run UEC). O(1).
    #[inline]
    pub fn tie_key(self) -> u64 {
        let (id, kind) = match self {
            Ev::Port(p) => (p, 0),
            Ev::Pipe(p) => (p, 1),
            Ev::Credit(p) => (p, 2),
            Ev::Pfc(p) => (p, 3),
            Ev::Timer(t, timer, i) => (i, t.timer_base() + timer as u64),
            Ev::MsgStart(m) => (m, 9),
            Ev::ComputeDone(c) => (c, 10),
            Ev::Net(e) => (e, 18),
            Ev::Reroute(e) => (e, 19),
            Ev::Sample => (0, 21),
            Ev::Watchdog => (0, 22),
            Ev::Window => (0, 23),
        };
        kind << 32 | id as u64
    }
}

/// Handle of a scheduled event, for cancellation (its insertion sequence number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId(u64);

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    /// `ev.tie_key()`, kept beside the time so that ordering never looks at the payload.
    key: u64,
    seq: u64,
    ev: Ev,
}

impl Entry {
    /// The order among entries of one time: tie key, then insertion (one u128 compare).
    #[inline]
    fn tie(&self) -> u128 {
        (self.key as u128) << 64 | self.seq as u128
    }
}

/// The pending events: a radix heap on the u64 time (Ahuja, Mehlhorn, Orlin and Tarjan 1990), which the engine's
/// monotone clock allows: nothing is ever scheduled before the last popped time.
///
/// Invariants: every pending time is ≥ `last`; the entries at exactly `last` are in `now` from `head` on, in
/// increasing (tie key, sequence), or in the `late` heap (those scheduled once the batch was sorted); an entry with time t > `last` sits in bucket 63 − lzcnt(t ⊕ last) (the highest bit where t
/// and `last` differ), and bit b of `mask` is set exactly when bucket b is non-empty. Events pop in nondecreasing
/// time and equal times by their tie key (`Ev::tie_key`), then insertion order: an event scheduled at the current
/// time pops after its cause, before any pending event of that time with a larger key. That makes every run
/// deterministic, and the order of a time's events independent of how the rest of the network was interleaved.
/// Schedule is O(1) (O(k) when it lands among k pending entries of the current time); pop is O(1) amortised plus the redistribution of one bucket, and
/// an entry moves down at most 64 times in its life (in practice a few: pending times span microseconds). Cancel
/// is O(1) (the entry is skipped when popped).
pub struct EventQueue {
    now: Vec<Entry>,
    head: usize,
    buckets: [Vec<Entry>; 64],
    mask: u64,
    /// The time of the last popped event (0 before the first).
    last: u64,
    len: usize,
    seq: u64,
    cancelled: HashSet<u64>,
    /// Entries scheduled at the current time after its batch was sorted: a min-heap on (tie key, seq), merged
    /// with `now` on pop.
    late: BinaryHeap<Late>,
}

/// An entry in the `late` heap, ordered so that the smallest (tie key, seq) is the heap's top.
#[derive(Clone, Copy, Debug)]
struct Late(Entry);

impl PartialEq for Late {
    fn eq(&self, o: &Self) -> bool {
        self.0.tie() == o.0.tie()
    }
}

impl Eq for Late {}

impl PartialOrd for Late {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Late {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.tie().cmp(&self.0.tie())
    }
}

/// Sort one time's entries into tie order, (key, seq). Lockstep workloads put a thousand or more events on one
/// picosecond; the batch is usually a few ascending runs (the previous time's events, processed in key order,
/// scheduled these in key order), which the run-adaptive stable sort merges in O(n log runs).
fn sort_ties(v: &mut [Entry]) {
    v.sort_by_key(|e| e.tie());
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            now: Vec::new(),
            head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            mask: 0,
            last: 0,
            len: 0,
            seq: 0,
            cancelled: HashSet::new(),
            late: BinaryHeap::new(),
        }
    }
}

impl EventQueue {
    /// File an entry later than `last` into its bucket.
    #[inline]
    fn file(&mut self, e: Entry) {
        let b = 63 - (e.time ^ self.last).leading_zeros() as usize;
        self.buckets[b].push(e);
        self.mask |= 1 << b;
    }

    /// Schedule `ev` at `at`. Precondition: `at` is not before the last popped time (the clock never goes back).
    #[inline]
    pub fn schedule(&mut self, at: Time, ev: Ev) -> EventId {
        debug_assert!(at.0 >= self.last, "scheduled at {} before the clock {}", at.0, self.last);
        let seq = self.seq;
        self.seq += 1;
        let e = Entry { time: at.0, key: ev.tie_key(), seq, ev };
        if at.0 == self.last {
            // At the current time: beside the sorted batch, in a heap (a barrier releasing a thousand messages at
            // one picosecond costs O(log n) each, not a shift of the batch).
            self.late.push(Late(e));
        } else {
            self.file(e);
        }
        self.len += 1;
        EventId(seq)
    }

    /// Cancel a pending event; cancelling one that already fired or was cancelled is a no-op
    /// as long as callers drop their handle once the event fires (the engine does).
    #[inline]
    pub fn cancel(&mut self, id: EventId) {
        self.cancelled.insert(id.0);
    }

    /// Take the earliest entry (cancelled or not).
    #[inline]
    fn pop_entry(&mut self) -> Option<Entry> {
        let take_late = match self.late.peek() {
            None => false,
            Some(l) => self.head == self.now.len() || l.0.tie() < self.now[self.head].tie(),
        };
        if take_late {
            self.len -= 1;
            return self.late.pop().map(|l| l.0);
        }
        if self.head == self.now.len() {
            self.now.clear();
            self.head = 0;
            self.refill()?;
        }
        let e = self.now[self.head];
        self.head += 1;
        self.len -= 1;
        Some(e)
    }

    /// `now` is empty: move `last` to the smallest pending time and spread the lowest non-empty bucket over the
    /// buckets below it, its entries at the new `last` into `now`, sorted into tie order.
    #[inline]
    fn refill(&mut self) -> Option<()> {
        if self.mask == 0 {
            return None;
        }
        let i = self.mask.trailing_zeros() as usize;
        self.mask &= !(1 << i);
        if self.buckets[i].len() == 1 {
            let e = self.buckets[i].pop().expect("one entry");
            self.last = e.time;
            self.now.push(e);
            return Some(());
        }
        let mut src = std::mem::take(&mut self.buckets[i]);
        self.last = src.iter().map(|e| e.time).min().expect("a set bit means a non-empty bucket");
        for e in src.drain(..) {
            if e.time == self.last {
                self.now.push(e);
            } else {
                self.file(e);
            }
        }
        self.buckets[i] = src;
        if self.now.len() > 1 {
            sort_ties(&mut self.now);
        }
        Some(())
    }

    /// Move every pending event, and the clock the queue keeps, `dt` later (order unchanged). O(pending).
    pub fn shift(&mut self, dt: Time) {
        self.last += dt.0;
        self.retime(|_, t| t + dt.0);
    }

    /// Give every pending entry the time `f(event, time)` (order among equal new times: tie key, then insertion,
    /// as ever). Precondition: every new time is ≥ the old one (so ≥ the last popped time). A fast-forward jump
    /// moves the network's events and keeps the workload's where they are. O(pending).
    pub fn retime(&mut self, mut f: impl FnMut(Ev, u64) -> u64) {
        let mut all: Vec<Entry> = self.now.drain(self.head..).collect();
        self.now.clear();
        self.head = 0;
        all.extend(std::mem::take(&mut self.late).into_iter().map(|l| l.0));
        for b in self.buckets.iter_mut() {
            all.append(b);
        }
        self.mask = 0;
        for mut e in all {
            let t = f(e.ev, e.time);
            debug_assert!(t >= e.time, "retime moves events later only");
            e.time = t;
            if t == self.last {
                self.now.push(e);
            } else {
                self.file(e);
            }
        }
        if self.now.len() > 1 {
            sort_ties(&mut self.now);
        }
    }

    /// The earliest time of a live pending event for which `pred` holds (None: none). O(pending).
    pub fn earliest(&self, mut pred: impl FnMut(Ev) -> bool) -> Option<u64> {
        let live = |e: &Entry| self.cancelled.is_empty() || !self.cancelled.contains(&e.seq);
        self.now[self.head..]
            .iter()
            .chain(self.late.iter().map(|l| &l.0))
            .chain(self.buckets.iter().flatten())
            .filter(|e| live(e) && pred(e.ev))
            .map(|e| e.time)
            .min()
    }

    /// The time of the next pending entry (a cancelled one included), without popping it. It may move the
    /// queue's floor (`last`) up to that time, so the caller schedules nothing before it until it has popped:
    /// the engine only peeks right before a pop. None when nothing is pending.
    pub fn peek_time(&mut self) -> Option<Time> {
        if !self.late.is_empty() {
            return Some(Time(self.last));
        }
        if self.head == self.now.len() {
            self.now.clear();
            self.head = 0;
            self.refill()?;
        }
        Some(Time(self.now[self.head].time))
    }

    /// Pop the next live event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Ev)> {
        loop {
            let e = self.pop_entry()?;
            if !self.cancelled.is_empty() && self.cancelled.remove(&e.seq) {
                continue;
            }
            return Some((Time(e.time), e.ev));
        }
    }

    /// Pending entries, including cancelled ones not yet popped.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether any live event is pending.
    #[inline]
    pub fn has_live(&self) -> bool {
        self.len > self.cancelled.len()
    }

    /// How many live events are pending.
    #[inline]
    pub fn live(&self) -> usize {
        self.len.saturating_sub(self.cancelled.len())
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(Time(5), Ev::Port(1));
        q.schedule(Time(3), Ev::Port(2));
        q.schedule(Time(5), Ev::Port(3));
        q.schedule(Time(5), Ev::Port(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(Time(3), Ev::Port(2)), (Time(5), Ev::Port(1)), (Time(5), Ev::Port(3)), (Time(5), Ev::Port(4))]);
    }

    /// Ties pop by tie key, whatever the insertion order; an event scheduled at the current time pops after its
    /// cause and before the pending ones of larger key.
    #[test]
    fn ties_pop_by_tie_key_then_insertion() {
        let mut q = EventQueue::default();
        q.schedule(Time(9), Ev::Pipe(1));
        q.schedule(Time(9), Ev::Port(5));
        q.schedule(Time(9), Ev::MsgStart(0));
        q.schedule(Time(9), Ev::Port(2));
        assert_eq!(q.pop(), Some((Time(9), Ev::Port(2))));
        q.schedule(Time(9), Ev::Pipe(0)); // at the current time: before Pipe(1), after Port(5)
        q.schedule(Time(9), Ev::Port(1)); // smaller than the popped Port(2): still next
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(rest, vec![Ev::Port(1), Ev::Port(5), Ev::Pipe(0), Ev::Pipe(1), Ev::MsgStart(0)]);
    }

    /// A large batch of ties (the radix-sorted path) pops in exactly (tie key, insertion) order, duplicates
    /// included.
    #[test]
    fn large_tie_batches_pop_in_key_then_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(Time(1), Ev::Sample);
        assert_eq!(q.pop(), Some((Time(1), Ev::Sample)));
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut expect = Vec::new();
        for seq in 0..5_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = (x % 3_000) as u32;
            let ev = match (x >> 20) % 4 {
                0 => Ev::Port(id),
                1 => Ev::Pipe(id),
                2 => Ev::Credit(id),
                _ => Ev::MsgStart(id),
            };
            q.schedule(Time(1_000_000), ev);
            expect.push((ev.tie_key(), seq, ev));
        }
        expect.sort_by_key(|&(k, s, _)| (k, s));
        let got: Vec<Ev> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(got, expect.into_iter().map(|(_, _, e)| e).collect::<Vec<_>>());
    }

    #[test]
    fn cancelled_events_never_fire() {
        let mut q = EventQueue::default();
        let a = q.schedule(Time(1), Ev::Sample);
        q.schedule(Time(2), Ev::Port(7));
        q.cancel(a);
        assert!(q.has_live());
        assert_eq!(q.pop(), Some((Time(2), Ev::Port(7))));
        assert_eq!(q.pop(), None);
        assert!(!q.has_live());
    }

    /// The radix heap pops exactly as a binary heap on (time, seq) would: 200,000 operations mixing pops with
    /// schedules at the clock (ties), near it and up to 2^40 ps and 2^63 ps ahead, checked against a sorted
    /// reference of the pending (time, seq) pairs.
    #[test]
    fn same_order_as_a_heap_on_time_then_insertion() {
        use std::collections::BTreeSet;
        let mut q = EventQueue::default();
        let mut reference: BTreeSet<(u64, u32)> = BTreeSet::new();
        let (mut x, mut now, mut id) = (0x9E37_79B9_7F4A_7C15u64, 0u64, 0u32);
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 3 == 0 && !reference.is_empty() {
                let (t, i) = reference.pop_first().expect("non-empty");
                assert_eq!(q.pop(), Some((Time(t), Ev::Port(i))));
                now = t;
                continue;
            }
            let ahead = match (x >> 8) % 4 {
                0 => 0,
                1 => (x >> 16) % 1_000,
                2 => (x >> 16) % (1 << 40),
                _ => (x >> 16) % (1 << 63),
            };
            let t = now.saturating_add(ahead).min(u64::MAX - 1);
            q.schedule(Time(t), Ev::Port(id));
            reference.insert((t, id));
            id += 1;
        }
        while let Some((t, i)) = reference.pop_first() {
            assert_eq!(q.pop(), Some((Time(t), Ev::Port(i))));
        }
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }
}
