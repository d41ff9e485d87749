//! The sticky drift issue: one open issue per suite, opened when the nightly
//! history drifts, updated while it does, closed when the drift is gone.
//!
//! Which issue is ours follows the sticky comment's rules ([`super::comment`]):
//! the first line of its body is our marker ([`super::marker`]) for this
//! suite *and* the authenticated identity opened it; a marker copied into
//! someone else's issue is ignored. Open issues are read (100 per page, at
//! most [`MAX_COMMENT_PAGES`] pages; pull requests, which the issues list
//! also returns, are skipped). Several of ours (an earlier race) converge to
//! the oldest: the others are closed. A run older than the one that wrote the
//! issue never overwrites it. A POST whose outcome is unknown is followed by
//! a re-list before any new POST.

use http::Method;
use serde::Deserialize;
use serde_json::json;

use super::client::{GitHub, Identity};
use super::comment::{User, MAX_COMMENT_PAGES};
use super::error::GitHubError;
use super::marker::Marker;
use super::sticky::{composed, ours, post_once, Ours};
use super::Repo;

/// What [`sync_issue`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IssueResult {
    Opened {
        url: String,
    },
    Updated {
        url: String,
    },
    /// The same title and text were already there.
    Unchanged {
        url: String,
    },
    Closed {
        url: String,
    },
    /// Nothing written, and why (no drift and no issue, a newer run's issue).
    Skipped(String),
}

/// The title and markdown body (without the marker) of the issue.
#[derive(Debug, Clone, Copy)]
pub struct IssueText<'a> {
    pub title: &'a str,
    pub body: &'a str,
}

#[derive(Debug, Clone, Deserialize)]
struct Issue {
    number: u64,
    html_url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    user: Option<User>,
    /// Present on pull requests.
    #[serde(default)]
    pull_request: Option<serde_json::Value>,
}

/// Opens or updates (`drifting`) our issue for `mine.suite` with `text`, or
/// closes it with `text` as its last word (not `drifting`).
pub fn sync_issue(
    gh: &GitHub,
    repo: &Repo,
    mine: &Marker,
    drifting: bool,
    text: IssueText<'_>,
) -> Result<IssueResult, GitHubError> {
    let full = composed(mine, text.body, "the drift issue")?;
    let identity = gh.identity()?;
    let ours = list_ours(gh, repo, &identity, &mine.suite)?;
    let Some(keeper) = ours.first() else {
        if !drifting {
            return Ok(IssueResult::Skipped(
                "no drift, and no open drift issue of ours to close".into(),
            ));
        }
        return open(gh, repo, &identity, mine, text.title, &full);
    };
    if let Some(newer) = ours.iter().find(|o| o.marker.run_is_newer_than(mine)) {
        return Ok(IssueResult::Skipped(format!(
            "the drift issue was written by a newer run ({}); this run ({}) is older",
            newer.marker.run, mine.run
        )));
    }
    for duplicate in &ours[1..] {
        patch(
            gh,
            repo,
            duplicate.item.number,
            &json!({ "state": "closed" }),
        )?;
    }
    let url = keeper.item.html_url.clone();
    let same = keeper.text.trim_end() == text.body.trim_end() && keeper.item.title == text.title;
    if drifting && same {
        return Ok(IssueResult::Unchanged { url });
    }
    let mut payload = json!({ "title": text.title, "body": full });
    if !drifting {
        payload["state"] = "closed".into();
        payload["state_reason"] = "completed".into();
    }
    let updated = patch(gh, repo, keeper.item.number, &payload)?;
    Ok(match drifting {
        true => IssueResult::Updated {
            url: updated.html_url,
        },
        false => IssueResult::Closed {
            url: updated.html_url,
        },
    })
}

fn patch(
    gh: &GitHub,
    repo: &Repo,
    number: u64,
    payload: &serde_json::Value,
) -> Result<Issue, GitHubError> {
    let path = format!("{}/issues/{number}", repo.api_path());
    gh.send(Method::PATCH, &path, Some(payload))?
        .json("the updated issue")
}

/// POSTs a new issue; after an ambiguous failure, re-lists and stops if the
/// issue is there.
fn open(
    gh: &GitHub,
    repo: &Repo,
    identity: &Identity,
    mine: &Marker,
    title: &str,
    full: &str,
) -> Result<IssueResult, GitHubError> {
    let url = post_once(
        gh,
        &format!("{}/issues", repo.api_path()),
        &json!({ "title": title, "body": full }),
        "the new issue",
        mine,
        |issue: Issue| issue.html_url,
        || list_ours(gh, repo, identity, &mine.suite),
    )?;
    Ok(IssueResult::Opened { url })
}

/// Our open issues for `suite`, oldest first.
fn list_ours(
    gh: &GitHub,
    repo: &Repo,
    identity: &Identity,
    suite: &str,
) -> Result<Vec<Ours<Issue>>, GitHubError> {
    let first = format!("{}/issues?state=open&per_page=100", repo.api_path());
    let issues: Vec<Issue> = gh.get_all(&first, MAX_COMMENT_PAGES)?;
    let issues: Vec<Issue> = issues
        .into_iter()
        .filter(|i| i.pull_request.is_none())
        .collect();
    Ok(ours(
        issues,
        identity,
        suite,
        |i| (i.user.as_ref(), i.body.as_deref()),
        |i| i.number,
    ))
}
