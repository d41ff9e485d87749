//! The container image's PID 1 (Dockerfile: `tini -- benchgate`), run as the
//! container runs it: in a fresh PID namespace (`unshare --pid --fork`), where
//! the first process is PID 1 and every orphan is reparented to it.
//!
//! A server under test whose process forks a grandchild and exits leaves that
//! grandchild to PID 1. When benchgate stops the server's process group, the
//! grandchild dies, and unless PID 1 reaps it, it stays a zombie that keeps
//! the group "alive", so the stop times out ("did not stop"). Under tini it is
//! reaped and the server stops cleanly. The second case runs benchgate itself
//! as PID 1 (the image before tini): benchgate reaps the orphans it adopts
//! (`orchestrate::escapees`), so it stops cleanly too; tini stays PID 1 for
//! everything else an init does.

use crate::common;

use std::process::Command;

use common::exe;

/// One server under test whose start leaves an orphaned grandchild
/// (`(sleep 600 &)`: the subshell forks `sleep` and exits) in its process
/// group, then execs the reference server.
fn config() -> String {
    format!(
        r#"
[run]
rounds = 1
warmup = "20ms"
duration = "150ms"
pin = false

[[server]]
name = "forking"
command = ["sh", "-c", "(sleep 600 &); exec '{exe}' serve --no-tls --listen 127.0.0.1:{{port}}"]
ready = "http://127.0.0.1:{{port}}/bytes/1"
ready_timeout = "10s"
stop_timeout = "1s"

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
"#,
        exe = exe()
    )
}

/// `unshare --pid --fork --mount-proc [tini --] benchgate run`, as root.
fn run_in_pid_namespace(with_tini: bool) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("benchgate.toml");
    std::fs::write(&config_path, config()).unwrap();
    let mut cmd = Command::new("unshare");
    cmd.args(["--pid", "--fork", "--mount-proc"]);
    if with_tini {
        cmd.args(["tini", "--"]);
    }
    cmd.arg(exe())
        .arg("run")
        .arg("--config")
        .arg(&config_path)
        .arg("--out")
        .arg(dir.path().join("results.json"))
        .current_dir(dir.path());
    let out = cmd.output().expect(
        "unshare (util-linux) and tini (Debian's tini, scripts/install-test-deps.sh) run here",
    );
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), log)
}

#[test]
fn under_tini_a_server_that_leaves_an_orphan_stops_cleanly() {
    let (code, log) = run_in_pid_namespace(true);
    assert_eq!(code, 0, "{log}");
    assert!(!log.contains("did not stop"), "{log}");
    assert!(!log.contains("FAILED"), "{log}");
}

#[test]
fn benchgate_as_pid_1_without_an_init_reaps_such_an_orphan_itself() {
    // The image before tini could not stop such a server (the orphan's
    // zombie outlived the stop timeout); benchgate now reaps the orphans it
    // adopts, as PID 1 or as a child subreaper, by their pid.
    let (code, log) = run_in_pid_namespace(false);
    assert_eq!(code, 0, "{log}");
    assert!(!log.contains("did not stop"), "{log}");
}
