//! Departure at arrival: on a plain DropTail port the start of a packet's serialisation is known the moment it is
//! queued, so the packet goes straight into the pipe and the port never needs a transmitter event (`Ev::Port`).
//!
//! A port *commits* (`PortState::commit`) when nothing but arrival order can decide what it sends next: a switch
//! port (no NIC pulling messages or queue pairs, no source pushing), a non-RoCE scenario (no control class, PFC
//! pause, ECN or dequeue hook), a DropTail device queue with no discipline above it, no shaper, no virtual output
//! queue and no credit (a lossless peer), and no error-model drop list. There the FIFO serves packets back to
//! back: a packet queued at t starts at s = max(t, end of the last packet committed), which the arrival fixes.
//!
//! Exactness. The engine that schedules an `Ev::Port` per waiting packet dequeues a packet at its start s, and
//! at one picosecond every `Ev::Port` pops before any arrival (`Ev::Pipe`) and any queue sample (`Ev::Sample`,
//! last of its picosecond). So the packets such an engine still holds in the queue when an arrival or a sample
//! at t looks are exactly the committed packets with s > t; `settle(t)` removes the others from the egress FIFO,
//! which otherwise holds the committed packets not yet started, with their sizes. Drop decisions, peaks,
//! samples and adaptive routing's loads read the FIFO after settling, so they see the same queue; the
//! transmitter's counters count a packet when it leaves the FIFO (at its start), as before; the pipe receives
//! the same (arrival, packet) entries in the same order (starts are increasing), so deliveries, link failures
//! (judged at delivery), bit errors and RNG draws are unchanged. What the dropped `Ev::Port`s did besides
//! starting a packet is settled where it is read: the run's end time under a stop time (`Sim::settle_ports`),
//! and the pause point of `Sim::shift` (a waiting packet starting exactly at the pause has started if the
//! last event carried out comes after its port's `Ev::Port` in tie order).

use crate::events::Ev;
use crate::net::PortState;
use crate::sim::Sim;
use fabricsim_core::Time;

impl PortState {
    /// Serialisation time of `size` wire bytes at the port's rate, through the one-entry cache `ser`.
    #[inline]
    pub(crate) fn ser_time(&mut self, size: u32) -> Time {
        if self.ser.0 != size {
            self.ser = (size, self.rate.tx_time(size as u64));
        }
        self.ser.1
    }

    /// A committing port: every waiting packet that starts before `now`, or at `now` when `at_now` (the
    /// transmitter's decisions at `now` are behind the caller), leaves the FIFO and counts as transmitted.
    /// Returns the last such start (Time::ZERO if none). Invariant kept: the FIFO's packets start back to back
    /// from `head_start`, the last one ending at `busy_until`. O(1) per packet removed.
    #[inline]
    pub(crate) fn settle(&mut self, now: Time, at_now: bool) -> Time {
        let mut last = Time::ZERO;
        while let Some(size) = self.egress.dev_head_size() {
            let s = self.head_start;
            if s > now || (s == now && !at_now) {
                break;
            }
            self.egress.dev.pop();
            self.tx_packets += 1;
            self.tx_bytes += size as u64;
            self.head_start = s + self.ser_time(size);
            last = s;
        }
        last
    }

    /// `settle(now, true)` on a committing port (the caller is an arrival or a sample at `now`); nothing otherwise.
    #[inline]
    pub(crate) fn settle_if_commits(&mut self, now: Time) {
        if self.commits {
            self.settle(now, true);
        }
    }
}

impl Sim {
    /// Queue `pkt` of `size` wire bytes at committing port p (the DropTail rule on the packets still waiting) and,
    /// if it is admitted, commit its serialisation: it starts now if the transmitter is free, else when the last
    /// committed packet ends, and enters the pipe at once. O(1) plus the packets settled.
    #[inline]
    pub(crate) fn commit(&mut self, p: u32, pkt: u32, size: u32) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        port.settle(now, true);
        if !port.egress.dev.has_room(size) {
            let idle_wait = port.egress.dev.is_empty() && now < port.busy_until && !port.pending;
            if idle_wait {
                // The queue-then-wake engine wakes the busy transmitter for nothing here (the packet could not
                // fit even an empty queue): keep that event, it can be the last one before a stop time.
                port.pending = true;
                let at = port.busy_until;
                self.q.schedule(at, Ev::Port(p));
            }
            return self.drop_packet(pkt, p);
        }
        let (n, b) = (port.egress.dev.len() + 1, port.egress.dev.bytes() + size as u64);
        port.peak_packets = port.peak_packets.max(n);
        port.peak_bytes = port.peak_bytes.max(b);
        let start = if now >= port.busy_until {
            debug_assert!(port.egress.dev.is_empty(), "a free transmitter has nothing waiting");
            port.tx_packets += 1;
            port.tx_bytes += size as u64;
            now
        } else {
            if port.egress.dev.is_empty() {
                port.head_start = port.busy_until;
            }
            port.egress.dev.push(pkt, size);
            port.busy_until
        };
        self.send_into_pipe(p, pkt, start, size);
    }

    /// Settle every committing port at the end of a run: at the stop time when the run reached it (every event
    /// up to it was carried out, so the clock moves to the last start the skipped `Ev::Port`s would have
    /// carried out, and to the last pull ahead of a NIC, `net::ahead`), else at the clock, the starts at the clock
    /// included if the last event carried out comes after the port's `Ev::Port` in tie order. O(ports + packets
    /// settled).
    pub(crate) fn settle_ports(&mut self, reached_stop: bool) {
        let (upto, key) = match (reached_stop, self.stop) {
            (true, Some(stop)) => (stop, u64::MAX),
            _ => (self.now, self.last_key),
        };
        let mut last = self.now;
        for (p, port) in self.net.ports.iter_mut().enumerate() {
            let at_now = Ev::Port(p as u32).tie_key() <= key;
            if port.commits {
                last = last.max(port.settle(upto, at_now));
            }
            if let Some((done, _, _)) = port.ahead {
                // A NIC's pull ahead (`net::ahead`) stands for the `Ev::Port` at `done`.
                if done < upto || (done == upto && at_now) {
                    last = last.max(done);
                }
            }
        }
        self.now = last;
    }
}
