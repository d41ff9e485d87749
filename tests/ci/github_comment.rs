//! The sticky comment against the fake GitHub server (issue 5): pagination,
//! spoofed markers, identity, duplicates, stale runs, on-change, size limit,
//! and update-only (`comment: on-change` with nothing changed), through the
//! library and through the action's comment sink. The retry policy's tests are
//! in `github_retry.rs`.

use crate::github;

use benchgate::action::github::comment_sink;
use benchgate::github::marker::Marker;
use benchgate::github::target::{GithubTarget, Secret};
use benchgate::github::{update_comment, CommentMode, CommentResult};
use github::client::{client, repo};
use github::comments::{bodies, marked, seed, upsert, upsert_with, BOT, HEAD, OLD_HEAD, PR};
use github::fake::{fixture, FakeGitHub, REPO};

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
    let result = upsert_with(&gh, OLD_HEAD, "rerun-300", "stale", CommentMode::Always).unwrap();
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
fn an_oversized_body_is_an_error_before_any_request() {
    let fake = FakeGitHub::start();
    let gh = client(&fake, "actions-token");
    let body = "x".repeat(65_536);
    let err = upsert_with(&gh, HEAD, "1", &body, CommentMode::Always).unwrap_err();
    assert!(err.to_string().contains("65536"), "{err}");
    assert!(fake.requests().is_empty());
}

fn marker(head: &str, run: &str) -> Marker {
    Marker {
        suite: "default".into(),
        head: head.into(),
        run: run.into(),
    }
}

#[test]
fn update_only_rewrites_ours_and_never_creates_one() {
    let fake = FakeGitHub::start();
    fake.state
        .lock()
        .unwrap()
        .pulls
        .push(fixture("pull_request.json"));
    let spoof = marked("default", HEAD, "1", "spoofed");
    seed(&fake, "mallory", "User", &spoof);
    let gh = client(&fake, "actions-token");
    let none = update_comment(&gh, &repo(), PR, &marker(HEAD, "2"), "pass table").unwrap();
    assert!(
        matches!(none, CommentResult::Skipped(ref why) if why.contains("none is created")),
        "{none:?}"
    );
    assert_eq!(fake.count("POST", ""), 0);
    assert_eq!(bodies(&fake).len(), 1);

    // Ours, from an earlier head that regressed: rewritten in place for the new head.
    let ours = seed(
        &fake,
        BOT,
        "Bot",
        &marked("default", OLD_HEAD, "3", "regressed table"),
    );
    let updated = update_comment(&gh, &repo(), PR, &marker(HEAD, "4"), "pass table").unwrap();
    assert!(
        matches!(updated, CommentResult::Updated { ref url } if url.ends_with(&ours.to_string())),
        "{updated:?}"
    );
    let all = bodies(&fake);
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].2, marked("default", HEAD, "4", "pass table"));
    assert_eq!(all[0].2, spoof);

    // The same text again is left alone; an older run never overwrites.
    let same = update_comment(&gh, &repo(), PR, &marker(HEAD, "5"), "pass table\n").unwrap();
    assert!(matches!(same, CommentResult::Unchanged { .. }), "{same:?}");
    let older = update_comment(&gh, &repo(), PR, &marker(HEAD, "1"), "older").unwrap();
    assert!(
        matches!(older, CommentResult::Skipped(ref why) if why.contains("newer run")),
        "{older:?}"
    );
    assert_eq!(fake.count("PATCH", ""), 1);
    assert_eq!(fake.count("POST", ""), 0);
    assert_eq!(
        bodies(&fake)[1].2,
        marked("default", HEAD, "4", "pass table")
    );
}

#[test]
fn the_action_sink_updates_an_existing_comment_only() {
    let fake = FakeGitHub::start();
    let target = GithubTarget {
        api_url: fake.url.clone(),
        repository: REPO.into(),
        token: Secret::new("actions-token".into()),
        run_id: "20".into(),
        timeout: std::time::Duration::from_secs(300),
    };
    let sink = comment_sink(&target, PR, "default").unwrap();
    let skipped = sink.update_existing("pass table", HEAD).unwrap();
    assert!(matches!(skipped, CommentResult::Skipped(_)), "{skipped:?}");
    assert!(bodies(&fake).is_empty());
    assert_eq!(fake.count("POST", ""), 0);

    let ours = seed(
        &fake,
        BOT,
        "Bot",
        &marked("default", HEAD, "19", "regressed"),
    );
    let updated = sink.update_existing("pass table", HEAD).unwrap();
    assert_eq!(
        updated.url().map(|u| u.ends_with(&ours.to_string())),
        Some(true),
        "{updated:?}"
    );
    assert_eq!(
        bodies(&fake),
        vec![(
            ours,
            BOT.to_string(),
            marked("default", HEAD, "20", "pass table")
        )]
    );
    // A fork's read-only token: forbidden, reported as such (the action warns).
    let fork = GithubTarget {
        token: Secret::new("fork-token".into()),
        run_id: "21".into(),
        timeout: std::time::Duration::from_secs(300),
        ..target
    };
    let sink = comment_sink(&fork, PR, "default").unwrap();
    let forbidden = sink.update_existing("other table", HEAD).unwrap();
    assert!(
        matches!(forbidden, CommentResult::Forbidden(_)),
        "{forbidden:?}"
    );
}
