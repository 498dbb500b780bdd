//! DCQCN at the reaction point, as HPCC's ns-3 fork implements it (Mellanox model, rdma-hw.cc:614-739).
//!
//! A CNP flag on an ACK sets two "CNP arrived" bits. The first CNP sets the rate (and the target) to
//! `rate_on_first_cnp` × the rate, and starts two periodic timers: the α update
//! every `alpha_resume_interval` (α ← (1 − g)·α + g if a CNP arrived, else (1 − g)·α) and the decrease check
//! every `rate_decrease_interval` (if a CNP arrived: target ← rate unless the previous cut saw no increase
//! and the target is not clamped, rate ← max(min, rate·(1 − α/2)), and the increase timer restarts). The
//! increase timer fires every `rp_timer`: the first F times fast recovery (rate ← (rate + target)/2), then one
//! additive increase (target += AI), then hyper increase (target += HAI), each followed by
//! rate ← (rate + target)/2, the target capped at line rate. No byte counter (the peer has none).

use crate::events::EventId;
use crate::sim::Sim;
use fabricsim_core::Time;

/// DCQCN state of one QP.
pub(crate) struct State {
    pub(crate) alpha: f64,
    pub(crate) target: f64,
    pub(crate) alpha_cnp: bool,
    pub(crate) decrease_cnp: bool,
    pub(crate) first_cnp: bool,
    pub(crate) stage: u32,
    pub(crate) ev_alpha: Option<EventId>,
    pub(crate) ev_decrease: Option<EventId>,
    pub(crate) ev_increase: Option<EventId>,
}

impl State {
    pub(crate) fn new(line: f64) -> State {
        State {
            alpha: 1.0,
            target: line,
            alpha_cnp: false,
            decrease_cnp: false,
            first_cnp: true,
            stage: 0,
            ev_alpha: None,
            ev_decrease: None,
            ev_increase: None,
        }
    }
}

impl Sim {
    /// An ACK of QP q carried a CNP.
    pub(crate) fn dcqcn_cnp(&mut self, q: u32) {
        let cfg = &self.rdma.cfg.as_ref().expect("[rdma]").spec;
        let (t_alpha, t_dec, first_cut) = (Time(cfg.alpha_resume_interval_ps), Time(cfg.rate_decrease_interval_ps), cfg.rate_on_first_cnp);
        let now = self.now;
        let st = &mut self.rdma.qps[q as usize].dcqcn;
        st.alpha_cnp = true;
        st.decrease_cnp = true;
        if st.first_cnp {
            st.alpha = 1.0;
            st.alpha_cnp = false;
            st.first_cnp = false;
            // The peer adds 1 ns so that the first decrease check follows the α update of the same instant.
            st.ev_alpha = Some(self.q.schedule(now + t_alpha, super::timer(super::T_ALPHA, q)));
            st.ev_decrease = Some(self.q.schedule(now + t_dec + Time(1000), super::timer(super::T_DECREASE, q)));
            // The peer: target ← rate ← RateOnFirstCnp × rate (a fraction of 1 leaves the rate as it is).
            let rate = self.rdma.qps[q as usize].rate;
            if first_cut < 1.0 {
                let cut = first_cut * rate;
                self.rdma.qps[q as usize].dcqcn.target = cut;
                self.set_rate(q, cut);
            } else {
                self.rdma.qps[q as usize].dcqcn.target = rate;
            }
        }
    }

    /// The α timer of QP q.
    pub(crate) fn dcqcn_alpha(&mut self, q: u32) {
        let cfg = &self.rdma.cfg.as_ref().expect("[rdma]").spec;
        let (g, t) = (cfg.g, Time(cfg.alpha_resume_interval_ps));
        let now = self.now;
        let st = &mut self.rdma.qps[q as usize].dcqcn;
        st.alpha = (1.0 - g) * st.alpha + if st.alpha_cnp { g } else { 0.0 };
        st.alpha_cnp = false;
        st.ev_alpha = Some(self.q.schedule(now + t, super::timer(super::T_ALPHA, q)));
    }

    /// The rate-decrease check of QP q.
    pub(crate) fn dcqcn_decrease(&mut self, q: u32) {
        let cfg = &self.rdma.cfg.as_ref().expect("[rdma]").spec;
        let (t_dec, t_inc, clamp) = (Time(cfg.rate_decrease_interval_ps), Time(cfg.rp_timer_ps), cfg.clamp_target_rate);
        let now = self.now;
        let qp = &mut self.rdma.qps[q as usize];
        qp.dcqcn.ev_decrease = Some(self.q.schedule(now + t_dec, super::timer(super::T_DECREASE, q)));
        if qp.dcqcn.decrease_cnp {
            if clamp || qp.dcqcn.stage != 0 {
                qp.dcqcn.target = qp.rate;
            }
            let rate = qp.rate * (1.0 - qp.dcqcn.alpha / 2.0);
            qp.dcqcn.stage = 0;
            qp.dcqcn.decrease_cnp = false;
            if let Some(id) = qp.dcqcn.ev_increase.take() {
                self.q.cancel(id);
            }
            self.rdma.qps[q as usize].dcqcn.ev_increase = Some(self.q.schedule(now + t_inc, super::timer(super::T_INCREASE, q)));
            self.set_rate(q, rate);
        }
    }

    /// The rate-increase timer of QP q: fast recovery, additive or hyper increase.
    pub(crate) fn dcqcn_increase(&mut self, q: u32) {
        let cfg = &self.rdma.cfg.as_ref().expect("[rdma]").spec;
        let (t_inc, f, ai, hai) = (Time(cfg.rp_timer_ps), cfg.fast_recovery_times, cfg.rate_ai_bps as f64, cfg.rate_hai_bps as f64);
        let now = self.now;
        let qp = &mut self.rdma.qps[q as usize];
        qp.dcqcn.ev_increase = Some(self.q.schedule(now + t_inc, super::timer(super::T_INCREASE, q)));
        let st = &mut qp.dcqcn;
        if st.stage == f {
            st.target = (st.target + ai).min(qp.max_rate);
        } else if st.stage > f {
            st.target = (st.target + hai).min(qp.max_rate);
        }
        st.stage += 1;
        let rate = (qp.rate + st.target) / 2.0;
        self.set_rate(q, rate);
    }

    /// QP q finished: its timers stop.
    pub(crate) fn dcqcn_stop(&mut self, q: u32) {
        let st = &mut self.rdma.qps[q as usize].dcqcn;
        let evs = [st.ev_alpha.take(), st.ev_decrease.take(), st.ev_increase.take()];
        for id in evs.into_iter().flatten() {
            self.q.cancel(id);
        }
    }
}
