//! What the sticky comment ([`super::comment`]) and the sticky drift issue
//! ([`super::issue`]) share: which items are ours, the size limit of their
//! text, and a POST that never creates a second one.

use http::Method;
use serde::de::DeserializeOwned;

use super::client::{GitHub, Identity};
use super::comment::{User, MAX_COMMENT_CHARS};
use super::error::GitHubError;
use super::marker::{compose, Marker};

/// POSTs of one new comment or issue at most (each after a re-list).
const MAX_POSTS: usize = 3;

/// One of our comments or issues, with its marker and the text after it.
pub(super) struct Ours<T> {
    pub item: T,
    pub marker: Marker,
    pub text: String,
}

/// Which of `items` (comments, issues) are ours for `suite`: written by
/// `identity`, with our marker for `suite` on their body's first line; oldest
/// (smallest `number`) first.
pub(super) fn ours<T>(
    items: Vec<T>,
    identity: &Identity,
    suite: &str,
    author_and_body: impl Fn(&T) -> (Option<&User>, Option<&str>),
    number: impl Fn(&T) -> u64,
) -> Vec<Ours<T>> {
    let mut ours: Vec<Ours<T>> = items
        .into_iter()
        .filter_map(|item| {
            let (marker, text) = {
                let (user, body) = author_and_body(&item);
                if !user.is_some_and(|u| is_identity(u, identity)) {
                    return None;
                }
                let (marker, text) = Marker::parse(body?)?;
                (marker, text.to_string())
            };
            (marker.suite == suite).then_some(Ours { item, marker, text })
        })
        .collect();
    ours.sort_by_key(|o| number(&o.item));
    ours
}

fn is_identity(user: &User, identity: &Identity) -> bool {
    user.login.eq_ignore_ascii_case(&identity.login) && (!identity.is_bot || user.kind == "Bot")
}

/// `body` under the marker `mine`; an error naming `what` (the comment, the
/// drift issue) when that is over GitHub's limit.
pub(super) fn composed(mine: &Marker, body: &str, what: &str) -> Result<String, GitHubError> {
    let full = compose(mine, body);
    let chars = full.chars().count();
    if chars > MAX_COMMENT_CHARS {
        return Err(GitHubError::Invalid(format!(
            "{what} for suite {:?} is {chars} characters, over GitHub's {MAX_COMMENT_CHARS}; shorten the report",
            mine.suite
        )));
    }
    Ok(full)
}

/// POSTs `payload` to `path`, a new `T` marked `mine` (`what` in errors),
/// and gives its `url`. After a failure whose outcome is unknown, `list`
/// re-lists ours and the one marked `mine` already there ends it; else it
/// POSTs again, at most [`MAX_POSTS`] times.
pub(super) fn post_once<T: DeserializeOwned>(
    gh: &GitHub,
    path: &str,
    payload: &serde_json::Value,
    what: &str,
    mine: &Marker,
    url: impl Fn(T) -> String,
    list: impl Fn() -> Result<Vec<Ours<T>>, GitHubError>,
) -> Result<String, GitHubError> {
    let mut last_error = None;
    for _ in 0..MAX_POSTS {
        match gh.send(Method::POST, path, Some(payload)) {
            Ok(response) => return Ok(url(response.json(what)?)),
            Err(e @ GitHubError::Ambiguous { .. }) => {
                if let Some(found) = list()?.into_iter().find(|o| &o.marker == mine) {
                    return Ok(url(found.item));
                }
                last_error = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    Err(last_error.expect("at least one POST was tried"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bots_match_by_login_and_type() {
        let bot = Identity {
            login: "github-actions[bot]".into(),
            is_bot: true,
        };
        let user = |login: &str, kind: &str| User {
            login: login.into(),
            kind: kind.into(),
        };
        assert!(is_identity(&user("github-actions[bot]", "Bot"), &bot));
        assert!(!is_identity(&user("github-actions[bot]", "User"), &bot));
        assert!(!is_identity(&user("mallory", "User"), &bot));
    }
}
