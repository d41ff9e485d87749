//! Servers under test that turn bad mid-run: ready at first, then after a
//! few requests one dies, one stalls (never answers again) and one resets
//! every connection. The run ends within its bounds; the trial during which
//! the server died fails with its exit status and output; the stalled and
//! reset requests are counted as timeout and read errors; no server process
//! is left behind; and the run goes on with the next server.

use crate::common;

use std::time::{Duration, Instant};

use benchgate::orchestrate::escapees;
use benchgate::results::RunResults;
use common::run_config;

/// A keep-alive HTTP/1.1 server (standard library only): answers 22 bytes to
/// the first LIMIT requests (the readiness probe included), then misbehaves
/// as MODE says: `dies` (exits 3), `stalls` (never answers), `resets` (closes
/// the connection with a TCP reset).
const SERVER: &str = r#"
import os, socket, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
mode, limit, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lock = threading.Lock()
seen = [0]
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        super().setup()
        # Headers and body go out as separate writes: without this, Nagle's
        # algorithm and delayed ACKs hold every response ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def log_message(self, *args):
        pass
    def do_GET(self):
        with lock:
            seen[0] += 1
            n = seen[0]
        if n > limit:
            if mode == "dies":
                os._exit(3)
            if mode == "stalls":
                time.sleep(3600)
            if mode == "resets":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
        self.send_response(200)
        self.send_header("Content-Length", "22")
        self.end_headers()
        self.wfile.write(b"x" * 22)
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

fn mark() -> String {
    format!(
        "misbehaving-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    )
}

/// Processes (of this user) whose environment holds `SUT_TEST_MARK=mark`.
fn processes_with(mark: &str) -> Vec<u32> {
    escapees::processes_with(&format!("SUT_TEST_MARK={mark}"))
}

fn server(name: &str, mode: &str, script: &str, mark: &str) -> String {
    format!(
        "[[server]]\nname = \"{name}\"\ncommand = [\"python3\", {script:?}, \"{mode}\", \"50\", \"{{port}}\"]\n\
         ready = \"http://127.0.0.1:{{port}}/ready\"\nready_timeout = \"10s\"\nstop_timeout = \"2s\"\n\
         env = {{ SUT_TEST_MARK = \"{mark}\" }}\n"
    )
}

#[test]
fn servers_that_die_stall_or_reset_mid_run_fail_cleanly_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("server.py");
    std::fs::write(&script, SERVER).unwrap();
    let script = script.display().to_string();
    let mark = mark();
    let toml = format!(
        "[run]\nrounds = 1\nwarmup = \"100ms\"\nduration = \"400ms\"\n\
         [[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\
         [[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\nconcurrency = 2\ntimeout = \"300ms\"\n\
         {}{}{}{}",
        server("dies", "dies", &script, &mark),
        server("stalls", "stalls", &script, &mark),
        server("resets", "resets", &script, &mark),
        server("fine", "fine", &script, &mark),
    );
    let started = Instant::now();
    let run = run_config(&toml, &[]);
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&run.output.stderr).to_string();
    assert!(
        elapsed < Duration::from_secs(60),
        "took {elapsed:?}: {stderr}"
    );
    assert_eq!(
        processes_with(&mark),
        Vec::<u32>::new(),
        "servers left behind"
    );
    let r: RunResults = run.results_with_failed_cells(&["get / hyper @ dies"]);
    let trial = |server: &str| {
        r.cell_at("get", "hyper", Some(server))
            .unwrap_or_else(|| panic!("no cell for {server}: {stderr}"))
            .trials[0]
            .clone()
    };
    // The well-behaved server, after the others: measured as usual.
    let fine = trial("fine");
    assert_eq!(fine.failure, None, "{stderr}");
    assert_eq!(fine.metrics.as_ref().unwrap().errors.total(), 0);

    // Died: that trial fails, saying so, with the exit status and output.
    let dies = trial("dies");
    let reason = dies
        .failure
        .clone()
        .unwrap_or_else(|| panic!("a server that died must fail its trial: {:?}", dies.metrics));
    assert!(
        reason.contains("server \"dies\" exited (exit status: 3) while it was being measured"),
        "{reason}"
    );
    assert!(reason.contains("server stderr tail"), "{reason}");
    // Stalled and resetting: measured, with the failures in their classes.
    for (name, class) in [("stalls", "timeout"), ("resets", "read")] {
        let t = trial(name);
        assert_eq!(t.failure, None, "{name}");
        let m = t.metrics.as_ref().unwrap();
        let errors = serde_json::to_value(m.errors).unwrap();
        assert!(
            errors[class].as_u64().unwrap_or(0) > 0,
            "{name}: expected {class} errors, got {errors}"
        );
    }
}
