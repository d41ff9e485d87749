//! Issue 54, point 4: a closed stdout or stderr pipe ends benchgate quietly.
//! `benchgate run … 2>&1 | head -2` exited 101, the print macros panicking
//! on EPIPE; now the run stops as for a signal (SIGPIPE's meaning: its
//! reader went away), keeps what it measured, marked `interrupted`, and
//! benchgate exits with the shell's code for it, 141, printing no panic.
//! Through the real binary, with real pipes.

use crate::common;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use benchgate::results::RunResults;
use common::{exe, schema_path};

/// How long benchgate may take to end once its reader went away.
const EXIT_BOUND: Duration = Duration::from_secs(60);

/// Its exit status, within [`EXIT_BOUND`] (killed, and the test failed, past it).
fn wait_bounded(child: &mut Child) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > EXIT_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!("benchgate ran on {EXIT_BOUND:?} after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `benchgate run … 2>&1 | head -2`: two mock clients side by side, up to 30
/// rounds while the comparison is open, a line per look in a log (each round
/// from the second, without a budget); the reader takes two lines and goes
/// away.
#[test]
fn a_run_whose_reader_goes_away_stops_quietly_with_141() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("benchgate.toml");
    std::fs::write(
        &config,
        "[run]\nrounds = 2\nmax_rounds = 30\nwarmup = \"10ms\"\nduration = \"100ms\"\npin = false\n\n\
         [[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\n\
         [[client]]\nname = \"twin\"\nkind = \"hyper\"\n\n\
         [compare]\nbaseline_client = \"hyper\"\n\n\
         [[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\nconcurrency = 1\n",
    )
    .unwrap();
    let out = dir.path().join("results.json");
    let (reader, writer) = std::io::pipe().unwrap();
    let mut child = Command::new(exe())
        .arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .args(["--mock-latencies-us", "300"])
        .env("CI", "true")
        .stdin(Stdio::null())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(reader).lines();
    let head: Vec<String> = lines.by_ref().take(2).map(Result::unwrap).collect();
    assert_eq!(head.len(), 2);
    assert!(head[0].starts_with("benchgate: running "), "{head:?}");
    drop(lines); // `head -2` exits: the pipe has no reader
    let status = wait_bounded(&mut child);
    assert_eq!(status.code(), Some(141), "{status}");

    // What it measured is kept, marked, as for any signal.
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(schema_path()).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "not schema-valid: {errors:?}");
    let r = RunResults::read(&out).unwrap();
    assert_eq!(r.interrupted.as_deref(), Some("SIGPIPE"));
    let trials = r.results[0].trials.len();
    assert!((1..30).contains(&trials), "{trials} trials");
}

/// `benchgate compare … | true` (stdout closed before anything is printed,
/// stderr read): exit 141 and not a word of a panic.
#[test]
fn a_compare_whose_stdout_is_closed_ends_quietly_with_141() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    common::synthetic::one_cell_run(common::measured::every_field_measured())
        .write_atomic(&path)
        .unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(exe())
        .arg("compare")
        .arg("--current")
        .arg(&path)
        .arg("--baseline")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let status = wait_bounded(&mut child);
    assert_eq!(status.code(), Some(141), "{status}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}
