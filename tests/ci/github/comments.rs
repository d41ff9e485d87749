//! Seeding and reading the fake's comments, and one upsert call.

use benchgate::github::marker::{compose, Marker};
use benchgate::github::{upsert_comment, CommentMode, CommentResult, GitHub, GitHubError};

use super::client::{client, repo};
use super::fake::FakeGitHub;
use super::fake_issues::new_comment;

pub const PR: u64 = 7;
pub const HEAD: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
pub const OLD_HEAD: &str = "1111111111111111111111111111111111111111";
pub const BOT: &str = "github-actions[bot]";

pub fn marked(suite: &str, head: &str, run: &str, body: &str) -> String {
    let marker = Marker {
        suite: suite.into(),
        head: head.into(),
        run: run.into(),
    };
    compose(&marker, body)
}

pub fn seed(fake: &FakeGitHub, login: &str, kind: &str, text: &str) -> u64 {
    let mut state = fake.state.lock().unwrap();
    new_comment(&mut state, PR, login, kind, text)["id"]
        .as_u64()
        .unwrap()
}

pub fn bodies(fake: &FakeGitHub) -> Vec<(u64, String, String)> {
    let state = fake.state.lock().unwrap();
    state
        .comments
        .iter()
        .map(|(_, c)| {
            let id = c["id"].as_u64().unwrap();
            let login = c["user"]["login"].as_str().unwrap().to_string();
            (id, login, c["body"].as_str().unwrap().to_string())
        })
        .collect()
}

/// Upserts suite `default`'s comment on [`PR`] for `head` with `gh`.
pub fn upsert_with(
    gh: &GitHub,
    head: &str,
    run: &str,
    body: &str,
    mode: CommentMode,
) -> Result<CommentResult, GitHubError> {
    upsert_comment(gh, &repo(), PR, "default", head, run, body, mode)
}

/// Upserts suite `default`'s comment on [`PR`] for [`HEAD`] with a client of
/// `token`, which must succeed.
pub fn upsert(
    fake: &FakeGitHub,
    token: &str,
    run: &str,
    body: &str,
    mode: CommentMode,
) -> CommentResult {
    upsert_with(&client(fake, token), HEAD, run, body, mode).unwrap()
}
