//! The sticky pull-request comment: one per (PR, suite), rewritten in place.
//!
//! Which comment is ours: its first line is our marker ([`super::marker`]) for
//! this suite *and* it was written by the authenticated identity
//! ([`GitHub::identity`]); a marker copied into someone else's comment is
//! ignored. All comments are read (100 per page, at most [`MAX_COMMENT_PAGES`]
//! pages). Several of ours (left by an earlier race) converge to the oldest: it
//! is updated and the others deleted. A run older than the one that wrote the
//! comment (smaller run id, or a head the PR has moved past) never overwrites it.
//! A POST whose outcome is unknown is followed by a re-list before any new POST.
//! [`update_comment`] follows the same path but never creates a comment.

use std::str::FromStr;

use http::Method;
use serde::Deserialize;
use serde_json::json;

use super::client::{GitHub, Identity};
use super::error::GitHubError;
use super::marker::Marker;
use super::sticky::{composed, ours, post_once, Ours};
use super::Repo;

/// GitHub's limit on a comment body, in characters.
pub const MAX_COMMENT_CHARS: usize = 65_536;
/// Comment pages read at most (100 comments each).
pub const MAX_COMMENT_PAGES: usize = 50;

/// When to write the comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentMode {
    /// Create or update on every run.
    Always,
    /// Create, or update only when the text (marker aside) changed.
    OnChange,
    /// Never touch comments.
    Never,
}

impl FromStr for CommentMode {
    type Err = String;

    /// `always`, `on-change` (or `on_change`), `never`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "always" => Ok(CommentMode::Always),
            "on-change" => Ok(CommentMode::OnChange),
            "never" => Ok(CommentMode::Never),
            other => Err(format!(
                "comment mode {other:?} is not one of always, on-change, never"
            )),
        }
    }
}

/// What [`upsert_comment`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentResult {
    Created {
        url: String,
    },
    Updated {
        url: String,
    },
    /// On-change and the text was the same.
    Unchanged {
        url: String,
    },
    /// Nothing written, and why (mode never, a newer run's comment, ...).
    Skipped(String),
    /// The token may not write comments (a fork's read-only token): degrade to
    /// the job summary and a warning.
    Forbidden(String),
}

impl CommentResult {
    /// The comment's URL, when one is there (written now or left unchanged).
    pub fn url(&self) -> Option<&str> {
        match self {
            CommentResult::Created { url }
            | CommentResult::Updated { url }
            | CommentResult::Unchanged { url } => Some(url),
            CommentResult::Skipped(_) | CommentResult::Forbidden(_) => None,
        }
    }
}

/// A GitHub account as it appears in payloads.
#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: String,
}

#[derive(Debug, Clone, Deserialize)]
struct IssueComment {
    id: u64,
    html_url: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    user: Option<User>,
}

/// Creates or updates the suite's sticky comment on pull request `pr_number`.
#[allow(clippy::too_many_arguments)]
pub fn upsert_comment(
    gh: &GitHub,
    repo: &Repo,
    pr_number: u64,
    suite_name: &str,
    head_sha: &str,
    run_id: &str,
    body: &str,
    mode: CommentMode,
) -> Result<CommentResult, GitHubError> {
    let mine = Marker {
        suite: suite_name.to_string(),
        head: head_sha.to_string(),
        run: run_id.to_string(),
    };
    sticky(gh, repo, pr_number, &mine, body, mode, true)
}

/// Updates the suite's sticky comment on pull request `pr_number` when one of
/// ours exists, and creates none (`comment: on-change` with nothing changed,
/// so an earlier verdict does not go stale). The same rules as
/// [`upsert_comment`] in [`CommentMode::OnChange`]: only our identity's
/// comment counts, an older run or a head the PR moved past never overwrites,
/// duplicates converge, an identical text is left alone. No comment of ours:
/// [`CommentResult::Skipped`].
pub fn update_comment(
    gh: &GitHub,
    repo: &Repo,
    pr_number: u64,
    mine: &Marker,
    body: &str,
) -> Result<CommentResult, GitHubError> {
    sticky(
        gh,
        repo,
        pr_number,
        mine,
        body,
        CommentMode::OnChange,
        false,
    )
}

/// The one path of [`upsert_comment`] and [`update_comment`]: size check,
/// then the upsert, a 403 mapped to [`CommentResult::Forbidden`].
fn sticky(
    gh: &GitHub,
    repo: &Repo,
    pr_number: u64,
    mine: &Marker,
    body: &str,
    mode: CommentMode,
    create_if_missing: bool,
) -> Result<CommentResult, GitHubError> {
    let full = composed(mine, body, "the comment")?;
    if mode == CommentMode::Never {
        return Ok(CommentResult::Skipped("comment mode is never".into()));
    }
    let write = CommentWrite {
        mine,
        body,
        full: &full,
        mode,
        create_if_missing,
    };
    match upsert(gh, repo, pr_number, &write) {
        Err(GitHubError::Forbidden { message, .. }) => Ok(CommentResult::Forbidden(format!(
            "cannot write the pull request comment: {message}"
        ))),
        other => other,
    }
}

/// What one call writes: our marker, the body without and with it, and when.
struct CommentWrite<'a> {
    mine: &'a Marker,
    body: &'a str,
    full: &'a str,
    mode: CommentMode,
    /// `false`: update ours if it exists, never POST a new comment.
    create_if_missing: bool,
}

fn upsert(
    gh: &GitHub,
    repo: &Repo,
    pr: u64,
    w: &CommentWrite,
) -> Result<CommentResult, GitHubError> {
    let mine = w.mine;
    let identity = gh.identity()?;
    let ours = list_ours(gh, repo, pr, &identity, &mine.suite)?;
    let Some(keeper) = ours.first() else {
        if !w.create_if_missing {
            return Ok(CommentResult::Skipped(
                "no comment of ours on the pull request to update, and none is created".into(),
            ));
        }
        return create(gh, repo, pr, &identity, mine, w.full);
    };
    if let Some(newer) = ours.iter().find(|o| o.marker.run_is_newer_than(mine)) {
        return Ok(CommentResult::Skipped(format!(
            "the comment was written by a newer run ({}, head {}); this run ({}) is older",
            newer.marker.run, newer.marker.head, mine.run
        )));
    }
    if let Some(other) = ours.iter().find(|o| o.marker.head != mine.head) {
        let current = current_head(gh, repo, pr)?;
        if current == other.marker.head && current != mine.head {
            return Ok(CommentResult::Skipped(format!(
                "the pull request's head moved on to {current} (already commented); this run measured {}",
                mine.head
            )));
        }
    }
    for duplicate in &ours[1..] {
        let path = format!("{}/issues/comments/{}", repo.api_path(), duplicate.item.id);
        match gh.send(Method::DELETE, &path, None) {
            Ok(_) => {}
            Err(e) if e.status() == Some(404) => {}
            Err(e) => return Err(e),
        }
    }
    let url = keeper.item.html_url.clone();
    if w.mode == CommentMode::OnChange && keeper.text.trim_end() == w.body.trim_end() {
        return Ok(CommentResult::Unchanged { url });
    }
    let path = format!("{}/issues/comments/{}", repo.api_path(), keeper.item.id);
    let response = gh.send(Method::PATCH, &path, Some(&json!({ "body": w.full })))?;
    let updated: IssueComment = response.json("the updated comment")?;
    Ok(CommentResult::Updated {
        url: updated.html_url,
    })
}

/// POSTs a new comment; after an ambiguous failure, re-lists and stops if the
/// comment is there.
fn create(
    gh: &GitHub,
    repo: &Repo,
    pr: u64,
    identity: &Identity,
    mine: &Marker,
    full: &str,
) -> Result<CommentResult, GitHubError> {
    let url = post_once(
        gh,
        &format!("{}/issues/{pr}/comments", repo.api_path()),
        &json!({ "body": full }),
        "the new comment",
        mine,
        |comment: IssueComment| comment.html_url,
        || list_ours(gh, repo, pr, identity, &mine.suite),
    )?;
    Ok(CommentResult::Created { url })
}

/// Our comments for `suite`, oldest first.
fn list_ours(
    gh: &GitHub,
    repo: &Repo,
    pr: u64,
    identity: &Identity,
    suite: &str,
) -> Result<Vec<Ours<IssueComment>>, GitHubError> {
    let first = format!("{}/issues/{pr}/comments?per_page=100", repo.api_path());
    let comments: Vec<IssueComment> = gh.get_all(&first, MAX_COMMENT_PAGES)?;
    Ok(ours(
        comments,
        identity,
        suite,
        |c| (c.user.as_ref(), c.body.as_deref()),
        |c| c.id,
    ))
}

/// The pull request's current head sha.
fn current_head(gh: &GitHub, repo: &Repo, pr: u64) -> Result<String, GitHubError> {
    let pull = super::pulls::get_pull(gh, repo, pr)?;
    Ok(pull.head.sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!("on_change".parse(), Ok(CommentMode::OnChange));
        assert_eq!("Always".parse(), Ok(CommentMode::Always));
        assert!("sometimes".parse::<CommentMode>().is_err());
    }
}
