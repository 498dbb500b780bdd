//! ECN marking at switch egress, RED-like on the instantaneous queue, done at dequeue as HPCC's switch does.
//!
//! With Q the data bytes still queued at the port after the departing packet: Q > Kmax marks; Kmin < Q ≤ Kmax
//! marks with probability Pmax·(Q − Kmin)/(Kmax − Kmin) (one draw from the switch's RNG stream); otherwise no mark.

use crate::sim::Sim;
use crate::transport::rdma::ECN_CE;

impl Sim {
    /// Decide the ECN mark of data packet `pkt` leaving port p.
    #[inline]
    pub(crate) fn ecn_mark(&mut self, p: u32, pkt: u32) {
        let (kmin, kmax, pmax) = self.net.roce_ports[p as usize].ecn.expect("called for ECN ports");
        let q = self.net.ports[p as usize].egress.bytes();
        let mark = if q > kmax {
            true
        } else if q > kmin {
            let prob = pmax * (q - kmin) as f64 / (kmax - kmin) as f64;
            let v = self.net.topo.ports[p as usize].node;
            self.uniform(v) < prob
        } else {
            false
        };
        if mark {
            self.pkts[pkt as usize].ecn |= ECN_CE;
            self.net.roce_ports[p as usize].ecn_marks += 1;
        }
    }
}
