//! Factories for the GitHub-backed pieces of the action: the data-branch
//! baseline store, the sticky-comment sink and the report-mode PR resolver.
//!
//! These are the only places the action constructs GitHub clients. The GitHub
//! REST layer (octocrab client with its retry policy, comment upsert, Contents
//! API store) plugs in here; until it lands each factory returns a clear
//! "not built yet" error, and the action degrades where it can (no comment:
//! job summary and a warning) and stops where it cannot (no baseline store).

use crate::baseline::BaselineStore;

use super::comment::{CommentSink, PrResolver};
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
}

const NOT_BUILT: &str =
    "is not built into this benchgate yet (the GitHub REST layer lands with issue 5's GitHub half)";

/// The baseline store on `data_branch` (created when missing), through the
/// Contents API. Bounded history, compare-and-swap writes.
pub fn data_branch_store(
    target: &GithubTarget,
    data_branch: &str,
) -> anyhow::Result<Box<dyn BaselineStore>> {
    let _ = target;
    anyhow::bail!(
        "`baseline-store: branch` (data branch {data_branch:?}) {NOT_BUILT}; use `baseline-store: local:<directory>` meanwhile"
    )
}

/// The sticky comment on pull request `pr_number` for the suite `suite_id`
/// (the marker names it).
pub fn comment_sink(
    target: &GithubTarget,
    pr_number: u64,
    suite_id: &str,
) -> anyhow::Result<Box<dyn CommentSink>> {
    let _ = (target, suite_id);
    anyhow::bail!("commenting on pull request #{pr_number} {NOT_BUILT}")
}

/// Finds the pull request of a measured run (report mode).
pub fn pr_resolver(target: &GithubTarget) -> anyhow::Result<Box<dyn PrResolver>> {
    let _ = target;
    anyhow::bail!("resolving the pull request of a workflow run {NOT_BUILT}")
}
