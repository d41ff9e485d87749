//! The CLI's output under GitHub Actions holds no workflow command from
//! untrusted text (issue 30, point 3): with `GITHUB_ACTIONS=true`, `compare`
//! on a results file whose names are commands, and `run` relaying a command
//! client's output, print no line the runner would execute, on stdout or
//! stderr; outside Actions the names print as they are.

use crate::common;

use std::process::{Command, Output};

use crate::common::synthetic;
use common::exe;

/// A scenario name that is a workflow command, and a client name that holds
/// the legacy form.
const SCENARIO: &str = "::error title=x::boom";
const CLIENT: &str = "c ##[warning]y";

/// stdout then stderr, as text.
fn both(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
}

/// The lines of `text` that the runner would take for a workflow command:
/// `::` after leading whitespace, or `##[` anywhere.
fn commands(text: &str) -> Vec<&str> {
    text.split(['\n', '\r'])
        .filter(|l| l.trim_start().starts_with("::") || l.contains("##["))
        .collect()
}

/// `benchgate compare` of a one-cell run, named [`SCENARIO`] / [`CLIENT`],
/// with itself; `actions` sets `GITHUB_ACTIONS=true`, else it is unset.
fn compare_hostile_names(actions: bool) -> Output {
    let mut run = synthetic::one_cell_run(common::measured::every_field_measured());
    run.config.scenarios[0].name = SCENARIO.into();
    run.config.clients[0].name = CLIENT.into();
    run.config.scenarios[0].clients = vec![CLIENT.into()];
    run.results[0].scenario = SCENARIO.into();
    run.results[0].client = CLIENT.into();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    run.write_atomic(&path).unwrap();
    let mut cmd = Command::new(exe());
    cmd.arg("compare")
        .arg("--current")
        .arg(&path)
        .arg("--baseline")
        .arg(&path)
        .env_remove("GITHUB_ACTIONS");
    if actions {
        cmd.env("GITHUB_ACTIONS", "true");
    }
    cmd.output().unwrap()
}

#[test]
fn compare_under_actions_prints_no_command_from_a_results_file() {
    let out = compare_hostile_names(true);
    let text = both(&out);
    assert!(out.status.code().is_some_and(|c| c < 2), "{text}");
    assert_eq!(commands(&text), Vec::<&str>::new(), "{text}");
    // The rows are still there, each command broken by a space.
    assert!(text.contains(": :error title=x::boom"), "{text}");
    assert!(text.contains("c ## [warning]y"), "{text}");
}

#[test]
fn compare_outside_actions_prints_names_as_they_are() {
    let out = compare_hostile_names(false);
    let text = both(&out);
    assert!(
        text.lines().any(|l| l.starts_with(SCENARIO)),
        "a row starts with the scenario's name: {text}"
    );
    assert!(text.contains(CLIENT), "{text}");
}

#[test]
fn a_failed_run_relays_no_command_from_a_clients_output() {
    let config = r#"
[run]
rounds = 1
warmup = "10ms"
duration = "100ms"
pin = false

[[client]]
name = "py"
kind = "command"
command = ["python3", "-c", "print('##[warning]x'); print('  ::error::z'); import sys; sys.exit(1)"]

[[scenario]]
name = "get"
path = "/bytes/22"
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("benchgate.toml"), config).unwrap();
    let out = Command::new(exe())
        .current_dir(dir.path())
        .args(["run", "--config", "benchgate.toml", "--out", "results.json"])
        .env("CI", "true")
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    let text = both(&out);
    // Every trial failed: exit 2, the client's output quoted in the reasons.
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("## [warning]x"), "{text}");
    assert!(!text.contains("##[warning]"), "{text}");
    assert_eq!(commands(&text), Vec::<&str>::new(), "{text}");
}
