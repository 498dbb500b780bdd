//! Egress buffering: DropTail FIFOs, queue disciplines, and the two-level egress (discipline above device queue).

use crate::codel::{Codel, CodelParams, CodelQdisc, FqCodel};
use fabricsim_core::spec::{EgressSpec, QdiscSpec};
use fabricsim_core::Time;
use std::collections::VecDeque;

/// A DropTail FIFO of packet ids limited in packets and/or bytes. Invariant: `bytes` is the sum of queued sizes.
#[derive(Clone, Debug)]
pub struct Fifo {
    q: VecDeque<(u32, u32)>,
    bytes: u64,
    limit_packets: u64,
    limit_bytes: u64,
}

impl Fifo {
    pub fn new(limit_packets: Option<u64>, limit_bytes: Option<u64>) -> Fifo {
        Fifo { q: VecDeque::new(), bytes: 0, limit_packets: limit_packets.unwrap_or(u64::MAX), limit_bytes: limit_bytes.unwrap_or(u64::MAX) }
    }

    /// Whether a packet of `size` bytes fits (ns-3 DropTail: packets+1 > max or bytes+size > max drops).
    #[inline]
    pub fn has_room(&self, size: u32) -> bool {
        (self.q.len() as u64) < self.limit_packets && self.bytes + size as u64 <= self.limit_bytes
    }

    /// Append; the caller has checked `has_room`.
    #[inline]
    pub fn push(&mut self, pkt: u32, size: u32) {
        self.bytes += size as u64;
        self.q.push_back((pkt, size));
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u32, u32)> {
        let (p, s) = self.q.pop_front()?;
        self.bytes -= s as u64;
        Some((p, s))
    }

    #[inline]
    pub fn len(&self) -> u64 {
        self.q.len() as u64
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

/// A queue discipline above the device queue. A closed enum: dispatch is a match, never a virtual call.
#[derive(Clone, Debug)]
pub enum Qdisc {
    Fifo(Fifo),
    Codel(CodelQdisc),
    FqCodel(FqCodel),
}

impl Qdisc {
    /// `perturbation` seeds FQ-CoDel's flow hash (one per simulation, from its seed).
    pub fn from_spec(spec: &QdiscSpec, perturbation: u64) -> Qdisc {
        match spec {
            QdiscSpec::Fifo { limit_packets, limit_bytes } => Qdisc::Fifo(Fifo::new(*limit_packets, *limit_bytes)),
            QdiscSpec::Codel { limit_packets, target_ps, interval_ps, min_bytes } => Qdisc::Codel(CodelQdisc {
                codel: Codel::default(),
                params: CodelParams::new(*target_ps, *interval_ps, *min_bytes),
                limit_packets: *limit_packets,
            }),
            QdiscSpec::FqCodel { limit_packets, flows, quantum_bytes, target_ps, interval_ps, min_bytes, drop_batch } => {
                Qdisc::FqCodel(FqCodel::new(
                    *limit_packets,
                    *flows,
                    *quantum_bytes,
                    CodelParams::new(*target_ps, *interval_ps, *min_bytes),
                    *drop_batch,
                    perturbation,
                ))
            }
        }
    }

    /// Offer a packet of flow `key`; rejected or displaced packets are appended to `drops`.
    #[inline]
    pub fn enqueue(&mut self, pkt: u32, size: u32, key: u32, now: Time, drops: &mut Vec<(u32, u32)>) {
        match self {
            Qdisc::Fifo(f) => {
                if f.has_room(size) {
                    f.push(pkt, size);
                } else {
                    drops.push((pkt, size));
                }
            }
            Qdisc::Codel(c) => c.enqueue(pkt, size, now, drops),
            Qdisc::FqCodel(fq) => fq.enqueue(pkt, size, key, now, drops),
        }
    }

    /// Next packet for the device queue; packets the discipline drops on the way are appended to `drops`.
    #[inline]
    pub fn dequeue(&mut self, now: Time, drops: &mut Vec<(u32, u32)>) -> Option<(u32, u32)> {
        match self {
            Qdisc::Fifo(f) => f.pop(),
            Qdisc::Codel(c) => c.codel.dequeue(now, &c.params, drops),
            Qdisc::FqCodel(fq) => fq.dequeue(now, drops),
        }
    }

    #[inline]
    pub fn len(&self) -> u64 {
        match self {
            Qdisc::Fifo(f) => f.len(),
            Qdisc::Codel(c) => c.codel.len(),
            Qdisc::FqCodel(fq) => fq.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        match self {
            Qdisc::Fifo(f) => f.bytes(),
            Qdisc::Codel(c) => c.codel.bytes(),
            Qdisc::FqCodel(fq) => fq.bytes(),
        }
    }
}

/// The MTU the device-queue room check assumes for byte-limited device queues (ns-3: the device MTU).
pub const DEVICE_MTU_BYTES: u64 = 1500;

/// An egress port's buffering. With a discipline, arrivals enter it and it releases packets into the
/// device queue whenever the device queue is not "stopped" — ns-3's rule: stopped when it could not take
/// one more MTU-sized packet (one more packet, for packet limits). Without a discipline, arrivals go
/// straight to the device queue (DropTail). The transmitter always takes from the device queue.
/// Dropped packets collect in `drops` until the owner drains them.
#[derive(Clone, Debug)]
pub struct Egress {
    pub dev: Fifo,
    /// Boxed: a discipline is rare and large, and the port's hot fields stay within fewer cache lines without it.
    pub qdisc: Option<Box<Qdisc>>,
    pub drops: Vec<(u32, u32)>,
}

impl Egress {
    pub fn from_spec(spec: &EgressSpec, perturbation: u64) -> Egress {
        Egress {
            dev: Fifo::new(spec.limit_packets, spec.limit_bytes),
            qdisc: spec.qdisc.as_ref().map(|q| Box::new(Qdisc::from_spec(q, perturbation))),
            drops: Vec::new(),
        }
    }

    /// Offer a packet of flow `key`; anything dropped (it, or others a discipline displaces) lands in `drops`.
    #[inline]
    pub fn enqueue(&mut self, pkt: u32, size: u32, key: u32, now: Time) {
        match &mut self.qdisc {
            None => {
                if self.dev.has_room(size) {
                    self.dev.push(pkt, size);
                } else {
                    self.drops.push((pkt, size));
                }
            }
            Some(qd) => {
                qd.enqueue(pkt, size, key, now, &mut self.drops);
                self.pump(now);
            }
        }
    }

    #[inline]
    fn dev_stopped(&self) -> bool {
        self.dev.len() >= self.dev.limit_packets || self.dev.bytes() + DEVICE_MTU_BYTES > self.dev.limit_bytes
    }

    /// Move packets from the discipline into the device queue while the device queue is not stopped.
    #[inline]
    fn pump(&mut self, now: Time) {
        while !self.dev_stopped() {
            let Some(qd) = &mut self.qdisc else { return };
            match qd.dequeue(now, &mut self.drops) {
                Some((p, s)) => self.dev.push(p, s),
                None => return,
            }
        }
    }

    /// Take the next packet for transmission.
    #[inline]
    pub fn dequeue(&mut self, now: Time) -> Option<(u32, u32)> {
        let r = self.dev.pop();
        if self.qdisc.is_some() {
            self.pump(now);
        }
        r
    }

    /// Size of the packet the transmitter would take next, if any.
    #[inline]
    pub fn dev_head_size(&self) -> Option<u32> {
        self.dev.q.front().map(|x| x.1)
    }

    /// Move the discipline's clock by `dt` (FIFOs hold no time).
    pub fn shift(&mut self, dt: Time) {
        match self.qdisc.as_deref_mut() {
            Some(Qdisc::Codel(c)) => c.codel.shift(dt),
            Some(Qdisc::FqCodel(fq)) => fq.shift(dt),
            Some(Qdisc::Fifo(_)) | None => {}
        }
    }

    /// Packets buffered in discipline + device queue.
    #[inline]
    pub fn len(&self) -> u64 {
        self.dev.len() + self.qdisc.as_ref().map_or(0, |q| q.len())
    }

    /// No packet buffered in discipline or device queue.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.dev.bytes() + self.qdisc.as_ref().map_or(0, |q| q.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn droptail_limits_in_packets_and_bytes() {
        let mut e = Egress::from_spec(&EgressSpec { limit_packets: Some(2), limit_bytes: None, qdisc: None }, 0);
        for i in 1..=3 {
            e.enqueue(i, 100, 0, Time(0));
        }
        assert_eq!(e.drops, vec![(3, 100)]);
        let mut b = Egress::from_spec(&EgressSpec { limit_packets: None, limit_bytes: Some(250), qdisc: None }, 0);
        for (i, s) in [(1, 100), (2, 100), (3, 100), (4, 50)] {
            b.enqueue(i, s, 0, Time(0));
        }
        assert_eq!(b.drops, vec![(3, 100)]);
        assert_eq!(b.bytes(), 250);
    }

    #[test]
    fn discipline_feeds_device_queue_only_when_it_has_room() {
        let spec =
            EgressSpec { limit_packets: Some(2), limit_bytes: None, qdisc: Some(QdiscSpec::Fifo { limit_packets: Some(3), limit_bytes: None }) };
        let mut e = Egress::from_spec(&spec, 0);
        for i in 0..7 {
            e.enqueue(i, 10, 0, Time(0));
        }
        // 2 in the device queue + 3 in the discipline = 5 accepted, the rest dropped.
        assert_eq!(e.drops, vec![(5, 10), (6, 10)]);
        assert_eq!((e.dev.len(), e.len()), (2, 5));
        assert_eq!(e.dequeue(Time(0)), Some((0, 10)));
        assert_eq!((e.dev.len(), e.len()), (2, 4));
        let order: Vec<u32> = std::iter::from_fn(|| e.dequeue(Time(0)).map(|x| x.0)).collect();
        assert_eq!(order, vec![1, 2, 3, 4]);
    }
}
