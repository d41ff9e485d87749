//! What the client needs to know: where GitHub is, the token, timeouts, retry
//! limits, the run's budget of mutating requests, and whose comments count as
//! ours.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::retry::RetryPolicy;

/// An API token. Its text is reachable only by the client that sends it; Debug
/// prints `Token(***)` and there is no Display.
#[derive(Clone)]
pub struct Token(pub(super) String);

impl Token {
    /// Wraps a token; surrounding whitespace (a trailing newline from a secret
    /// file) is dropped.
    pub fn new(secret: impl Into<String>) -> Token {
        Token(secret.into().trim().to_string())
    }

    /// `text` with every occurrence of the token replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// Whose comments count as ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityMode {
    /// `GET /user` (a personal access token); on 403/404 (a workflow's
    /// `GITHUB_TOKEN`, an installation token) the given bot login.
    Auto { fallback_bot: String },
    /// This login, no lookup (e.g. a GitHub App's `my-app[bot]`).
    Login(String),
}

impl Default for IdentityMode {
    fn default() -> Self {
        IdentityMode::Auto {
            fallback_bot: "github-actions[bot]".to_string(),
        }
    }
}

/// The authenticated identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub login: String,
    /// GitHub's account type is `Bot`.
    pub is_bot: bool,
}

/// The mutating requests (POST, PATCH, PUT, DELETE, retries included) one run
/// may send. Clones share one count, so clients built from clones of one
/// [`GitHubConfig`] draw on the same budget.
///
/// Why a cap: GitHub's secondary rate limits allow about 80 content-creating
/// requests a minute and 500 an hour per token, and a run that goes past them
/// can get its integration banned. A benchmark run writes a handful (a results
/// file, the index, the files its bounded history drops, a comment); one that
/// needs more than the cap is looping, for example deleting duplicate comments
/// that keep coming back.
#[derive(Debug, Clone)]
pub struct MutationBudget {
    cap: u32,
    sent: Arc<AtomicU32>,
}

impl MutationBudget {
    /// The default cap of one run.
    pub const DEFAULT_CAP: u32 = 100;

    /// A fresh budget of `cap` requests.
    pub fn new(cap: u32) -> MutationBudget {
        MutationBudget {
            cap,
            sent: Arc::new(AtomicU32::new(0)),
        }
    }

    pub fn cap(&self) -> u32 {
        self.cap
    }

    /// Mutating requests sent so far.
    #[cfg(test)]
    fn sent(&self) -> u32 {
        self.sent.load(Ordering::SeqCst)
    }

    /// Takes one request from the budget; `false` when the cap is reached.
    pub(super) fn take(&self) -> bool {
        self.sent
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.cap).then_some(n + 1)
            })
            .is_ok()
    }
}

impl Default for MutationBudget {
    fn default() -> Self {
        MutationBudget::new(MutationBudget::DEFAULT_CAP)
    }
}

/// The time all of a run's calls may take together, waits and retries
/// included: the deadline of the whole GitHub phase (a lookup, a store, a
/// comment), not of one call. Clones share one account, so clients built from
/// clones of one [`GitHubConfig`] draw on the same time. A call that would run
/// past it ends with [`super::GitHubError::OutOfTime`], which names `setting`,
/// where the limit comes from (e.g. "input `github-timeout`").
#[derive(Debug, Clone)]
pub struct TimeBudget {
    limit: Duration,
    setting: String,
    spent: Arc<Mutex<Duration>>,
}

impl TimeBudget {
    /// A fresh budget of `limit`, set by `setting`.
    pub fn new(limit: Duration, setting: impl Into<String>) -> TimeBudget {
        TimeBudget {
            limit,
            setting: setting.into(),
            spent: Arc::new(Mutex::new(Duration::ZERO)),
        }
    }

    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Where the limit comes from, for the error that says it ran out.
    pub fn setting(&self) -> &str {
        &self.setting
    }

    /// What is left, before the call in progress (which has used `running`).
    pub fn remaining(&self, running: Duration) -> Duration {
        let spent = *self.spent.lock().unwrap_or_else(|e| e.into_inner());
        self.limit.saturating_sub(spent + running)
    }

    /// Counts a finished call's time.
    pub(super) fn spend(&self, took: Duration) {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner()) += took;
    }
}

/// How to reach GitHub and how hard to try.
#[derive(Debug, Clone)]
pub struct GitHubConfig {
    /// `GITHUB_API_URL`, e.g. `https://api.github.com` or `https://ghe.example/api/v3`.
    pub api_url: String,
    pub token: Option<Token>,
    pub connect_timeout: Duration,
    /// One attempt, from sending to the last body byte.
    pub request_timeout: Duration,
    /// One call, all attempts and waits included.
    pub overall_timeout: Duration,
    /// Attempts, backoff, and the time within which a retry may start.
    pub retry: RetryPolicy,
    /// Waits after a rate limit that names no time (a secondary limit without
    /// `retry-after` or `x-ratelimit-reset`): GitHub asks for at least a
    /// minute, then exponentially longer, then an error. Each wait is at least
    /// `base` ([`RetryPolicy::next_delay_at_least`]); `max_attempts` counts
    /// such answers.
    pub secondary_limit: RetryPolicy,
    /// The least time between two mutating calls.
    pub mutation_spacing: Duration,
    /// The mutating requests this run may still send.
    pub mutations: MutationBudget,
    /// The time all calls may take together; `None`: each call is bounded by
    /// `overall_timeout` only.
    pub time: Option<TimeBudget>,
    pub identity: IdentityMode,
}

impl GitHubConfig {
    /// Production defaults: 10 s connect, 30 s per attempt, 300 s per call, 6
    /// attempts within 90 s; a secondary rate limit without a header waits 60 s,
    /// then 120 s, and fails on its third answer (at most about 4 minutes);
    /// 1 s between mutations, at most [`MutationBudget::DEFAULT_CAP`] of them.
    pub fn new(api_url: impl Into<String>, token: Option<Token>) -> GitHubConfig {
        GitHubConfig {
            api_url: api_url.into(),
            token,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            overall_timeout: Duration::from_secs(300),
            retry: RetryPolicy {
                max_attempts: 6,
                base: Duration::from_millis(500),
                cap: Duration::from_secs(20),
                deadline: Duration::from_secs(90),
            },
            secondary_limit: RetryPolicy {
                max_attempts: 3,
                base: Duration::from_secs(60),
                cap: Duration::from_secs(120),
                deadline: Duration::from_secs(240),
            },
            mutation_spacing: Duration::from_secs(1),
            mutations: MutationBudget::default(),
            time: None,
            identity: IdentityMode::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_never_printed() {
        let token = Token::new("ghp_secret123\n");
        assert_eq!(format!("{token:?}"), "Token(***)");
        assert_eq!(token.redact("Bearer ghp_secret123 x"), "Bearer *** x");
        let config = GitHubConfig::new("http://127.0.0.1:1", Some(token));
        assert!(!format!("{config:?}").contains("ghp_secret123"));
    }

    #[test]
    fn the_mutation_budget_is_shared_by_clones_and_stops_at_the_cap() {
        let budget = MutationBudget::new(2);
        let clone = budget.clone();
        assert!(budget.take() && clone.take());
        assert!(!budget.take() && !clone.take());
        assert_eq!((budget.sent(), clone.cap()), (2, 2));
    }

    #[test]
    fn the_time_budget_is_shared_by_clones_and_counts_the_running_call() {
        let budget = TimeBudget::new(Duration::from_secs(10), "input `x`");
        let clone = budget.clone();
        budget.spend(Duration::from_secs(4));
        assert_eq!(
            clone.remaining(Duration::from_secs(1)),
            Duration::from_secs(5)
        );
        clone.spend(Duration::from_secs(7));
        assert_eq!(budget.remaining(Duration::ZERO), Duration::ZERO);
        assert_eq!(budget.setting(), "input `x`");
    }
}
