//! SIGTERM/SIGINT stop the load and keep what was measured (issue 5, point 6):
//! `benchgate run` with the real reference server and a built-in driver, with
//! a command client whose process group has a background child, and
//! `benchgate action` on a push with a local baseline store. Each run is
//! signalled while a long trial is in progress (its process is seen in /proc),
//! then must exit 143/130 within a bound, leave a schema-valid results file
//! marked `interrupted` with the finished trials, and leave no process behind:
//! every process started under benchgate inherits a unique environment tag,
//! and none carrying it may survive.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use benchgate::baseline::{BaselineStore, LocalStore};
use benchgate::results::RunResults;
use common::action_env::{event_fixture, ActionEnv, ActionFiles};
use common::{exe, schema_path};

/// How long a signalled benchgate may take to exit.
const EXIT_BOUND: Duration = Duration::from_secs(10);
/// How long the setup of a test may take before it gives up.
const SETUP_BOUND: Duration = Duration::from_secs(120);
const TAG_VAR: &str = "BENCHGATE_TEST_INTERRUPT_TAG";

/// A quick scenario, then one whose single trial would take a minute, then
/// one that must never start.
const SUITE: &str = r#"
[run]
rounds = 2
warmup = "50ms"
duration = "200ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "quick"
path = "/bytes/22"
concurrency = 1

[[scenario]]
name = "long"
path = "/delay/5"
concurrency = 2
duration = "60s"

[[scenario]]
name = "never"
path = "/bytes/22"
concurrency = 1
"#;

/// A command client that never sends a request and keeps a background child
/// in its process group: only killing the whole group stops it.
const COMMAND_SUITE: &str = r#"
[run]
rounds = 1
warmup = "50ms"
duration = "60s"
pin = false

[[client]]
name = "sleeper"
kind = "command"
command = ["sh", "-c", "sleep 120 & sleep 120; wait"]

[[scenario]]
name = "sleepy"
path = "/bytes/22"
concurrency = 1
"#;

/// A benchgate process started with a unique tag, its output in files.
struct Tagged {
    child: Child,
    tag: String,
    dir: PathBuf,
}

impl Tagged {
    fn spawn(mut cmd: Command, dir: &Path) -> Tagged {
        let tag = format!("{}-{}", std::process::id(), rand_suffix());
        let child = cmd
            .env(TAG_VAR, &tag)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap();
        Tagged {
            child,
            tag,
            dir: dir.to_path_buf(),
        }
    }

    fn log(&self) -> String {
        let read = |n: &str| std::fs::read_to_string(self.dir.join(n)).unwrap_or_default();
        format!(
            "--- stdout\n{}\n--- stderr\n{}",
            read("stdout"),
            read("stderr")
        )
    }

    /// Pids of live processes carrying the tag, with their command lines.
    fn descendants(&self) -> Vec<(u32, String)> {
        let needle = format!("{TAG_VAR}={}", self.tag);
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // Zombies and vanished processes read as empty.
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if environ.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                found.push((pid, cmdline));
            }
        }
        found.retain(|(pid, _)| *pid != self.child.id());
        found
    }

    /// Waits until a tagged process's command line contains `word`.
    fn wait_for_process(&mut self, word: &str) {
        let start = Instant::now();
        while !self.descendants().iter().any(|(_, c)| c.contains(word)) {
            assert!(
                self.child.try_wait().unwrap().is_none(),
                "benchgate exited before starting {word}: {}",
                self.log()
            );
            assert!(
                start.elapsed() < SETUP_BOUND,
                "no {word} process: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `signal` and waits (bounded) for the exit code.
    fn signal_and_wait(&mut self, signal: libc::c_int) -> i32 {
        // SAFETY: kill(2) on our own, not yet reaped, child.
        assert_eq!(
            unsafe { libc::kill(self.child.id() as libc::pid_t, signal) },
            0
        );
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            if start.elapsed() > EXIT_BOUND {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "benchgate did not exit within {EXIT_BOUND:?} of the signal: {}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// No tagged process is left (killed processes vanish within moments).
    fn assert_nothing_left(&self) {
        let start = Instant::now();
        loop {
            let left = self.descendants();
            if left.is_empty() {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "processes survived benchgate: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tagged {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        for (pid, _) in self.descendants() {
            // SAFETY: kill(2) on a leftover of this test's own benchgate.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Waits until the results file at `path` holds the cells of `scenario`.
fn wait_for_scenario(run: &mut Tagged, path: &Path, scenario: &str) {
    let start = Instant::now();
    loop {
        if let Ok(r) = RunResults::read(path) {
            if r.results.iter().any(|c| c.scenario == scenario) {
                return;
            }
        }
        assert!(
            run.child.try_wait().unwrap().is_none(),
            "benchgate exited early: {}",
            run.log()
        );
        assert!(
            start.elapsed() < SETUP_BOUND,
            "scenario {scenario} never finished: {}",
            run.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads the results file and validates it against the repository's schema.
fn read_valid(path: &Path) -> RunResults {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path()).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    RunResults::read(path).unwrap()
}

fn run_command(dir: &Path, suite: &str) -> (Command, PathBuf) {
    let config = dir.join("benchgate.toml");
    std::fs::write(&config, suite).unwrap();
    let out = dir.join("results.json");
    let mut cmd = Command::new(exe());
    cmd.arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .env("CI", "true");
    (cmd, out)
}

#[test]
fn sigterm_stops_a_run_and_keeps_the_finished_trials() {
    let dir = tempfile::tempdir().unwrap();
    let (cmd, out) = run_command(dir.path(), SUITE);
    let mut run = Tagged::spawn(cmd, dir.path());
    wait_for_scenario(&mut run, &out, "quick");
    run.wait_for_process("__drive"); // the minute-long trial of `long`
    let code = run.signal_and_wait(libc::SIGTERM);
    assert_eq!(code, 143, "{}", run.log());
    run.assert_nothing_left();

    let results = read_valid(&out);
    assert_eq!(results.interrupted.as_deref(), Some("SIGTERM"));
    assert!(results.finished_at.is_some());
    let quick = results.cell_at("quick", "hyper", None).unwrap();
    assert_eq!(quick.trials.len(), 2);
    assert!(quick.trials.iter().all(|t| t.failure.is_none()));
    assert!(quick.summary.contains_key("throughput_rps"));
    let long = results.cell_at("long", "hyper", None).unwrap();
    assert_eq!(long.trials.len(), 1, "{:?}", long.trials);
    assert_eq!(
        long.trials[0].failure.as_deref(),
        Some("interrupted by SIGTERM")
    );
    assert!(results.cell_at("never", "hyper", None).is_none());
    assert!(
        run.log().contains("SIGTERM received: stopped the run"),
        "{}",
        run.log()
    );

    // Comparing a partial run works on its finished trials, with a warning.
    let cmp = Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .args(["compare", "--baseline"])
        .arg(&out)
        .arg("--current")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&cmp.stderr);
    assert_eq!(cmp.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr
            .matches("is a partial run (stopped by SIGTERM)")
            .count(),
        2,
        "{stderr}"
    );
}

#[test]
fn sigint_kills_a_command_clients_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let (cmd, out) = run_command(dir.path(), COMMAND_SUITE);
    let mut run = Tagged::spawn(cmd, dir.path());
    // Both sleeps (the shell's background child and its foreground one).
    let start = Instant::now();
    while run
        .descendants()
        .iter()
        .filter(|(_, c)| c.starts_with("sleep 120"))
        .count()
        < 2
    {
        assert!(start.elapsed() < SETUP_BOUND, "{}", run.log());
        assert!(run.child.try_wait().unwrap().is_none(), "{}", run.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = run.signal_and_wait(libc::SIGINT);
    assert_eq!(code, 130, "{}", run.log());
    run.assert_nothing_left();

    let results = read_valid(&out);
    assert_eq!(results.interrupted.as_deref(), Some("SIGINT"));
    let cell = results.cell_at("sleepy", "sleeper", None).unwrap();
    assert_eq!(cell.trials.len(), 1);
    assert_eq!(
        cell.trials[0].failure.as_deref(),
        Some("interrupted by SIGINT")
    );
}

#[test]
fn a_cancelled_push_run_writes_the_summary_and_stores_no_baseline() {
    let env = ActionEnv::new("github/workspace");
    let workspace = env.workspace();
    std::fs::write(workspace.join("benchgate.toml"), SUITE).unwrap();
    let files = ActionFiles::new(&env, "github_output", "summary");
    let mut cmd = env.command("push", &event_fixture("push_main.json"), "octo/app", &files);
    cmd.env("GITHUB_REF", "refs/heads/main")
        .env("GITHUB_SHA", "1111111111111111111111111111111111111111")
        .env("GITHUB_RUN_ID", "77")
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .env("INPUT_BASELINE-STORE", "local:.baselines")
        // Test knob: the mock driver (benchgate::knobs::MOCK_LATENCIES_VAR).
        .env("BENCHGATE_TEST_MOCK_LATENCIES_US", "2000");
    let mut run = Tagged::spawn(cmd, env.dir.path());
    let results_path = workspace.join("benchgate-results.json");
    wait_for_scenario(&mut run, &results_path, "quick");
    run.wait_for_process("__drive");
    let code = run.signal_and_wait(libc::SIGTERM);
    assert_eq!(code, 143, "{}", run.log());
    run.assert_nothing_left();

    let results = read_valid(&results_path);
    assert_eq!(results.interrupted.as_deref(), Some("SIGTERM"));
    assert_eq!(
        results
            .cell_at("quick", "hyper", None)
            .unwrap()
            .trials
            .len(),
        2
    );
    let store = LocalStore::new(workspace.join(".baselines"));
    assert!(
        store.history("main").unwrap().is_empty(),
        "a cancelled run was stored as the baseline"
    );
    let outputs = std::fs::read_to_string(&files.output).unwrap();
    assert_eq!(
        common::outputs::output(&outputs, "verdict").as_deref(),
        Some("cancelled")
    );
    assert_eq!(
        common::outputs::output(&outputs, "results-path").map(PathBuf::from),
        Some(results_path)
    );
    assert_eq!(common::outputs::output(&outputs, "regressions"), None);
    let summary = std::fs::read_to_string(&files.summary).unwrap();
    assert!(
        summary.contains("benchgate: cancelled")
            && summary.contains("stopped by SIGTERM")
            && summary.contains("after 2 of 6 trials")
            && summary.contains("no baseline was stored"),
        "{summary}"
    );
    assert!(run
        .log()
        .contains("::warning title=benchgate cancelled::stopped by SIGTERM"));
}
