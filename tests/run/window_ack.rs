//! The window handshake is exact: a program that waits for benchgate's
//! acknowledgements on stdin (`BENCHGATE_WINDOW_ACK=stdin`) counts the same
//! requests as the reference server even when benchgate acts on its markers
//! 300 ms late (a loaded machine; the testing knob
//! `BENCHGATE_TEST_MARKER_LAG_MS`), while the same program ignoring the
//! acknowledgements is off by about that lag (which shows the lag is real).

use crate::common;

use std::process::Command;

use common::{cell, exe};

/// A closed loop of 2 keep-alive workers (http.client) that prints the window
/// markers, waits for the acknowledgements unless given `--no-ack`, counts the
/// responses completed between them and writes the result file.
///
/// It prints the open marker after 300 ms, a quarter of the scenario's
/// warmup: benchgate acts on it 300 ms later (the knob), at 600 ms, well before
/// its fallback (the window opens `warmup` after the first request the server
/// saw, 1,200 ms, for a program that prints no marker). With the program's
/// warmup equal to the scenario's, the two raced: a program scheduled a few
/// milliseconds late lost, its window opened by the timer, and the unacked
/// program's lag did not show (one clean-clone run, 2026-12-04).
const PROGRAM: &str = r#"
import http.client, json, os, sys, threading, time, urllib.parse
url = urllib.parse.urlparse(os.environ["BENCHGATE_URL"])
ack = os.environ.get("BENCHGATE_WINDOW_ACK") == "stdin" and "--no-ack" not in sys.argv
# Its own warmup: a quarter of the scenario's, so that its open marker (and
# benchgate's lag on it) comes long before benchgate would open the window on
# its own, `warmup` after the first request.
warmup = int(os.environ["BENCHGATE_WARMUP_MS"]) / 1000 / 4
duration = int(os.environ["BENCHGATE_DURATION_MS"]) / 1000
lock = threading.Lock()
state = {"counting": False, "count": 0, "stop": False}
def worker():
    c = http.client.HTTPConnection(url.hostname, url.port)
    while not state["stop"]:
        c.request("GET", url.path)
        c.getresponse().read()
        with lock:
            if state["counting"]:
                state["count"] += 1
threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
time.sleep(warmup)
print("BENCHGATE-WINDOW-OPEN", flush=True)
if ack:
    assert sys.stdin.readline().strip() == "BENCHGATE-WINDOW-OPENED"
with lock:
    state["counting"] = True
start = time.monotonic()
time.sleep(duration)
print("BENCHGATE-WINDOW-CLOSE", flush=True)
if ack:
    assert sys.stdin.readline().strip() == "BENCHGATE-WINDOW-CLOSED"
with lock:
    state["counting"] = False
    n = state["count"]
elapsed = time.monotonic() - start
state["stop"] = True
for t in threads:
    t.join()
result = {"benchgate_result": 1, "requests": n, "ok": n, "elapsed_s": elapsed, "latency_us": [1] * n}
with open(os.environ["BENCHGATE_RESULT_PATH"], "w") as f:
    json.dump(result, f)
"#;

#[test]
fn acknowledged_markers_keep_the_counts_exact_when_benchgate_is_late() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("client.py");
    std::fs::write(&program, PROGRAM).unwrap();
    let config = format!(
        r#"[run]
rounds = 2
warmup = "1200ms"
duration = "1500ms"

[[client]]
name = "acked"
kind = "command"
command = ["python3", {program:?}]
timeout = "30s"

[[client]]
name = "unacked"
kind = "command"
command = ["python3", {program:?}, "--no-ack"]
timeout = "30s"

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 2
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
        .env("BENCHGATE_TEST_MARKER_LAG_MS", "300")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let r = benchgate::results::RunResults::read(&out).unwrap();
    // (program's count, server's count) per trial.
    let counts = |client: &str| -> Vec<(u64, u64)> {
        cell(&r, "get", client)
            .trials
            .iter()
            .map(|t| {
                assert_eq!(t.failure, None, "{client}");
                // The window benchgate bracketed, planned and actual, and the
                // server's length of it: the same interval.
                assert_eq!(t.window_planned_s, Some(1.5));
                let actual = t.window_actual_s.expect("window_actual_s");
                let server = t.server.as_ref().unwrap().window_secs;
                assert!(
                    (actual - server).abs() < 0.1 && actual > 1.0,
                    "{client}: actual {actual} s, the server's {server} s"
                );
                (
                    t.metrics.as_ref().unwrap().ok,
                    t.server.as_ref().unwrap().requests,
                )
            })
            .collect()
    };
    for (own, server) in counts("acked") {
        // Exact but for the requests in flight at either edge (2 workers).
        let diff = own.abs_diff(server);
        assert!(
            diff as f64 <= 4.0 + 0.01 * server as f64,
            "acked: program counted {own}, server {server}"
        );
        assert!(server > 50, "too few requests to tell: {server}");
    }
    for (own, server) in counts("unacked") {
        // Counting starts 300 ms before the server's window opens (of 1.5 s).
        assert!(
            own as f64 > 1.08 * server as f64,
            "unacked: program counted {own}, server {server}: the lag did not show"
        );
    }
}
