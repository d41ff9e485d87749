//! Where the GitHub-backed pieces go and with what: the API URL, the
//! repository, the token (a [`Secret`] that never prints) and the run's shared
//! budgets of mutations and time. Every GitHub client of a run is built by
//! [`connect`].

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::{GitHub, GitHubConfig, MutationBudget, Repo, TimeBudget, Token};

/// A value that must never be printed: `Debug` and `Display` show `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value, for the HTTP client only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// What every GitHub-backed piece needs.
#[derive(Debug, Clone)]
pub struct GithubTarget {
    /// `GITHUB_API_URL`, without a trailing slash (always honoured).
    pub api_url: String,
    /// `owner/name`.
    pub repository: String,
    pub token: Secret,
    /// `GITHUB_RUN_ID`, for the comment marker and logs.
    pub run_id: String,
    /// Input `github-timeout`: the time all GitHub calls of this process may
    /// take together.
    pub timeout: Duration,
}

/// A client for `target`; the token goes into the client only, never into a
/// URL or a message.
pub fn connect(target: &GithubTarget) -> anyhow::Result<(Arc<GitHub>, Repo)> {
    let repo = Repo::parse(&target.repository).map_err(|e| {
        anyhow::anyhow!(
            "GITHUB_REPOSITORY {:?} is not owner/name: {e}",
            target.repository
        )
    })?;
    let mut config = GitHubConfig::new(
        target.api_url.clone(),
        Some(Token::new(target.token.expose().to_string())),
    );
    config.mutations = run_mutations();
    config.time = Some(run_time(target.timeout));
    let gh = GitHub::new(config)
        .map_err(|e| anyhow::anyhow!("setting up the GitHub client for {}: {e}", target.api_url))?;
    Ok((Arc::new(gh), repo))
}

/// The run's one budget of mutating requests, shared by all its clients (the
/// store's and the comment's): the cap is per run, not per client.
fn run_mutations() -> MutationBudget {
    static BUDGET: OnceLock<MutationBudget> = OnceLock::new();
    BUDGET.get_or_init(MutationBudget::default).clone()
}

/// The run's one time budget for GitHub calls (input `github-timeout`),
/// shared by all its clients: the limit bounds the whole GitHub phase.
fn run_time(limit: Duration) -> TimeBudget {
    static BUDGET: OnceLock<TimeBudget> = OnceLock::new();
    BUDGET
        .get_or_init(|| TimeBudget::new(limit, "input `github-timeout`"))
        .clone()
}
