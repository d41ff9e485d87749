//! Issue 52, point 6: no figure lost at the window's edge. A command client
//! that exits as its window closes keeps its CPU per request, from the last
//! sample of its process group's CPU taken while the window was open: not
//! from its exit accounting, which would add its shutdown, and not lost
//! because the group was gone when benchgate sampled it at the close.
//!
//! The race is made certain with the test knob `BENCHGATE_TEST_CLOSE_LAG_MS`:
//! benchgate waits 3 s, as the window closes, before it samples the group's
//! CPU there (a loaded machine's scheduler might, for a few milliseconds);
//! the program, which prints its close marker and then burns CPU for its
//! "shutdown" before exiting, is gone by then.

use crate::common;

use std::process::Command;

use common::{cell, exe};

/// A black box (no result file) that prints the window markers: one
/// keep-alive connection, a request every 10 ms (so that its window costs
/// little CPU), its close marker after `BENCHGATE_DURATION_MS`, then 200 ms
/// of CPU on its process clock and an exit, without waiting for the
/// acknowledgement of the close.
const PROGRAM: &str = r#"
import http.client, os, sys, time, urllib.parse
u = urllib.parse.urlparse(os.environ["BENCHGATE_URL"])
c = http.client.HTTPConnection(u.hostname, u.port)
def get():
    c.request("GET", u.path)
    c.getresponse().read()
    time.sleep(0.01)
get()
print("BENCHGATE-WINDOW-OPEN", flush=True)
assert sys.stdin.readline().strip() == "BENCHGATE-WINDOW-OPENED"
end = time.monotonic() + int(os.environ["BENCHGATE_DURATION_MS"]) / 1000
while time.monotonic() < end:
    get()
print("BENCHGATE-WINDOW-CLOSE", flush=True)
t = time.process_time()
while time.process_time() - t < 0.2:
    pass
"#;

/// The program's shutdown: CPU it burns after its close marker, µs.
const SHUTDOWN_US: u64 = 200_000;

#[test]
fn a_program_that_exits_as_its_window_closes_keeps_its_cpu_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("client.py");
    std::fs::write(&program, PROGRAM).unwrap();
    let config = format!(
        r#"[run]
rounds = 2
warmup = "100ms"
duration = "1s"

[[client]]
name = "edge"
kind = "command"
command = ["python3", {program:?}]
timeout = "30s"

[[scenario]]
name = "get"
path = "/bytes/22"
"#,
        program = program.display().to_string()
    );
    let (path, out) = (dir.path().join("b.toml"), dir.path().join("r.json"));
    std::fs::write(&path, config).unwrap();
    let output = Command::new(exe())
        .args(["run", "--quiet", "--config"])
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .env("CI", "true")
        .env(benchgate::knobs::CLOSE_LAG_VAR, "3000")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The results file says where the CPU came from, as its schema allows.
    common::assert_results_valid(&out);
    let r = benchgate::results::RunResults::read(&out).unwrap();
    let c = cell(&r, "get", "edge");
    assert_eq!(c.trials.len(), 2);
    for t in &c.trials {
        assert_eq!(t.failure, None);
        let m = t.metrics.as_ref().unwrap();
        assert!(
            m.cpu_us_per_request.is_some_and(|v| v > 0.0),
            "round {}: the program exited as its window closed and its CPU per request was lost: {m:?}",
            t.round
        );
        // The program was gone at the close: the figure is the last sample's
        // (`close` here: its 200 ms of CPU outlasted the 3 s lag, a machine
        // loaded beyond reason).
        assert_eq!(
            t.cpu_source,
            Some(benchgate::results::CpuSource::LastSample),
            "round {}",
            t.round
        );
        // ... taken while the window was open, before the shutdown began:
        // exit accounting would count the shutdown's 200 ms whole.
        let window_us = m.cpu_user_us + m.cpu_sys_us;
        assert!(
            window_us < SHUTDOWN_US,
            "round {}: {window_us} µs of CPU in a window of ~100 paced requests: the shutdown was counted",
            t.round
        );
    }
}
