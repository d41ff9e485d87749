//! Base vs head (`--compare-base REF`, `[compare] base = "git"`): a command
//! client committed in a temporary git repository, measured at two commits in
//! one run from a git worktree of the base commit, head against base.

use crate::common;
use crate::github;

use std::process::{Output, Stdio};

use common::action_env::{self, ActionEnv, ActionFiles};
use common::git_repo::{config, Repo};
use github::fake::{FakeGitHub, REPO};
use github::workflow::{add_bot_token, comments_on, event, open_pull, pr_event};

fn log(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn head_slower_than_base_regresses_and_identical_commits_pass() {
    let slower = Repo::new(
        &[("benchgate.toml", &config("", "")), ("delay_ms.txt", "2")],
        &[("delay_ms.txt", "4")],
    );
    let out = slower.run(&["--compare-base", "HEAD^"]);
    assert_eq!(out.status.code(), Some(1), "{}", log(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("py@base"), "{}", log(&out));
    let results = benchgate::results::RunResults::read(&slower.results()).unwrap();
    let clients: Vec<_> = results.results.iter().map(|c| c.client.as_str()).collect();
    assert_eq!(clients, ["py", "py@base", "hyper"]);
    // The twins take turns running first (issue 29, point 4): in every two
    // rounds, each side once, as their trials' start times show.
    let started = |client: &str, round: u32| {
        let cell = results.cell_at("get", client, None).unwrap();
        let trial = cell.trials.iter().find(|t| t.round == round).unwrap();
        trial.started_at.clone().expect("started_at")
    };
    let rounds = results.cell_at("get", "py", None).unwrap().trials.len() as u32;
    let head_first: Vec<bool> = (1..=rounds)
        .map(|r| started("py", r) < started("py@base", r))
        .collect();
    assert!(rounds >= 6, "{head_first:?}");
    for (k, pair) in head_first.chunks_exact(2).enumerate() {
        assert_ne!(
            pair[0],
            pair[1],
            "rounds {} and {}: {head_first:?}",
            2 * k + 1,
            2 * k + 2
        );
    }
    assert_eq!(slower.worktrees(), 1, "the base checkout was left behind");

    // `[compare] base = "git"`: the base is HEAD^ by default.
    let same = Repo::new(
        &[
            ("benchgate.toml", &config("[compare]\nbase = \"git\"\n", "")),
            ("delay_ms.txt", "2"),
        ],
        &[("README.md", "only the docs changed\n")],
    );
    let out = same.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", log(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("base vs head:"), "{}", log(&out));
    assert_eq!(same.worktrees(), 1);
}

/// A pull request that loosens the gate in its own config is still gated by
/// the base commit's: the report names where the gate came from and what head
/// sets differently.
#[test]
fn the_gate_comes_from_the_base_commit() {
    let loose = config("", "").replace(
        "cpu_us_per_request = { fail = \"+300%\" }",
        "cpu_us_per_request = { fail = \"+300%\" }\nthroughput_rps = { fail = \"-90%\" }\nlatency_p50_us = { fail = \"+900%\" }\nlatency_p99_us = { fail = \"+900%\" }",
    );
    assert_ne!(loose, config("", ""));
    let repo = Repo::new(
        &[("benchgate.toml", &config("", "")), ("delay_ms.txt", "2")],
        &[("benchgate.toml", &loose), ("delay_ms.txt", "4")],
    );
    let out = repo.run(&["--compare-base", "HEAD^"]);
    assert_eq!(out.status.code(), Some(1), "{}", log(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("**Gate:** from `benchgate.toml` as of the base commit"),
        "{}",
        log(&out)
    );
    assert!(
        stderr.contains("`throughput_rps` fail -90%"),
        "{}",
        log(&out)
    );
    assert_eq!(repo.worktrees(), 1);
}

#[test]
fn a_base_that_does_not_build_is_neutral_and_a_missing_base_says_how_to_fetch_it() {
    // The setup needs a file that only head has: base fails to build.
    let setup = r#"setup = ["test", "-f", "built"]"#;
    let repo = Repo::new(
        &[
            ("benchgate.toml", &config("", setup)),
            ("delay_ms.txt", "2"),
        ],
        &[("built", "yes\n")],
    );
    let out = repo.run(&["--compare-base", "HEAD^"]);
    assert_eq!(out.status.code(), Some(0), "{}", log(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("no baseline") || stdout.contains("no_baseline"),
        "{}",
        log(&out)
    );
    assert_eq!(repo.worktrees(), 1);

    let out = repo.run(&["--compare-base", "0123456789abcdef0123456789abcdef01234567"]);
    assert_eq!(out.status.code(), Some(2), "{}", log(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not in this clone"), "{}", log(&out));
    assert!(stderr.contains("fetch-depth: 2"), "{}", log(&out));
}

#[test]
fn sigterm_mid_run_removes_the_base_checkout() {
    let repo = Repo::new(
        &[("benchgate.toml", &config("", "")), ("delay_ms.txt", "2")],
        &[("delay_ms.txt", "2.2")],
    );
    let mut child = repo
        .command(&["--compare-base", "HEAD^"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the checkout, then stop the run in its rounds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while repo.worktrees() < 2 {
        assert!(std::time::Instant::now() < deadline, "no base checkout");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert_eq!(repo.worktrees(), 1, "the base checkout was left behind");
}

/// The action on a pull request with `[compare] base = "git"`: the
/// checked-out commit against the pull request's base commit, in one run,
/// one comment naming both commits; no stored baseline is read.
#[test]
fn the_action_gates_a_pull_request_base_vs_head() {
    const TOKEN: &str = "ghs_baseVsHeadToken0a1b2c3d4e5f6a7b8c9d";
    let env = ActionEnv::new("github/workspace");
    let workspace = env.workspace();
    let repo = Repo::in_dir(&workspace);
    repo.write(&[
        ("client.py", common::git_repo::CLIENT),
        ("benchgate.toml", &config("[compare]\nbase = \"git\"\n", "")),
        ("delay_ms.txt", "2"),
    ]);
    repo.commit("base");
    repo.write(&[("delay_ms.txt", "4")]);
    repo.commit("head");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let base = repo.git(&["rev-parse", "HEAD^"]).trim().to_string();

    let fake = FakeGitHub::start();
    add_bot_token(&fake, TOKEN);
    fake.state
        .lock()
        .unwrap()
        .pulls
        .push(open_pull(42, &head, REPO));
    let mut payload = pr_event("opened", &head);
    payload["pull_request"]["base"]["sha"] = base.clone().into();

    // A push to main stored a baseline of the base commit earlier: the pull
    // request shows it beside the verdict, informative.
    let files = ActionFiles::new(&env, "github_output", "step_summary");
    let mut push_event = event("push_main.json");
    push_event["after"] = base.clone().into();
    let mut cmd = env.command("push", &push_event.to_string(), REPO, &files);
    cmd.env("GITHUB_API_URL", &fake.url)
        .env("GITHUB_REF", "refs/heads/main")
        .env("GITHUB_SHA", &base)
        .env("GITHUB_RUN_ID", "6")
        .env("INPUT_GITHUB-TOKEN", TOKEN);
    let push = action_env::run(cmd, &[], &files);
    assert_eq!(push.code(), 0, "{}", push.log());
    fake.clear_requests();

    let mut cmd = env.command("pull_request", &payload.to_string(), REPO, &files);
    cmd.env("GITHUB_API_URL", &fake.url)
        .env("GITHUB_REF", "refs/pull/42/merge")
        .env("GITHUB_SHA", &head)
        .env("GITHUB_RUN_ID", "7")
        .env("INPUT_GITHUB-TOKEN", TOKEN)
        .env("INPUT_COMMENT", "always")
        .env("INPUT_FAIL-ON-REGRESSION", "true");
    let run = action_env::run(cmd, &[], &files);
    run.assert_only_masked(TOKEN);
    assert_eq!(run.code(), 1, "{}", run.log());
    assert_eq!(run.expect_output("verdict"), "fail", "{}", run.log());
    let comments = comments_on(&fake, 42);
    assert_eq!(comments.len(), 1, "{comments:?}");
    let body = &comments[0].2;
    assert!(body.contains("base vs head"), "{body}");
    assert!(
        body.contains("**Gate:** from `benchgate.toml` as of the base commit"),
        "{body}"
    );
    assert!(body.contains(&format!("`{}`", &base[..12])), "{body}");
    assert!(body.contains(&format!("`{}`", &head[..12])), "{body}");
    // Names are escaped against @-mentions.
    assert!(body.contains("py vs py@\u{200d}base"), "{body}");
    // The stored baseline beside it, informative, never written to.
    assert!(
        body.contains(&format!(
            "Against the stored baseline of main (commit `{}`; informative, not gated)",
            &base[..12]
        )),
        "{body}"
    );
    assert_eq!(
        fake.count("PUT", "/contents/"),
        0,
        "a pull request wrote the store"
    );
    assert_eq!(repo.worktrees(), 1, "the base checkout was left behind");
}
