//! `benchgate action` end to end against the fake GitHub REST server (issue 5,
//! point 7): the binary runs exactly as the container runs it, with the
//! environment only: `INPUT_*` with dashes, `GITHUB_*` context, an event payload
//! file, a `/github/workspace`-like `GITHUB_WORKSPACE`, `GITHUB_OUTPUT` and
//! `GITHUB_STEP_SUMMARY` files, and `GITHUB_API_URL` pointing at the fake.
//!
//! One flow: a push to main stores the baseline on the fake's `benchgate-data`
//! branch; a pull request compares with it and creates the sticky comment; a
//! synchronize of the same PR (`comment: on-change`) updates that comment; a
//! fork's measure run plus a `workflow_run` report resolve the PR through the
//! API and comment on it. The token appears in no output, file or comment.

use crate::common;
use crate::github;

use std::path::{Path, PathBuf};

use benchgate::baseline::index::{Index, V1Layout};
use benchgate::results::RunResults;
use common::action_env::{self, ActionEnv, ActionFiles, ActionRun, HOSTILE};
use github::fake::{FakeGitHub, REPO};
use github::workflow::{
    add_bot_token, comments_on, event, marker, open_pull, pr_event, stored_file,
};
use serde_json::Value;

/// A secret-looking token the fake knows as the workflow's bot.
const TOKEN: &str = "ghs_e2eSecretToken4f2a9c0b7d1e3f5a6b8c";
const BASE_SHA: &str = "1111111111111111111111111111111111111111";
const HEAD_1: &str = "2222222222222222222222222222222222222222";
const HEAD_2: &str = "5555555555555555555555555555555555555555";
const FORK_HEAD: &str = "3333333333333333333333333333333333333333";
/// Test knob: the mock driver (see `benchgate::knobs::MOCK_LATENCIES_VAR`).
const MOCK: (&str, &str) = ("BENCHGATE_TEST_MOCK_LATENCIES_US", "2000");

/// 1 client, 1 scenario, 8 rounds of 150 ms: enough trials to show an A/A
/// pass on a loaded machine even where nothing is compared during the run
/// (the fork-safe split's measure step); a pull request's run compared with
/// the stored one buys rounds (looks after 8 and 16) while it is undecided.
const SUITE_RUN: &str = r#"
[run]
rounds = 8
max_rounds = 16
budget = "60s"
warmup = "50ms"
duration = "150ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1

"#;

/// The suite, under the mock's A/A gate ([`common::MOCK_AA_GATE`]).
fn suite() -> String {
    format!("{SUITE_RUN}{}", common::MOCK_AA_GATE)
}

/// A fake runner: the fake GitHub, a workspace, output and summary files.
struct Runner {
    fake: FakeGitHub,
    env: ActionEnv,
}

impl Runner {
    fn new() -> Runner {
        let fake = FakeGitHub::start();
        add_bot_token(&fake, TOKEN);
        {
            let mut state = fake.state.lock().unwrap();
            state.pulls.push(pull(42, HEAD_1, REPO));
            state.pulls.push(pull(43, FORK_HEAD, "stranger/app"));
            state.commit_pulls.insert(FORK_HEAD.into(), vec![43]);
        }
        let r = Runner {
            fake,
            env: ActionEnv::new("github/workspace"),
        };
        std::fs::write(r.workspace().join("benchgate.toml"), suite()).unwrap();
        r
    }

    fn workspace(&self) -> PathBuf {
        self.env.workspace()
    }

    /// Runs `benchgate action` with the environment only.
    fn action(&self, event: &str, payload: &Value, env: &[(&str, &str)]) -> ActionRun {
        let files = ActionFiles::new(&self.env, "github_output", "step_summary");
        let mut cmd = self.env.command(event, &payload.to_string(), REPO, &files);
        cmd.env("GITHUB_API_URL", &self.fake.url)
            .env("INPUT_CONFIG", "benchgate.toml")
            .env("INPUT_COMMENT", "always")
            .env("INPUT_FAIL-ON-REGRESSION", "true")
            .env(MOCK.0, MOCK.1);
        let run = action_env::run(cmd, env, &files);
        self.assert_token_nowhere(&run);
        run
    }

    /// The fork-safe split: PR #43's measure run (no token), then the
    /// `workflow_run` report, with the fake's request log cleared in between;
    /// both succeed. Returns the report run.
    fn fork_measure_then_report(&self) -> ActionRun {
        self.fork_measure();
        self.fake.clear_requests();
        let report = self.fork_report();
        assert_eq!(report.code(), 0, "{}", report.log());
        report
    }

    /// PR #43's measure run (no token), which succeeds; returns its results file.
    fn fork_measure(&self) -> PathBuf {
        let measure = self.action(
            "pull_request",
            &event("pull_request_fork.json"),
            &[
                ("GITHUB_REF", "refs/pull/43/merge"),
                ("GITHUB_SHA", FORK_HEAD),
                ("GITHUB_RUN_ID", "103"),
                ("INPUT_MODE", "measure"),
            ],
        );
        assert_eq!(measure.code(), 0, "{}", measure.log());
        assert_eq!(measure.expect_output("verdict"), "measured");
        PathBuf::from(measure.expect_output("results-path"))
    }

    /// The `workflow_run` report of PR #43's measure run.
    fn fork_report(&self) -> ActionRun {
        self.action(
            "workflow_run",
            &event("workflow_run.json"),
            &[
                ("GITHUB_REF", "refs/heads/main"),
                ("GITHUB_SHA", BASE_SHA),
                ("GITHUB_RUN_ID", "104"),
                ("INPUT_GITHUB-TOKEN", TOKEN),
            ],
        )
    }

    /// The token is only on the `::add-mask::` line: in no other output, in no
    /// file under the runner's directory, in nothing the fake stored.
    fn assert_token_nowhere(&self, run: &ActionRun) {
        run.assert_only_masked(TOKEN);
        for file in files(self.env.dir.path()) {
            let bytes = std::fs::read(&file).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(TOKEN),
                "the token is in {}",
                file.display()
            );
        }
        let state = self.fake.state.lock().unwrap();
        for (_, comment) in &state.comments {
            assert!(!comment.to_string().contains(TOKEN));
        }
        for files in state.branches.values() {
            for bytes in files.values() {
                assert!(!String::from_utf8_lossy(bytes).contains(TOKEN));
            }
        }
    }
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// An open pull request into main, based on `BASE_SHA`.
fn pull(number: u64, head: &str, head_repo: &str) -> Value {
    let mut p = open_pull(number, head, head_repo);
    p["base"]["sha"] = BASE_SHA.into();
    p
}

#[test]
fn push_pull_request_synchronize_and_report_against_the_fake_github() {
    let r = Runner::new();

    // (a) A push to main stores the baseline on the data branch (created).
    let push = r.action(
        "push",
        &event("push_main.json"),
        &[
            ("GITHUB_REF", "refs/heads/main"),
            ("GITHUB_SHA", BASE_SHA),
            ("GITHUB_RUN_ID", "100"),
            ("INPUT_GITHUB-TOKEN", TOKEN),
        ],
    );
    assert_eq!(push.code(), 0, "{}", push.log());
    assert_eq!(push.expect_output("verdict"), "no_baseline");
    let index = stored_file(&r.fake, "baselines/main/index.json")
        .expect("the push stored no index on the data branch");
    let index = Index::parse(&index, "index.json", "main", V1Layout::DataBranch).unwrap();
    assert_eq!(index.entries.len(), 1, "{index:?}");
    assert_eq!(index.entries[0].sha, BASE_SHA);
    let stored = stored_file(
        &r.fake,
        &format!("baselines/main/{}", index.entries[0].file),
    )
    .expect("the indexed results file is on the data branch");
    let stored = RunResults::parse_bytes(&stored, "stored").unwrap();
    assert_eq!(stored.run_id, index.entries[0].run_id);
    assert_eq!(r.fake.count("POST", "/git/refs"), 1);
    assert!(comments_on(&r.fake, 42).is_empty());

    // (b) The pull request compares with it and creates exactly one sticky comment.
    let pr = r.action(
        "pull_request",
        &pr_event("opened", HEAD_1),
        &[
            ("GITHUB_REF", "refs/pull/42/merge"),
            ("GITHUB_SHA", HEAD_1),
            ("GITHUB_RUN_ID", "101"),
            ("INPUT_GITHUB-TOKEN", TOKEN),
        ],
    );
    assert_eq!(pr.code(), 0, "{}", pr.log());
    assert_eq!(pr.expect_output("verdict"), "pass", "{}", pr.log());
    assert_eq!(pr.expect_output("regressions"), "0");
    pr.expect_output("improvements").parse::<u32>().unwrap();
    let comments = comments_on(&r.fake, 42);
    assert_eq!(comments.len(), 1, "{comments:?}");
    let (id, url, body) = comments[0].clone();
    let m = marker(&body);
    assert_eq!((m.head.as_str(), m.run.as_str()), (HEAD_1, "101"));
    assert!(body.contains("| change [CI] |"), "{body}");
    assert!(body.contains(r"| **throughput\_rps** |"), "{body}");
    assert!(
        body.contains("the stored run of commit `111111111111` of main"),
        "{body}"
    );
    assert_eq!(pr.expect_output("comment-url"), url);
    let results = PathBuf::from(pr.expect_output("results-path"));
    assert!(results.starts_with(r.workspace()), "{}", results.display());
    RunResults::read(&results).unwrap();
    let report = std::fs::read_to_string(pr.expect_output("report-path")).unwrap();
    assert!(report.contains("| change [CI] |"), "{report}");
    assert!(pr.summary.contains("benchgate"), "{}", pr.summary);
    assert!(pr.summary.contains("| change [CI] |"), "{}", pr.summary);
    let index_after = stored_file(&r.fake, "baselines/main/index.json").unwrap();
    let index_after =
        Index::parse(&index_after, "index.json", "main", V1Layout::DataBranch).unwrap();
    assert_eq!(index_after.entries.len(), 1, "a PR run wrote the baseline");

    // (c) A new head (synchronize, `comment: on-change`): the same comment is
    // updated whether or not anything changed; still exactly one.
    r.fake.state.lock().unwrap().pulls[0]["head"]["sha"] = HEAD_2.into();
    let sync = r.action(
        "pull_request",
        &pr_event("synchronize", HEAD_2),
        &[
            ("GITHUB_REF", "refs/pull/42/merge"),
            ("GITHUB_SHA", HEAD_2),
            ("GITHUB_RUN_ID", "102"),
            ("INPUT_GITHUB-TOKEN", TOKEN),
            ("INPUT_COMMENT", "on-change"),
        ],
    );
    assert_eq!(sync.code(), 0, "{}", sync.log());
    let comments = comments_on(&r.fake, 42);
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0].0, id);
    let m = marker(&comments[0].2);
    assert_eq!((m.head.as_str(), m.run.as_str()), (HEAD_2, "102"));
    assert_eq!(sync.expect_output("comment-url"), url);
    assert_eq!(r.fake.count("POST", "/issues/42/comments"), 1);

    // (d) The fork-safe split: measure without a token, then report from
    // workflow_run, which finds PR #43 through the API and comments there.
    let report = r.fork_measure_then_report();
    assert_eq!(
        r.fake
            .count("GET", &format!("/repos/{REPO}/commits/{FORK_HEAD}/pulls")),
        1
    );
    let comments = comments_on(&r.fake, 43);
    assert_eq!(comments.len(), 1, "{comments:?}");
    let m = marker(&comments[0].2);
    assert_eq!((m.head.as_str(), m.run.as_str()), (FORK_HEAD, "104"));
    assert!(comments[0].2.contains("| change [CI] |"));
    assert_eq!(report.expect_output("comment-url"), comments[0].1);
    assert_eq!(report.expect_output("verdict"), "pass", "{}", report.log());
    assert_eq!(comments_on(&r.fake, 42).len(), 1);
    assert_eq!(
        r.fake.count("PUT", "/contents/"),
        0,
        "report mode wrote the store"
    );
}

/// The fork-safe split with `[compare]` in the config: `report` compares the
/// artifact side by side as its comparison plan says (the two clients of the
/// measured run, paired by round), never with the stored baseline.
#[test]
fn the_split_report_compares_side_by_side_when_the_config_says_so() {
    let r = Runner::new();
    let side_by_side = suite().replace(
        "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n",
        "[[client]]\nname = \"base\"\nkind = \"hyper\"\n\n[[client]]\nname = \"head\"\nkind = \"hyper\"\n\n[compare]\nbaseline_client = \"base\"\n",
    );
    assert_ne!(side_by_side, suite());
    std::fs::write(r.workspace().join("benchgate.toml"), side_by_side).unwrap();
    r.fork_measure_then_report();
    let comments = comments_on(&r.fake, 43);
    assert_eq!(comments.len(), 1, "{comments:?}");
    let body = &comments[0].2;
    assert!(body.contains("side by side"), "{body}");
    assert!(body.contains("head vs base"), "{body}");
    assert!(!body.contains("none stored"), "{body}");
    assert_eq!(
        r.fake.count("GET", "/contents/"),
        0,
        "a side-by-side report read the store"
    );
}

/// Issue 17, point 2: a fork's results file whose cell names, failure reasons
/// and keys hold workflow commands. Report mode (the job with the write
/// token) prints none of them outside a stop-commands fence, on stdout or
/// stderr: the names and reasons are fenced (the comparison) or escaped (the
/// annotations), the unknown key is quoted by an error, prefixed and escaped.
#[test]
fn a_forks_results_file_holding_workflow_commands_prints_none() {
    let r = Runner::new();
    let path = r.fork_measure();
    let measured: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();

    let mut doc = measured.clone();
    for cell in doc["results"].as_array_mut().unwrap() {
        cell["scenario"] = format!("get-22b{HOSTILE}").into();
        cell["client"] = format!("hyper{HOSTILE}").into();
        for trial in cell["trials"].as_array_mut().unwrap() {
            trial["failure"] = HOSTILE.into();
            trial["metrics"] = Value::Null;
        }
    }
    std::fs::write(&path, doc.to_string()).unwrap();
    let report = r.fork_report();
    // Every trial "failed": the gate fails, with annotations naming the cell.
    assert_eq!(report.code(), 1, "{}", report.log());
    assert_eq!(report.expect_output("verdict"), "fail");
    let stdout = String::from_utf8_lossy(&report.output.stdout);
    assert!(
        stdout.contains(
            "::error title=benchgate%3A get-22bx%0A%3A%3Aset-output name=verdict%3A%3Apwned"
        ),
        "{}",
        report.log()
    );
    assert_eq!(report.injected(), Vec::<String>::new(), "{}", report.log());

    let mut doc = measured;
    doc["results"][0][HOSTILE] = 1.into();
    std::fs::write(&path, doc.to_string()).unwrap();
    let report = r.fork_report();
    assert_eq!(report.code(), 2, "{}", report.log());
    let log = report.log();
    assert!(
        log.contains("unknown field") && log.contains("pwned"),
        "{log}"
    );
    assert_eq!(report.injected(), Vec::<String>::new(), "{log}");
}

/// Issue 17, point 4: a push on main whose reads of its own writes answer 404
/// for a while (replication lag) still stores its baseline; a pull request
/// whose `data-branch` is mistyped gets a neutral result and a `::warning`
/// naming the branch and the input to fix, and creates nothing.
#[test]
fn replication_lag_and_a_mistyped_data_branch_against_the_fake_github() {
    let r = Runner::new();
    r.fake.state.lock().unwrap().replication_lag = 2;
    let push = r.action(
        "push",
        &event("push_main.json"),
        &[
            ("GITHUB_REF", "refs/heads/main"),
            ("GITHUB_SHA", BASE_SHA),
            ("GITHUB_RUN_ID", "100"),
            ("INPUT_GITHUB-TOKEN", TOKEN),
        ],
    );
    assert_eq!(push.code(), 0, "{}", push.log());
    let lagged = r.fake.state.lock().unwrap().lagging.clone();
    assert_eq!(
        lagged.get("benchgate-data:baselines/main/index.json"),
        Some(&0),
        "the read-back did not meet the lag: {lagged:?}"
    );
    assert!(stored_file(&r.fake, "baselines/main/index.json").is_some());

    let pr = r.action(
        "pull_request",
        &pr_event("opened", HEAD_1),
        &[
            ("GITHUB_REF", "refs/pull/42/merge"),
            ("GITHUB_SHA", HEAD_1),
            ("GITHUB_RUN_ID", "101"),
            ("INPUT_GITHUB-TOKEN", TOKEN),
            ("INPUT_DATA-BRANCH", "benchgate-dta"),
        ],
    );
    assert_eq!(pr.code(), 0, "{}", pr.log());
    assert_eq!(pr.expect_output("verdict"), "no_baseline", "{}", pr.log());
    let stderr = String::from_utf8_lossy(&pr.output.stderr);
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("::warning title=benchgate%3A no data branch::"))
        .unwrap_or_else(|| panic!("no data-branch warning:\n{}", pr.log()));
    assert!(
        warning.contains("\"benchgate-dta\" does not exist") && warning.contains("`data-branch`"),
        "{warning}"
    );
    // The comment's reader is told too, not only the log's.
    let comments = comments_on(&r.fake, 42);
    let body = &comments.last().expect("no comment").2;
    assert!(body.contains("> **Note:**"), "{body}");
    assert!(body.contains("benchgate-dta"), "{body}");
    assert_eq!(
        r.fake.count("POST", "/git/refs"),
        1,
        "a PR created a branch"
    );
}
