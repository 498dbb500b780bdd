//! UDP sources with ns-3 OnOffApplication semantics (CBR and on/off), pushed into their NIC's egress buffer.

use crate::events::{Ev, EventId};
use crate::sim::Sim;
use crate::transport::{TransportKind, TransportModel};
use fabricsim_core::spec::SourceKind;
use fabricsim_core::{Bps, Time};

/// A UDP source's state (ns-3 OnOffApplication: residual bits carried across off periods).
pub(crate) struct SourceRt {
    pub(crate) flow: u32,
    pub(crate) kind: SourceKind,
    pub(crate) rate: Bps,
    pub(crate) payload: u32,
    pub(crate) header: u32,
    pub(crate) on: Time,
    pub(crate) off: Time,
    pub(crate) max_bytes: Option<u64>,
    pub(crate) tot_bytes: u64,
    pub(crate) residual_bits: u64,
    pub(crate) last_start: Time,
    pub(crate) send_ev: Option<EventId>,
    pub(crate) toggle_ev: Option<EventId>,
}

/// The UDP sources (source s is flow s).
#[derive(Default)]
pub(crate) struct Udp {
    pub(crate) srcs: Vec<SourceRt>,
}

/// The UDP timers (`Ev::Timer(TransportKind::Udp, timer, source)`).
pub(crate) const SEND: u8 = 0;
pub(crate) const ON: u8 = 1;
pub(crate) const OFF: u8 = 2;
pub(crate) const START: u8 = 3;
pub(crate) const STOP: u8 = 4;

fn timer(t: u8, s: u32) -> Ev {
    Ev::Timer(TransportKind::Udp, t, s)
}

impl TransportModel for Udp {
    /// UDP has no receiver state: FlowMonitor's counts are the whole of it.
    fn on_packet(_sim: &mut Sim, _idx: u32, _ack: bool, _pkt: u32) {}

    fn on_timer(sim: &mut Sim, t: u8, s: u32) {
        match t {
            SEND => sim.src_send(s),
            ON => sim.src_on(s),
            OFF => sim.src_off(s),
            START => {
                sim.src_cancel(s);
                sim.src_schedule_on(s);
            }
            STOP => sim.src_cancel(s),
            other => debug_assert!(false, "UDP has no timer {other}"),
        }
    }

    /// The start of the current interval (residual bits are measured from it).
    fn shift(&mut self, dt: Time) {
        for s in &mut self.srcs {
            s.last_start = s.last_start + dt;
        }
    }

    /// Packets left before `max_bytes` (None: no limit).
    fn remaining(sim: &Sim, s: u32, _ack: bool) -> Option<u64> {
        let src = &sim.udp.srcs[s as usize];
        src.max_bytes.map(|m| m.saturating_sub(src.tot_bytes) / src.payload.max(1) as u64)
    }

    /// `tx` packets sent count toward `max_bytes`.
    fn skip(sim: &mut Sim, s: u32, _ack: bool, tx: u64, _rx: u64) -> u64 {
        let src = &mut sim.udp.srcs[s as usize];
        src.tot_bytes += tx * src.payload as u64;
        0
    }
}

impl Sim {
    /// ns-3 ScheduleStartEvent: the on period begins after an off period (zero for CBR).
    pub(crate) fn src_schedule_on(&mut self, s: u32) {
        let src = &self.udp.srcs[s as usize];
        let off = if src.kind == SourceKind::Cbr { Time::ZERO } else { src.off };
        let id = self.q.schedule(self.now + off, timer(ON, s));
        self.udp.srcs[s as usize].toggle_ev = Some(id);
    }

    /// ns-3 StartSending: first packet after (packet bits − residual bits)/rate, then the on timer.
    pub(crate) fn src_on(&mut self, s: u32) {
        let now = self.now;
        let src = &mut self.udp.srcs[s as usize];
        src.toggle_ev = None;
        src.last_start = now;
        self.src_next_tx(s);
        let src = &mut self.udp.srcs[s as usize];
        if src.kind == SourceKind::Onoff {
            let id = self.q.schedule(now + src.on, timer(OFF, s));
            self.udp.srcs[s as usize].toggle_ev = Some(id);
        }
    }

    pub(crate) fn src_next_tx(&mut self, s: u32) {
        let src = &self.udp.srcs[s as usize];
        if src.max_bytes.is_none_or(|m| src.tot_bytes < m) {
            let bits = (src.payload as u64 * 8).saturating_sub(src.residual_bits);
            let at = self.now + src.rate.bits_time_round(bits);
            let id = self.q.schedule(at, timer(SEND, s));
            self.udp.srcs[s as usize].send_ev = Some(id);
        } else {
            self.src_cancel(s);
        }
    }

    pub(crate) fn src_send(&mut self, s: u32) {
        let src = &mut self.udp.srcs[s as usize];
        src.send_ev = None;
        let (flow, payload, header) = (src.flow, src.payload, src.header);
        src.tot_bytes += payload as u64;
        src.last_start = self.now;
        src.residual_bits = 0;
        let pkt = self.new_packet(flow, payload, header);
        let port = self.flows[flow as usize].src_port;
        self.enqueue(port, pkt);
        self.src_next_tx(s);
    }

    pub(crate) fn src_off(&mut self, s: u32) {
        self.udp.srcs[s as usize].toggle_ev = None;
        self.src_cancel(s);
        self.src_schedule_on(s);
    }

    /// ns-3 CancelEvents: remember the bits accrued since the last packet, cancel send and toggle timers.
    pub(crate) fn src_cancel(&mut self, s: u32) {
        let now = self.now;
        let src = &mut self.udp.srcs[s as usize];
        if let Some(id) = src.send_ev.take() {
            let dt = (now - src.last_start).0 as u128;
            let bits = (dt * src.rate.0 as u128 / Time::PS_PER_S as u128) as u64;
            src.residual_bits = (src.residual_bits + bits).min(src.payload as u64 * 8);
            self.q.cancel(id);
        }
        if let Some(id) = src.toggle_ev.take() {
            self.q.cancel(id);
        }
    }
}
