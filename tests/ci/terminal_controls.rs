//! Issue 53, point 5: terminal control sequences never reach the terminal or
//! the log. Untrusted text (a failing client's output relayed in `benchgate
//! run` without `-q`, a hostile name in the progress lines, an error naming
//! a JMH entry) goes through one print path (`report::untrusted`): a line
//! feed ends a line, every other control (ESC and its OSC 8 and OSC 52
//! sequences, CR, BEL, C1, bidi) is shown escaped. `benchgate action`'s
//! relays are in tests/ci/action.rs.

use crate::common;

use std::process::{Command, Output};

use common::{assert_no_raw_controls, exe, CONTROLS, CONTROLS_SHOWN};

/// stdout then stderr, as text.
fn both(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
}

#[track_caller]
fn assert_escaped(out: &Output) {
    assert_no_raw_controls("stdout", &out.stdout);
    assert_no_raw_controls("stderr", &out.stderr);
    let text = both(out);
    for shown in CONTROLS_SHOWN {
        assert!(text.contains(shown), "{shown:?} missing:\n{text}");
    }
}

/// `benchgate run` without `-q` (plain lines: `CI=true`), outside GitHub
/// Actions, of a command client whose name holds a bidi override and which
/// prints [`CONTROLS`] on stdout and stderr and fails: its progress line,
/// the run's table and the closing error show every control escaped.
#[test]
fn a_failing_clients_output_is_relayed_escaped_by_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hostile.txt"), CONTROLS).unwrap();
    let config = r#"
[run]
rounds = 1
warmup = "10ms"
duration = "100ms"
pin = false

[[client]]
name = "evil\u202egpj.exe"
kind = "command"
command = ["sh", "-c", "cat hostile.txt; cat hostile.txt >&2; exit 1"]

[[scenario]]
name = "get"
path = "/bytes/22"
"#;
    std::fs::write(dir.path().join("benchgate.toml"), config).unwrap();
    let out = Command::new(exe())
        .current_dir(dir.path())
        .args(["run", "--config", "benchgate.toml", "--out", "results.json"])
        .env("CI", "true")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    // Every trial failed: exit 2.
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    assert_escaped(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The progress line names the client escaped, and quotes the output.
    assert!(
        stderr.contains("get / evil\\u{202e}gpj.exe round 1/1: FAILED: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("\n    | stdout tail:\n    | clear\\u{1b}[2J"),
        "{stderr}"
    );
}

/// `benchgate compare` of a JMH result file that holds one benchmark twice,
/// named with [`CONTROLS`]: the error names it escaped.
#[test]
fn an_error_naming_a_jmh_entry_shows_its_controls_escaped() {
    let file = common::jmh::read_json(&common::jmh::fixture("xnav-1.37-avgt-a.json"));
    let mut entries = file.as_array().unwrap().clone();
    entries[0]["benchmark"] = CONTROLS.into();
    entries.truncate(1);
    entries.push(entries[0].clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jmh.json");
    std::fs::write(&path, serde_json::to_vec(&entries).unwrap()).unwrap();
    let out = Command::new(exe())
        .args(["compare", "--current"])
        .arg(&path)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(": a second "), "{stderr}");
    assert_escaped(&out);
}
