//! Switch forwarding: the output port from the tables, explicit paths or adaptive routing, then its queue.

use crate::sim::Sim;
use fabricsim_core::routing::ecmp_index;
use fabricsim_core::spec::EcmpMode;
use fabricsim_core::topology::NONE;
use rand_core::Rng;

impl Sim {
    /// A packet fully arrived at switch v from upstream port `from`: pick the output port and queue it
    /// (in the output's egress buffer, or in its virtual output queue at the input on a lossless switch).
    #[inline]
    pub(crate) fn forward(&mut self, v: u32, pkt: u32, from: u32) {
        let pk = &mut self.pkts[pkt as usize];
        pk.switches += 1;
        if pk.path != NONE && self.ecmp == EcmpMode::Adaptive {
            // Adaptive routing over a static route (InfiniBand AR over Ftree): keep the route's port unless
            // another equal-cost port has less queued; once the packet deviates it follows the FIB.
            pk.hop += 1;
            let (path, hop, dst) = (pk.path, pk.hop as u32, self.flows[pk.flow as usize].dst_ep);
            let pref = self.net.paths.hop_ports(path, hop)[0];
            let cands = self.net.fib.next_hops(v, dst);
            let now = self.now;
            for &c in std::iter::once(&pref).chain(cands) {
                self.net.ports[c as usize].settle_if_commits(now);
            }
            let load = |p: u32| {
                let port = &self.net.ports[p as usize];
                port.egress.bytes() + port.voq.as_ref().map_or(0, |q| q.bytes)
            };
            // Least loaded; the route's port comes first, so it wins ties (min_by_key keeps the first minimum).
            let best = std::iter::once(pref).chain(cands.iter().copied()).min_by_key(|&c| load(c)).expect("pref");
            if best != pref {
                self.pkts[pkt as usize].path = NONE;
            }
            return self.queue_at(best, pkt, from);
        }
        let mut cands: &[u32] = if pk.path != NONE {
            pk.hop += 1;
            self.net.paths.hop_ports(pk.path, pk.hop as u32)
        } else {
            self.net.fib.next_hops(v, self.flows[pk.flow as usize].dst_ep)
        };
        if self.faults.any && pk.path != NONE && cands.iter().all(|&c| !self.faults.link_up[self.net.topo.ports[c as usize].link as usize]) {
            // The explicit path's next link is dead: the packet leaves its path for the tables.
            pk.path = NONE;
            cands = self.net.fib.next_hops(v, self.flows[pk.flow as usize].dst_ep);
        }
        let out = match cands.len() {
            1 => cands[0],
            0 => return self.drop_packet(pkt, from), // no route left after a failure: lost where it arrived
            n => match self.ecmp {
                EcmpMode::PerPacket => cands[(self.rngs[v as usize].next_u64() % n as u64) as usize],
                EcmpMode::Adaptive => {
                    let first = ecmp_index(self.hash_salt(pkt), v, n);
                    let now = self.now;
                    for &c in cands {
                        self.net.ports[c as usize].settle_if_commits(now);
                    }
                    let load = |p: u32| {
                        let port = &self.net.ports[p as usize];
                        port.egress.bytes() + port.voq.as_ref().map_or(0, |q| q.bytes)
                    };
                    (0..n).map(|k| cands[(first + k) % n]).min_by_key(|&p| load(p)).expect("n > 1 candidates")
                }
                _ => cands[ecmp_index(self.hash_salt(pkt), v, n)],
            },
        };
        self.queue_at(out, pkt, from);
    }

    /// Queue a packet that arrived from port `from` for output port `out` (its egress buffer, or its virtual
    /// output queue at the input on a lossless switch).
    #[inline]
    pub(crate) fn queue_at(&mut self, out: u32, pkt: u32, from: u32) {
        if self.net.roce {
            if self.pkts[pkt as usize].class == crate::transport::rdma::CLASS_CONTROL {
                return self.enqueue_ctrl(out, pkt);
            }
            let v = self.net.topo.ports[out as usize].node;
            if self.pfc.mmu_of[v as usize] != NONE && !self.mmu_admit(v, pkt, from) {
                // Headroom exhausted (PFC off, or too little headroom): dropped on arrival, counted at the
                // switch's ingress port (a UEC data packet is trimmed and queued at its output instead).
                if self.uec.on && self.uec_trim(out, pkt) {
                    return;
                }
                let rev = self.net.topo.ports[from as usize].peer_port;
                return self.drop_packet(pkt, rev);
            }
        }
        if self.net.ports[out as usize].voq.is_some() {
            let size = self.pkts[pkt as usize].size();
            let input = self.net.topo.ports[self.net.topo.ports[from as usize].peer_port as usize].local as usize;
            let port = &mut self.net.ports[out as usize];
            let voq = port.voq.as_mut().expect("checked above");
            voq.push(input, pkt, size);
            port.peak_packets = port.peak_packets.max(voq.len);
            port.peak_bytes = port.peak_bytes.max(voq.bytes);
            self.wake_port(out);
        } else {
            self.enqueue(out, pkt);
        }
    }
}
