//! The sticky comment against the fake GitHub server (issue 5): pagination,
//! spoofed markers, duplicates, stale runs, on-change, fork tokens, rate limits,
//! 422, and an ambiguous POST.

mod github;

use std::time::{Duration, Instant};

use benchgate::github::marker::{compose, Marker};
use benchgate::github::{upsert_comment, CommentMode, CommentResult, GitHubError};
use github::client::{client, repo};
use github::fake::{fixture, FakeGitHub, Fault, FaultAction};
use github::fake_issues::new_comment;

const PR: u64 = 7;
const HEAD: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const OLD_HEAD: &str = "1111111111111111111111111111111111111111";
const BOT: &str = "github-actions[bot]";

fn marked(suite: &str, head: &str, run: &str, body: &str) -> String {
    let marker = Marker {
        suite: suite.into(),
        head: head.into(),
        run: run.into(),
    };
    compose(&marker, body)
}

fn seed(fake: &FakeGitHub, login: &str, kind: &str, text: &str) -> u64 {
    let mut state = fake.state.lock().unwrap();
    new_comment(&mut state, PR, login, kind, text)["id"]
        .as_u64()
        .unwrap()
}

fn bodies(fake: &FakeGitHub) -> Vec<(u64, String, String)> {
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

fn upsert(
    fake: &FakeGitHub,
    token: &str,
    run: &str,
    body: &str,
    mode: CommentMode,
) -> CommentResult {
    let gh = client(fake, token);
    upsert_comment(&gh, &repo(), PR, "default", HEAD, run, body, mode).unwrap()
}

#[test]
fn finds_ours_on_the_third_page_of_250() {
    let fake = FakeGitHub::start();
    for i in 0..250 {
        if i == 240 {
            seed(
                &fake,
                BOT,
                "Bot",
                &marked("default", HEAD, "100", "old table"),
            );
        } else {
            seed(&fake, "reviewer", "User", &format!("comment {i}"));
        }
    }
    let result = upsert(
        &fake,
        "actions-token",
        "101",
        "new table",
        CommentMode::Always,
    );
    assert!(
        matches!(result, CommentResult::Updated { .. }),
        "{result:?}"
    );
    assert_eq!(fake.count("GET", "/issues/7/comments"), 3);
    assert_eq!(fake.count("POST", "/comments"), 0);
    let all = bodies(&fake);
    assert_eq!(all.len(), 250);
    assert_eq!(all[240].2, marked("default", HEAD, "101", "new table"));
}

#[test]
fn a_copied_marker_in_someone_elses_comment_is_ignored() {
    let fake = FakeGitHub::start();
    let spoof = marked("default", HEAD, "999", "pwned");
    seed(&fake, "mallory", "User", &spoof);
    // Same login text as the bot but a User account: not the bot either.
    seed(&fake, BOT, "User", &spoof);
    let result = upsert(&fake, "actions-token", "100", "table", CommentMode::Always);
    assert!(
        matches!(result, CommentResult::Created { .. }),
        "{result:?}"
    );
    let all = bodies(&fake);
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].2, spoof);
    assert_eq!(all[1].2, spoof);
}

#[test]
fn a_personal_token_identity_comes_from_get_user() {
    let fake = FakeGitHub::start();
    seed(
        &fake,
        BOT,
        "Bot",
        &marked("default", HEAD, "1", "the bot's"),
    );
    let mine = seed(
        &fake,
        "benchgate-ci",
        "User",
        &marked("default", HEAD, "1", "mine"),
    );
    let result = upsert(&fake, "pat-token", "2", "updated", CommentMode::Always);
    assert!(
        matches!(result, CommentResult::Updated { ref url } if url.ends_with(&mine.to_string())),
        "{result:?}"
    );
    assert_eq!(fake.count("GET", "/user"), 1);
    assert_eq!(
        bodies(&fake)[0].2,
        marked("default", HEAD, "1", "the bot's")
    );
}

#[test]
fn duplicates_converge_to_the_oldest() {
    let fake = FakeGitHub::start();
    let oldest = seed(&fake, BOT, "Bot", &marked("default", HEAD, "5", "a"));
    seed(&fake, "reviewer", "User", "nice");
    seed(&fake, BOT, "Bot", &marked("default", HEAD, "6", "b"));
    seed(&fake, BOT, "Bot", &marked("default", HEAD, "7", "c"));
    seed(
        &fake,
        BOT,
        "Bot",
        &marked("other-suite", HEAD, "7", "other suite"),
    );
    let result = upsert(&fake, "actions-token", "8", "d", CommentMode::Always);
    assert!(
        matches!(result, CommentResult::Updated { ref url } if url.ends_with(&oldest.to_string())),
        "{result:?}"
    );
    let all = bodies(&fake);
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(
        all[0],
        (oldest, BOT.to_string(), marked("default", HEAD, "8", "d"))
    );
    assert_eq!(all[2].2, marked("other-suite", HEAD, "7", "other suite"));
    assert_eq!(fake.count("DELETE", "/issues/comments/"), 2);
}

#[test]
fn an_older_run_never_overwrites_a_newer_one() {
    let fake = FakeGitHub::start();
    let newer = marked("default", HEAD, "200", "newer");
    seed(&fake, BOT, "Bot", &newer);
    let result = upsert(&fake, "actions-token", "150", "older", CommentMode::Always);
    assert!(
        matches!(result, CommentResult::Skipped(ref why) if why.contains("newer run")),
        "{result:?}"
    );
    assert_eq!(bodies(&fake)[0].2, newer);
    assert_eq!(fake.count("PATCH", ""), 0);
}

#[test]
fn a_run_for_a_head_the_pr_moved_past_does_not_overwrite() {
    let fake = FakeGitHub::start();
    fake.state
        .lock()
        .unwrap()
        .pulls
        .push(fixture("pull_request.json"));
    let current = marked("default", HEAD, "300", "current head");
    seed(&fake, BOT, "Bot", &current);
    // A re-run of an old workflow (same-ish run id, non-numeric to force the head check).
    let gh = client(&fake, "actions-token");
    let result = upsert_comment(
        &gh,
        &repo(),
        PR,
        "default",
        OLD_HEAD,
        "rerun-300",
        "stale",
        CommentMode::Always,
    )
    .unwrap();
    assert!(
        matches!(result, CommentResult::Skipped(ref why) if why.contains("moved on")),
        "{result:?}"
    );
    assert_eq!(bodies(&fake)[0].2, current);
}

#[test]
fn on_change_skips_an_identical_body() {
    let fake = FakeGitHub::start();
    let created = upsert(
        &fake,
        "actions-token",
        "1",
        "same table\n",
        CommentMode::OnChange,
    );
    assert!(
        matches!(created, CommentResult::Created { .. }),
        "{created:?}"
    );
    let again = upsert(
        &fake,
        "actions-token",
        "2",
        "same table\n",
        CommentMode::OnChange,
    );
    assert!(
        matches!(again, CommentResult::Unchanged { .. }),
        "{again:?}"
    );
    assert_eq!(fake.count("PATCH", ""), 0);
    let changed = upsert(
        &fake,
        "actions-token",
        "3",
        "new table\n",
        CommentMode::OnChange,
    );
    assert!(
        matches!(changed, CommentResult::Updated { .. }),
        "{changed:?}"
    );
    let always = upsert(
        &fake,
        "actions-token",
        "4",
        "new table\n",
        CommentMode::Always,
    );
    assert!(
        matches!(always, CommentResult::Updated { .. }),
        "{always:?}"
    );
    let never = upsert(&fake, "actions-token", "5", "x", CommentMode::Never);
    assert!(matches!(never, CommentResult::Skipped(_)), "{never:?}");
    assert_eq!(bodies(&fake).len(), 1);
}

#[test]
fn a_fork_token_gets_forbidden_without_retries_and_the_token_stays_secret() {
    let fake = FakeGitHub::start();
    let result = upsert(&fake, "fork-token", "1", "table", CommentMode::Always);
    assert!(
        matches!(result, CommentResult::Forbidden(ref why) if why.contains("not accessible")),
        "{result:?}"
    );
    assert_eq!(fake.count("POST", "/comments"), 1);
    assert_eq!(fake.count("GET", "/user"), 1);
    // A bad token fails cleanly, and neither URLs nor the error hold the token.
    let gh = client(&fake, "ghp_TopSecretValue42");
    let err = upsert_comment(
        &gh,
        &repo(),
        PR,
        "default",
        HEAD,
        "1",
        "t",
        CommentMode::Always,
    )
    .unwrap_err();
    assert!(
        matches!(err, GitHubError::Status { status: 401, .. }),
        "{err:?}"
    );
    for text in [err.to_string(), format!("{err:?}"), format!("{gh:?}")] {
        assert!(!text.contains("TopSecret"), "{text}");
    }
    for request in fake.requests() {
        assert!(
            !request.uri.contains("token") && !request.uri.contains("TopSecret"),
            "{}",
            request.uri
        );
        let auth = request
            .headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .unwrap();
        assert!(auth.1.starts_with("Bearer "));
    }
}

#[test]
fn rate_limits_honour_retry_after_and_the_reset_time() {
    let fake = FakeGitHub::start();
    fake.inject(Fault {
        method: "POST",
        path_contains: "/issues/7/comments".into(),
        times: 1,
        action: FaultAction::Respond {
            status: 403,
            headers: vec![("retry-after".into(), "1".into())],
            fixture: "rate_limit_secondary",
        },
    });
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    fake.inject(Fault {
        method: "GET",
        path_contains: "/issues/7/comments".into(),
        times: 1,
        action: FaultAction::Respond {
            status: 429,
            headers: vec![
                ("x-ratelimit-limit".into(), "5000".into()),
                ("x-ratelimit-remaining".into(), "0".into()),
                ("x-ratelimit-reset".into(), reset.to_string()),
            ],
            fixture: "rate_limit_primary",
        },
    });
    let start = Instant::now();
    let result = upsert(&fake, "actions-token", "1", "table", CommentMode::Always);
    assert!(
        matches!(result, CommentResult::Created { .. }),
        "{result:?}"
    );
    // retry-after: 1 s; the reset (now, +1 s of slack): about 1 s.
    assert!(
        start.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(fake.count("POST", "/comments"), 2);
    assert_eq!(fake.count("GET", "/issues/7/comments"), 2);
    assert_eq!(bodies(&fake).len(), 1);
}

#[test]
fn a_rate_limit_without_headers_backs_off_and_a_500_is_retried() {
    let fake = FakeGitHub::start();
    let respond = |status, fixture| FaultAction::Respond {
        status,
        headers: vec![],
        fixture,
    };
    fake.inject(Fault {
        method: "GET",
        path_contains: "/comments".into(),
        times: 2,
        action: respond(403, "rate_limit_secondary"),
    });
    fake.inject(Fault {
        method: "PATCH",
        path_contains: "/comments/".into(),
        times: 1,
        action: respond(500, "server_error"),
    });
    seed(&fake, BOT, "Bot", &marked("default", HEAD, "1", "a"));
    let result = upsert(&fake, "actions-token", "2", "b", CommentMode::Always);
    assert!(
        matches!(result, CommentResult::Updated { .. }),
        "{result:?}"
    );
    assert_eq!(fake.count("GET", "/comments"), 3);
    assert_eq!(fake.count("PATCH", "/comments/"), 2);
}

#[test]
fn a_422_is_never_retried() {
    let fake = FakeGitHub::start();
    fake.inject(Fault {
        method: "POST",
        path_contains: "/comments".into(),
        times: 5,
        action: FaultAction::Respond {
            status: 422,
            headers: vec![],
            fixture: "validation_failed",
        },
    });
    let gh = client(&fake, "actions-token");
    let err = upsert_comment(
        &gh,
        &repo(),
        PR,
        "default",
        HEAD,
        "1",
        "t",
        CommentMode::Always,
    )
    .unwrap_err();
    assert_eq!(err.status(), Some(422));
    assert!(err.to_string().contains("Body is too long"), "{err}");
    assert_eq!(fake.count("POST", "/comments"), 1);
}

#[test]
fn an_ambiguous_post_is_followed_by_a_relist_not_a_duplicate() {
    for action in [
        FaultAction::ApplyThenDelay(Duration::from_secs(3)),
        FaultAction::ApplyThenStatus(502),
    ] {
        let fake = FakeGitHub::start();
        fake.inject(Fault {
            method: "POST",
            path_contains: "/issues/7/comments".into(),
            times: 1,
            action,
        });
        let result = upsert(&fake, "actions-token", "1", "table", CommentMode::Always);
        assert!(
            matches!(result, CommentResult::Created { .. }),
            "{result:?}"
        );
        assert_eq!(bodies(&fake).len(), 1, "exactly one comment");
        assert_eq!(fake.count("POST", "/comments"), 1);
        assert_eq!(
            fake.count("GET", "/issues/7/comments"),
            2,
            "listed, posted, re-listed"
        );
    }
}

#[test]
fn an_oversized_body_is_an_error_before_any_request() {
    let fake = FakeGitHub::start();
    let gh = client(&fake, "actions-token");
    let body = "x".repeat(65_536);
    let err = upsert_comment(
        &gh,
        &repo(),
        PR,
        "default",
        HEAD,
        "1",
        &body,
        CommentMode::Always,
    )
    .unwrap_err();
    assert!(err.to_string().contains("65536"), "{err}");
    assert!(fake.requests().is_empty());
}
