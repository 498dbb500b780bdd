//! Credit-based link-level flow control (InfiniBand-like): downstream input-buffer credit returned upstream, lazily.
//!
//! A credit return travels the link back to the upstream port in `delay` ps. It is not an event: it waits in the
//! port's `credit_pipe` with its arrival time, and the port absorbs every arrived credit when it needs credit
//! (`absorb_credits`). Only a port that is blocked for want of credit schedules one `Ev::Credit`, at the time the
//! credit it needs will have arrived (`wait_credit`). A busy port never needs one: its serialisation end absorbs.

use crate::events::Ev;
use crate::sim::Sim;
use fabricsim_core::Time;

impl Sim {
    /// Send `bytes` of credit back toward upstream port u; it arrives one link delay from now. O(1).
    #[inline]
    pub(crate) fn return_credit(&mut self, u: u32, bytes: u32) {
        let now = self.now;
        let port = &mut self.net.ports[u as usize];
        let at = now + port.delay;
        port.credit_pipe.push_back((at, bytes));
        port.credit_inflight += bytes as u64;
        if port.credit_need != 0 && port.credit_ev == Time::MAX && port.credits + port.credit_inflight >= port.credit_need {
            // The port waits for credit that has now been sent: wake it when this return lands.
            port.credit_need = 0;
            port.credit_ev = at;
            self.q.schedule(at, Ev::Credit(u));
        }
    }

    /// Add every credit return that has arrived by now to port u's credit. O(returns absorbed).
    #[inline]
    pub(crate) fn absorb_credits(&mut self, u: u32) {
        let now = self.now;
        let port = &mut self.net.ports[u as usize];
        while let Some(&(t, bytes)) = port.credit_pipe.front() {
            if t > now {
                break;
            }
            port.credit_pipe.pop_front();
            port.credits += bytes as u64;
            port.credit_inflight -= bytes as u64;
        }
    }

    /// Whether port u has credit for a packet of `need` bytes, absorbing the returns that have landed first; if not,
    /// the port waits for it (`wait_credit`). O(1) when the credit is there.
    #[inline]
    pub(crate) fn has_credit(&mut self, u: u32, need: u64) -> bool {
        if need <= self.net.ports[u as usize].credits {
            return true;
        }
        self.absorb_credits(u);
        if need <= self.net.ports[u as usize].credits {
            return true;
        }
        self.wait_credit(u, need);
        false
    }

    /// Port u cannot send its next packet of `need` bytes for want of credit (arrived credit is absorbed): wake it
    /// when enough returns will have landed, or, if not enough are on their way, when `return_credit` sends the
    /// one that makes up the difference. O(returns in flight).
    pub(crate) fn wait_credit(&mut self, u: u32, need: u64) {
        let port = &mut self.net.ports[u as usize];
        if port.credit_ev != Time::MAX {
            return; // a wake-up is already scheduled; the port looks again then
        }
        let mut have = port.credits;
        for &(t, bytes) in &port.credit_pipe {
            have += bytes as u64;
            if have >= need {
                port.credit_need = 0;
                port.credit_ev = t;
                self.q.schedule(t, Ev::Credit(u));
                return;
            }
        }
        port.credit_need = need;
    }

    /// The credit port u waited for has arrived: absorb it and try to send.
    pub(crate) fn on_credit(&mut self, u: u32) {
        let port = &mut self.net.ports[u as usize];
        debug_assert_eq!(port.credit_ev, self.now, "one credit wake-up per port, at its own time");
        port.credit_ev = Time::MAX;
        self.absorb_credits(u);
        self.wake_port(u);
    }
}
