//! Factories for the GitHub-backed pieces of the action: the sticky-comment
//! sink, the nightly drift issue and the report-mode PR resolver (the
//! data-branch baseline store is [`crate::baseline::github_store::data_branch_store`]).
//!
//! These are the only places the action constructs GitHub clients. The GitHub
//! REST layer (`crate::github`: octocrab client with its retry policy, comment
//! upsert, PR lookup; `baseline::GitHubStore`: the Contents API store) plugs in
//! here.

use std::sync::Arc;

use crate::github::issue::{sync_issue, IssueResult, IssueText};
use crate::github::marker::Marker;
use crate::github::target::{connect, GithubTarget};
use crate::github::{
    self, pull_for_head, update_comment, upsert_comment, CommentMode, GitHub, Repo,
};

use super::comment::{CommentResult, CommentSink, PrResolver, ResolvedPr};

/// The sticky comment on pull request `pr_number` for the suite `suite_id`
/// (the marker names it).
pub fn comment_sink(
    target: &GithubTarget,
    pr_number: u64,
    suite_id: &str,
) -> anyhow::Result<Box<dyn CommentSink>> {
    let (gh, repo) = connect(target)?;
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
    let (gh, repo) = connect(target)?;
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
    let (gh, repo) = connect(target)?;
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
        result: Result<CommentResult, github::GitHubError>,
    ) -> anyhow::Result<CommentResult> {
        match result {
            Ok(r) => Ok(r),
            Err(e) if e.is_forbidden() => {
                Ok(CommentResult::Forbidden(self.gh.redact(&e.to_string())))
            }
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
