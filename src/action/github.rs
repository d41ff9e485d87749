//! Factories for the GitHub-backed pieces of the action: the data-branch
//! baseline store, the sticky-comment sink, the nightly drift issue and the
//! report-mode PR resolver.
//!
//! These are the only places the action constructs GitHub clients. The GitHub
//! REST layer (`crate::github`: octocrab client with its retry policy, comment
//! upsert, PR lookup; `baseline::GitHubStore`: the Contents API store) plugs in
//! here.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::baseline::{BaselineStore, GitHubStore};
use crate::github::issue::{sync_issue, IssueResult, IssueText};
use crate::github::marker::Marker;
use crate::github::{
    self, pull_for_head, update_comment, upsert_comment, CommentMode, GitHub, GitHubConfig,
    MutationBudget, Repo, TimeBudget, Token,
};

use super::comment::{CommentResult, CommentSink, PrResolver, ResolvedPr};
use super::inputs::Secret;

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
fn client(target: &GithubTarget) -> anyhow::Result<(Arc<GitHub>, Repo)> {
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

/// The baseline store on `data_branch` (created when missing), through the
/// Contents API. Bounded history, compare-and-swap writes.
pub fn data_branch_store(
    target: &GithubTarget,
    data_branch: &str,
) -> anyhow::Result<Box<dyn BaselineStore>> {
    let (gh, repo) = client(target)?;
    Ok(Box::new(
        GitHubStore::new(gh, repo).with_data_branch(data_branch),
    ))
}

/// The sticky comment on pull request `pr_number` for the suite `suite_id`
/// (the marker names it).
pub fn comment_sink(
    target: &GithubTarget,
    pr_number: u64,
    suite_id: &str,
) -> anyhow::Result<Box<dyn CommentSink>> {
    let (gh, repo) = client(target)?;
    Ok(Box::new(GitHubComment {
        gh,
        repo,
        pr_number,
        suite: suite_id.to_string(),
        run_id: target.run_id.clone(),
    }))
}

/// Opens or updates (`drifting`) the sticky drift issue of the suite
/// `suite_id`, or closes it (not `drifting`), by the comment's marker and
/// author rules; `head`: the newest stored commit analysed.
pub fn drift_issue(
    target: &GithubTarget,
    suite_id: &str,
    head: &str,
    drifting: bool,
    text: IssueText<'_>,
) -> anyhow::Result<IssueResult> {
    let (gh, repo) = client(target)?;
    let mine = Marker {
        suite: suite_id.to_string(),
        head: head.to_string(),
        run: target.run_id.clone(),
    };
    sync_issue(&gh, &repo, &mine, drifting, text).map_err(|e| {
        let hint = if e.is_forbidden() {
            " (the token needs `issues: write`)"
        } else {
            ""
        };
        anyhow::anyhow!(
            "the drift issue of {}: {}{hint}",
            target.repository,
            gh.redact(&e.to_string())
        )
    })
}

/// Finds the pull request of a measured run (report mode).
pub fn pr_resolver(target: &GithubTarget) -> anyhow::Result<Box<dyn PrResolver>> {
    let (gh, repo) = client(target)?;
    Ok(Box::new(GitHubPulls { gh, repo }))
}

struct GitHubComment {
    gh: Arc<GitHub>,
    repo: Repo,
    pr_number: u64,
    suite: String,
    run_id: String,
}

impl GitHubComment {
    /// The action's view of a comment write.
    fn outcome(
        &self,
        result: Result<github::CommentResult, github::GitHubError>,
    ) -> anyhow::Result<CommentResult> {
        match result {
            Ok(github::CommentResult::Created { url }) => Ok(CommentResult::Created(url)),
            Ok(github::CommentResult::Updated { url })
            | Ok(github::CommentResult::Unchanged { url }) => Ok(CommentResult::Updated(url)),
            Ok(github::CommentResult::Skipped(why)) => Ok(CommentResult::Skipped(why)),
            Ok(github::CommentResult::Forbidden(_)) => Ok(CommentResult::Forbidden),
            Err(e) if e.is_forbidden() => Ok(CommentResult::Forbidden),
            Err(e) => Err(anyhow::anyhow!(
                "commenting on pull request #{}: {}",
                self.pr_number,
                self.gh.redact(&e.to_string())
            )),
        }
    }
}

impl CommentSink for GitHubComment {
    fn upsert(&self, body: &str, head_sha: &str) -> anyhow::Result<CommentResult> {
        let result = upsert_comment(
            &self.gh,
            &self.repo,
            self.pr_number,
            &self.suite,
            head_sha,
            &self.run_id,
            body,
            CommentMode::Always,
        );
        self.outcome(result)
    }

    /// Updates our sticky comment when it exists (same rules as `upsert`, an
    /// identical text left alone); creates none.
    fn update_existing(&self, body: &str, head_sha: &str) -> anyhow::Result<CommentResult> {
        let mine = Marker {
            suite: self.suite.clone(),
            head: head_sha.to_string(),
            run: self.run_id.clone(),
        };
        let result = update_comment(&self.gh, &self.repo, self.pr_number, &mine, body);
        self.outcome(result)
    }
}

struct GitHubPulls {
    gh: Arc<GitHub>,
    repo: Repo,
}

impl PrResolver for GitHubPulls {
    fn resolve(
        &self,
        head_repo: &str,
        _head_branch: Option<&str>,
        head_sha: &str,
    ) -> anyhow::Result<Option<ResolvedPr>> {
        let found = pull_for_head(&self.gh, &self.repo, head_sha, head_repo).map_err(|e| {
            anyhow::anyhow!(
                "finding the pull request of {head_repo}@{head_sha}: {}",
                self.gh.redact(&e.to_string())
            )
        })?;
        Ok(found.map(|p| ResolvedPr {
            number: p.number,
            head_sha: p.head_sha,
            base_ref: p.base_ref,
            base_sha: p.base_sha,
        }))
    }
}
