//! Seeding and reading the fake's comments, and one upsert call.

use benchgate::github::marker::{compose, Marker};
use benchgate::github::{upsert_comment, CommentMode, CommentResult};

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

pub fn upsert(
    fake: &FakeGitHub,
    token: &str,
    run: &str,
    body: &str,
    mode: CommentMode,
) -> CommentResult {
    let gh = client(fake, token);
    upsert_comment(&gh, &repo(), PR, "default", HEAD, run, body, mode).unwrap()
}
