//! Network events during a run: links down and up, bit errors, new link rates, and the tables' delayed reroute.

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
            NetEventKind::LinkRate => {
                // Both ends of each link serialise at the new rate from the next packet they start; a packet in
                // serialisation ends at the old rate (its end is fixed: `busy_until` and the pipe). The ports of
                // these links neither commit nor pull ahead (`pin_rated_ports`), so no packet started after now
                // was timed at the old rate. The tables keep the link (its routing weight is unchanged).
                let rate = fabricsim_core::Bps(ev.rate_bps);
                for &l in &ev.links {
                    for p in self.link_ports(l) {
                        let port = &mut self.net.ports[p as usize];
                        port.rate = rate;
                        port.ser = (0, Time::ZERO); // the cache's invariant: ser.1 == rate.tx_time(ser.0)
                    }
                }
                if let Some(h) = self.hybrid.as_mut() {
                    h.forget();
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
        NetEventRow::of_spec(&self.faults.events, &self.faults.link_ends, &self.net.topo.names)
    }

    /// The two ports (directed ends) of link l: its `a` end's port on it and that port's peer. O(degree of a).
    fn link_ports(&self, l: u32) -> [u32; 2] {
        let topo = &self.net.topo;
        let a = self.faults.link_ends[l as usize].0;
        let p = topo.ports_of(a).find(|&q| topo.ports[q as usize].link == l).expect("a link is a port of its a end");
        [p, topo.ports[p as usize].peer_port]
    }

    /// The ports of the links a `link_rate` event names serialise every packet at its start (no commit at
    /// arrival, `net::commit`, and no pull one serialisation ahead, `net::ahead`): both fix a start and its
    /// serialisation before the start, and a rate change in between would time the packet at the old rate.
    /// Other ports keep their shortcuts (they are exact). O(events · links).
    pub(crate) fn pin_rated_ports(&mut self) {
        for ev in self.faults.events.iter().filter(|e| e.kind == NetEventKind::LinkRate) {
            for &l in &ev.links {
                for p in self.link_ports(l) {
                    let port = &mut self.net.ports[p as usize];
                    port.commits = false;
                    port.pulls_ahead = false;
                }
            }
        }
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
