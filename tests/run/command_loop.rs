//! The window loop of command clients (issue 52, point 1;
//! docs/external-clients.md, "The window loop"): a harness client declares
//! it and measures every window of its fork in one process, each window's
//! count within 3% of the reference server's (5% for the first; plus the
//! workers in flight at its edges); a client that answers wrongly fails its fork with the line
//! quoted and escaped, after the round ran once more; a client that never
//! declares it keeps today's one-window protocol.

use crate::common;

use std::path::Path;

use common::{cell, run_config};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// Windows per fork (`[run] windows`).
const WINDOWS: usize = 5;
/// Workers of the closed loop below: in flight at a window's edges.
const WORKERS: u64 = 4;

fn config(client: &str, command: &str, rounds: u32) -> String {
    format!(
        r#"[run]
rounds = {rounds}
windows = {WINDOWS}
warmup = "1s"
duration = "600ms"

[[client]]
name = "{client}"
kind = "command"
cwd = {ROOT:?}
command = {command}
env = {{ PYTHONPATH = "{ROOT}/harness/python/src" }}
timeout = "60s"

[[scenario]]
name = "closed"
path = "/bytes/22"
concurrency = {WORKERS}
"#
    )
}

/// One fork of `command` measures every window in one process, each
/// window's count agreeing with the server's.
fn measures_every_window_in_one_process(client: &str, command: &str) {
    let run = run_config(&config(client, command, 1), &[]);
    let r = run.results();
    let c = cell(&r, "closed", client);
    let [t] = c.trials.as_slice() else {
        panic!("{client}: one trial: {:?}", c.trials)
    };
    assert_eq!(t.failure, None, "{client}");
    let windows = &t.windows.as_ref().unwrap().values;
    assert_eq!(windows.len(), WINDOWS, "{client}: {windows:?}");
    assert_eq!(t.windows.as_ref().unwrap().count, WINDOWS as u32);
    for (k, w) in windows.iter().enumerate() {
        assert!(w.requests > 100, "{client} window {}: {w:?}", k + 1);
        let off = w.requests.abs_diff(w.server_requests);
        // The first window of a fork is off by up to ~4% (a JVM's 559 against
        // the server's 581, alone on the machine): its reaction to the first
        // OPEN is slower than to the later ones. Every later window differs
        // by how much later the program reads CLOSE than OPEN: 1.2% in the
        // test command's serial set with the machine's other tenants at load
        // 4-5 (a JVM's 3563 against 3521 in 600 ms, 7 ms of skew). A known
        // imprecision of the loop's edges, held here to 5% and 3% until the
        // program's own edge instants replace it.
        let share = if k == 0 { 20 } else { 33 };
        assert!(
            off <= w.server_requests / share + WORKERS,
            "{client} window {}: the program counted {}, the server {}",
            k + 1,
            w.requests,
            w.server_requests
        );
    }
    // The fork's value is its windows' sum.
    let (m, s) = (t.metrics.as_ref().unwrap(), t.server.as_ref().unwrap());
    assert_eq!(m.requests, windows.iter().map(|w| w.requests).sum::<u64>());
    assert_eq!(
        s.requests,
        windows.iter().map(|w| w.server_requests).sum::<u64>()
    );
    assert_eq!(m.ok, m.requests, "{client}: no errors");
    assert!(
        m.latency_p99_us.is_some() && m.cpu_us_per_request.is_some(),
        "{m:?}"
    );
    assert_eq!(t.window_planned_s, Some(0.6 * WINDOWS as f64));
    assert!(t.window_actual_s.unwrap() >= 0.6 * WINDOWS as f64);
}

#[test]
fn a_java_harness_client_measures_every_window_in_one_process() {
    assert!(
        Path::new(ROOT)
            .join("fixtures/clients/java/out/benchgate-harness.jar")
            .exists(),
        "the Java harness and clients are not built; run scripts/install-test-deps.sh and sh fixtures/clients/java/build.sh"
    );
    measures_every_window_in_one_process(
        "jdk-httpclient",
        r#"["sh", "fixtures/clients/java/run.sh", "JdkBench"]"#,
    );
}

#[test]
fn a_python_harness_client_measures_every_window_in_one_process() {
    measures_every_window_in_one_process(
        "python-quickstart",
        r#"["python3", "harness/python/examples/quickstart.py"]"#,
    );
}

#[test]
fn a_node_harness_client_measures_every_window_in_one_process() {
    measures_every_window_in_one_process(
        "node-quickstart",
        r#"["node", "harness/node/examples/quickstart.mjs"]"#,
    );
}

fn wrong(mode: &str) -> String {
    config(
        "wrong",
        &format!(r#"["python3", "fixtures/clients/window_loop_wrong.py", "{mode}"]"#),
        1,
    )
}

/// A client that answers wrongly: its one round runs twice, then its fork
/// counts as failed, the reason quoting what it printed.
fn fails_the_fork(mode: &str, reason: &[&str]) {
    let run = run_config(&wrong(mode), &[]);
    let r = run.results_with_failed_cells(&["closed / wrong"]);
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert!(
        stderr.contains("running the round again (1 of 1)"),
        "{mode}: the round runs once more: {stderr}"
    );
    let [t] = cell(&r, "closed", "wrong").trials.as_slice() else {
        panic!("{mode}: one trial")
    };
    assert_eq!(t.reruns, 1, "{mode}");
    let failure = t.failure.as_deref().unwrap();
    for part in reason {
        assert!(failure.contains(part), "{mode}: {part:?} not in {failure}");
    }
    common::assert_no_raw_controls("stderr", &run.output.stderr);
}

#[test]
fn a_malformed_window_result_fails_the_fork_with_the_line_quoted() {
    fails_the_fork(
        "malformed",
        &[
            "window loop: ",
            "the window's result is not JSON",
            r#""BENCHGATE-WINDOW-RESULT {\"window\": 1, \"requests\": \u{1b}[31m}""#,
        ],
    );
}

#[test]
fn a_result_for_another_window_fails_the_fork() {
    fails_the_fork(
        "wrong-window",
        &[
            "expected BENCHGATE-WINDOW-RESULT for window 1",
            r#"\"window\":7}""#,
        ],
    );
    fails_the_fork(
        "exits",
        &["the program exited while benchgate waited for BENCHGATE-READY"],
    );
}

#[test]
fn a_client_that_never_declares_the_loop_keeps_one_window() {
    let run = run_config(&wrong("plain"), &[]);
    let r = run.results();
    let [t] = cell(&r, "closed", "wrong").trials.as_slice() else {
        panic!("one trial")
    };
    assert_eq!(t.failure, None);
    assert_eq!(t.windows, None, "one window");
    assert_eq!(t.window_planned_s, Some(0.6));
    let m = t.metrics.as_ref().unwrap();
    assert!(
        m.requests > 0 && m.latency_p99_us.is_none(),
        "a black box: {m:?}"
    );
}

#[test]
fn a_forks_rate_is_read_at_benchgates_edges_of_its_windows() {
    // The program counts 150 ms past each CLOSE it reads: a quarter more
    // than the server answered in a 600 ms window. The fork's rate is the
    // server's count over benchgate's edges (at the program's share of
    // successes, all of them here), as its CPU per request is.
    let run = run_config(&wrong("late-close"), &[]);
    let r = run.results();
    let [t] = cell(&r, "closed", "wrong").trials.as_slice() else {
        panic!("one trial")
    };
    assert_eq!(t.failure, None);
    let w = t.windows.as_ref().expect("a fork of windows");
    assert_eq!(w.values.len(), WINDOWS, "{w:?}");
    let (m, s) = (t.metrics.as_ref().unwrap(), t.server.as_ref().unwrap());
    assert!(
        m.requests as f64 > 1.1 * s.requests as f64,
        "the program counted past the edges: {} against the server's {}",
        m.requests,
        s.requests
    );
    let at_edges = s.requests as f64 / m.elapsed_s;
    let rate = m.throughput_rps.unwrap();
    assert!(
        (rate / at_edges - 1.0).abs() < 1e-9,
        "{rate} req/s, where the server answered {at_edges}/s in the windows"
    );
    for v in &w.values {
        assert!(v.requests > v.server_requests, "{v:?}");
        assert!(v.throughput_rps < v.requests as f64 / 0.6, "{v:?}");
    }
}

/// Two harness clients over `[run] schedule = "interleaved"`.
fn interleaved(second: &str, rounds: u32) -> String {
    format!(
        r#"[run]
rounds = {rounds}
windows = 3
warmup = "1s"
duration = "300ms"
schedule = "interleaved"
pin = false

[[client]]
name = "a"
kind = "command"
cwd = {ROOT:?}
command = ["python3", "harness/python/examples/quickstart.py"]
env = {{ PYTHONPATH = "{ROOT}/harness/python/src" }}

[[client]]
name = "b"
kind = "command"
cwd = {ROOT:?}
command = {second}
env = {{ PYTHONPATH = "{ROOT}/harness/python/src" }}

[[scenario]]
name = "closed"
path = "/bytes/22"
concurrency = 2
"#
    )
}

#[test]
fn two_harness_clients_take_turns_window_by_window_the_idle_one_frozen() {
    let run = run_config(
        &interleaved(r#"["python3", "harness/python/examples/quickstart.py"]"#, 2),
        &[],
    );
    // Window pairs alternate which side goes first; the round's first side
    // flips by round.
    assert_eq!(
        crate::interleaved::turns(&run.results(), "closed", ["a", "b"]),
        ["abbaab", "baabba"]
    );
}

#[test]
fn a_client_that_never_declares_the_loop_fails_an_interleaved_round() {
    let run = run_config(
        &interleaved(
            r#"["python3", "fixtures/clients/window_loop_wrong.py", "plain"]"#,
            1,
        ),
        &[],
    );
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert!(!run.output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            r#"[run] schedule = "interleaved" or "duet" measures two live forks window by window, and command client "b" did not declare the window loop"#
        ),
        "{stderr}"
    );
    assert!(stderr.contains("its partner fork (b) failed"), "{stderr}");
    assert!(
        !stderr.contains("running the round again"),
        "not a broken loop: {stderr}"
    );
}
