//! Transports: a closed enum per flow, packet creation, and the receive path that dispatches on the flow's transport.

pub(crate) mod message;
pub(crate) mod rdma;
pub(crate) mod tcp;
pub(crate) mod udp;

use crate::packet::Packet;
use crate::sim::Sim;

/// Which transport owns a flow, and its index in that transport's state. A closed enum: dispatch is a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// UDP source s (`Sim::srcs`).
    Udp(u32),
    /// Workload message m (`Sim::msgs`).
    Message(u32),
    /// The data direction of TCP connection c (`Sim::tcps`).
    TcpData(u32),
    /// The ACK direction of TCP connection c.
    TcpAck(u32),
    /// The data of RDMA queue pair q (message q's QP).
    Rdma(u32),
    /// The ACKs and NACKs of QP q.
    RdmaAck(u32),
}

/// Per-flow routing state shared by every transport (flow id = source index, then messages, then TCP data and
/// ACK flows; see `fabricsim_core::compile`).
pub(crate) struct FlowRt {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) src_port: u32,
    pub(crate) dst_ep: u32,
    pub(crate) path: u32,
    /// ECMP salt (per_flow: hash of id and seed; per_message: drawn from the RNG when the flow starts).
    pub(crate) salt: u64,
    pub(crate) transport: Transport,
    /// When the flow last handed a packet to its NIC (ps; u64::MAX before the first), for flowlets.
    pub(crate) last_tx: u64,
}

impl Sim {
    /// Create a packet of `flow` handed to its NIC now, counting it as sent. O(1).
    #[inline]
    pub(crate) fn new_packet(&mut self, flow: u32, payload: u32, header: u32) -> u32 {
        if self.flowlet_gap != 0 {
            // A pause longer than the gap ends the flowlet: the rest of the message hashes anew.
            let now = self.now.0;
            let f = &mut self.flows[flow as usize];
            if f.last_tx != u64::MAX && now - f.last_tx > self.flowlet_gap {
                f.salt = fabricsim_core::routing::mix64(f.salt ^ 0x9E37_79B9_7F4A_7C15);
            }
            f.last_tx = now;
        }
        let f = &self.flows[flow as usize];
        debug_assert!(
            header <= u16::MAX as u32,
            "header bytes are validated to fit 16 bits"
        );
        let pkt = Packet {
            flow,
            payload,
            header: header as u16,
            tx_time: self.now.0,
            path: f.path,
            ..Packet::default()
        };
        let st = &mut self.stats[flow as usize];
        st.tx_packets += 1;
        st.tx_bytes += pkt.size() as u64;
        st.first_tx.get_or_insert(self.now.0);
        st.last_tx = Some(self.now.0);
        self.alloc(pkt)
    }

    /// A packet reached its destination host: FlowMonitor counts, then its transport takes it.
    #[inline]
    pub(crate) fn receive(&mut self, pkt: u32) {
        let pk = self.pkts[pkt as usize];
        let now = self.now.0;
        let delay = now - pk.tx_time;
        let st = &mut self.stats[pk.flow as usize];
        st.rx_packets += 1;
        st.rx_bytes += pk.size() as u64;
        st.rx_payload += pk.payload as u64;
        st.first_rx.get_or_insert(now);
        st.last_rx = Some(now);
        st.delay_sum += delay;
        st.max_delay = st.max_delay.max(delay);
        self.totals.rx += 1;
        if let Some(b) = self.bin {
            let k = (now / b.0) as usize;
            if self.rx_bins.len() <= k {
                self.rx_bins.resize(k + 1, 0);
            }
            self.rx_bins[k] += pk.payload as u64;
        }
        let h = pk.switches as usize;
        if self.hops.len() <= h {
            self.hops.resize(h + 1, 0);
        }
        self.hops[h] += 1;
        self.release(pkt);
        match self.flows[pk.flow as usize].transport {
            Transport::Udp(_) => {}
            Transport::Message(m) => self.msg_rx(m, pk.payload),
            Transport::TcpData(c) => self.tcp_rx_data(c as usize, self.hdrs[pkt as usize]),
            Transport::TcpAck(c) => self.tcp_rx_ack(c as usize, self.hdrs[pkt as usize]),
            // The slot was released above but nothing reuses it before these return (they read it first).
            Transport::Rdma(q) => self.rdma_rx_data(q, pkt),
            Transport::RdmaAck(q) => self.rdma_rx_ack(q, pkt),
        }
    }
}
