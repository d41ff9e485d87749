//! Issue 29: a trial the machine starved is run again, never counted. A
//! built-in driver stopped for 400 ms inside its 300 ms window (a preemption
//! stall of the kind a neighbour or steal time causes) gets its round run
//! again, with its pair, so pairs stay pairs; a client that completes no
//! request in its window in every attempt keeps a `starved` mark and enters
//! no median. A driver stopped from its warmup until past its planned
//! window's end opens its window late and measures it whole, from its
//! opening, at its side and at the server's.

use crate::common;

use std::path::Path;
use std::process::Command;

use benchgate::results::{CellResult, RunResults};

/// A command client that behaves by `BENCHGATE_ROUND` and the attempt of
/// that round (counted in a file): `idle` completes no request in round 2's
/// window, every attempt; anything else is a plain client.
const CLIENT: &str = r#"
import http.client, json, os, sys, time, urllib.parse
mode = sys.argv[1]
rnd = int(os.environ["BENCHGATE_ROUND"])
mark = f"attempts-{mode}-{rnd}"
attempt = (int(open(mark).read()) if os.path.exists(mark) else 0) + 1
open(mark, "w").write(str(attempt))
u = urllib.parse.urlparse(os.environ["BENCHGATE_URL"])
conn = http.client.HTTPConnection(u.hostname, u.port)
warm = int(os.environ["BENCHGATE_WARMUP_MS"]) / 1000
dur = int(os.environ["BENCHGATE_DURATION_MS"]) / 1000
idle = mode == "idle" and rnd == 2
t0 = time.monotonic()
lat = []
opened = False
while True:
    t = time.monotonic()
    if t - t0 >= warm + dur:
        break
    if t - t0 >= warm and not opened:
        print("BENCHGATE-WINDOW-OPEN", flush=True)
        opened = True
    if opened and idle:
        time.sleep(0.005)
        continue
    conn.request("GET", u.path)
    conn.getresponse().read()
    if opened:
        lat.append(int((time.monotonic() - t) * 1e6))
print("BENCHGATE-WINDOW-CLOSE", flush=True)
out = {"benchgate_result": 1, "requests": len(lat), "ok": len(lat), "elapsed_s": dur, "latency_us": lat}
json.dump(out, open(os.environ["BENCHGATE_RESULT_PATH"], "w"))
"#;

fn config(a: &str, b: &str) -> String {
    format!(
        r#"[run]
rounds = 4
warmup = "50ms"
duration = "150ms"
pin = false

[[client]]
name = "a"
kind = "command"
command = ["python3", "client.py", "{a}"]

[[client]]
name = "b"
kind = "command"
command = ["python3", "client.py", "{b}"]

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 1
"#
    )
}

fn run(dir: &Path, toml: &str) -> (RunResults, String) {
    std::fs::write(dir.join("client.py"), CLIENT).unwrap();
    std::fs::write(dir.join("benchgate.toml"), toml).unwrap();
    let out = Command::new(common::exe())
        .current_dir(dir)
        .args(["run", "--config", "benchgate.toml", "--out", "results.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    (RunResults::read(&dir.join("results.json")).unwrap(), stderr)
}

fn cell<'a>(r: &'a RunResults, client: &str) -> &'a CellResult {
    r.results.iter().find(|c| c.client == client).unwrap()
}

/// The built-in drivers (`benchgate __drive`) that are children of `parent`.
fn drivers_of(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // pid (comm) state ppid ...: the fields after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if ppid == Some(parent) && String::from_utf8_lossy(&cmdline).contains("__drive") {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_driver_stopped_inside_its_window_runs_the_round_again_with_its_pair() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("benchgate.toml"),
        r#"[run]
rounds = 3
warmup = "100ms"
duration = "300ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[client]]
name = "reqwest"
kind = "reqwest"

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 1
"#,
    )
    .unwrap();
    let child = Command::new(common::exe())
        .current_dir(dir.path())
        .args(["run", "--config", "benchgate.toml", "--out", "results.json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The third driver started (round 2's first): stop it 200 ms after it
    // appears (100 ms into its window) for 400 ms, as a neighbour would.
    let parent = child.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut seen = std::collections::BTreeSet::new();
    let stopped = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "no third driver in 30 s"
        );
        for pid in drivers_of(parent) {
            seen.insert(pid);
        }
        if seen.len() >= 3 {
            break *seen.iter().nth(2).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: kill(2) on a pid this test found as its child's child.
    unsafe { libc::kill(stopped as i32, libc::SIGSTOP) };
    std::thread::sleep(std::time::Duration::from_millis(400));
    unsafe { libc::kill(stopped as i32, libc::SIGCONT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("starved by the machine: its window lasted")
            && stderr.contains("running the round again (1 of 2)"),
        "the stalled trial was not run again:\n{stderr}"
    );
    let r = RunResults::read(&dir.path().join("results.json")).unwrap();
    let mut rerun_rounds = Vec::new();
    for client in ["hyper", "reqwest"] {
        let c = cell(&r, client);
        let rounds: Vec<u32> = c.trials.iter().map(|t| t.round).collect();
        assert_eq!(rounds, [1, 2, 3], "{client}: one trial per round");
        for t in &c.trials {
            // No stalled window was recorded as a measurement.
            let (planned, server) = (t.window_planned_s.unwrap(), t.server.as_ref().unwrap());
            assert!(
                !t.starved() || t.reruns == 2,
                "{client} round {}: {:?}",
                t.round,
                t.invalid
            );
            if !t.starved() {
                assert!(
                    (server.window_secs - planned).abs() <= 0.1 * planned,
                    "{client} round {}: a stalled window was recorded: {} s of {planned} s",
                    t.round,
                    server.window_secs
                );
            }
            if t.reruns > 0 {
                rerun_rounds.push((client, t.round));
            }
        }
    }
    // The pair ran again together: both cells' trials of that round say so.
    assert!(
        rerun_rounds
            .iter()
            .any(|(c, r)| *c == "hyper" && rerun_rounds.contains(&("reqwest", *r))),
        "{rerun_rounds:?}\n{stderr}"
    );
}

#[test]
fn a_trial_starved_in_every_attempt_is_marked_and_enters_no_median() {
    let dir = tempfile::tempdir().unwrap();
    let (r, stderr) = run(dir.path(), &config("idle", "plain"));
    assert!(
        stderr.contains("running the round again (2 of 2)"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("attempts-idle-2")).unwrap(),
        "3",
        "round 2 ran three times"
    );
    let a = cell(&r, "a");
    let starved: Vec<_> = a.trials.iter().filter(|t| t.starved()).collect();
    assert_eq!(starved.len(), 1, "{:?}", a.trials);
    let t = starved[0];
    assert_eq!((t.round, t.reruns), (2, 2));
    assert!(
        t.invalid[0].describe().contains("completed no request"),
        "{:?}",
        t.invalid
    );
    // Never a 0 in a median: the summary comes from rounds 1, 3 and 4.
    let rps = &a.summary["throughput_rps"];
    assert!(
        rps.min > 0.0,
        "a starved trial entered the summary: {rps:?}"
    );
    // The run's other cell was not starved and kept every round.
    let b = cell(&r, "b");
    assert!(b.trials.iter().all(|t| !t.starved()));
    assert_eq!(b.trials.len(), 4);
}

/// Whether `pid` holds a socket. A built-in driver's first is its first
/// connection to the server, opened as its warmup begins (its output goes
/// to a file, the control port is called when the window opens).
fn has_socket(pid: u32) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
    })
}

#[test]
fn a_driver_stopped_from_its_warmup_past_its_planned_window_measures_a_whole_window() {
    let dir = tempfile::tempdir().unwrap();
    // One client per engine path: tokio tasks, threads, the h1-lean loop.
    std::fs::write(
        dir.path().join("benchgate.toml"),
        r#"[run]
rounds = 1
warmup = "100ms"
duration = "300ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[client]]
name = "blocking"
kind = "reqwest-blocking"

[[client]]
name = "lean"
kind = "h1-lean"

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 1
"#,
    )
    .unwrap();
    let stderr_path = dir.path().join("stderr.txt");
    let mut child = Command::new(common::exe())
        .current_dir(dir.path())
        .args(["run", "--config", "benchgate.toml", "--out", "results.json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    // Every driver, reruns included: stopped 30 ms after its first
    // connection (70 ms before its planned opening) for 600 ms, past its
    // planned window's end (a descheduled driver on a noisy runner).
    let (parent, ms) = (child.id(), std::time::Duration::from_millis);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut stopped = std::collections::BTreeSet::new();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run took over 60 s");
        }
        let fresh = drivers_of(parent)
            .into_iter()
            .find(|p| !stopped.contains(p));
        match fresh {
            Some(pid) if has_socket(pid) => {
                std::thread::sleep(ms(30));
                // SAFETY: kill(2) on a pid this test found as its child's child.
                unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
                std::thread::sleep(ms(600));
                unsafe { libc::kill(pid as i32, libc::SIGCONT) };
                stopped.insert(pid);
            }
            _ => std::thread::sleep(ms(1)),
        }
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(status.success(), "{stderr}");
    let r = RunResults::read(&dir.path().join("results.json")).unwrap();
    let mut attempts = 0;
    for client in ["hyper", "blocking", "lean"] {
        let c = cell(&r, client);
        assert_eq!(c.trials.len(), 1, "{client}: one trial");
        let t = &c.trials[0];
        let planned = t.window_planned_s.unwrap();
        let actual = t.window_actual_s.unwrap();
        let server = t.server.as_ref().unwrap().window_secs;
        let requests = t.metrics.as_ref().unwrap().requests;
        // Measured, whole: not a window of a few ms with no request, and
        // not run again for it (a rerun would be the machine's own noise,
        // and its attempt was stopped the same way).
        assert!(
            !t.starved() && requests > 0,
            "{client}: {requests} requests, {:?}\n{stderr}",
            t.invalid
        );
        for (side, w) in [("driver", actual), ("server", server)] {
            assert!(
                (w - planned).abs() <= 0.1 * planned,
                "{client}: the window lasted {w} s at the {side} where {planned} s were planned\n{stderr}"
            );
        }
        attempts = attempts.max(1 + t.reruns as usize);
    }
    assert!(!stderr.contains("it opened late"), "{stderr}");
    // Every attempt of the round (three drivers each) was stopped.
    assert_eq!(stopped.len(), 3 * attempts, "{stopped:?}\n{stderr}");
}
