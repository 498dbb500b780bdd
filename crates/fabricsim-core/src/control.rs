//! Run control shared by both engines: event and wall-clock limits, and an observer for progress and interrupts.
//!
//! An engine keeps one `Control` and calls `due(events)` once per event (one integer compare) and
//! `check(..)` only when it is due, every `every` events. `check` reads the clock, applies the limits and,
//! at most once per `poll_interval` of wall time, asks the observer whether to go on. A halted run still
//! returns its record (conservation holds with packets in flight), marked with the `Halt` that stopped it.

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Why a run stopped before its natural end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Halt {
    /// The observer asked to stop (Ctrl-C in the Python binding).
    Interrupted,
    /// `max_events` events were processed.
    MaxEvents,
    /// `max_wall` of wall-clock time passed.
    MaxWall,
}

impl Halt {
    pub fn as_str(self) -> &'static str {
        match self {
            Halt::Interrupted => "interrupted",
            Halt::MaxEvents => "max_events",
            Halt::MaxWall => "max_wall",
        }
    }
}

/// Where a run stands, handed to the observer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub events: u64,
    /// Simulated time now, and the scenario's stop time if it has one (ps).
    pub now_ps: u64,
    pub stop_ps: Option<u64>,
    /// Messages delivered so far, of how many.
    pub msgs_done: u64,
    pub msgs_total: u64,
    /// Payload bytes of the messages delivered so far (the packet engine: in order, as received; the flow engine:
    /// as sent at the fluid rates), of the messages' total payload.
    pub bytes_done: u64,
    pub bytes_total: u64,
    pub wall_s: f64,
}

/// Watches a run: returns `true` from `poll` to stop it (as `Halt::Interrupted`).
pub trait Observer: Send {
    fn poll(&mut self, p: &Progress) -> bool;
}

/// Limits and an optional observer for one run. The default has no limit and no observer, and costs one
/// compare per event.
pub struct Control {
    pub max_events: Option<u64>,
    pub max_wall: Option<Duration>,
    pub observer: Option<Box<dyn Observer>>,
    /// Wall time between two observer polls.
    pub poll_interval: Duration,
    started: Instant,
    last_poll: Instant,
    every: u64,
    next: u64,
}

impl Default for Control {
    fn default() -> Self {
        Control::new(None, None, None)
    }
}

impl Control {
    pub fn new(max_events: Option<u64>, max_wall: Option<Duration>, observer: Option<Box<dyn Observer>>) -> Control {
        let now = Instant::now();
        let mut c = Control {
            max_events,
            max_wall,
            observer,
            poll_interval: Duration::from_millis(50),
            started: now,
            last_poll: now,
            every: 1 << 14,
            next: 0,
        };
        c.set_every(c.every);
        c
    }

    /// Check every `n` events (≥ 1): an engine whose events are expensive (the flow engine re-solves rates)
    /// checks more often. Call before the run starts.
    pub fn set_every(&mut self, n: u64) {
        self.every = n.max(1);
        self.next = self.bound(self.every);
    }

    /// Restart the wall clock (call when the event loop starts, so set-up time does not count).
    pub fn start(&mut self) {
        self.started = Instant::now();
        self.last_poll = self.started;
    }

    fn bound(&self, next: u64) -> u64 {
        match self.max_events {
            Some(m) => next.min(m),
            None => next,
        }
    }

    /// Whether `check` must be called after `events` events. O(1).
    #[inline(always)]
    pub fn due(&self, events: u64) -> bool {
        events >= self.next
    }

    /// Apply the limits and poll the observer; `Some(halt)` stops the run. `progress` is built only here.
    pub fn check(&mut self, progress: impl FnOnce(f64) -> Progress, events: u64) -> Option<Halt> {
        self.next = self.bound(events + self.every);
        if self.max_events.is_some_and(|m| events >= m) {
            return Some(Halt::MaxEvents);
        }
        let now = Instant::now();
        let wall = now.duration_since(self.started);
        if self.max_wall.is_some_and(|w| wall >= w) {
            return Some(Halt::MaxWall);
        }
        if let Some(obs) = self.observer.as_mut() {
            if now.duration_since(self.last_poll) >= self.poll_interval {
                self.last_poll = now;
                if obs.poll(&progress(wall.as_secs_f64())) {
                    return Some(Halt::Interrupted);
                }
            }
        }
        None
    }

    /// Poll the observer once more at the end of a run (a progress bar shows 100%); its answer is ignored.
    pub fn finish(&mut self, progress: Progress) {
        if let Some(obs) = self.observer.as_mut() {
            obs.poll(&progress);
        }
    }

    pub fn wall_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(_: f64) -> Progress {
        Progress { events: 0, now_ps: 0, stop_ps: None, msgs_done: 0, msgs_total: 0, bytes_done: 0, bytes_total: 0, wall_s: 0.0 }
    }

    /// With max_events = 10 and every = 4, checks fall due at 4, 8 and 10 (the limit caps the step), and
    /// the check at 10 halts.
    #[test]
    fn max_events_is_exact() {
        let mut c = Control::new(Some(10), None, None);
        c.set_every(4);
        let due: Vec<u64> = (0..=12).filter(|&e| c.due(e)).collect();
        assert_eq!(due, vec![4, 5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!(c.check(p, 4), None);
        assert!(!c.due(7) && c.due(8));
        assert_eq!(c.check(p, 8), None);
        assert!(!c.due(9) && c.due(10));
        assert_eq!(c.check(p, 10), Some(Halt::MaxEvents));
    }

    struct StopAt(u64);
    impl Observer for StopAt {
        fn poll(&mut self, p: &Progress) -> bool {
            p.events >= self.0
        }
    }

    /// The observer is polled at most once per poll interval; with a zero interval, at every check.
    #[test]
    fn observer_stops_the_run() {
        let mut c = Control::new(None, None, Some(Box::new(StopAt(3))));
        c.poll_interval = Duration::ZERO;
        c.set_every(1);
        let mk = |e: u64| {
            move |_| Progress { events: e, now_ps: 0, stop_ps: None, msgs_done: 0, msgs_total: 0, bytes_done: 0, bytes_total: 0, wall_s: 0.0 }
        };
        assert_eq!(c.check(mk(1), 1), None);
        assert_eq!(c.check(mk(2), 2), None);
        assert_eq!(c.check(mk(3), 3), Some(Halt::Interrupted));
    }
}
