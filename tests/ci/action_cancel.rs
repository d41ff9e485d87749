//! A cancelled job ends within moments in every GitHub phase, and the whole
//! GitHub phase has a deadline (issue 17, point 6): `benchgate action` as the
//! container runs it, against the fake GitHub on loopback, whose answer to one
//! request is held for a minute. SIGTERM while the fake holds the baseline
//! lookup, the store or the comment must end the step with 143 within
//! [`EXIT_BOUND`], outputs `verdict: cancelled`, and no baseline listed; with
//! `github-timeout: 2s` and a fake that never answers, the step fails within
//! the limit with an error naming the input, and the limit spans calls and
//! clients (a spent budget sends nothing).

use crate::common;
use crate::github;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use benchgate::github::{GitHub, GitHubError, TimeBudget};
use common::action_env::{ActionEnv, ActionFiles};
use github::fake::{FakeGitHub, Fault, FaultAction, REPO};
use github::workflow::{add_bot_token, comments_on, event, open_pull, pr_event, stored_file};
use serde_json::Value;

/// How long a signalled step may take to exit: the client polls every 20 ms;
/// without that it would wait for its 30 s request timeout.
const EXIT_BOUND: Duration = Duration::from_secs(4);
/// How long until the held request is reached (a build-free run of the mock).
const SETUP_BOUND: Duration = Duration::from_secs(120);
const TOKEN: &str = "ghs_cancelSecretToken0a1b2c3d4e5f6a7b8c9d";
const BASE_SHA: &str = "1111111111111111111111111111111111111111";
const HEAD: &str = "2222222222222222222222222222222222222222";
/// A held answer: far longer than any bound here.
const HOLD: Duration = Duration::from_secs(60);

const SUITE: &str = r#"
[run]
rounds = 2
warmup = "20ms"
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

/// One `benchgate action` in the background, against a fake GitHub.
struct Step {
    fake: FakeGitHub,
    env: ActionEnv,
    files: ActionFiles,
    child: Option<Child>,
}

impl Step {
    /// A fake with the bot token and PR #42, and a workspace with [`SUITE`].
    fn new() -> Step {
        let fake = FakeGitHub::start();
        add_bot_token(&fake, TOKEN);
        fake.state
            .lock()
            .unwrap()
            .pulls
            .push(open_pull(42, HEAD, REPO));
        let env = ActionEnv::new("github/workspace");
        std::fs::write(env.workspace().join("benchgate.toml"), SUITE).unwrap();
        let files = ActionFiles::new(&env, "github_output", "summary");
        Step {
            fake,
            env,
            files,
            child: None,
        }
    }

    /// Holds the answer of the first `method` request whose path contains
    /// `path` (applied, as a slow GitHub would).
    fn hold(&self, method: &'static str, path: &str, times: usize) {
        self.fake.inject(Fault {
            method,
            path_contains: path.into(),
            times,
            action: FaultAction::ApplyThenDelay(HOLD),
        });
    }

    /// Starts a push to main (`push`) or PR #42 (`pull_request`).
    fn start(&mut self, event_name: &str, extra: &[(&str, &str)]) {
        let (payload, reference, sha): (Value, _, _) = match event_name {
            "push" => (event("push_main.json"), "refs/heads/main", BASE_SHA),
            _ => (pr_event("opened", HEAD), "refs/pull/42/merge", HEAD),
        };
        let mut cmd: Command =
            self.env
                .command(event_name, &payload.to_string(), REPO, &self.files);
        cmd.env("GITHUB_API_URL", &self.fake.url)
            .env("GITHUB_REF", reference)
            .env("GITHUB_SHA", sha)
            .env("GITHUB_RUN_ID", "300")
            .env("INPUT_GITHUB-TOKEN", TOKEN)
            .env("INPUT_CONFIG", "benchgate.toml")
            // Test knob: the mock driver (benchgate::knobs::MOCK_LATENCIES_VAR).
            .env("BENCHGATE_TEST_MOCK_LATENCIES_US", "2000")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(self.env.file("stdout")).unwrap())
            .stderr(std::fs::File::create(self.env.file("stderr")).unwrap());
        for (k, v) in extra {
            cmd.env(k, v);
        }
        self.child = Some(cmd.spawn().unwrap());
    }

    fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("started")
    }

    fn log(&self) -> String {
        let read = |n: &str| std::fs::read_to_string(self.env.file(n)).unwrap_or_default();
        format!(
            "--- stdout\n{}\n--- stderr\n{}\n--- requests\n{}",
            read("stdout"),
            read("stderr"),
            self.fake
                .requests()
                .iter()
                .map(|r| format!("{} {} -> {}", r.method, r.uri, r.status))
                .collect::<Vec<_>>()
                .join("\n")
        )
    }

    /// Waits until the fake has received a `method` request to `path`.
    fn wait_for_request(&mut self, method: &str, path: &str) {
        let start = Instant::now();
        while self.fake.count(method, path) == 0 {
            let exited = self.child().try_wait().unwrap();
            assert!(
                exited.is_none(),
                "benchgate exited ({exited:?}) before {method} {path}: {}",
                self.log()
            );
            assert!(
                start.elapsed() < SETUP_BOUND,
                "no {method} {path}: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits at most `bound` for the exit code.
    fn wait(&mut self, bound: Duration) -> (i32, Duration) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child().try_wait().unwrap() {
                return (status.code().unwrap_or(-1), start.elapsed());
            }
            if start.elapsed() > bound {
                let _ = self.child().kill();
                let _ = self.child().wait();
                panic!("benchgate still ran {bound:?} later: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, then the exit code within [`EXIT_BOUND`].
    fn terminate(&mut self) -> i32 {
        let pid = self.child().id() as libc::pid_t;
        // SAFETY: kill(2) on our own, not yet reaped, child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        self.wait(EXIT_BOUND).0
    }

    fn output(&self, name: &str) -> Option<String> {
        common::outputs::output(&std::fs::read_to_string(&self.files.output).unwrap(), name)
    }

    /// Exit 143, `verdict: cancelled`, the summary's note and the warning.
    fn assert_cancelled(&mut self, code: i32) {
        assert_eq!(code, 143, "{}", self.log());
        assert_eq!(
            self.output("verdict").as_deref(),
            Some("cancelled"),
            "{}",
            self.log()
        );
        let summary = std::fs::read_to_string(&self.files.summary).unwrap();
        assert!(
            summary.contains("benchgate: cancelled") && summary.contains("Stopped by SIGTERM"),
            "{summary}"
        );
        assert!(
            self.log()
                .contains("::warning title=benchgate cancelled::stopped by SIGTERM"),
            "{}",
            self.log()
        );
        let masked = format!("::add-mask::{TOKEN}");
        let log = self.log();
        let leaked = log.lines().find(|l| l.contains(TOKEN) && *l != masked);
        assert_eq!(leaked, None, "{log}");
    }

    /// The data branch's index lists no run of [`BASE_SHA`].
    fn assert_no_baseline_listed(&self) {
        let index = stored_file(&self.fake, "baselines/main/index.json");
        let text = index.map(|b| String::from_utf8_lossy(&b).into_owned());
        assert!(
            !text.as_deref().unwrap_or("").contains(BASE_SHA),
            "a cancelled store is listed: {text:?}"
        );
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn sigterm_while_github_holds_the_lookup_exits_143_at_once() {
    let mut step = Step::new();
    step.hold("GET", "/repos/", 1);
    step.start("push", &[]);
    step.wait_for_request("GET", "/repos/");
    let code = step.terminate();
    step.assert_cancelled(code);
    // Nothing was measured: no results file, no results-path.
    assert_eq!(step.output("results-path"), None, "{}", step.log());
    assert_eq!(step.fake.count("PUT", "/contents/"), 0, "{}", step.log());
    step.assert_no_baseline_listed();
}

#[test]
fn sigterm_while_github_holds_the_store_exits_143_and_lists_no_baseline() {
    let mut step = Step::new();
    // The run's results file is written (applied), its answer held: the index
    // that would list it is never written.
    step.hold("PUT", "/contents/", 1);
    step.start("push", &[]);
    step.wait_for_request("PUT", "/contents/");
    let code = step.terminate();
    step.assert_cancelled(code);
    let results = PathBuf::from(step.output("results-path").expect("results-path"));
    benchgate::results::RunResults::read(&results).unwrap();
    assert_eq!(step.fake.count("PUT", "index.json"), 0, "{}", step.log());
    step.assert_no_baseline_listed();
}

#[test]
fn sigterm_while_github_holds_the_comment_exits_143_without_a_verdict() {
    let mut step = Step::new();
    step.hold("POST", "/issues/42/comments", 1);
    step.start("pull_request", &[]);
    step.wait_for_request("POST", "/issues/42/comments");
    let code = step.terminate();
    step.assert_cancelled(code);
    assert_eq!(step.output("regressions"), None, "{}", step.log());
    assert!(comments_on(&step.fake, 42).len() <= 1);
}

#[test]
fn github_timeout_bounds_the_whole_github_phase_and_names_the_input() {
    let mut step = Step::new();
    // GitHub accepts connections and never answers.
    step.hold("GET", "/repos/", 1000);
    let started = Instant::now();
    step.start("push", &[("INPUT_GITHUB-TIMEOUT", "2s")]);
    let (code, _) = step.wait(Duration::from_secs(30));
    let took = started.elapsed();
    assert_eq!(code, 2, "{}", step.log());
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(8),
        "took {took:?}: {}",
        step.log()
    );
    let log = step.log();
    assert!(
        log.contains("time limit of 2s (input `github-timeout`)")
            && log.contains("raise input `github-timeout`"),
        "{log}"
    );
    assert!(log.contains("::error title=benchgate::"), "{log}");
}

#[test]
fn a_bad_github_timeout_names_the_input_and_the_fix() {
    let mut step = Step::new();
    step.start("push", &[("INPUT_GITHUB-TIMEOUT", "5")]);
    let (code, _) = step.wait(Duration::from_secs(30));
    assert_eq!(code, 2, "{}", step.log());
    assert!(
        step.log()
            .contains("input `github-timeout`: `5` has no unit")
            && step.log().contains("e.g. `5m` or `90s`"),
        "{}",
        step.log()
    );
    assert!(step.fake.requests().is_empty(), "{}", step.log());
}

#[test]
fn the_time_budget_spans_calls_and_clients_and_a_spent_one_sends_nothing() {
    let fake = FakeGitHub::start();
    add_bot_token(&fake, TOKEN);
    fake.inject(Fault {
        method: "GET",
        path_contains: "/repos/".into(),
        times: 1000,
        action: FaultAction::ApplyThenDelay(HOLD),
    });
    // Attempts of 800 ms, 4 of them: the budget, not the retries, ends the call.
    let mut config = github::client::config(&fake, TOKEN);
    let limit = Duration::from_millis(1500);
    config.time = Some(TimeBudget::new(limit, "input `github-timeout`"));
    let path = format!("/repos/{REPO}/branches/main");
    let started = Instant::now();
    let err = GitHub::new(config.clone()).unwrap().get(&path).unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, GitHubError::OutOfTime { .. }), "{err}");
    assert!(
        took >= limit && took < limit + Duration::from_secs(3),
        "{took:?}"
    );
    assert!(err.to_string().contains("time limit of 1500ms"), "{err}");
    // Another client of the same run: no time left, no request sent.
    let sent = fake.requests().len();
    let err = GitHub::new(config).unwrap().get(&path).unwrap_err();
    assert!(matches!(err, GitHubError::OutOfTime { .. }), "{err}");
    assert_eq!(fake.requests().len(), sent);
}
