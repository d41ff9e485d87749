//! When each request starts and which completions count.
//!
//! [`Schedule`] hands every worker its next request's *intended start*: "now" in a
//! closed loop, `start + i / rate` in an open loop (ticket `i` is global, so the
//! arrival rate is constant whatever the responses do). [`Window`] decides which
//! completions are measured: those that complete after the warmup and before the
//! window closes (a deadline, or the n-th measured completion). Requests still in
//! flight when it closes are counted separately, never in a figure.
//!
//! Measuring from the intended start in an open loop corrects coordinated
//! omission (Gil Tene, "How NOT to Measure Latency"): a stalled server delays the
//! sends behind it, and that delay is charged to latency instead of vanishing.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::config::{Load, StopRule};

/// What a worker does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ticket {
    /// Send a request intended to start at this instant.
    Go(Instant),
    /// The trial is over for this worker.
    Stop,
}

/// Issues intended start times; shared by all workers of a trial.
#[derive(Debug)]
pub struct Schedule {
    start: Instant,
    /// Open loop: nanoseconds between intended starts; 0 for closed loop.
    interval_ns: u64,
    next_ticket: AtomicU64,
    window: Window,
}

impl Schedule {
    pub fn new(load: Load, warmup: Duration, stop: StopRule, start: Instant) -> Schedule {
        let interval_ns = match load {
            Load::Closed { .. } => 0,
            Load::Open { rate, .. } => (1e9 / rate).round().max(1.0) as u64,
        };
        Schedule {
            start,
            interval_ns,
            next_ticket: AtomicU64::new(0),
            window: Window::new(start + warmup, stop),
        }
    }

    pub fn is_open_loop(&self) -> bool {
        self.interval_ns > 0
    }

    pub fn window(&self) -> &Window {
        &self.window
    }

    /// The next request's intended start, or `Stop`.
    pub fn next(&self, now: Instant) -> Ticket {
        if self.window.is_closed() {
            return Ticket::Stop;
        }
        let intended = if self.interval_ns == 0 {
            now
        } else {
            let i = self.next_ticket.fetch_add(1, Ordering::Relaxed);
            self.start + Duration::from_nanos(i.saturating_mul(self.interval_ns))
        };
        match self.window.deadline {
            Some(deadline) if intended >= deadline => Ticket::Stop,
            _ => Ticket::Go(intended),
        }
    }
}

/// Where a completion falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// During warmup: not recorded.
    Warmup,
    /// In the measurement window: recorded.
    Measured,
    /// After the window closed: counted as in flight at the deadline.
    Late,
}

/// The measurement window: opens at the end of the warmup, closes at a deadline
/// or after a number of measured completions.
#[derive(Debug)]
pub struct Window {
    opens: Instant,
    deadline: Option<Instant>,
    max_requests: Option<u64>,
    measured: AtomicU64,
    closed: AtomicBool,
    /// Nanoseconds after `opens` of the last measured completion.
    last_completion_ns: AtomicU64,
}

impl Window {
    fn new(opens: Instant, stop: StopRule) -> Window {
        let (deadline, max_requests) = match stop {
            StopRule::Duration(d) => (Some(opens + d), None),
            StopRule::Requests(n) => (None, Some(n)),
        };
        Window {
            opens,
            deadline,
            max_requests,
            measured: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            last_completion_ns: AtomicU64::new(0),
        }
    }

    pub fn opens(&self) -> Instant {
        self.opens
    }

    /// Fixed deadline (duration stop rule), if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Closes the window (the deadline passed); returns true for the caller that closed it.
    pub fn close(&self) -> bool {
        !self.closed.swap(true, Ordering::AcqRel)
    }

    /// Classifies a completion at `done`. Returns the slot and whether this
    /// completion closed the window (the n-th measured request).
    pub fn complete(&self, done: Instant) -> (Slot, bool) {
        if done < self.opens {
            return (Slot::Warmup, false);
        }
        if self.is_closed() || self.deadline.is_some_and(|d| done >= d) {
            return (Slot::Late, false);
        }
        let index = self.measured.fetch_add(1, Ordering::AcqRel);
        if let Some(n) = self.max_requests {
            if index >= n {
                return (Slot::Late, false);
            }
            let offset = done.saturating_duration_since(self.opens).as_nanos() as u64;
            self.last_completion_ns.fetch_max(offset, Ordering::AcqRel);
            if index + 1 == n {
                return (Slot::Measured, self.close());
            }
        }
        (Slot::Measured, false)
    }

    /// Length of the window: the deadline's span, or up to the last measured
    /// completion for a request-count stop.
    pub fn elapsed(&self) -> Duration {
        match self.deadline {
            Some(d) => d - self.opens,
            None => Duration::from_nanos(self.last_completion_ns.load(Ordering::Acquire)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn closed_loop_goes_now_until_deadline() {
        let t0 = Instant::now();
        let s = Schedule::new(
            Load::Closed { concurrency: 2 },
            ms(100),
            StopRule::Duration(ms(200)),
            t0,
        );
        assert_eq!(s.next(t0 + ms(5)), Ticket::Go(t0 + ms(5)));
        assert_eq!(s.next(t0 + ms(299)), Ticket::Go(t0 + ms(299)));
        assert_eq!(s.next(t0 + ms(300)), Ticket::Stop);
    }

    #[test]
    fn open_loop_spaces_intended_starts_by_rate() {
        let t0 = Instant::now();
        let s = Schedule::new(
            Load::Open {
                rate: 1000.0,
                max_in_flight: 4,
            },
            ms(0),
            StopRule::Duration(ms(3)),
            t0,
        );
        // Intended times ignore "now": they are t0 + i ms.
        assert_eq!(s.next(t0 + ms(50)), Ticket::Go(t0));
        assert_eq!(s.next(t0), Ticket::Go(t0 + ms(1)));
        assert_eq!(s.next(t0), Ticket::Go(t0 + ms(2)));
        assert_eq!(s.next(t0), Ticket::Stop);
    }

    #[test]
    fn window_classifies_warmup_measured_late() {
        let t0 = Instant::now();
        let s = Schedule::new(
            Load::Closed { concurrency: 1 },
            ms(10),
            StopRule::Duration(ms(10)),
            t0,
        );
        let w = s.window();
        assert_eq!(w.complete(t0 + ms(5)).0, Slot::Warmup);
        assert_eq!(w.complete(t0 + ms(15)).0, Slot::Measured);
        assert_eq!(w.complete(t0 + ms(20)).0, Slot::Late);
        assert_eq!(w.elapsed(), ms(10));
    }

    #[test]
    fn request_count_closes_on_nth_completion() {
        let t0 = Instant::now();
        let s = Schedule::new(
            Load::Closed { concurrency: 1 },
            ms(0),
            StopRule::Requests(3),
            t0,
        );
        let w = s.window();
        assert_eq!(w.complete(t0 + ms(1)), (Slot::Measured, false));
        assert_eq!(w.complete(t0 + ms(2)), (Slot::Measured, false));
        assert_eq!(w.complete(t0 + ms(4)), (Slot::Measured, true));
        assert!(w.is_closed());
        assert_eq!(w.complete(t0 + ms(5)).0, Slot::Late);
        assert_eq!(s.next(t0 + ms(5)), Ticket::Stop);
        assert_eq!(w.elapsed(), ms(4));
    }
}
