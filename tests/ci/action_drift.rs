//! The nightly drift check end to end (issue 18, point 3): `benchgate action`
//! on `schedule` against the fake GitHub, its data branch holding a history
//! of real A/A noise (fixtures/noise, resampled) with a planted +10% shift of
//! CPU per request. With `drift-issue: true` one sticky issue is opened on
//! drift, updated on the next night, and closed once the series is back; a
//! copied marker in someone else's issue is ignored; the job summary has the
//! trend chart; the step fails on drift only with `fail-on-drift`. The token
//! appears in no output.

use crate::common;
use crate::github;

use std::sync::Arc;

use benchgate::baseline::{BaselineStore, GitHubStore};
use common::action_env::{self, ActionEnv, ActionFiles, ActionRun};
use common::drift::{run, sha, shuffled, Noise, Planted};
use github::client::{client, repo};
use github::fake::{FakeGitHub, REPO};
use github::fake_issues::new_issue;
use github::workflow::{add_bot_token, comments_on, event, marker, open_pull, pr_event};
use serde_json::{json, Value};

const TOKEN: &str = "ghs_driftSecretToken7b1e9d4c2a0f3e5d6c8b";
/// Test knob: the mock driver (see `benchgate::knobs::MOCK_LATENCIES_VAR`).
const MOCK: (&str, &str) = ("BENCHGATE_TEST_MOCK_LATENCIES_US", "2000");

/// The nightly suite: one cell, the stored history's.
const SUITE: &str = r#"
[run]
rounds = 3
warmup = "50ms"
duration = "100ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
"#;

struct Nightly {
    fake: FakeGitHub,
    env: ActionEnv,
    noise: Vec<Noise>,
    /// Runs stored so far.
    stored: usize,
}

impl Nightly {
    fn new() -> Nightly {
        let fake = FakeGitHub::start();
        add_bot_token(&fake, TOKEN);
        let env = ActionEnv::new("github/workspace");
        std::fs::write(env.workspace().join("benchgate.toml"), SUITE).unwrap();
        Nightly {
            fake,
            env,
            noise: shuffled("hyper", 5),
            stored: 0,
        }
    }

    /// Stores `n` more pushes to main, CPU per request `1 + by` times its
    /// noise (each with a client of its own, as each push job has).
    fn push(&mut self, n: usize, by: f64) {
        for _ in 0..n {
            let i = self.stored;
            let shift = Some(Planted { at: 0, by });
            let results = run(i, self.noise[i % self.noise.len()], shift);
            let store = GitHubStore::new(Arc::new(client(&self.fake, TOKEN)), repo());
            store.store("main", &sha(i), &results, 100).unwrap();
            self.stored += 1;
        }
    }

    fn schedule(&self, run_id: &str, env: &[(&str, &str)]) -> ActionRun {
        let mut all = vec![
            ("GITHUB_REF", "refs/heads/main".to_string()),
            ("GITHUB_SHA", sha(self.stored - 1)),
        ];
        all.extend(env.iter().map(|(k, v)| (*k, v.to_string())));
        self.action("schedule", &event("schedule.json"), run_id, &all)
    }

    /// `benchgate action` on `name` with `payload`, the token and the
    /// suite, with `env` added.
    fn action(
        &self,
        name: &str,
        payload: &Value,
        run_id: &str,
        env: &[(&str, String)],
    ) -> ActionRun {
        let files = ActionFiles::new(&self.env, "github_output", "step_summary");
        let mut cmd = self.env.command(name, &payload.to_string(), REPO, &files);
        cmd.env("GITHUB_API_URL", &self.fake.url)
            .env("GITHUB_RUN_ID", run_id)
            .env("INPUT_CONFIG", "benchgate.toml")
            .env("INPUT_GITHUB-TOKEN", TOKEN)
            .env("INPUT_BASELINE-BRANCH", "main")
            .env("INPUT_FAIL-ON-REGRESSION", "false")
            .env("INPUT_DRIFT-ISSUE", "true")
            .env(MOCK.0, MOCK.1);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let run = action_env::run(cmd, &env, &files);
        run.assert_only_masked(TOKEN);
        assert!(!run.summary.contains(TOKEN) && !run.outputs.contains(TOKEN));
        run
    }

    /// Issues by the workflow's bot: (number, state, title, body).
    fn our_issues(&self) -> Vec<(u64, String, String, String)> {
        let state = self.fake.state.lock().unwrap();
        state
            .issues
            .iter()
            .filter(|i| i["user"]["login"] == "github-actions[bot]")
            .map(|i| {
                let s = |f: &str| i[f].as_str().unwrap_or_default().to_string();
                (
                    i["number"].as_u64().unwrap(),
                    s("state"),
                    s("title"),
                    s("body"),
                )
            })
            .collect()
    }
}

#[test]
fn the_drift_issue_is_opened_on_drift_updated_on_the_next_night_and_closed_when_it_is_gone() {
    let mut n = Nightly::new();
    // 25 pushes at the old level, 15 at +10% CPU per request.
    n.push(25, 0.0);
    n.push(15, 0.10);
    // Someone else's issue carrying our marker is never ours.
    let copied = format!(
        "<!-- benchgate:suite=benchgate.toml head={} run=1 -->\nnot ours",
        sha(0)
    );
    new_issue(
        &mut n.fake.state.lock().unwrap(),
        "mallory",
        "User",
        &json!({ "title": "copied marker", "body": copied }),
    );

    // Night 1: drift (CPU per request up, throughput down); one issue
    // opened; the step passes (no fail-on-drift).
    let night = n.schedule("501", &[]);
    assert_eq!(night.code(), 0, "{}", night.log());
    assert_eq!(night.expect_output("drifting"), "2", "{}", night.summary);
    let issues = n.our_issues();
    assert_eq!(issues.len(), 1, "{issues:?}");
    let (number, state, title, body) = issues[0].clone();
    assert_eq!(
        (state.as_str(), title.as_str()),
        ("open", "benchgate: 2 drifting series on main")
    );
    let m = marker(&body);
    assert_eq!(
        (m.suite.as_str(), m.head.as_str(), m.run.as_str()),
        ("benchgate.toml", sha(39).as_str(), "501")
    );
    assert!(
        body.contains("🔴 worse, drifting") && body.contains(&format!("`{}`", &sha(25)[..12])),
        "{body}"
    );
    let url = night.expect_output("drift-issue-url");
    assert_eq!(url, format!("https://github.com/{REPO}/issues/{number}"));
    // The job summary: the report with the trend chart (history and its
    // segment means).
    let chart = &night.summary[night.summary.find("```mermaid").expect("no trend chart")..];
    assert!(
        chart.contains("get-22b / hyper: cpu_us_per_request"),
        "{chart}"
    );
    assert_eq!(
        chart[..chart[3..].find("```").unwrap()]
            .matches("    line [")
            .count(),
        2
    );
    assert!(String::from_utf8_lossy(&night.output.stdout)
        .contains("::warning title=benchgate%3A drift::2 series of main drift"));

    // Night 2: still drifting (3 more pushes); the same issue, updated;
    // with fail-on-drift the step fails.
    n.push(3, 0.10);
    let night = n.schedule("502", &[("INPUT_FAIL-ON-DRIFT", "true")]);
    assert_eq!(night.code(), 1, "{}", night.log());
    assert!(String::from_utf8_lossy(&night.output.stdout)
        .contains("::error title=benchgate%3A drift::"));
    let issues = n.our_issues();
    assert_eq!(issues.len(), 1, "{issues:?}");
    let (same, state, _, updated) = issues[0].clone();
    assert_eq!((same, state.as_str()), (number, "open"));
    assert_ne!(updated, body, "updated");
    assert_eq!(
        (marker(&updated).run.as_str(), marker(&updated).head),
        ("502", sha(42))
    );
    assert_eq!(night.expect_output("drift-issue-url"), url);

    // The series comes back: the newest change point is for the better, so
    // nothing drifts; the issue is closed with the report as its last word.
    n.push(20, 0.0);
    let night = n.schedule("503", &[("INPUT_FAIL-ON-DRIFT", "true")]);
    assert_eq!(night.code(), 0, "{}", night.log());
    assert_eq!(night.expect_output("drifting"), "0");
    let issues = n.our_issues();
    assert_eq!(issues.len(), 1, "{issues:?}");
    let (same, state, title, last) = issues[0].clone();
    assert_eq!(
        (same, state.as_str(), title.as_str()),
        (number, "closed", "benchgate: no drift on main")
    );
    assert!(
        last.contains("no drift") && last.contains("better"),
        "{last}"
    );
    // Mallory's issue is untouched.
    let state = n.fake.state.lock().unwrap();
    let theirs: Vec<&Value> = state
        .issues
        .iter()
        .filter(|i| i["user"]["login"] == "mallory")
        .collect();
    assert_eq!(
        (theirs.len(), theirs[0]["body"].as_str()),
        (1, Some(copied.as_str()))
    );
    drop(state);

    // A night without drift and no open issue of ours writes none.
    let before = n.fake.count("POST", "/issues");
    let night = n.schedule("504", &[]);
    assert_eq!(night.code(), 0, "{}", night.log());
    assert_eq!(n.fake.count("POST", "/issues"), before);
    assert_eq!(n.our_issues().len(), 1);
}

/// The pull request's comment charts the base branch's last stored values of
/// each gating metric beside this run's (issue 18, point 4), inside the
/// charts' `<details>` block, within the comment's size.
#[test]
fn the_pull_request_comment_charts_the_base_branchs_trend() {
    let mut n = Nightly::new();
    n.push(25, 0.0);
    let head = "7".repeat(40);
    let mut pull = open_pull(42, &head, REPO);
    pull["base"]["sha"] = sha(24).into();
    n.fake.state.lock().unwrap().pulls.push(pull);
    let mut payload = pr_event("opened", &head);
    payload["pull_request"]["base"]["sha"] = sha(24).into();
    let env = [
        ("GITHUB_REF", "refs/pull/42/merge".to_string()),
        ("GITHUB_SHA", head.clone()),
    ];
    let pr = n.action("pull_request", &payload, "601", &env);
    assert_eq!(pr.code(), 0, "{}", pr.log());
    let comments = comments_on(&n.fake, 42);
    assert_eq!(comments.len(), 1, "{comments:?}");
    let body = &comments[0].2;
    assert!(body.chars().count() <= 65_536);
    let charts = &body[body.find("<summary>Charts").expect("no charts section")..];
    let charts = &charts[..charts.find("</details>").unwrap()];
    let chart = &charts[charts
        .find("get-22b / hyper: cpu_us_per_request history")
        .expect("no trend chart")..];
    let x_axis = chart
        .lines()
        .find(|l| l.trim_start().starts_with("x-axis"))
        .unwrap();
    // The newest 20 stored runs (TREND_RUNS), then this run.
    let want: Vec<String> = (5..25)
        .map(|i| format!("\"{}\"", &sha(i)[..7]))
        .chain(["\"this run\"".to_string()])
        .collect();
    assert_eq!(
        x_axis.trim(),
        format!("x-axis [{}]", want.join(", ")),
        "{chart}"
    );
    let line = chart
        .lines()
        .find(|l| l.trim_start().starts_with("line ["))
        .unwrap();
    assert_eq!(line.matches(',').count(), 20, "{line}");
    assert!(charts.contains("throughput_rps history"), "{charts}");
}
