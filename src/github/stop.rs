//! What ends a call early: SIGINT/SIGTERM recorded by
//! [`crate::interrupt`], and the run's [`TimeBudget`] running out
//! (see [`super::client`]).

use std::time::{Duration, Instant};

use http::Method;

use super::client::GitHub;
use super::config::TimeBudget;
use super::error::GitHubError;
use crate::interrupt;

/// How often a call checks for SIGINT/SIGTERM while it waits.
pub const POLL: Duration = Duration::from_millis(20);

impl GitHub {
    /// The run's time left for the call started at `start`.
    pub(super) fn time_left(&self, start: Instant) -> Duration {
        match &self.config.time {
            Some(budget) => budget.remaining(start.elapsed()),
            None => Duration::MAX,
        }
    }

    /// `Err` when the call must end now: a signal arrived, or the run's time
    /// is up (`last`: the last failure, for the message).
    pub(super) fn still_wanted(
        &self,
        method: &Method,
        path: &str,
        start: Instant,
        last: &str,
    ) -> Result<(), GitHubError> {
        if interrupt::received().is_some() {
            return Err(self.interrupted(method, path));
        }
        if self.time_left(start).is_zero() {
            return Err(self.out_of_time(method, path, last));
        }
        Ok(())
    }

    pub(super) fn interrupted(&self, method: &Method, path: &str) -> GitHubError {
        GitHubError::Interrupted {
            method: method.to_string(),
            path: path.to_string(),
            signal: interrupt::received()
                .map_or("a signal", |s| s.name())
                .into(),
        }
    }

    pub(super) fn out_of_time(&self, method: &Method, path: &str, last: &str) -> GitHubError {
        let (limit, setting) = match &self.config.time {
            Some(b) => (b.limit(), b.setting().to_string()),
            None => (self.config.overall_timeout, "overall_timeout".to_string()),
        };
        GitHubError::OutOfTime {
            method: method.to_string(),
            path: path.to_string(),
            limit: crate::config::units::format_duration(limit),
            setting,
            last: match last {
                "" => String::new(),
                last => format!(" (last failure: {})", self.redact(last)),
            },
        }
    }

    /// Sleeps `delay`, or less when a signal arrives.
    pub(super) fn pause(&self, delay: Duration) {
        let end = Instant::now() + delay;
        while interrupt::received().is_none() {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(POLL));
        }
    }
}

/// Ready once SIGINT or SIGTERM has been recorded.
pub(super) async fn signalled() {
    while interrupt::received().is_none() {
        tokio::time::sleep(POLL).await;
    }
}

/// Adds a call's time to the run's [`TimeBudget`] when the call ends.
pub(super) struct Spend<'a> {
    pub(super) budget: &'a TimeBudget,
    pub(super) start: Instant,
}

impl Drop for Spend<'_> {
    fn drop(&mut self) {
        self.budget.spend(self.start.elapsed());
    }
}
