//! A nanosecond wake-up for the event loop: a `timerfd` in the same epoll set.
//!
//! `epoll_wait` takes its timeout in whole milliseconds, too coarse for an
//! open loop's intended starts (at 2000 requests/s they are 500 µs apart) and
//! for the measurement window's edges. A timerfd fires on a high-resolution
//! timer with no slack; it is re-armed only when the instant it should fire at
//! changes, so a closed loop arms it twice per trial (window open, deadline).

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use tokio::time::Instant;

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

/// A timerfd registered with the loop's poll.
pub struct Wakeup {
    fd: OwnedFd,
    /// When it is set to fire, if it is.
    armed: Option<Instant>,
}

impl Wakeup {
    /// A disarmed timer whose expiry raises `token` in `registry`.
    pub fn new(registry: &Registry, token: Token) -> std::io::Result<Wakeup> {
        // SAFETY: timerfd_create takes no pointers; a non-negative result is a
        // new descriptor that nothing else owns.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        registry.register(&mut SourceFd(&fd.as_raw_fd()), token, Interest::READABLE)?;
        Ok(Wakeup { fd, armed: None })
    }

    /// Fires at `at` (once; `None` disarms). Costs a syscall only when `at`
    /// differs from what is set. An instant already past fires at once.
    pub fn set(&mut self, at: Option<Instant>) -> std::io::Result<()> {
        if at == self.armed {
            return Ok(());
        }
        // Relative to now (CLOCK_MONOTONIC, the clock `Instant` reads); a
        // zero value would disarm, so an instant due now waits 1 ns.
        let now = Instant::now();
        let wait = at.map_or(0, |t| t.saturating_duration_since(now).as_nanos().max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                // `as _`: the field's own type (time_t, which musl's libc marks as
                // changing to 64 bits and so deprecates by name).
                tv_sec: (wait / 1_000_000_000) as _,
                tv_nsec: (wait % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: `spec` is a valid itimerspec on the stack; the old value is
        // not asked for (null).
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // Setting resets the expiry count, so a past expiry that was never
        // read raises no event: the fd needs no read.
        self.armed = at;
        Ok(())
    }

    /// The timer fired: what it was set for is no longer armed.
    pub fn fired(&mut self, now: Instant) {
        if self.armed.is_some_and(|t| t <= now) {
            self.armed = None;
        }
    }
}
