//! Pull-request resolution for the fork-safe report mode against the fake:
//! by head sha and head repository from the API, never from an artifact.

use crate::github;

use benchgate::github::pull_for_head;
use github::client::{client, repo};
use github::fake::{fixture, FakeGitHub};

const HEAD: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const NEWER: &str = "9f2c1b7a0d4e5f60718293a4b5c6d7e8f9012345";

fn fake_with_pr(head: &str, listed_by_commit: bool) -> FakeGitHub {
    let fake = FakeGitHub::start();
    let mut pull = fixture("pull_request.json");
    pull["head"]["sha"] = head.into();
    let mut state = fake.state.lock().unwrap();
    state.pulls.push(pull);
    if listed_by_commit {
        state.commit_pulls.insert(HEAD.into(), vec![7]);
    }
    drop(state);
    fake
}

#[test]
fn finds_the_fork_pr_by_head_sha_and_repository() {
    let fake = fake_with_pr(HEAD, true);
    let gh = client(&fake, "actions-token");
    let pull = pull_for_head(&gh, &repo(), HEAD, "contributor/bench")
        .unwrap()
        .unwrap();
    assert_eq!(pull.number, 7);
    assert_eq!(pull.base_ref, "main");
    assert_eq!(pull.base_sha, "d6fde92930d4715a2b49857d24b940956b26d2d3");
    assert!(!pull.head_moved_on);
    // Same sha from another repository: not this PR.
    assert!(pull_for_head(&gh, &repo(), HEAD, "mallory/bench")
        .unwrap()
        .is_none());
}

#[test]
fn falls_back_to_open_pulls_when_the_commit_lists_none() {
    let fake = fake_with_pr(HEAD, false);
    let gh = client(&fake, "actions-token");
    let pull = pull_for_head(&gh, &repo(), HEAD, "Contributor/Bench")
        .unwrap()
        .unwrap();
    assert_eq!(pull.number, 7);
    assert_eq!(fake.count("GET", "/pulls?state=open"), 1);
}

#[test]
fn reports_a_head_that_moved_on() {
    let fake = fake_with_pr(NEWER, true);
    let gh = client(&fake, "actions-token");
    let pull = pull_for_head(&gh, &repo(), HEAD, "contributor/bench")
        .unwrap()
        .unwrap();
    assert!(pull.head_moved_on);
    assert_eq!(pull.head_sha, NEWER);
}

#[test]
fn rejects_a_malformed_sha() {
    let fake = FakeGitHub::start();
    let gh = client(&fake, "actions-token");
    assert!(pull_for_head(&gh, &repo(), "../../x", "a/b").is_err());
    assert!(fake.requests().is_empty());
}
