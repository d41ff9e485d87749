//! The fake's side of a workflow run: the workflow's token known as the bot,
//! open pull requests, recorded event payloads moved to the fake's repository,
//! and what the run left there (comments, the data branch's files).

use benchgate::github::marker::Marker;
use serde_json::Value;

use super::fake::{fixture, Account, FakeGitHub, REPO};

/// The branch the GitHub baseline store writes to.
pub const DATA: &str = "benchgate-data";

/// Makes `token` the workflow's `GITHUB_TOKEN`: `github-actions[bot]`.
pub fn add_bot_token(fake: &FakeGitHub, token: &str) {
    let bot = Account {
        login: "github-actions[bot]".into(),
        kind: "Bot".into(),
        can_get_user: false,
        read_only: false,
    };
    fake.state
        .lock()
        .unwrap()
        .accounts
        .insert(token.into(), bot);
}

/// An open pull request into main as the API returns it.
pub fn open_pull(number: u64, head: &str, head_repo: &str) -> Value {
    let mut p = fixture("pull_request.json");
    p["number"] = number.into();
    p["state"] = "open".into();
    p["head"]["sha"] = head.into();
    p["head"]["repo"]["full_name"] = head_repo.into();
    p["base"]["ref"] = "main".into();
    p
}

/// A recorded event payload from `fixtures/events/`, moved to the fake's
/// repository (a pull request's base too; its head stays where it was).
pub fn event(name: &str) -> Value {
    let path = format!("{}/fixtures/events/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut payload: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    payload["repository"]["full_name"] = REPO.into();
    if payload.get("pull_request").is_some() {
        payload["pull_request"]["base"]["repo"]["full_name"] = REPO.into();
    }
    payload
}

/// A `pull_request` event (`action`) for a head commit of the fake's repository.
pub fn pr_event(action: &str, head: &str) -> Value {
    let mut payload = event("pull_request.json");
    payload["action"] = action.into();
    payload["pull_request"]["head"]["sha"] = head.into();
    payload["pull_request"]["head"]["repo"]["full_name"] = REPO.into();
    payload
}

/// The marker on a comment's first line.
pub fn marker(body: &str) -> Marker {
    Marker::parse(body)
        .unwrap_or_else(|| panic!("no benchgate marker on the first line of:\n{body}"))
        .0
}

/// Comments on issue `issue`: (id, html_url, body).
pub fn comments_on(fake: &FakeGitHub, issue: u64) -> Vec<(u64, String, String)> {
    let state = fake.state.lock().unwrap();
    state
        .comments
        .iter()
        .filter(|(n, _)| *n == issue)
        .map(|(_, c)| {
            (
                c["id"].as_u64().unwrap(),
                c["html_url"].as_str().unwrap().to_string(),
                c["body"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The data branch's file at `path`.
pub fn stored_file(fake: &FakeGitHub, path: &str) -> Option<Vec<u8>> {
    let state = fake.state.lock().unwrap();
    state.branches.get(DATA)?.get(path).cloned()
}
