//! GitHub REST API: the client the action talks through, the sticky pull-request
//! comment, and pull-request resolution for the fork-safe report mode. The
//! data-branch baseline store ([`crate::baseline::github_store`]) uses the same
//! client.
//!
//! - [`client`]: [`GitHub`], octocrab underneath, with explicit timeouts and
//!   benchgate's retry policy ([`policy`]) instead of octocrab's; the token never
//!   leaves the `Authorization` header.
//! - [`comment`]: [`upsert_comment`], one comment per (PR, suite), found by a hidden
//!   marker in a comment written by the authenticated identity; [`update_comment`]
//!   updates it only when it exists.
//! - [`issue`]: [`issue::sync_issue`], the sticky drift issue, by the same
//!   marker and author rules as the comment (what both share: `sticky`).
//! - [`pulls`]: [`pull_for_head`], the PR of a head commit, from the API only.
//! - [`graphql`]: GraphQL calls (the data branch's compare-and-swap ref update),
//!   on the endpoint derived from the REST base.
//!
//! Everything here is synchronous: [`GitHub`] owns a small tokio runtime and blocks
//! on it (from a helper thread when the caller is itself inside a runtime).

pub mod client;
pub mod comment;
pub mod config;
pub mod error;
pub mod graphql;
pub mod issue;
pub mod marker;
mod pages;
pub(crate) mod policy;
pub mod pulls;
mod sticky;
mod stop;
pub mod target;

use std::fmt;

pub use client::{ApiResponse, GitHub, GitHubConfig, Identity, IdentityMode, Token};
pub use comment::{update_comment, upsert_comment, CommentMode, CommentResult, MAX_COMMENT_CHARS};
pub use config::{MutationBudget, TimeBudget};
pub use error::GitHubError;
pub use pulls::{pull_for_head, PullInfo};

/// A repository, `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub owner: String,
    pub name: String,
}

impl Repo {
    /// Parses `owner/name` (the form of `GITHUB_REPOSITORY`).
    pub fn parse(full_name: &str) -> Result<Repo, GitHubError> {
        let valid = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        match full_name.split_once('/') {
            Some((owner, name)) if valid(owner) && valid(name) => Ok(Repo {
                owner: owner.to_string(),
                name: name.to_string(),
            }),
            _ => Err(GitHubError::Invalid(format!(
                "repository {full_name:?} is not of the form owner/name (as in GITHUB_REPOSITORY)"
            ))),
        }
    }

    /// `/repos/{owner}/{name}`, the prefix of the repository's endpoints.
    pub fn api_path(&self) -> String {
        format!("/repos/{}/{}", self.owner, self.name)
    }
}

impl fmt::Display for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// Percent-encodes one URL path segment or query value (RFC 3986: everything but
/// the unreserved characters).
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_parses_owner_and_name_only() {
        let repo = Repo::parse("octo-org/bench.gate").unwrap();
        assert_eq!(repo.api_path(), "/repos/octo-org/bench.gate");
        assert_eq!(repo.to_string(), "octo-org/bench.gate");
        for bad in ["", "a", "a/", "/b", "a/b/c", "a/..", "a b/c", "a/b?x"] {
            assert!(Repo::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn components_are_percent_encoded() {
        assert_eq!(encode_component("feature/x y#1"), "feature%2Fx%20y%231");
        assert_eq!(encode_component("a-b_c.d~e"), "a-b_c.d~e");
    }
}
