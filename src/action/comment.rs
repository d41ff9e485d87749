//! The seams between the action and GitHub's REST API: where the sticky
//! pull-request comment goes ([`CommentSink`]) and how report mode finds the
//! pull request of a measured run ([`PrResolver`]). The GitHub implementations
//! live in the GitHub layer (see [`super::github`]); here are the contracts and
//! the sink used when there is no comment to write ([`SummaryOnly`]).

/// What became of the comment: the GitHub layer's one record of it. A
/// `Forbidden` token (a fork's read-only one: HTTP 403) degrades the action to
/// the job summary plus a warning; the exit code still reflects only the gate.
pub use crate::github::CommentResult;

/// Where the pull-request comment goes. One sink serves one pull request and
/// one suite (the hidden marker names the suite, so several suites can share a
/// PR).
pub trait CommentSink {
    /// Creates or updates the sticky comment with `body` (markdown, at most
    /// [`MAX_BODY_CHARS`] characters; the sink adds its marker line). Must not
    /// overwrite a comment written for a newer head than `head_sha`. Errors
    /// other than "forbidden" are reported as warnings by the caller; they
    /// never change the exit code.
    fn upsert(&self, body: &str, head_sha: &str) -> anyhow::Result<CommentResult>;

    /// `comment: on-change` with nothing changed: update the sticky comment if
    /// one exists (so an earlier "regressed" comment does not go stale), create
    /// none. The default creates none and updates none.
    fn update_existing(&self, body: &str, head_sha: &str) -> anyhow::Result<CommentResult> {
        let _ = (body, head_sha);
        Ok(CommentResult::Skipped(
            "nothing changed (comment: on-change)".to_string(),
        ))
    }
}

/// Characters of the body the action passes to a sink: GitHub's limit minus
/// room for the sink's marker line.
pub const MAX_BODY_CHARS: usize = crate::report::markdown::MAX_COMMENT_CHARS - 1024;

/// The sink when no comment is written: the job summary carries the report.
#[derive(Debug, Clone)]
pub struct SummaryOnly {
    pub reason: String,
}

impl CommentSink for SummaryOnly {
    fn upsert(&self, _body: &str, _head_sha: &str) -> anyhow::Result<CommentResult> {
        Ok(CommentResult::Skipped(self.reason.clone()))
    }

    fn update_existing(&self, _body: &str, _head_sha: &str) -> anyhow::Result<CommentResult> {
        Ok(CommentResult::Skipped(self.reason.clone()))
    }
}

/// An open pull request, as the API reports it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPr {
    pub number: u64,
    /// The PR's head commit now (may have moved on since the measured run).
    pub head_sha: String,
    /// Base branch name, e.g. `main`.
    pub base_ref: String,
    pub base_sha: String,
}

/// Report mode: finds the pull request of a measured run from the API, by the
/// run's head sha and head repository (both from the trusted `workflow_run`
/// payload, never from the artifact).
pub trait PrResolver {
    /// The open pull request whose head repository is `head_repo` (`owner/name`)
    /// and whose head commit is or was `head_sha`; `None` when there is none
    /// (e.g. closed). Implementations list the repository's open PRs filtered
    /// by `head=owner:branch` or search by commit, and must not trust the
    /// artifact's PR number.
    fn resolve(
        &self,
        head_repo: &str,
        head_branch: Option<&str>,
        head_sha: &str,
    ) -> anyhow::Result<Option<ResolvedPr>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_only_never_writes() {
        let s = SummaryOnly {
            reason: "no token".into(),
        };
        assert_eq!(
            s.upsert("body", "abc").unwrap(),
            CommentResult::Skipped("no token".into())
        );
        assert_eq!(s.upsert("b", "a").unwrap().url(), None);
        let url = || "u".to_string();
        assert_eq!(CommentResult::Updated { url: url() }.url(), Some("u"));
        assert_eq!(CommentResult::Unchanged { url: url() }.url(), Some("u"));
        assert_eq!(CommentResult::Created { url: url() }.url(), Some("u"));
        assert_eq!(CommentResult::Forbidden("403".into()).url(), None);
    }
}
