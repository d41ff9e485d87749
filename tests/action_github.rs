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

mod common;
mod github;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchgate::baseline::index::{Index, V1Layout};
use benchgate::github::marker::Marker;
use benchgate::results::RunResults;
use common::exe;
use common::outputs::output;
use github::fake::{fixture, Account, FakeGitHub, REPO};
use serde_json::Value;

/// A secret-looking token the fake knows as the workflow's bot.
const TOKEN: &str = "ghs_e2eSecretToken4f2a9c0b7d1e3f5a6b8c";
const DATA: &str = "benchgate-data";
const BASE_SHA: &str = "1111111111111111111111111111111111111111";
const HEAD_1: &str = "2222222222222222222222222222222222222222";
const HEAD_2: &str = "5555555555555555555555555555555555555555";
const FORK_HEAD: &str = "3333333333333333333333333333333333333333";
/// Debug-build-only mock driver (see `benchgate::action::TEST_MOCK_ENV`).
const MOCK: (&str, &str) = ("BENCHGATE_TEST_MOCK_LATENCIES_US", "2000");

/// 1 client, 1 scenario, 4 rounds of 150 ms: enough trials to compare.
const SUITE: &str = r#"
[run]
rounds = 4
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

# The mock driver sleeps: its CPU per request is scheduler noise (see tests/action.rs).
[gate]
cpu_us_per_request = { fail = "+200%" }
"#;

/// A fake runner: the fake GitHub, a workspace, output and summary files.
struct Runner {
    fake: FakeGitHub,
    dir: tempfile::TempDir,
}

struct Run {
    output: Output,
    outputs: String,
    summary: String,
}

impl Runner {
    fn new() -> Runner {
        let fake = FakeGitHub::start();
        {
            let mut state = fake.state.lock().unwrap();
            let bot = Account {
                login: "github-actions[bot]".into(),
                kind: "Bot".into(),
                can_get_user: false,
                read_only: false,
            };
            state.accounts.insert(TOKEN.into(), bot);
            state.pulls.push(pull(42, HEAD_1, REPO));
            state.pulls.push(pull(43, FORK_HEAD, "stranger/app"));
            state.commit_pulls.insert(FORK_HEAD.into(), vec![43]);
        }
        let r = Runner {
            fake,
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(r.workspace()).unwrap();
        std::fs::write(r.workspace().join("benchgate.toml"), SUITE).unwrap();
        r
    }

    fn workspace(&self) -> PathBuf {
        self.dir.path().join("github/workspace")
    }

    /// Runs `benchgate action` with the environment only.
    fn action(&self, event: &str, payload: &Value, env: &[(&str, &str)]) -> Run {
        let event_path = self.dir.path().join("event.json");
        std::fs::write(&event_path, payload.to_string()).unwrap();
        let out = self.dir.path().join("github_output");
        let summary = self.dir.path().join("step_summary");
        for f in [&out, &summary] {
            std::fs::write(f, "").unwrap();
        }
        let mut cmd = Command::new(exe());
        cmd.arg("action")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_EVENT_NAME", event)
            .env("GITHUB_EVENT_PATH", &event_path)
            .env("GITHUB_REPOSITORY", REPO)
            .env("GITHUB_API_URL", &self.fake.url)
            .env("GITHUB_OUTPUT", &out)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_WORKSPACE", self.workspace())
            .env("INPUT_CONFIG", "benchgate.toml")
            .env("INPUT_COMMENT", "always")
            .env("INPUT_FAIL-ON-REGRESSION", "true")
            .env(MOCK.0, MOCK.1)
            .current_dir(self.dir.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let output = cmd.output().unwrap();
        let run = Run {
            output,
            outputs: std::fs::read_to_string(&out).unwrap(),
            summary: std::fs::read_to_string(&summary).unwrap(),
        };
        self.assert_token_nowhere(&run);
        run
    }

    /// The token is only on the `::add-mask::` line: in no other output, in no
    /// file under the runner's directory, in nothing the fake stored.
    fn assert_token_nowhere(&self, run: &Run) {
        let stdout = String::from_utf8_lossy(&run.output.stdout);
        for line in stdout.lines().filter(|l| l.contains(TOKEN)) {
            assert_eq!(line, format!("::add-mask::{TOKEN}"), "{}", run.log());
        }
        assert!(
            !String::from_utf8_lossy(&run.output.stderr).contains(TOKEN),
            "{}",
            run.log()
        );
        for file in files(self.dir.path()) {
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

    /// The data branch's file at `path`.
    fn stored(&self, path: &str) -> Option<Vec<u8>> {
        let state = self.fake.state.lock().unwrap();
        state.branches.get(DATA)?.get(path).cloned()
    }

    /// Comments on issue `pr`: (id, html_url, body).
    fn comments(&self, pr: u64) -> Vec<(u64, String, String)> {
        let state = self.fake.state.lock().unwrap();
        state
            .comments
            .iter()
            .filter(|(issue, _)| *issue == pr)
            .map(|(_, c)| {
                (
                    c["id"].as_u64().unwrap(),
                    c["html_url"].as_str().unwrap().to_string(),
                    c["body"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

impl Run {
    fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    fn log(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.output.status.code(),
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }

    fn output(&self, name: &str) -> String {
        output(&self.outputs, name)
            .unwrap_or_else(|| panic!("no output {name} in:\n{}\n{}", self.outputs, self.log()))
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

/// An open pull request as the API returns it.
fn pull(number: u64, head: &str, head_repo: &str) -> Value {
    let mut p = fixture("pull_request.json");
    p["number"] = number.into();
    p["state"] = "open".into();
    p["head"]["sha"] = head.into();
    p["head"]["repo"]["full_name"] = head_repo.into();
    p["base"]["ref"] = "main".into();
    p["base"]["sha"] = BASE_SHA.into();
    p
}

/// A recorded event payload from `fixtures/events/`, moved to the fake's repository.
fn event(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/events")
        .join(name);
    let mut payload: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    payload["repository"]["full_name"] = REPO.into();
    if payload.get("pull_request").is_some() {
        payload["pull_request"]["base"]["repo"]["full_name"] = REPO.into();
    }
    payload
}

fn pr_event(action: &str, head: &str) -> Value {
    let mut payload = event("pull_request.json");
    payload["action"] = action.into();
    payload["pull_request"]["head"]["sha"] = head.into();
    payload["pull_request"]["head"]["repo"]["full_name"] = REPO.into();
    payload
}

/// The marker on a comment's first line.
fn marker(body: &str) -> Marker {
    Marker::parse(body)
        .unwrap_or_else(|| panic!("no benchgate marker on the first line of:\n{body}"))
        .0
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
    assert_eq!(push.output("verdict"), "no_baseline");
    let index = r
        .stored("baselines/main/index.json")
        .expect("the push stored no index on the data branch");
    let index = Index::parse(&index, "index.json", "main", V1Layout::DataBranch).unwrap();
    assert_eq!(index.entries.len(), 1, "{index:?}");
    assert_eq!(index.entries[0].sha, BASE_SHA);
    let stored = r
        .stored(&format!("baselines/main/{}", index.entries[0].file))
        .expect("the indexed results file is on the data branch");
    let stored = RunResults::parse(&String::from_utf8_lossy(&stored), "stored").unwrap();
    assert_eq!(stored.run_id, index.entries[0].run_id);
    assert_eq!(r.fake.count("POST", "/git/refs"), 1);
    assert!(r.comments(42).is_empty());

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
    assert_eq!(pr.output("verdict"), "pass", "{}", pr.log());
    assert_eq!(pr.output("regressions"), "0");
    pr.output("improvements").parse::<u32>().unwrap();
    let comments = r.comments(42);
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
    assert_eq!(pr.output("comment-url"), url);
    let results = PathBuf::from(pr.output("results-path"));
    assert!(results.starts_with(r.workspace()), "{}", results.display());
    RunResults::read(&results).unwrap();
    let report = std::fs::read_to_string(pr.output("report-path")).unwrap();
    assert!(report.contains("| change [CI] |"), "{report}");
    assert!(pr.summary.contains("benchgate"), "{}", pr.summary);
    assert!(pr.summary.contains("| change [CI] |"), "{}", pr.summary);
    let index_after = r.stored("baselines/main/index.json").unwrap();
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
    let comments = r.comments(42);
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0].0, id);
    let m = marker(&comments[0].2);
    assert_eq!((m.head.as_str(), m.run.as_str()), (HEAD_2, "102"));
    assert_eq!(sync.output("comment-url"), url);
    assert_eq!(r.fake.count("POST", "/issues/42/comments"), 1);

    // (d) The fork-safe split: measure without a token, then report from
    // workflow_run, which finds PR #43 through the API and comments there.
    let measure = r.action(
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
    assert_eq!(measure.output("verdict"), "measured");
    r.fake.clear_requests();
    let report = r.action(
        "workflow_run",
        &event("workflow_run.json"),
        &[
            ("GITHUB_REF", "refs/heads/main"),
            ("GITHUB_SHA", BASE_SHA),
            ("GITHUB_RUN_ID", "104"),
            ("INPUT_GITHUB-TOKEN", TOKEN),
        ],
    );
    assert_eq!(report.code(), 0, "{}", report.log());
    assert_eq!(
        r.fake
            .count("GET", &format!("/repos/{REPO}/commits/{FORK_HEAD}/pulls")),
        1
    );
    let comments = r.comments(43);
    assert_eq!(comments.len(), 1, "{comments:?}");
    let m = marker(&comments[0].2);
    assert_eq!((m.head.as_str(), m.run.as_str()), (FORK_HEAD, "104"));
    assert!(comments[0].2.contains("| change [CI] |"));
    assert_eq!(report.output("comment-url"), comments[0].1);
    assert_eq!(report.output("verdict"), "pass", "{}", report.log());
    assert_eq!(r.comments(42).len(), 1);
    assert_eq!(
        r.fake.count("PUT", "/contents/"),
        0,
        "report mode wrote the store"
    );
}
