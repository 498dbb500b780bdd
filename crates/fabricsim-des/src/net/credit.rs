//! Credit-based link-level flow control (InfiniBand-like): downstream input-buffer credit returned upstream.

use crate::events::Ev;
use crate::sim::Sim;

impl Sim {
    #[inline]
    pub(crate) fn return_credit(&mut self, u: u32, bytes: u32) {
        let port = &mut self.ports[u as usize];
        let at = self.now + port.delay;
        if port.credit_pipe.is_empty() {
            self.q.schedule(at, Ev::Credit(u));
        }
        port.credit_pipe.push_back((at, bytes));
    }

    pub(crate) fn on_credit(&mut self, u: u32) {
        let port = &mut self.ports[u as usize];
        let (_, bytes) = port
            .credit_pipe
            .pop_front()
            .expect("a credit event implies a credit in flight");
        port.credits += bytes as u64;
        if let Some(&(t, _)) = port.credit_pipe.front() {
            self.q.schedule(t, Ev::Credit(u));
        }
        if !port.pending {
            self.try_start(u);
        }
    }
}
