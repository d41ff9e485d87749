//! What the client needs to know: where GitHub is, the token, timeouts, retry
//! limits, and whose comments count as ours.

use std::fmt;
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
    /// The least time between two mutating calls.
    pub mutation_spacing: Duration,
    pub identity: IdentityMode,
}

impl GitHubConfig {
    /// Production defaults: 10 s connect, 30 s per attempt, 120 s per call, 6
    /// attempts within 90 s, 1 s between mutations.
    pub fn new(api_url: impl Into<String>, token: Option<Token>) -> GitHubConfig {
        GitHubConfig {
            api_url: api_url.into(),
            token,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            overall_timeout: Duration::from_secs(120),
            retry: RetryPolicy {
                max_attempts: 6,
                base: Duration::from_millis(500),
                cap: Duration::from_secs(20),
                deadline: Duration::from_secs(90),
            },
            mutation_spacing: Duration::from_secs(1),
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
}
