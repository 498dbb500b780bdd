//! Egress buffering: DropTail FIFOs, queue disciplines, and the two-level egress (discipline above device queue).

use fabricsim_core::spec::{EgressSpec, QdiscSpec};
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
        Fifo {
            q: VecDeque::new(),
            bytes: 0,
            limit_packets: limit_packets.unwrap_or(u64::MAX),
            limit_bytes: limit_bytes.unwrap_or(u64::MAX),
        }
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
}

impl Qdisc {
    pub fn from_spec(spec: &QdiscSpec) -> Qdisc {
        match spec {
            QdiscSpec::Fifo { limit_packets, limit_bytes } => Qdisc::Fifo(Fifo::new(*limit_packets, *limit_bytes)),
        }
    }

    /// Offer a packet; `false` means it was dropped (the caller frees it and counts the drop).
    #[inline]
    pub fn enqueue(&mut self, pkt: u32, size: u32) -> bool {
        match self {
            Qdisc::Fifo(f) => {
                if f.has_room(size) {
                    f.push(pkt, size);
                    true
                } else {
                    false
                }
            }
        }
    }

    #[inline]
    pub fn dequeue(&mut self) -> Option<(u32, u32)> {
        match self {
            Qdisc::Fifo(f) => f.pop(),
        }
    }

    /// Size of the packet `dequeue` would return next, if any.
    #[inline]
    pub fn peek_size(&self) -> Option<u32> {
        match self {
            Qdisc::Fifo(f) => f.q.front().map(|x| x.1),
        }
    }

    #[inline]
    pub fn len(&self) -> u64 {
        match self {
            Qdisc::Fifo(f) => f.len(),
        }
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        match self {
            Qdisc::Fifo(f) => f.bytes(),
        }
    }
}

/// An egress port's buffering. With a discipline, arrivals enter it and it releases packets into the
/// device queue only while the device queue has room (ns-3's traffic-control layer over a NetDevice queue);
/// without one, arrivals go straight to the device queue. The transmitter always takes from the device queue.
#[derive(Clone, Debug)]
pub struct Egress {
    pub dev: Fifo,
    pub qdisc: Option<Qdisc>,
}

impl Egress {
    pub fn from_spec(spec: &EgressSpec) -> Egress {
        Egress { dev: Fifo::new(spec.limit_packets, spec.limit_bytes), qdisc: spec.qdisc.as_ref().map(Qdisc::from_spec) }
    }

    /// Offer a packet; `false` = dropped by the discipline or the full device queue.
    #[inline]
    pub fn enqueue(&mut self, pkt: u32, size: u32) -> bool {
        match &mut self.qdisc {
            None => {
                if self.dev.has_room(size) {
                    self.dev.push(pkt, size);
                    true
                } else {
                    false
                }
            }
            Some(qd) => {
                let ok = qd.enqueue(pkt, size);
                self.pump();
                ok
            }
        }
    }

    /// Move packets from the discipline into the device queue while the device queue has room for its head.
    #[inline]
    fn pump(&mut self) {
        if let Some(qd) = &mut self.qdisc {
            while let Some(s) = qd.peek_size() {
                if !self.dev.has_room(s) {
                    break;
                }
                let (p, s) = qd.dequeue().expect("peeked packet is present");
                self.dev.push(p, s);
            }
        }
    }

    /// Take the next packet for transmission.
    #[inline]
    pub fn dequeue(&mut self) -> Option<(u32, u32)> {
        let r = self.dev.pop();
        if r.is_some() && self.qdisc.is_some() {
            self.pump();
        }
        r
    }

    /// Packets buffered in discipline + device queue.
    #[inline]
    pub fn len(&self) -> u64 {
        self.dev.len() + self.qdisc.as_ref().map_or(0, |q| q.len())
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
        let mut e = Egress::from_spec(&EgressSpec { limit_packets: Some(2), limit_bytes: None, qdisc: None });
        assert!(e.enqueue(1, 100));
        assert!(e.enqueue(2, 100));
        assert!(!e.enqueue(3, 100));
        let mut b = Egress::from_spec(&EgressSpec { limit_packets: None, limit_bytes: Some(250), qdisc: None });
        assert!(b.enqueue(1, 100));
        assert!(b.enqueue(2, 100));
        assert!(!b.enqueue(3, 100));
        assert!(b.enqueue(4, 50));
        assert_eq!(b.bytes(), 250);
    }

    #[test]
    fn discipline_feeds_device_queue_only_when_it_has_room() {
        let spec = EgressSpec {
            limit_packets: Some(2),
            limit_bytes: None,
            qdisc: Some(QdiscSpec::Fifo { limit_packets: Some(3), limit_bytes: None }),
        };
        let mut e = Egress::from_spec(&spec);
        let accepted: Vec<bool> = (0..7).map(|i| e.enqueue(i, 10)).collect();
        // 2 in the device queue + 3 in the discipline = 5 accepted, the rest dropped.
        assert_eq!(accepted, vec![true, true, true, true, true, false, false]);
        assert_eq!((e.dev.len(), e.len()), (2, 5));
        assert_eq!(e.dequeue(), Some((0, 10)));
        assert_eq!((e.dev.len(), e.len()), (2, 4));
        let order: Vec<u32> = std::iter::from_fn(|| e.dequeue().map(|x| x.0)).collect();
        assert_eq!(order, vec![1, 2, 3, 4]);
    }
}
