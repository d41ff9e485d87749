//! How hard to retry a failed request, shared by every caller that retries (the
//! GitHub client, the data-branch store's compare-and-swap, CloudWatch):
//! exponential backoff with full jitter ("Exponential Backoff And Jitter", AWS
//! Architecture Blog, 2015): before retry `n` (0-based) wait a uniformly random
//! time in `[0, min(cap, base * 2^n))`, within a bounded number of attempts and a
//! bounded total time. When the server asks for at least some time (GitHub's
//! secondary rate limits without a header: at least a minute), the waits start
//! at `base` instead ([`RetryPolicy::next_delay_at_least`]). Which failures to
//! retry is each client's own ([`crate::github`]'s policy,
//! [`crate::publish::cloudwatch_retry`]).

use std::time::Duration;

/// How hard to try one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in total, the first one included (1: no retry).
    pub max_attempts: u32,
    /// The first backoff's upper bound.
    pub base: Duration,
    /// No backoff is longer than this.
    pub cap: Duration,
    /// No retry starts later than this after the first attempt.
    pub deadline: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            base: Duration::from_millis(200),
            cap: Duration::from_secs(10),
            deadline: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry `retry` (0-based) given a uniform `unit` in [0, 1).
    pub fn backoff(&self, retry: u32, unit: f64) -> Duration {
        let ceiling = self
            .base
            .checked_mul(1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX))
            .unwrap_or(self.cap)
            .min(self.cap);
        ceiling.mul_f64(unit.clamp(0.0, 1.0))
    }

    /// The wait before the next attempt, or `None` to give up: after `attempts`
    /// attempts, `elapsed` since the first one.
    pub fn next_delay(&self, attempts: u32, elapsed: Duration, unit: f64) -> Option<Duration> {
        if attempts >= self.max_attempts {
            return None;
        }
        let wait = self.backoff(attempts.saturating_sub(1), unit);
        (elapsed + wait <= self.deadline).then_some(wait)
    }

    /// The wait before retry `retry` (0-based) when every wait must be at least
    /// `base`: `min(cap, base * 2^retry)`, plus up to a quarter more from `unit`
    /// in [0, 1) so that jobs limited together do not come back together.
    pub fn backoff_at_least(&self, retry: u32, unit: f64) -> Duration {
        let step = self.backoff(retry, 1.0).max(self.base);
        step + step.mul_f64(unit.clamp(0.0, 1.0) / 4.0)
    }

    /// [`RetryPolicy::next_delay`] with [`RetryPolicy::backoff_at_least`]: the
    /// wait after `attempts` attempts that each had to wait, `elapsed` since the
    /// first one, or `None` to give up.
    pub fn next_delay_at_least(
        &self,
        attempts: u32,
        elapsed: Duration,
        unit: f64,
    ) -> Option<Duration> {
        if attempts >= self.max_attempts {
            return None;
        }
        let wait = self.backoff_at_least(attempts.saturating_sub(1), unit);
        (elapsed + wait <= self.deadline).then_some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_with_full_jitter() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff(0, 0.0), Duration::ZERO);
        assert_eq!(p.backoff(0, 0.5), Duration::from_millis(100));
        assert_eq!(p.backoff(1, 1.0), Duration::from_millis(400));
        assert_eq!(p.backoff(3, 1.0), Duration::from_millis(1600));
        assert_eq!(p.backoff(10, 1.0), p.cap);
        assert_eq!(p.backoff(1000, 1.0), p.cap, "no overflow");
        assert_eq!(
            p.backoff(2, 7.0),
            Duration::from_millis(800),
            "unit clamped"
        );
    }

    #[test]
    fn attempts_and_time_are_bounded() {
        let p = RetryPolicy {
            max_attempts: 3,
            deadline: Duration::from_secs(1),
            ..RetryPolicy::default()
        };
        assert_eq!(
            p.next_delay(1, Duration::ZERO, 1.0),
            Some(Duration::from_millis(200))
        );
        assert_eq!(
            p.next_delay(2, Duration::ZERO, 1.0),
            Some(Duration::from_millis(400))
        );
        assert_eq!(p.next_delay(3, Duration::ZERO, 0.0), None, "attempts");
        assert_eq!(
            p.next_delay(1, Duration::from_millis(900), 1.0),
            None,
            "deadline"
        );
        // Worst case total wait over a whole default policy stays bounded.
        let d = RetryPolicy::default();
        let worst: Duration = (0..d.max_attempts - 1).map(|n| d.backoff(n, 1.0)).sum();
        assert!(worst <= Duration::from_secs(30), "{worst:?}");
    }

    #[test]
    fn at_least_waits_never_go_below_the_base_and_double() {
        let p = RetryPolicy {
            max_attempts: 4,
            base: Duration::from_secs(60),
            cap: Duration::from_secs(240),
            deadline: Duration::from_secs(400),
        };
        assert_eq!(p.backoff_at_least(0, 0.0), Duration::from_secs(60));
        assert_eq!(p.backoff_at_least(0, 1.0), Duration::from_secs(75));
        assert_eq!(p.backoff_at_least(1, 0.0), Duration::from_secs(120));
        assert_eq!(p.backoff_at_least(9, 0.0), p.cap);
        assert_eq!(p.backoff_at_least(1000, 1.0), Duration::from_secs(300));
        let small_cap = RetryPolicy {
            cap: Duration::from_secs(1),
            ..p
        };
        assert_eq!(small_cap.backoff_at_least(3, 0.0), p.base, "cap < base");
        assert_eq!(
            p.next_delay_at_least(1, Duration::ZERO, 0.0),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            p.next_delay_at_least(2, Duration::from_secs(60), 0.0),
            Some(Duration::from_secs(120))
        );
        assert_eq!(p.next_delay_at_least(4, Duration::ZERO, 0.0), None);
        assert_eq!(
            p.next_delay_at_least(3, Duration::from_secs(200), 0.0),
            None,
            "240 s from 200 s passes the 400 s deadline"
        );
    }
}
