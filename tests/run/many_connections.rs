//! wrk-style closed loops with thousands of connections (issue 19): each
//! built-in driver (hyper, reqwest, h1-lean) against the reference server, one
//! short trial, every connection open at once by the server's own count of
//! concurrently open connections (not the driver's claim), and the driver's
//! memory per connection reported.
//!
//! - `*_hold_3000_connections_at_once`: a few thousand, fast, always run.
//! - `all_drivers_hold_20000_connections_at_once` (ignored: it needs a hard
//!   open-file limit above 20,064 and takes about a minute). Run it with
//!   `cargo build --release && BENCHGATE_TEST_EXE=target/release/benchgate
//!   cargo test --test run many_connections:: -- --ignored` (a debug build's hyper
//!   pool spent more than the 10 s warmup, one core busy, in its waiter
//!   bookkeeping at 19,900 simultaneous first requests); `BENCHGATE_TEST_CONNECTIONS=N` runs it at
//!   N instead, to find what a machine with a lower limit holds.
//!
//! Each process (driver, server) raises its soft open-file limit to the hard
//! one; the fast tests are skipped (saying so) when the hard limit cannot hold
//! their sockets, and a run that needs more than the limit fails before it
//! measures, naming the limit, the need and the fix.

use crate::common;

use std::path::PathBuf;
use std::sync::Mutex;

use benchgate::measure::limits::{open_files_needed, raise_nofile_limit};
use common::{exe, run_config_with};

/// One trial at a time: they load the same two cores.
static SERIAL: Mutex<()> = Mutex::new(());

/// How one trial is run: its connections and its phases.
struct Trial {
    connections: u64,
    warmup: &'static str,
    timeout: &'static str,
}

const FAST: Trial = Trial {
    connections: 3_000,
    // Debug builds on a busy machine: 3,000 connections took up to 2.3 s to
    // open and see a first response.
    warmup: "5s",
    timeout: "10s",
};

/// The hard RLIMIT_NOFILE of this process (children inherit it).
fn hard_nofile_limit() -> u64 {
    raise_nofile_limit().map_or(0, |(_, hard)| hard)
}

/// Runs `kind` at `trial.connections` and checks it: no errors, every
/// connection open at once at the server, memory per connection measured.
/// Returns a description of what is wrong, or a line of figures.
fn drive(kind: &str, trial: &Trial) -> Result<String, String> {
    let n = trial.connections;
    let toml = format!(
        "[run]\nrounds = 1\nwarmup = \"{}\"\nduration = \"2s\"\ntimeout = \"{}\"\n\
         [[client]]\nname = \"{kind}\"\nkind = \"{kind}\"\n\
         [[scenario]]\nname = \"c{n}\"\npath = \"/bytes/22\"\nconcurrency = {n}\n",
        trial.warmup, trial.timeout
    );
    let exe = std::env::var_os("BENCHGATE_TEST_EXE").map_or_else(|| exe().into(), PathBuf::from);
    let run = run_config_with(&exe, &toml, &[]);
    if !run.output.status.success() {
        return Err(format!(
            "{kind}: benchgate run failed: {}",
            String::from_utf8_lossy(&run.output.stderr)
        ));
    }
    let results = run.results();
    let trial = &results.results[0].trials[0];
    if let Some(f) = &trial.failure {
        return Err(format!("{kind}: the trial failed: {f}"));
    }
    let m = trial.metrics.as_ref().unwrap();
    let server = trial.server.as_ref().unwrap();
    let mut wrong = vec![];
    if m.errors.total() != 0 {
        wrong.push(format!("errors {:?}", m.errors));
    }
    if server.peak_open_connections < n {
        wrong.push(format!(
            "the server saw at most {} connections open at once, not {n}",
            server.peak_open_connections
        ));
    }
    if m.ok == 0 {
        wrong.push("no request in the window".into());
    }
    match m.memory_per_connection_bytes {
        Some(b) if b > 0.0 => {}
        other => wrong.push(format!("memory per connection {other:?}")),
    }
    if !wrong.is_empty() {
        return Err(format!("{kind} at {n}: {}", wrong.join("; ")));
    }
    Ok(format!(
        "{kind} at {n}: server peak {} open, {} req/s, driver peak RSS {} MiB, {:.0} B/connection",
        server.peak_open_connections,
        m.throughput_rps.unwrap_or(0.0).round(),
        m.peak_rss_bytes >> 20,
        m.memory_per_connection_bytes.unwrap_or(0.0)
    ))
}

/// The fast test of one driver; skipped when the hard limit is too low.
fn fast(kind: &str) {
    let need = open_files_needed(FAST.connections);
    if hard_nofile_limit() < need {
        eprintln!(
            "skipped: the hard open-file limit is {}, below the {need} {} connections need (raise it with ulimit -Hn)",
            hard_nofile_limit(),
            FAST.connections
        );
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    match drive(kind, &FAST) {
        Ok(line) => eprintln!("{line}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn hyper_holds_3000_connections_at_once() {
    fast("hyper");
}

#[test]
fn reqwest_holds_3000_connections_at_once() {
    fast("reqwest");
}

#[test]
fn h1_lean_holds_3000_connections_at_once() {
    fast("h1-lean");
}

/// Issue 19's study: 20,000 connections per driver (or
/// `BENCHGATE_TEST_CONNECTIONS`). Every driver is tried; the test fails with
/// every driver's problem, after all of them ran.
#[test]
#[ignore = "needs a hard open-file limit of 20,064 and about a minute; run with --ignored"]
fn all_drivers_hold_20000_connections_at_once() {
    let connections = std::env::var("BENCHGATE_TEST_CONNECTIONS")
        .map(|v| v.parse().expect("BENCHGATE_TEST_CONNECTIONS: a number"))
        .unwrap_or(20_000);
    let trial = Trial {
        connections,
        // Connects overflowing the backlog are retried after 1, 3 and 7 s.
        warmup: "10s",
        timeout: "20s",
    };
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let outcomes: Vec<_> = ["hyper", "reqwest", "h1-lean"]
        .into_iter()
        .map(|kind| drive(kind, &trial))
        .collect();
    for o in &outcomes {
        match o {
            Ok(line) => eprintln!("{line}"),
            Err(e) => eprintln!("FAILED {e}"),
        }
    }
    assert!(outcomes.iter().all(Result::is_ok), "see the FAILED lines");
}

/// A scenario with more connections than the hard open-file limit holds
/// fails before anything is measured, with the limit, the need and the fix.
#[test]
fn more_connections_than_the_open_file_limit_fail_before_measuring() {
    let hard = hard_nofile_limit();
    let connections = hard.saturating_sub(open_files_needed(0)) + 1;
    if connections > u64::from(benchgate::config::validate::MAX_WORKERS) {
        eprintln!(
            "skipped: the hard open-file limit ({hard}) holds the most connections a config allows"
        );
        return;
    }
    let toml = format!(
        "[run]\nrounds = 1\nwarmup = \"0s\"\nduration = \"100ms\"\n\
         [[client]]\nname = \"lean\"\nkind = \"h1-lean\"\n\
         [[scenario]]\nname = \"too-many\"\npath = \"/bytes/22\"\nconcurrency = {connections}\n"
    );
    let run = run_config_with(exe().as_ref(), &toml, &[]);
    assert_eq!(run.output.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    let need = open_files_needed(connections);
    for part in [
        format!("scenario \"too-many\" ({connections} connections) need {need} open files"),
        format!("the hard limit is {hard}"),
        format!("ulimit -Hn {need}"),
        format!("LimitNOFILE={need}"),
    ] {
        assert!(stderr.contains(&part), "{part:?} not in: {stderr}");
    }
    assert!(!run.out.exists(), "nothing measured, no results file");
}
