//! Errors of the GitHub client. Callers branch on the variant: a permission 403
//! degrades to the job summary, an ambiguous POST is reconciled by re-listing, a
//! 409/422 on a contents write is a compare-and-swap conflict. No message ever
//! holds the token: the client redacts every text it puts here.

/// A failed GitHub API call.
#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    /// HTTP 403 that is not a rate limit: the token lacks the permission,
    /// e.g. the read-only token of a pull request from a fork. Never retried.
    #[error("GitHub API {method} {path}: permission denied (HTTP {status}): {message}; the token lacks the permission this needs (a pull request from a fork gets a read-only token)")]
    Forbidden {
        method: String,
        path: String,
        status: u16,
        message: String,
    },
    /// Rate limited (403/429 with rate-limit headers or message) and the wait the
    /// server asked for, or the retries, did not fit in the retry budget.
    #[error("GitHub API {method} {path}: rate limited (HTTP {status}) after {attempts} attempt(s): {message}")]
    RateLimited {
        method: String,
        path: String,
        status: u16,
        attempts: u32,
        message: String,
    },
    /// Any other final HTTP status (404, 409, 422, 5xx after the retries, ...).
    #[error("GitHub API {method} {path}: HTTP {status} after {attempts} attempt(s): {message}")]
    Status {
        method: String,
        path: String,
        status: u16,
        attempts: u32,
        message: String,
    },
    /// A POST failed after it was sent (timeout, 5xx, broken connection): it may
    /// have been applied. Not retried by the client; the caller re-lists first.
    #[error("GitHub API {method} {path}: {message}; the request may have been applied, so it was not sent again blindly")]
    Ambiguous {
        method: String,
        path: String,
        message: String,
    },
    /// No usable answer: connection failures or timeouts until the budget ran out.
    #[error("GitHub API {method} {path}: {message} (after {attempts} attempt(s))")]
    Transport {
        method: String,
        path: String,
        attempts: u32,
        message: String,
    },
    /// Not sent: the run's budget of mutating requests is spent
    /// ([`super::config::MutationBudget`]).
    #[error("GitHub API {method} {path}: not sent: this run has sent its cap of {cap} mutating requests (POST, PATCH, PUT, DELETE); the cap keeps a looping run below GitHub's secondary rate limits (about 80 content-creating requests a minute, 500 an hour), which can get the token's integration banned")]
    MutationCap {
        method: String,
        path: String,
        cap: u32,
    },
    /// Not finished: the run's GitHub calls used up their time together
    /// ([`super::config::TimeBudget`]); `last` is the last failure, if any.
    #[error("GitHub API {method} {path}: the GitHub calls of this run used up their time limit of {limit} ({setting}){last}; GitHub is slow or unreachable: re-run the job, or raise {setting}")]
    OutOfTime {
        method: String,
        path: String,
        limit: String,
        setting: String,
        last: String,
    },
    /// Abandoned: SIGINT or SIGTERM arrived (the job is being cancelled). A
    /// request in flight was dropped: it may or may not have been applied.
    #[error(
        "GitHub API {method} {path}: abandoned: {signal} received (the job is being cancelled)"
    )]
    Interrupted {
        method: String,
        path: String,
        signal: String,
    },
    /// A GraphQL answer that lists errors (GitHub answers them with HTTP 200):
    /// `message` holds each error's type and message.
    #[error("GitHub GraphQL {operation}: {message}")]
    GraphQl { operation: String, message: String },
    /// Bad configuration or an answer that does not decode.
    #[error("GitHub API: {0}")]
    Invalid(String),
}

impl GitHubError {
    /// The final HTTP status, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            GitHubError::Forbidden { status, .. }
            | GitHubError::RateLimited { status, .. }
            | GitHubError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// A permission failure (not a rate limit).
    pub fn is_forbidden(&self) -> bool {
        matches!(self, GitHubError::Forbidden { .. })
    }
}
