//! Processes that leave a trial, a setup step or a server under test end
//! with the run (issue 53, point 4): a setup step's daemon lives through the
//! trials and no longer; a background child, a double fork with setsid,
//! nohup, and setsid with a cleared environment are all gone once `benchgate
//! run` returns; a server under test that hands its listening socket to an
//! escaped child leaves no listener behind.

use std::path::Path;
use std::time::Duration;

use crate::command_clients::killed_within;
use crate::common;

use common::{cell, run_config};

/// The pids written to the files `names` under `dir`.
fn pids(dir: &Path, names: &[&str]) -> Vec<u32> {
    names
        .iter()
        .map(|n| {
            std::fs::read_to_string(dir.join(n))
                .unwrap_or_else(|e| panic!("{n}: {e}"))
                .trim()
                .parse()
                .unwrap_or_else(|e| panic!("{n}: {e}"))
        })
        .collect()
}

/// Kills what a failing test left running.
struct Reap(Vec<u32>);

impl Drop for Reap {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // SAFETY: kill(2) of a process this test's run started.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
    }
}

#[test]
fn what_a_setup_step_starts_runs_through_the_trials_and_ends_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // Four ways to outlive a shell: a background child (the daemon the
    // trials use), a double fork into a session of its own, nohup, and
    // setsid with a cleared environment (no tag to find it by).
    let setup = format!(
        "sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {d}/bg; \
         sh -c 'setsid sh -c \"echo \\$\\$ > {d}/double; exec sleep 60\" </dev/null >/dev/null 2>&1 &'; \
         nohup sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {d}/nohup; \
         setsid env -i sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {d}/envi; \
         while [ ! -s {d}/double ]; do sleep 0.05; done"
    );
    // The client fails unless the setup's daemon still runs in its trial.
    let clients = format!(
        r#"[[client]]
name = "uses-daemon"
kind = "command"
setup = ["sh", "-c", {setup:?}]
command = ["sh", "-c", "kill -0 $(cat {d}/bg) || exit 7; end=$(( $(date +%s) + 1 )); while [ $(date +%s) -le $end ]; do curl -s -o /dev/null \"$BENCHGATE_URL\"; done"]
"#
    );
    let config = format!(
        "[run]\nrounds = 1\nwarmup = \"100ms\"\nduration = \"500ms\"\n{clients}\n[[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\n"
    );
    let run = run_config(&config, &[]);
    let started = pids(dir.path(), &["bg", "double", "nohup", "envi"]);
    let _reap = Reap(started.clone());
    let r = run.results();
    assert_eq!(cell(&r, "get", "uses-daemon").trials[0].failure, None);
    for (name, pid) in ["bg", "double", "nohup", "envi"].iter().zip(&started) {
        assert!(
            killed_within(*pid, Duration::from_secs(2)),
            "the setup's {name} process (pid {pid}) outlived the run"
        );
    }
}

/// A server under test (Python's standard library) that listens on its
/// port, then forks a child into a session of its own with a cleared
/// environment and its output on /dev/null (no tag, no file of benchgate's
/// to find it by), which keeps the listening socket, and serves on.
const SERVER_PY: &str = r#"
import http.server, os, socket
port = int(os.environ["BENCHGATE_SERVER_PORT"])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(64)
s.set_inheritable(True)
if os.fork() == 0:
    os.setsid()
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.execvp("env", ["env", "-i", "sleep", "60"])
open("port", "w").write(str(port))
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", "22")
        self.end_headers()
        self.wfile.write(b"x" * 22)
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", port), H, bind_and_activate=False)
srv.socket = s
srv.serve_forever()
"#;

#[test]
fn a_server_that_hands_its_socket_to_an_escaped_child_leaves_no_listener() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.py"), SERVER_PY).unwrap();
    let config = format!(
        r#"
[run]
rounds = 1
warmup = "100ms"
duration = "500ms"

[[client]]
name = "hyper"
kind = "hyper"

[[server]]
name = "handing"
command = ["python3", "server.py"]
cwd = "{dir}"
ready = "http://127.0.0.1:{{port}}/"
ready_timeout = "10s"

[[scenario]]
name = "get"
path = "/"
concurrency = 1
"#,
        dir = dir.path().display()
    );
    let run = run_config(&config, &[]);
    let r = run.results();
    let c = r.cell_at("get", "hyper", Some("handing")).unwrap();
    assert_eq!(c.trials[0].failure, None);
    let port: u16 = std::fs::read_to_string(dir.path().join("port"))
        .unwrap()
        .parse()
        .unwrap();
    // A listener left behind would accept (its backlog does, unserved).
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "a listener on port {port} outlived the run"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
