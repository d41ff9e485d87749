//! A driver process that panics, aborts or exits non-zero: each failed trial
//! is one line (client, scenario, round, what happened, where the full output
//! is) on the terminal, in the results file and in the reports, and the
//! driver's whole output is kept in that log file. The mock driver fails on
//! purpose through its `BENCHGATE_MOCK_FAIL` knob.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchgate::knobs::MOCK_FAIL_VAR as FAIL_VAR;
use benchgate::results::RunResults;
use common::exe;

const CONFIG: &str = r#"
[run]
rounds = 2
warmup = "20ms"
requests = 20

[[client]]
name = "base"
kind = "hyper"

[[client]]
name = "fragile"
kind = "reqwest"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
"#;

struct Failed {
    dir: tempfile::TempDir,
    output: Output,
    results: RunResults,
}

impl Failed {
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
}

/// `benchgate run` with the mock drivers failing as `how` says
/// (`[CLIENT=]HOW`, see `FAIL_VAR`). Every trial of the client(s) named
/// fails, so the run (compared with nothing) exits 2 naming each such cell
/// on one line.
fn run_failing(how: &str) -> Failed {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("benchgate.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let out = dir.path().join("results.json");
    let output = Command::new(exe())
        .current_dir(dir.path())
        .args(["run", "--config", "benchgate.toml", "--out", "results.json"])
        .args(["--mock-latencies-us", "100"])
        .env("CI", "true")
        .env(FAIL_VAR, how)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(2),
        "a cell whose every trial failed fails the run: {stderr}"
    );
    let results = RunResults::read(&out).unwrap();
    for c in &results.results {
        let all_failed = c.trials.iter().all(|t| t.failure.is_some());
        let named = format!(
            "benchgate: error: every trial failed (2 of 2): {} / {} round 1/2: FAILED: ",
            c.scenario, c.client
        );
        let lines = stderr.lines().filter(|l| l.starts_with(&named)).count();
        assert_eq!(lines, usize::from(all_failed), "{named:?} in {stderr}");
    }
    Failed {
        dir,
        output,
        results,
    }
}

/// Every failed trial's failure, checked to be `<what> (full output: <path>)`
/// with the log under `results-logs/<run id>/`; returns (scenario, client,
/// round, what, absolute log path).
fn failures(f: &Failed) -> Vec<(String, String, u32, String, PathBuf)> {
    let logs = Path::new("results-logs").join(&f.results.run_id);
    let mut all = vec![];
    for c in &f.results.results {
        assert_eq!(c.trials.len(), 2);
        for t in &c.trials {
            let Some(failure) = t.failure.as_deref() else {
                continue;
            };
            assert!(!failure.contains('\n'), "one line: {failure:?}");
            let (what, path) = failure
                .strip_suffix(')')
                .and_then(|s| s.rsplit_once(" (full output: "))
                .unwrap_or_else(|| panic!("no log path in {failure:?}"));
            let path = Path::new(path);
            assert_eq!(
                path,
                logs.join(format!(
                    "{}--{}--round-{}.log",
                    c.scenario, c.client, t.round
                )),
            );
            all.push((
                c.scenario.clone(),
                c.client.clone(),
                t.round,
                what.to_string(),
                f.dir.path().join(path),
            ));
        }
    }
    all
}

/// The progress lines on stderr: exactly one per failed trial, the failure
/// as in the results file, and nothing of the driver's raw output.
fn check_terminal(f: &Failed) {
    let stderr = f.stderr();
    let mut failed = 0;
    for c in &f.results.results {
        for t in &c.trials {
            let Some(failure) = &t.failure else {
                continue;
            };
            failed += 1;
            let line = format!(
                "{} / {} round {}/2: FAILED: {failure}",
                c.scenario, c.client, t.round,
            );
            assert_eq!(
                stderr.lines().filter(|l| *l == line).count(),
                1,
                "no line {line:?} in:\n{stderr}"
            );
        }
    }
    for raw in ["panicked at", "stack backtrace", "RUST_BACKTRACE", "\\n"] {
        assert!(!stderr.contains(raw), "{raw:?} on the terminal:\n{stderr}");
    }
    // The table's "failed:" lines too.
    let stdout = f.stdout();
    let lines = stdout.lines().filter(|l| l.starts_with("failed: ")).count();
    assert_eq!(lines, failed, "{stdout}");
    assert!(!stdout.contains("panicked at"), "{stdout}");
}

#[test]
fn a_panicking_driver_is_one_line_with_its_message_and_log() {
    let message = "scripted failure: ALPN protocols should not be pre-defined";
    let f = run_failing(&format!("fragile=panic:{message}"));
    let failed = failures(&f);
    assert_eq!(failed.len(), 2, "the fragile client's two trials");
    for (scenario, client, round, what, log) in failed {
        assert_eq!(client, "fragile");
        assert_eq!(
            what,
            format!("the driver panicked: {message}"),
            "{scenario}/{client} round {round}"
        );
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains(" panicked at src/client/mock.rs:"), "{text}");
        assert!(text.contains(message), "{text}");
        assert!(
            text.contains("stack backtrace:"),
            "the log keeps the backtrace: {text}"
        );
    }
    check_terminal(&f);

    // The PR comment lists each failure once, on one line.
    let md = f.dir.path().join("comment.md");
    let compare = Command::new(exe())
        .current_dir(f.dir.path())
        .args(["compare", "--current", "results.json"])
        .args(["--side-by-side", "base", "--markdown"])
        .arg(&md)
        .output()
        .unwrap();
    let comment = std::fs::read_to_string(&md).unwrap_or_else(|e| {
        panic!(
            "no comment ({e}): {}",
            String::from_utf8_lossy(&compare.stderr)
        )
    });
    // (The head and the reasons quote the first failure too: every trial of
    // the fragile client failed, which fails the gate.)
    let lines: Vec<&str> = comment
        .lines()
        .filter(|l| {
            l.starts_with("- get-22b / fragile round ") && l.contains("the driver panicked")
        })
        .collect();
    assert_eq!(lines.len(), 2, "{comment}");
    for l in lines {
        assert!(l.contains(message) && l.contains("full output: "), "{l}");
    }
    assert!(!comment.contains("panicked at"), "{comment}");
}

#[test]
fn an_aborted_or_failed_driver_is_one_line_too() {
    let f = run_failing("abort");
    let failed = failures(&f);
    assert_eq!(failed.len(), 4, "every trial of both clients");
    for (.., what, log) in failed {
        assert_eq!(what, "the driver was killed by signal 6 (SIGABRT)");
        assert!(log.exists());
    }
    check_terminal(&f);

    let f = run_failing("fragile=exit:3");
    let failed = failures(&f);
    assert_eq!(failed.len(), 2);
    for (.., what, log) in failed {
        assert_eq!(
            what,
            format!("the driver exited with status 3: {FAIL_VAR} asked for exit status 3")
        );
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("asked for exit status 3"), "{text}");
    }
    check_terminal(&f);
}

/// `benchgate compare ARGS --markdown comment.md --json cmp.json` in the
/// run's directory: (exit code, comment, comparison JSON, stdout).
fn compare_failed(f: &Failed, args: &[&str]) -> (i32, String, serde_json::Value, String) {
    let output = Command::new(exe())
        .current_dir(f.dir.path())
        .arg("compare")
        .args(args)
        .args(["--markdown", "comment.md", "--json", "cmp.json"])
        .output()
        .unwrap();
    let read = |name: &str| {
        std::fs::read_to_string(f.dir.path().join(name)).unwrap_or_else(|e| {
            panic!(
                "no {name} ({e}): {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
    };
    let json = serde_json::from_str(&read("cmp.json")).unwrap();
    (
        output.status.code().unwrap(),
        read("comment.md"),
        json,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The comment's head: the headline up to the first scenario table.
fn head(comment: &str) -> &str {
    &comment[..comment.find("### ").unwrap_or(comment.len())]
}

/// A client whose every trial failed measured nothing: the gate fails
/// (exit code 1) and says why, quoting the first failure; it never passes
/// with "0 metrics". A stored baseline that failed is no baseline, not a
/// failure.
#[test]
fn a_client_whose_every_trial_failed_fails_the_gate() {
    let message = "scripted failure: every request";
    let fragile = run_failing(&format!("fragile=panic:{message}"));
    let quoted = format!(
        r"every trial failed \(2 of 2\): get-22b / fragile round 1/2: FAILED: the driver panicked: {message} \(full output: results-logs/"
    );

    // Side by side: the compared client failed.
    let args = ["--current", "results.json", "--side-by-side", "base"];
    let (code, comment, json, stdout) = compare_failed(&fragile, &args);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        head(&comment).starts_with("## ❌ benchgate: fail"),
        "{comment}"
    );
    assert!(head(&comment).contains(&quoted), "{comment}");
    assert!(
        stdout.starts_with("benchgate: FAIL (every trial failed in 1 comparison"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "every trial failed (2 of 2): get-22b / fragile round 1/2: FAILED: the driver panicked: {message} (full output: "
        )),
        "{stdout}"
    );
    assert_eq!(json["outcome"], "fail");
    assert_eq!(json["exit_code"], 1);
    let failed: Vec<_> = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["verdict"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "one row for the cell: {json:#}");
    assert_eq!(failed[0]["client"], "fragile");
    assert_eq!(failed[0]["tier"], "fail");

    // Both clients failed: a fail, not "pass, 0 metrics".
    let all = run_failing("abort");
    let (code, comment, json, stdout) = compare_failed(&all, &args);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        head(&comment).contains(r"every trial failed \(2 of 2\), as did every trial of the baseline \(2 of 2\): get-22b / fragile round 1/2: FAILED: the driver was killed by signal 6 \(SIGABRT\)"),
        "{comment}"
    );
    assert_eq!(json["outcome"], "fail");
    assert!(!stdout.contains("PASS"), "{stdout}");
    // Every failed trial is listed, the baseline client's too.
    for client in ["base", "fragile"] {
        for round in 1..=2 {
            let line = format!("- get-22b / {client} round {round}: the driver was killed");
            assert_eq!(comment.matches(&line).count(), 1, "{line:?} in {comment}");
        }
    }

    // Baseline mode: the stored baseline failed everywhere, the current run
    // only for fragile. base has no baseline (neutral); fragile fails.
    let base = all.dir.path().join("results.json");
    let args = [
        "--baseline",
        base.to_str().unwrap(),
        "--current",
        "results.json",
    ];
    let (code, comment, json, stdout) = compare_failed(&fragile, &args);
    assert_eq!(code, 1, "{stdout}");
    assert!(head(&comment).contains(&quoted), "{comment}");
    assert!(head(&comment).contains("in 1 comparison"), "{comment}");
    for m in json["metrics"].as_array().unwrap() {
        if m["client"] == "base" {
            assert_eq!(m["verdict"], "no_baseline", "{m:#}");
            assert_eq!(m["tier"], "pass", "{m:#}");
            let reason = m["reason"].as_str().unwrap();
            assert!(
                reason.starts_with("every trial of the baseline failed (2 of 2): get-22b / base round 1/2: FAILED: the driver was killed by signal 6 (SIGABRT)"),
                "{reason}"
            );
        } else {
            assert_eq!(m["verdict"], "failed", "{m:#}");
        }
    }
}
