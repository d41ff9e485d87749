//! Which pull request a head commit belongs to, for the fork-safe `report` mode
//! (a `workflow_run` job reading results a `measure` job uploaded). The PR number
//! in an artifact is never trusted: the PR is found from the API by head sha and
//! head repository. Payloads decode into octocrab's typed models.
//!
//! First `GET /repos/{repo}/commits/{sha}/pulls` (PRs containing the commit; the
//! PR whose head it still is wins). GitHub does not always list a fork's PR
//! there, so when that finds nothing, the open PRs are listed and matched on head
//! repository and head sha.

use octocrab::models::pulls::PullRequest;
use octocrab::models::IssueState;

use super::client::GitHub;
use super::error::GitHubError;
use super::{encode_component, Repo};

/// Open pull requests read at most when matching by head (100 per page).
const MAX_PULL_PAGES: usize = 10;

/// The pull request a measured head commit belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullInfo {
    pub number: u64,
    /// The PR's head now (may be past the measured commit).
    pub head_sha: String,
    pub base_ref: String,
    pub base_sha: String,
    /// The PR's head is no longer the measured commit: its results are stale
    /// and should not be reported on it.
    pub head_moved_on: bool,
}

/// The open pull request of `repo` whose head repository is
/// `head_repo_full_name` and which contains `head_sha`; `None` when there is none.
pub fn pull_for_head(
    gh: &GitHub,
    repo: &Repo,
    head_sha: &str,
    head_repo_full_name: &str,
) -> Result<Option<PullInfo>, GitHubError> {
    if head_sha.len() < 7 || !head_sha.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(GitHubError::Invalid(format!(
            "head sha {head_sha:?} is not a commit sha"
        )));
    }
    let from_head_repo = |pull: &PullRequest| {
        pull.state == Some(IssueState::Open)
            && pull
                .head
                .repo
                .as_ref()
                .and_then(|r| r.full_name.as_deref())
                .is_some_and(|name| name.eq_ignore_ascii_case(head_repo_full_name))
    };
    let path = format!(
        "{}/commits/{}/pulls?per_page=100",
        repo.api_path(),
        encode_component(head_sha)
    );
    let containing: Vec<PullRequest> = match gh.get(&path) {
        Ok(response) => response.json(&path)?,
        // 422: "No commit found for SHA" (a fork's commit the base repo lacks).
        Err(e) if matches!(e.status(), Some(404 | 422)) => Vec::new(),
        Err(e) => return Err(e),
    };
    let candidates: Vec<&PullRequest> = containing.iter().filter(|p| from_head_repo(p)).collect();
    let chosen = candidates
        .iter()
        .find(|p| p.head.sha == head_sha)
        .or(candidates.first())
        .map(|p| (*p).clone());
    let chosen = match chosen {
        Some(pull) => Some(pull),
        None => {
            let first = format!(
                "{}/pulls?state=open&per_page=100&sort=updated&direction=desc",
                repo.api_path()
            );
            let open: Vec<PullRequest> = gh.get_all(&first, MAX_PULL_PAGES)?;
            open.into_iter()
                .find(|p| from_head_repo(p) && p.head.sha == head_sha)
        }
    };
    Ok(chosen.map(|pull| PullInfo {
        number: pull.number,
        head_moved_on: pull.head.sha != head_sha,
        head_sha: pull.head.sha,
        base_ref: pull.base.ref_field,
        base_sha: pull.base.sha,
    }))
}

/// `GET /repos/{repo}/pulls/{number}`.
pub(crate) fn get_pull(gh: &GitHub, repo: &Repo, number: u64) -> Result<PullRequest, GitHubError> {
    let path = format!("{}/pulls/{number}", repo.api_path());
    gh.get(&path)?.json(&path)
}
