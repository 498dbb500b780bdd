//! HPCC at the sender, as HPCC's ns-3 fork implements it (rdma-hw.cc:741-918, one rate from the busiest hop).
//!
//! Every switch appends (time, bytes sent, queue, rate) of its egress port to a data packet at dequeue; the
//! receiver echoes the stack in the ACK. Per hop, u = txRate/B + min(q, q_prev)·R_max/(B·W), where txRate is
//! the bytes sent between the two samples over their time difference; U is the largest u over the hops and
//! the EWMA u ← (u·(T − τ) + U·τ)/T with τ ≤ T. With k = u/η: if k ≥ 1 or incStage ≥ maxStage the rate
//! becomes R_c/k + R_AI (incStage ← 0), else R_c + R_AI (incStage + 1), clamped to [min, line rate]. The
//! reference R_c and incStage are committed once per RTT (an ACK beyond `lastUpdateSeq`); with fast
//! reaction the ACKs in between change the rate from the same reference without committing it.

use super::{IntHop, IntStack, MAX_HOPS};
use crate::sim::Sim;
use fabricsim_core::Time;

/// HPCC state of one QP.
pub(crate) struct State {
    pub(crate) cur_rate: f64,
    pub(crate) inc_stage: u32,
    pub(crate) last_update_seq: u64,
    pub(crate) u: f64,
    pub(crate) hops: [IntHop; MAX_HOPS],
}

impl State {
    pub(crate) fn new(line: f64) -> State {
        State { cur_rate: line, inc_stage: 0, last_update_seq: 0, u: 1.0, hops: [IntHop::default(); MAX_HOPS] }
    }

    /// Move the INT snapshot times by `dt`.
    pub(crate) fn shift(&mut self, dt: Time) {
        for h in &mut self.hops {
            h.ts += dt.0;
        }
    }
}

impl Sim {
    /// An ACK of QP q with INT stack `ints[ack]` reached the sender.
    pub(crate) fn hpcc_ack(&mut self, q: u32, ack: u32) {
        let ack_seq = self.pkts[ack as usize].psn as u64 * self.rdma.qps[q as usize].mtu as u64;
        let fast_react = self.rdma.cfg.as_ref().expect("[rdma]").spec.fast_react;
        if ack_seq > self.rdma.qps[q as usize].hpcc.last_update_seq {
            self.hpcc_update(q, ack, false);
        } else if fast_react {
            self.hpcc_update(q, ack, true);
        }
    }

    fn hpcc_update(&mut self, q: u32, ack: u32, fast: bool) {
        let ints: IntStack = self.rdma.ints[ack as usize];
        let cfg = self.rdma.cfg.as_ref().expect("[rdma]");
        let (eta, max_stage, ai) = (cfg.spec.eta, cfg.spec.max_stage, cfg.spec.hpcc_rate_ai_bps as f64);
        let (t, w) = (cfg.base_rtt.0 as f64, cfg.bdp as f64);
        let qp = &mut self.rdma.qps[q as usize];
        let next_seq = qp.snd_nxt;
        let n = ints.n as usize;
        if qp.hpcc.last_update_seq == 0 {
            qp.hpcc.hops[..n].copy_from_slice(&ints.hops[..n]);
            qp.hpcc.last_update_seq = next_seq;
            return;
        }
        let (mut big_u, mut dt) = (0.0f64, 0u64);
        let mut updated = false;
        for i in 0..n {
            let (now_h, prev) = (ints.hops[i], qp.hpcc.hops[i]);
            let tau = now_h.ts.saturating_sub(prev.ts);
            if tau == 0 {
                continue;
            }
            let tx_rate = now_h.tx_bytes.saturating_sub(prev.tx_bytes) as f64 * 8.0 / (tau as f64 * 1e-12);
            let b = now_h.rate as f64;
            let u = tx_rate / b + now_h.qlen.min(prev.qlen) as f64 * qp.max_rate / b / w;
            if u > big_u {
                big_u = u;
                dt = tau;
            }
            qp.hpcc.hops[i] = now_h;
            updated = true;
        }
        if updated {
            let dt = (dt as f64).min(t);
            qp.hpcc.u = (qp.hpcc.u * (t - dt) + big_u * dt) / t;
            let k = qp.hpcc.u / eta;
            let (rate, stage) = if k >= 1.0 || qp.hpcc.inc_stage >= max_stage {
                (qp.hpcc.cur_rate / k + ai, 0)
            } else {
                (qp.hpcc.cur_rate + ai, qp.hpcc.inc_stage + 1)
            };
            let min = cfg.spec.min_rate_bps as f64;
            let rate = rate.max(min).min(qp.max_rate);
            // The peer re-times the pending pacing slot for the new rate (ChangeRate).
            let old = qp.rate;
            if rate != old && qp.last_size > 0 {
                let shift = super::tx_ps(qp.last_size, rate) as i128 - super::tx_ps(qp.last_size, old) as i128;
                qp.next_avail = Time((qp.next_avail.0 as i128 + shift).max(0) as u64);
            }
            if !fast {
                qp.hpcc.cur_rate = rate;
                qp.hpcc.inc_stage = stage;
            }
            self.set_rate(q, rate);
        }
        let qp = &mut self.rdma.qps[q as usize];
        if !fast && next_seq > qp.hpcc.last_update_seq {
            qp.hpcc.last_update_seq = next_seq;
        }
    }

    /// A switch port p dequeues HPCC data packet `pkt`: append its INT record (before `tx_bytes` counts it).
    #[inline]
    pub(crate) fn int_push(&mut self, p: u32, pkt: u32) {
        let port = &self.net.ports[p as usize];
        let hop = IntHop {
            ts: self.now.0,
            tx_bytes: port.tx_bytes,
            qlen: port.egress.bytes() + self.net.roce_ports[p as usize].ctrl_bytes,
            rate: port.rate.0,
        };
        let st = &mut self.rdma.ints[pkt as usize];
        if (st.n as usize) < MAX_HOPS {
            st.hops[st.n as usize] = hop;
            st.n += 1;
        }
    }
}
