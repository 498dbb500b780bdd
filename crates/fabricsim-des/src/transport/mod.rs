//! Transports: the one interface every transport implements (`TransportModel`), the dispatch from a flow or a
//! timer to its transport, packet creation, and the receive path.
//!
//! A transport is one file here: its state (a field of `Sim`, shifted with the rest), its timers (numbered by
//! itself, carried by `Ev::Timer`), and `TransportModel`'s three entry points: a packet of one of its flows
//! arrived, one of its timers fired, a NIC asks it for its next packet. Adding one takes that file, one
//! `TransportKind` arm (with its `timer_base` and a line in `with_transport!`), and its spec section.

pub(crate) mod message;
pub(crate) mod rdma;
pub(crate) mod tcp;
pub(crate) mod udp;
pub(crate) mod uec;

use crate::packet::Packet;
use crate::sim::Sim;
use fabricsim_core::Time;

/// The transports. `Ev::Timer` names one; a flow's `Binding` names one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// UDP sources with ns-3 OnOffApplication semantics (`udp.rs`).
    Udp,
    /// Workload messages pulled by their NIC, selective repeat on a retransmission timeout (`message.rs`).
    Message,
    /// TCP NewReno/CUBIC with SACK (`tcp.rs`).
    Tcp,
    /// RoCEv2 queue pairs: DCQCN or HPCC, go-back-N (`rdma/`).
    Rdma,
    /// Ultra Ethernet connections: spraying, trimming, SACK, NSCC or RCCC (`uec.rs`).
    Uec,
}

impl TransportKind {
    /// The tie-key kind of the transport's timer 0 (`Ev::tie_key`); its timers take the kinds from there on.
    #[inline]
    pub fn timer_base(self) -> u64 {
        match self {
            TransportKind::Udp => 4,
            TransportKind::Message => 20,
            TransportKind::Tcp => 11,
            TransportKind::Rdma => 15,
            TransportKind::Uec => 24,
        }
    }
}

/// Call `$body` with `$T` bound to the state type of transport `$kind` (static dispatch, one arm a transport).
macro_rules! with_transport {
    ($kind:expr, $T:ident => $body:expr) => {
        match $kind {
            $crate::transport::TransportKind::Udp => {
                type $T = $crate::transport::udp::Udp;
                $body
            }
            $crate::transport::TransportKind::Message => {
                type $T = $crate::transport::message::Messages;
                $body
            }
            $crate::transport::TransportKind::Tcp => {
                type $T = $crate::transport::tcp::Tcp;
                $body
            }
            $crate::transport::TransportKind::Rdma => {
                type $T = $crate::transport::rdma::Rdma;
                $body
            }
            $crate::transport::TransportKind::Uec => {
                type $T = $crate::transport::uec::Uec;
                $body
            }
        }
    };
}
pub(crate) use with_transport;

/// What the engine asks of a transport. Its state is a field of `Sim`; the entry points take the simulation, so a
/// transport can create packets (`Sim::new_packet`), hand them to a port (`Sim::enqueue`) and schedule its timers
/// (`Ev::Timer`).
pub(crate) trait TransportModel {
    /// A packet of instance `idx`'s data (`ack` false) or reverse (`ack` true) flow reached its destination;
    /// FlowMonitor has counted it, and its slot stays unchanged until this returns.
    fn on_packet(sim: &mut Sim, idx: u32, ack: bool, pkt: u32);
    /// Timer `timer` of instance `idx` fires.
    fn on_timer(sim: &mut Sim, timer: u8, idx: u32);
    /// The NIC of port p is free: the transport's next packet there (pulled transports), or None.
    fn next_packet(_sim: &mut Sim, _p: u32) -> Option<u32> {
        None
    }
    /// The wire size of the packet `next_packet` would give now, without taking it (lossless NICs check credit).
    fn next_size(_sim: &Sim, _p: u32) -> Option<u32> {
        None
    }
    /// Workload message `m` (this transport's instance m) becomes active at its NIC.
    fn start(_sim: &mut Sim, _m: u32) {}
    /// Move every absolute time the transport's state holds by `dt` (pending timers move with the event queue).
    fn shift(&mut self, dt: Time);
    /// Packets instance `idx`'s flow (data, or the reverse flow when `ack`) still has to hand to its NIC, for a
    /// hybrid jump to stop short of it (None: no end the transport knows, such as an ACK flow or an endless
    /// source).
    fn remaining(_sim: &Sim, _idx: u32, _ack: bool) -> Option<u64> {
        None
    }
    /// A hybrid jump advanced the flow by `tx` packets sent and `rx` delivered (its FlowMonitor counters are
    /// done): move the transport's own sequence state by as much. Returns how far the sequence numbers carried
    /// by the flow's packets in flight must move (0: they carry none).
    fn skip(_sim: &mut Sim, _idx: u32, _ack: bool, _tx: u64, _rx: u64) -> u64 {
        0
    }
    /// The state the transport's congestion control holds now, as up to three positive numbers on a scale where
    /// a relative tolerance means something (DCQCN: rate, target rate, α + 1/16), for the hybrid detector to check
    /// that it held steady (None: the transport has none; its rate is what the network gives it).
    fn cc_state(_sim: &Sim, _idx: u32, _ack: bool) -> Option<[f64; 3]> {
        None
    }
}

/// A flow's transport, its direction (data, or the reverse flow of ACKs) and its instance in that transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) kind: TransportKind,
    pub(crate) ack: bool,
    pub(crate) idx: u32,
}

/// Per-flow routing state shared by every transport (flow id = source index, then messages, then TCP data and
/// ACK flows, then RDMA ACK flows; see `fabricsim_core::compile`).
pub(crate) struct FlowRt {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) src_port: u32,
    pub(crate) dst_ep: u32,
    pub(crate) path: u32,
    /// ECMP salt (per_flow: hash of id and seed; per_message: drawn from the RNG when the flow starts).
    pub(crate) salt: u64,
    pub(crate) transport: Binding,
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
        debug_assert!(header <= u16::MAX as u32, "header bytes are validated to fit 16 bits");
        let pkt = Packet { flow, payload, header: header as u16, tx_time: self.now.0, path: f.path, ..Packet::default() };
        if let Some(h) = self.hybrid.as_mut() {
            h.touch(flow);
        }
        let st = &mut self.measure.stats[flow as usize];
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
        if let Some(h) = self.hybrid.as_mut() {
            h.touch(pk.flow);
        }
        let st = &mut self.measure.stats[pk.flow as usize];
        st.rx_packets += 1;
        st.rx_bytes += pk.size() as u64;
        st.rx_payload += pk.payload as u64;
        st.first_rx.get_or_insert(now);
        st.last_rx = Some(now);
        st.delay_sum += delay;
        st.max_delay = st.max_delay.max(delay);
        self.measure.totals.rx += 1;
        if let Some(b) = self.measure.bin {
            let k = (now / b.0) as usize;
            if self.measure.rx_bins.len() > k || self.grow_bins(k) {
                self.measure.rx_bins[k] += pk.payload as u64;
            }
        }
        let h = pk.switches as usize;
        if self.measure.hops.len() <= h {
            self.measure.hops.resize(h + 1, 0);
        }
        self.measure.hops[h] += 1;
        self.release(pkt);
        // The slot was released above but nothing reuses it before the transport returns (it reads it first).
        let b = self.flows[pk.flow as usize].transport;
        with_transport!(b.kind, T => T::on_packet(self, b.idx, b.ack, pkt));
    }

    /// Transport timer `timer` of instance `idx` fires.
    #[inline]
    pub(crate) fn on_timer(&mut self, kind: TransportKind, timer: u8, idx: u32) {
        with_transport!(kind, T => T::on_timer(self, timer, idx));
    }

    /// The next packet the NIC of port p pulls from the run's pulled transport, if any.
    #[inline]
    pub(crate) fn pull(&mut self, p: u32) -> Option<u32> {
        with_transport!(self.pulled, T => T::next_packet(self, p))
    }

    /// The wire size of the packet `pull` would give now.
    #[inline]
    pub(crate) fn pull_size(&self, p: u32) -> Option<u32> {
        with_transport!(self.pulled, T => T::next_size(self, p))
    }
}
