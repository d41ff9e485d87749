//! When each request starts and which completions count.
//!
//! [`Schedule`] hands every worker its next request's *intended start*: "now" in a
//! closed loop, `start + i / rate` in an open loop (ticket `i` is global, so the
//! arrival rate is constant whatever the responses do). [`Window`] decides which
//! completions are measured: those that complete after the window opened and
//! before it closes (a deadline, or the n-th measured completion). Requests still
//! in flight when it closes are counted separately, never in a figure.
//!
//! The window opens when the engine actually opens it ([`Schedule::open`]), once
//! its wait for the planned end of the warmup returns, and lasts its duration
//! from then. A driver descheduled past the planned opening (a noisy runner) then
//! measures a late window of the planned length, not a window of a few
//! microseconds between a planned deadline already gone and a late opening. The
//! deadline is fixed at that opening: a stall inside the window is not made up
//! for, it shows as a window that lasted longer than planned.
//!
//! Measuring from the intended start in an open loop corrects coordinated
//! omission (Gil Tene, "How NOT to Measure Latency"): a stalled server delays the
//! sends behind it, and that delay is charged to latency instead of vanishing.
//! Only delay inside the window is charged to it: the window's tickets are timed
//! from its actual opening, warmup tickets not yet issued when it opens are never
//! sent, and a request intended before the opening counts from the opening (or
//! from its send, if it was already sent then) ([`Window::latency_from`]). A driver
//! stopped during its warmup thus brings no backlog of requests "intended" while
//! it was stopped into its window.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
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
    /// Open loop: how much later than the ticket grid the window opened
    /// (0 until it opens), added to every intended start issued after that.
    shift_ns: AtomicU64,
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
            shift_ns: AtomicU64::new(0),
            window: Window::new(start + warmup, stop),
        }
    }

    pub fn is_open_loop(&self) -> bool {
        self.interval_ns > 0
    }

    pub fn window(&self) -> &Window {
        &self.window
    }

    /// Opens the window at `at`, the moment the engine's wait for
    /// [`Window::planned_open`] returned, however late: its deadline is `at`
    /// plus the duration. In an open loop the window's first ticket (the first
    /// intended at or after the planned opening) and every later one are
    /// re-timed from `at`, and the warmup tickets not issued yet are skipped,
    /// so the window's arrivals start when it opened, at the rate, with no
    /// backlog from before. Only the first call opens it.
    pub fn open(&self, at: Instant) {
        if !self.window.open(at) || self.interval_ns == 0 {
            return;
        }
        let warmup_ns = (self.window.planned_open - self.start).as_nanos() as u64;
        let first = warmup_ns.div_ceil(self.interval_ns);
        let on_grid = self.start + Duration::from_nanos(first.saturating_mul(self.interval_ns));
        let late = at.saturating_duration_since(on_grid).as_nanos() as u64;
        // Published before the skip, so a worker whose ticket is past the
        // skip sees the shift too.
        self.shift_ns.store(late, Ordering::Release);
        self.next_ticket.fetch_max(first, Ordering::AcqRel);
    }

    /// The next request's intended start, or `Stop`.
    pub fn next(&self, now: Instant) -> Ticket {
        if self.window.is_closed() {
            return Ticket::Stop;
        }
        let intended = if self.interval_ns == 0 {
            now
        } else {
            let i = self.next_ticket.fetch_add(1, Ordering::AcqRel);
            let shift = self.shift_ns.load(Ordering::Acquire);
            self.start
                + Duration::from_nanos(i.saturating_mul(self.interval_ns).saturating_add(shift))
        };
        match self.window.deadline() {
            Some(deadline) if intended >= deadline => Ticket::Stop,
            _ => Ticket::Go(intended),
        }
    }
}

/// Where a completion falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Before the window opened: not recorded.
    Warmup,
    /// In the measurement window: recorded.
    Measured,
    /// After the window closed: counted as in flight at the deadline.
    Late,
}

/// The measurement window: opens when the engine opens it (at or after the
/// planned end of the warmup), closes at its duration from then or after a
/// number of measured completions.
#[derive(Debug)]
pub struct Window {
    /// The end of the warmup as planned: what the engines wait for.
    planned_open: Instant,
    /// When the window actually opened; unset during the warmup.
    opened: OnceLock<Instant>,
    /// Duration stop rule: how long the window lasts from its opening.
    duration: Option<Duration>,
    max_requests: Option<u64>,
    measured: AtomicU64,
    closed: AtomicBool,
    /// Nanoseconds after the opening of the last measured completion.
    last_completion_ns: AtomicU64,
}

impl Window {
    fn new(planned_open: Instant, stop: StopRule) -> Window {
        let (duration, max_requests) = match stop {
            StopRule::Duration(d) => (Some(d), None),
            StopRule::Requests(n) => (None, Some(n)),
        };
        Window {
            planned_open,
            opened: OnceLock::new(),
            duration,
            max_requests,
            measured: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            last_completion_ns: AtomicU64::new(0),
        }
    }

    /// The planned end of the warmup: the engines wait for it, then open the
    /// window ([`Schedule::open`]).
    pub fn planned_open(&self) -> Instant {
        self.planned_open
    }

    /// Opens the window at `at`; false if it was open already.
    fn open(&self, at: Instant) -> bool {
        self.opened.set(at).is_ok()
    }

    /// The deadline (duration stop rule), once the window has opened: the
    /// duration from its actual opening.
    pub fn deadline(&self) -> Option<Instant> {
        Some(*self.opened.get()? + self.duration?)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Closes the window (the deadline passed); returns true for the caller that closed it.
    pub fn close(&self) -> bool {
        !self.closed.swap(true, Ordering::AcqRel)
    }

    /// Classifies a completion at `done`. Returns the slot and whether this
    /// completion closed the window (the n-th measured request). A completion
    /// before the opening, or racing it, is warmup.
    pub fn complete(&self, done: Instant) -> (Slot, bool) {
        let Some(&opened) = self.opened.get() else {
            return (Slot::Warmup, false);
        };
        if done < opened {
            return (Slot::Warmup, false);
        }
        if self.is_closed() || self.deadline().is_some_and(|d| done >= d) {
            return (Slot::Late, false);
        }
        let index = self.measured.fetch_add(1, Ordering::AcqRel);
        if let Some(n) = self.max_requests {
            if index >= n {
                return (Slot::Late, false);
            }
            let offset = done.saturating_duration_since(opened).as_nanos() as u64;
            self.last_completion_ns.fetch_max(offset, Ordering::AcqRel);
            if index + 1 == n {
                return (Slot::Measured, self.close());
            }
        }
        (Slot::Measured, false)
    }

    /// The instant a measured request's latency counts from: its intended
    /// start, but not before the window opened unless it was already sent
    /// then. Waiting before the opening (for a driver descheduled in its
    /// warmup, or a warmup backlog) is not the window's; time in flight is.
    /// Requests intended after the opening are unaffected.
    pub fn latency_from(&self, intended: Instant, sent: Instant) -> Instant {
        match self.opened.get() {
            Some(&opened) => intended.max(sent.min(opened)),
            None => intended,
        }
    }

    /// Length of the window: its duration (from its actual opening), or up to
    /// the last measured completion for a request-count stop.
    pub fn elapsed(&self) -> Duration {
        match self.duration {
            Some(d) => d,
            None => Duration::from_nanos(self.last_completion_ns.load(Ordering::Acquire)),
        }
    }
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
