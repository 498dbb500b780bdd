//! Network events during a run: links down and up, bit errors, and the tables' delayed reroute.

use crate::events::Ev;
use crate::sim::Sim;
use fabricsim_core::record::NetEventRow;
use fabricsim_core::spec::{NetEventKind, NetEventSpec, RunSpec};
use fabricsim_core::Time;
use rand_core::Rng;

/// Network events and the links' state: whether there are any events (a run without them skips the per-packet
/// link checks), the events, whether each link is up, each link's bit error rate, and the tables' detection
/// delay. Holds no absolute time (pending events and reroutes are in the event queue).
pub(crate) struct Faults {
    pub(crate) any: bool,
    pub(crate) events: Vec<NetEventSpec>,
    pub(crate) link_up: Vec<bool>,
    pub(crate) link_ber: Vec<f64>,
    pub(crate) detection: Time,
    /// Each link's end nodes (a, b) as the spec lists them, for the record's event rows (empty without events).
    pub(crate) link_ends: Vec<(u32, u32)>,
}

impl Faults {
    pub(crate) fn new(spec: &RunSpec) -> Faults {
        Faults {
            any: !spec.events.is_empty(),
            events: spec.events.clone(),
            link_up: vec![true; spec.network.links.len()],
            link_ber: vec![0.0; spec.network.links.len()],
            detection: Time(spec.routing.detection_delay_ps),
            link_ends: if spec.events.is_empty() { Vec::new() } else { spec.network.links.iter().map(|l| (l.a, l.b)).collect() },
        }
    }
}

impl Sim {
    /// Whether a bit error corrupts `pkt` on `link` as it reaches node v: probability 1 − (1 − ber)^bits, one
    /// draw from v's RNG stream.
    pub(crate) fn bit_error(&mut self, pkt: u32, link: usize, v: u32) -> bool {
        let bits = 8.0 * self.pkts[pkt as usize].size() as f64;
        let p = -(bits * (-self.faults.link_ber[link]).ln_1p()).exp_m1();
        self.uniform(v) < p
    }

    /// A uniform draw in [0, 1) from node v's RNG stream (53 random bits), for loss and marking decisions.
    #[inline]
    pub(crate) fn uniform(&mut self, v: u32) -> f64 {
        (self.rngs[v as usize].next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A packet lost on the link of port p (dead, or corrupted): counted at p; on a lossless link the credit it
    /// held comes back, as the receiver discards it.
    pub(crate) fn lose_on_link(&mut self, pkt: u32, p: u32) {
        if self.net.ports[p as usize].credits != u64::MAX {
            let size = self.pkts[pkt as usize].size();
            self.return_credit(p, size);
        }
        self.drop_packet(pkt, p);
    }

    /// Network event e takes effect: links go down or up (the tables follow after the detection delay), or
    /// take a bit error rate. O(links of the event).
    pub(crate) fn net_event(&mut self, e: u32) {
        let ev = &self.faults.events[e as usize];
        match ev.kind {
            NetEventKind::Ber => {
                for &l in &ev.links {
                    self.faults.link_ber[l as usize] = ev.ber;
                }
            }
            NetEventKind::LinkDown | NetEventKind::LinkUp => {
                let up = ev.kind == NetEventKind::LinkUp;
                for &l in &ev.links {
                    self.faults.link_up[l as usize] = up;
                }
                let at = self.now + self.faults.detection;
                self.q.schedule(at, Ev::Reroute(e));
            }
        }
    }

    /// The scenario's network events for the record, in time order (file order among equal times), each link
    /// named by its end nodes. O(events).
    pub(crate) fn net_event_rows(&self) -> Vec<NetEventRow> {
        if self.faults.events.is_empty() {
            return Vec::new();
        }
        let (names, ends) = (&self.net.topo.names, &self.faults.link_ends);
        let mut rows: Vec<NetEventRow> = self
            .faults
            .events
            .iter()
            .map(|e| NetEventRow {
                t_ps: e.at_ps,
                kind: match e.kind {
                    NetEventKind::LinkDown => "link_down",
                    NetEventKind::LinkUp => "link_up",
                    NetEventKind::Ber => "ber",
                }
                .into(),
                links: e
                    .links
                    .iter()
                    .map(|&l| {
                        let (a, b) = ends[l as usize];
                        format!("{}-{}", names[a as usize], names[b as usize])
                    })
                    .collect(),
                ber: if e.kind == NetEventKind::Ber { e.ber } else { 0.0 },
            })
            .collect();
        rows.sort_by_key(|r| r.t_ps);
        rows
    }

    /// The tables catch up with network event e: after links went down only the destinations whose tables
    /// used them are recomputed; after links came up, every destination (a new link can shorten any path).
    pub(crate) fn reroute(&mut self, e: u32) {
        let ev = &self.faults.events[e as usize];
        let groups: Vec<u32> = if ev.kind == NetEventKind::LinkDown {
            self.net.fib.groups_using(&self.net.topo, &ev.links)
        } else {
            (0..self.net.fib.n_groups() as u32).collect()
        };
        self.net.fib.reroute(&self.net.topo, &self.faults.link_up, &groups);
    }
}
