//! The packet: a 32-byte `Copy` value in a slab with a free list, addressed by a dense u32 id.

use crate::sim::Sim;
use crate::transport::rdma::IntStack;
use fabricsim_core::topology::NONE;

/// A packet in flight. Invariant: it lives in exactly one place (an egress buffer, a transmitter, a pipe or a
/// virtual output queue). Its destination is its flow's (`FlowRt::dst_ep`); its wire size is `payload + header`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Packet {
    pub(crate) flow: u32,
    pub(crate) payload: u32,
    /// When the packet was handed to the sender's NIC (FlowMonitor's send time).
    pub(crate) tx_time: u64,
    /// Explicit path id or NONE; `hop` indexes its hops (0 = leaving the source NIC).
    pub(crate) path: u32,
    /// Transport sequence number (RDMA: the packet's PSN, or the cumulative PSN an ACK or NACK carries).
    pub(crate) psn: u32,
    /// Header bytes on the wire.
    pub(crate) header: u16,
    pub(crate) hop: u16,
    /// Switches traversed so far.
    pub(crate) switches: u16,
    /// Traffic class (priority): 0 = data; `CLASS_CONTROL` = ACK, NACK and CNP, served first.
    pub(crate) class: u8,
    /// ECN and transport flags (`ECN_CE` set by a marking switch; the RDMA ACK flags).
    pub(crate) ecn: u8,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 32, "the packet stays 32 bytes");

impl Packet {
    /// Bytes on the wire (payload + header).
    #[inline]
    pub(crate) fn size(&self) -> u32 {
        self.payload + self.header as u32
    }
}

impl Sim {
    /// Store a packet; O(1) (reuses a freed slot when there is one). Counts it as sent.
    #[inline]
    pub(crate) fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        self.measure.totals.tx += 1;
        match self.free.pop() {
            Some(i) => {
                self.pkts[i as usize] = p;
                i
            }
            None => {
                if self.net.roce {
                    self.pfc.in_port.push(NONE);
                    if self.rdma.hpcc_on {
                        self.rdma.ints.push(IntStack::default());
                    }
                    if self.uec.on {
                        self.uec.side.push(Default::default());
                    }
                }
                self.pkts.push(p);
                (self.pkts.len() - 1) as u32
            }
        }
    }

    /// Free a packet's slot (delivered or dropped). O(1).
    #[inline]
    pub(crate) fn release(&mut self, id: u32) {
        self.live -= 1;
        self.free.push(id);
    }
}
