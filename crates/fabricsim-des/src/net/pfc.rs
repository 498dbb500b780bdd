//! The shared-buffer switch (HPCC's switch-mmu): per-ingress-port accounting, PFC PAUSE/RESUME and deadlock detection.
//!
//! Accounting per ingress port of the data priority: the first `reserve` bytes are the port's own, the next
//! come from the shared pool while the port's shared use stays under the dynamic threshold
//! α × (buffer − total headroom − total reserve − shared used), and the rest go to the port's headroom. A
//! port pauses its upstream when it uses headroom or reaches the threshold, and resumes when its headroom is
//! empty and its shared use is `resume_offset` below the threshold (or zero). A packet is dropped only when
//! it fits neither the headroom nor the threshold. Control packets (ACK, NACK) bypass the accounting.

use crate::events::Ev;
use crate::sim::Sim;
use fabricsim_core::spec::PfcSpec;
use fabricsim_core::topology::Topology;
use fabricsim_core::Time;

/// The memory-management unit of one shared-buffer switch. Invariant: `shared_used` is the sum over ports of
/// `max(ingress - reserve, 0)`, and `ingress + hdrm` of a port is the bytes it holds.
pub(crate) struct Mmu {
    reserve: u64,
    resume_offset: u64,
    /// `buffer - Σ headroom - n_ports × reserve`, saturating (HPCC counts one reserve per port).
    pool: u64,
    shared_used: u64,
    /// Per local port: α, headroom, bytes held in the reserve/shared pool, bytes held in headroom, and whether
    /// the port has paused its upstream.
    alpha: Vec<f64>,
    headroom: Vec<u64>,
    ingress: Vec<u64>,
    hdrm: Vec<u64>,
    pub(crate) paused: Vec<bool>,
}

impl Mmu {
    /// The MMU of switch `v`. `nic_rate` is the hosts' NIC rate (α doubles per doubling of a port's rate
    /// above it, as HPCC's `pfc_a_shift`). O(ports of v).
    pub(crate) fn new(spec: &PfcSpec, topo: &Topology, v: u32, nic_rate: u64) -> Mmu {
        let ports: Vec<u32> = topo.ports_of(v).collect();
        let headroom: Vec<u64> = ports
            .iter()
            .map(|&p| {
                let port = &topo.ports[p as usize];
                spec.headroom_bytes.unwrap_or_else(|| (3 * port.rate.0 as u128 * port.delay.0 as u128 / 8 / 1_000_000_000_000) as u64)
            })
            .collect();
        let alpha = ports
            .iter()
            .map(|&p| {
                let (mut a, mut r) = (spec.alpha, topo.ports[p as usize].rate.0);
                while r > nic_rate && a < 1.0 {
                    a *= 2.0;
                    r /= 2;
                }
                a
            })
            .collect();
        let n = ports.len();
        let pool = spec.buffer_bytes.saturating_sub(headroom.iter().sum::<u64>() + n as u64 * spec.reserve_bytes);
        Mmu {
            reserve: spec.reserve_bytes,
            resume_offset: spec.resume_offset_bytes,
            pool,
            shared_used: 0,
            alpha,
            headroom,
            ingress: vec![0; n],
            hdrm: vec![0; n],
            paused: vec![false; n],
        }
    }

    /// The dynamic threshold of local port i: α_i × (pool − shared used), in bytes.
    #[inline]
    fn threshold(&self, i: usize) -> u64 {
        (self.pool.saturating_sub(self.shared_used) as f64 * self.alpha[i]) as u64
    }

    #[inline]
    fn shared_of(&self, i: usize) -> u64 {
        self.ingress[i].saturating_sub(self.reserve)
    }

    /// Admit `size` bytes arriving on local port i, or refuse them (a drop: headroom exhausted). O(1).
    #[inline]
    pub(crate) fn admit(&mut self, i: usize, size: u64) -> bool {
        if size + self.hdrm[i] > self.headroom[i] && size + self.shared_of(i) > self.threshold(i) {
            return false;
        }
        let n = self.ingress[i] + size;
        if n <= self.reserve {
            self.ingress[i] += size;
        } else if n - self.reserve > self.threshold(i) {
            self.hdrm[i] += size;
        } else {
            self.ingress[i] += size;
            self.shared_used += size.min(n - self.reserve);
        }
        true
    }

    /// Release `size` bytes of local port i (the packet left through an egress port). O(1).
    #[inline]
    pub(crate) fn release(&mut self, i: usize, size: u64) {
        let from_hdrm = self.hdrm[i].min(size);
        let from_shared = (size - from_hdrm).min(self.shared_of(i));
        self.hdrm[i] -= from_hdrm;
        self.ingress[i] -= size - from_hdrm;
        self.shared_used -= from_shared;
    }

    #[inline]
    pub(crate) fn should_pause(&self, i: usize) -> bool {
        !self.paused[i] && (self.hdrm[i] > 0 || self.shared_of(i) >= self.threshold(i))
    }

    #[inline]
    pub(crate) fn should_resume(&self, i: usize) -> bool {
        let shared = self.shared_of(i);
        self.paused[i] && self.hdrm[i] == 0 && (shared == 0 || shared + self.resume_offset <= self.threshold(i))
    }

    /// Bytes local port i holds (reserve, shared and headroom).
    pub(crate) fn held_by(&self, i: usize) -> u64 {
        self.ingress[i] + self.hdrm[i]
    }
}

/// The shared-buffer switches and PFC: each switch's MMU (`mmu_of[node]` indexes `mmus`, or NONE), each packet's
/// ingress port at its shared-buffer switch, PFC's switch and frame size, the deadlock watchdog (transmissions
/// started, and at the last check; its period; whether it is pending; the cycle it found), and the log of PFC
/// frames taking effect (time ps, port, pause?). Holds no absolute time but the log, which is history.
pub(crate) struct Pfc {
    pub(crate) mmus: Vec<Mmu>,
    pub(crate) mmu_of: Vec<u32>,
    pub(crate) in_port: Vec<u32>,
    pub(crate) on: bool,
    pub(crate) frame: u32,
    pub(crate) tx_started: u64,
    pub(crate) tx_at_watchdog: u64,
    pub(crate) watchdog_every: Time,
    pub(crate) watchdog_pending: bool,
    pub(crate) deadlock: Option<String>,
    pub(crate) log: (Vec<u64>, Vec<u32>, Vec<bool>),
}

impl Default for Pfc {
    fn default() -> Pfc {
        Pfc {
            mmus: Vec::new(),
            mmu_of: Vec::new(),
            in_port: Vec::new(),
            on: false,
            frame: 0,
            tx_started: 0,
            tx_at_watchdog: 0,
            watchdog_every: Time::MAX,
            watchdog_pending: false,
            deadlock: None,
            log: Default::default(),
        }
    }
}

impl Sim {
    /// A data packet arrived at shared-buffer switch v through upstream port `from`: admit it (or drop it) and
    /// pause the upstream when the ingress crossed its threshold or headroom. Returns whether it was admitted.
    #[inline]
    pub(crate) fn mmu_admit(&mut self, v: u32, pkt: u32, from: u32) -> bool {
        let rev = self.net.topo.ports[from as usize].peer_port;
        let i = self.net.topo.ports[rev as usize].local as usize;
        let size = self.pkts[pkt as usize].size() as u64;
        let m = self.pfc.mmu_of[v as usize] as usize;
        if !self.pfc.mmus[m].admit(i, size) {
            return false;
        }
        self.pfc.in_port[pkt as usize] = i as u32;
        let held = self.pfc.mmus[m].held_by(i);
        let rp = &mut self.net.roce_ports[rev as usize];
        rp.peak_ingress = rp.peak_ingress.max(held);
        if self.pfc.on && self.pfc.mmus[m].should_pause(i) {
            self.pfc.mmus[m].paused[i] = true;
            self.send_pfc(rev, true);
        }
        true
    }

    /// A data packet left shared-buffer switch v: free its ingress bytes and resume the upstream if it may.
    #[inline]
    pub(crate) fn mmu_release(&mut self, v: u32, pkt: u32) {
        let i = self.pfc.in_port[pkt as usize] as usize;
        let size = self.pkts[pkt as usize].size() as u64;
        let m = self.pfc.mmu_of[v as usize] as usize;
        self.pfc.mmus[m].release(i, size);
        if self.pfc.mmus[m].should_resume(i) {
            self.pfc.mmus[m].paused[i] = false;
            let rev = self.net.topo.port_start[v as usize] + i as u32;
            self.send_pfc(rev, false);
        }
    }

    /// Send a PAUSE (or RESUME) out of switch port `rev` to the port feeding it: the frame waits for the packet
    /// being serialised, takes its own serialisation, then the link delay.
    fn send_pfc(&mut self, rev: u32, pause: bool) {
        let up = self.net.topo.ports[rev as usize].peer_port;
        let busy = self.now < self.net.ports[rev as usize].busy_until;
        let rp = &mut self.net.roce_ports[rev as usize];
        if pause {
            rp.pause_tx += 1;
        }
        let start = if busy { rp.tx_end.max(self.now) } else { self.now };
        // The port's rate now (a `link_rate` event may have changed the topology's).
        let port = &self.net.ports[rev as usize];
        let at = start + port.rate.tx_time(self.pfc.frame as u64) + port.delay;
        let up_port = &mut self.net.roce_ports[up as usize];
        if up_port.pfc_pipe.is_empty() {
            self.q.schedule(at, Ev::Pfc(up));
        }
        up_port.pfc_pipe.push_back((at, pause));
    }

    /// The head PFC frame travelling toward port u arrives: its data priority pauses or resumes.
    pub(crate) fn on_pfc(&mut self, u: u32) {
        let now = self.now;
        let port = &mut self.net.roce_ports[u as usize];
        let (_, pause) = port.pfc_pipe.pop_front().expect("a PFC event implies a frame in flight");
        if let Some(&(t, _)) = port.pfc_pipe.front() {
            self.q.schedule(t, Ev::Pfc(u));
        }
        self.pfc.log.0.push(now.0);
        self.pfc.log.1.push(u);
        self.pfc.log.2.push(pause);
        if pause {
            port.pause_rx += 1;
            if !port.paused {
                port.paused = true;
                port.paused_since = now;
            }
        } else if port.paused {
            port.paused = false;
            port.paused_ps += (now - port.paused_since).0;
            self.kick(u);
        }
    }

    /// Deadlock watchdog: if nothing was transmitted since the last check while packets wait behind paused
    /// ports, look for a cycle of paused ports; finding one ends the run with it named.
    pub(crate) fn watchdog(&mut self) {
        self.pfc.watchdog_pending = false;
        let moved = self.pfc.tx_started != self.pfc.tx_at_watchdog;
        self.pfc.tx_at_watchdog = self.pfc.tx_started;
        if !moved && self.live > 0 {
            if let Some(cycle) = self.paused_cycle() {
                self.pfc.deadlock = Some(cycle);
                return;
            }
        }
        // Keep watching while work remains (packets in flight or messages to deliver), not merely while other
        // periodic events (queue samples) exist: those would keep each other alive forever; and never alone (work
        // left with no event to do it is a stuck run, which the end of the run reports).
        if (self.live > 0 || self.msg.done < self.msg.msgs.len() as u64) && self.q.live() > 0 {
            self.q.schedule(self.now + self.pfc.watchdog_every, Ev::Watchdog);
            self.pfc.watchdog_pending = true;
        }
    }

    /// A cycle of paused ports holding data, each waiting on the next (the next is a port of the node the
    /// previous one feeds), named "node:port -> ... -> node:port"; `None` if there is none. O(ports).
    pub(crate) fn paused_cycle(&self) -> Option<String> {
        let n = self.net.ports.len();
        let blocked = |p: usize| {
            let (s, r) = (&self.net.ports[p], &self.net.roce_ports[p]);
            r.paused && (!s.egress.is_empty() || !r.qps.is_empty() || !s.senders.is_empty())
        };
        // Iterative DFS over blocked ports; colour 0 = new, 1 = on the stack, 2 = done.
        let mut colour = vec![0u8; n];
        for root in (0..n).filter(|&p| blocked(p)) {
            if colour[root] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, std::ops::Range<u32>)> = vec![(root, self.net.topo.ports_of(self.net.topo.ports[root].peer_node))];
            colour[root] = 1;
            while let Some((p, next)) = stack.last_mut() {
                let p = *p;
                match next.find(|&w| blocked(w as usize)) {
                    Some(w) => {
                        let w = w as usize;
                        if colour[w] == 1 {
                            let start = stack.iter().position(|&(q, _)| q == w).expect("on the stack");
                            let mut names: Vec<String> = stack[start..].iter().map(|&(q, _)| self.net.topo.port_name(q as u32)).collect();
                            names.push(self.net.topo.port_name(w as u32));
                            return Some(names.join(" -> "));
                        }
                        if colour[w] == 0 {
                            colour[w] = 1;
                            stack.push((w, self.net.topo.ports_of(self.net.topo.ports[w].peer_node)));
                        }
                    }
                    None => {
                        colour[p] = 2;
                        stack.pop();
                    }
                }
            }
        }
        None
    }
}

/// Paused time of a port up to `now` (closing an open pause).
pub(crate) fn paused_total(paused: bool, since: Time, acc: u64, now: Time) -> u64 {
    acc + if paused { (now - since).0 } else { 0 }
}
