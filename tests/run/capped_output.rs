//! Programs that flood their output do not fill the disk (issue 30, point 4):
//! a command client flooding stdout mid-window and a server under test
//! flooding stderr, each for 3 s at 256 MiB/s, leave benchgate's scratch
//! space (under `TMPDIR`) below 64 MiB at its peak, sampled every 20 ms; the
//! client's window markers are still seen, and its kept output is its head,
//! a line counting what was left out, and its tail.

use crate::common;

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use benchgate::results::RunResults;
use common::{cell, exe};

/// The most disk the scratch space may hold at any moment.
const PEAK_LIMIT: u64 = 64 << 20;

/// `flood(stream, seconds)`: 1 MiB blocks of numbered lines, at most
/// `RATE` bytes/s (the first argument, else 256 MiB/s: a flood, and a
/// bounded one if the cap is gone); returns the bytes written.
const FLOOD_PY: &str = r#"
import sys, time
RATE = float(sys.argv[1]) if len(sys.argv) > 1 else 256 << 20
def flood(stream, seconds):
    block = b"".join(b"flood line %09d\n" % i for i in range(65536))
    start = time.monotonic()
    written = 0
    while time.monotonic() - start < seconds:
        stream.write(block)
        written += len(block)
        ahead = written / RATE - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)
    stream.flush()
    return written
"#;

/// A command client: marks its window, floods stdout for 3 s in it while
/// sending a request now and then, says on stderr how many bytes its stdout
/// had, and fails in round 2 (so that its output is kept).
const CLIENT_PY: &str = r#"
import http.client, os, sys, urllib.parse
u = urllib.parse.urlparse(os.environ["BENCHGATE_URL"])
conn = http.client.HTTPConnection(u.hostname, u.port)
def get():
    conn.request("GET", u.path)
    conn.getresponse().read()
out = sys.stdout.buffer
get()
lines = [b"FIRST LINE\n", b"BENCHGATE-WINDOW-OPEN\n"]
out.write(b"".join(lines))
out.flush()
sys.stdin.readline()
get()
written = flood(out, 3)
get()
end = [b"LAST LINE\n", b"BENCHGATE-WINDOW-CLOSE\n"]
out.write(b"".join(end))
out.flush()
sys.stdin.readline()
total = written + sum(len(l) for l in lines + end)
print("stdout had %d bytes" % total, file=sys.stderr)
sys.exit(1 if os.environ["BENCHGATE_ROUND"] == "2" else 0)
"#;

/// Bytes the files under `dir` hold on disk (their blocks, not their length:
/// a file with holes punched holds only what is left).
fn disk_usage(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => m.blocks() * 512 + disk_usage(&e.path()),
            Ok(m) => m.blocks() * 512,
            Err(_) => 0, // removed meanwhile
        })
        .sum()
}

/// `benchgate run` of `config` (in `dir`) with `TMPDIR` a fresh directory
/// whose disk usage is sampled every 20 ms; returns the run's output and
/// the peak.
fn run_sampled(dir: &Path, config: &str) -> (Output, u64) {
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(dir.join("benchgate.toml"), config).unwrap();
    let child = Command::new(exe())
        .current_dir(dir)
        .args(["run", "--config", "benchgate.toml", "--out", "results.json"])
        .env("CI", "true")
        .env("TMPDIR", scratch.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (done, scratch) = (Arc::clone(&done), scratch.path().to_path_buf());
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(Ordering::Relaxed) {
                peak = peak.max(disk_usage(&scratch));
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        })
    };
    let output = child.wait_with_output().unwrap();
    done.store(true, Ordering::Relaxed);
    let peak = sampler.join().unwrap();
    eprintln!("scratch space peak: {peak} bytes");
    (output, peak)
}

#[test]
fn a_client_flooding_stdout_is_measured_and_its_output_capped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("client.py"),
        format!("{FLOOD_PY}{CLIENT_PY}"),
    )
    .unwrap();
    // The window lasts as the markers say (3 s), not `duration`.
    let config = r#"
[run]
rounds = 2
warmup = "100ms"
duration = "1s"

[[client]]
name = "flood"
kind = "command"
command = ["python3", "client.py"]
timeout = "60s"

[[scenario]]
name = "get"
path = "/bytes/22"
"#;
    let (output, peak) = run_sampled(dir.path(), config);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(peak < PEAK_LIMIT, "scratch space peaked at {peak} bytes");

    let r = RunResults::read(&dir.path().join("results.json")).unwrap();
    let trials = &cell(&r, "get", "flood").trials;
    // Round 1: measured, its window bracketed by the markers around the flood.
    assert_eq!(trials[0].failure, None);
    assert!(trials[0].metrics.as_ref().unwrap().ok > 0);
    let window = trials[0].window_actual_s.unwrap();
    assert!(window > 2.5, "the markers were not followed: {window} s");

    // Round 2 failed: the reason quotes the tails, the log keeps the rest.
    let failure = trials[1].failure.as_deref().unwrap();
    let (path, tails) = failure
        .split_once(" (full output: ")
        .and_then(|(_, rest)| rest.split_once(")\n"))
        .unwrap_or_else(|| panic!("no log named: {failure}"));
    assert!(
        tails.starts_with("stdout tail:\n… ")
            && tails.contains("LAST LINE\nBENCHGATE-WINDOW-CLOSE"),
        "{tails}"
    );
    assert!(tails.len() < 6000, "bounded: {} bytes", tails.len());
    let log = std::fs::read_to_string(dir.path().join(path)).unwrap();
    assert!(
        log.len() < 1 << 20,
        "the log is capped: {} bytes",
        log.len()
    );
    let (stdout, stderr) = log.split_once("\nstderr (").unwrap();
    let total: u64 = stderr
        .split_once("stdout had ")
        .and_then(|(_, n)| n.split_once(" bytes"))
        .unwrap()
        .0
        .parse()
        .unwrap();
    assert!(total > PEAK_LIMIT, "the program flooded only {total} bytes");
    let body = stdout
        .strip_prefix(&format!("stdout ({total} bytes):\n"))
        .unwrap_or_else(|| panic!("{}", &stdout[..200]));
    assert!(body.starts_with("FIRST LINE\nBENCHGATE-WINDOW-OPEN\nflood line 000000000\n"));
    assert!(body.ends_with("flood line 000065535\nLAST LINE\nBENCHGATE-WINDOW-CLOSE\n"));
    let line = body
        .lines()
        .find(|l| l.starts_with("… "))
        .unwrap_or_else(|| panic!("no omission line"));
    let omitted: u64 = line
        .split_once(" omitted (")
        .and_then(|(_, n)| n.strip_suffix(" bytes) …"))
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    // What is shown and what was left out add up to what was written.
    let shown = (body.len() - line.len() - 1) as u64;
    assert_eq!(shown + omitted, total, "{line}");
}

/// The same client at full speed, where the machine allows GB/s: reading
/// every byte of its stdout for markers may fall behind, and past 16 MiB
/// benchgate gives up reading it and voids the trial. Either way the disk
/// stays bounded.
#[test]
fn a_client_flooding_stdout_at_full_speed_never_fills_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("client.py"),
        format!("{FLOOD_PY}{CLIENT_PY}"),
    )
    .unwrap();
    let config = r#"
[run]
rounds = 1
warmup = "100ms"
duration = "1s"

[[client]]
name = "flood"
kind = "command"
command = ["python3", "client.py", "1e15"]
timeout = "60s"

[[scenario]]
name = "get"
path = "/bytes/22"
"#;
    let (output, peak) = run_sampled(dir.path(), config);
    assert!(peak < PEAK_LIMIT, "scratch space peaked at {peak} bytes");
    let r = RunResults::read(&dir.path().join("results.json")).unwrap();
    let trial = &cell(&r, "get", "flood").trials[0];
    match trial.failure.as_deref() {
        None => assert!(output.status.success() && trial.window_actual_s.unwrap() > 2.5),
        Some(f) => assert!(
            f.starts_with("the program wrote to stdout faster than benchgate could read it"),
            "{f}"
        ),
    }
}

/// A server under test (the reference server) started with a program that
/// floods its stderr for 3 s, then writes how much it wrote to `flooded`.
const SERVER_FLOOD_PY: &str = r#"
import sys
n = flood(sys.stderr.buffer, 3)
open("flooded", "w").write(str(n))
"#;

#[test]
fn a_server_flooding_stderr_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let flood = dir.path().join("flood.py");
    std::fs::write(&flood, format!("{FLOOD_PY}{SERVER_FLOOD_PY}")).unwrap();
    let config = format!(
        r#"
[run]
rounds = 1
warmup = "100ms"
duration = "4s"

[[client]]
name = "hyper"
kind = "hyper"

[[server]]
name = "flooding"
command = ["sh", "-c", "python3 \"$1\" & exec \"$0\" serve --no-tls --listen 127.0.0.1:$BENCHGATE_SERVER_PORT", "{exe}", "{flood}"]
cwd = "{dir}"
ready = "http://127.0.0.1:{{port}}/bytes/1"
ready_timeout = "10s"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
"#,
        exe = exe(),
        flood = flood.display(),
        dir = dir.path().display()
    );
    let (output, peak) = run_sampled(dir.path(), &config);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(peak < PEAK_LIMIT, "scratch space peaked at {peak} bytes");
    let flooded: u64 = std::fs::read_to_string(dir.path().join("flooded"))
        .expect("the flood ran to its end")
        .parse()
        .unwrap();
    assert!(
        flooded > PEAK_LIMIT,
        "the server flooded only {flooded} bytes"
    );
    let r = RunResults::read(&dir.path().join("results.json")).unwrap();
    let c = r.cell_at("get-22b", "hyper", Some("flooding")).unwrap();
    assert_eq!(c.trials[0].failure, None);
    assert!(c.trials[0].metrics.as_ref().unwrap().ok > 0);
}

/// Issue 53, point 4: a command client whose grandchild escapes its group
/// (setsid, a cleared environment: no tag) and floods the stdout it
/// inherited at 256 MiB/s for 30 s, long after the trial. It is ended with
/// its trial (it holds the trial's output file), not left writing into a
/// file benchgate has unlinked: the second round's program fails (exit 9)
/// if the first round's grandchild still runs. Until then its flood is
/// folded as the program's, within the bound.
#[test]
fn an_escaped_grandchild_flooding_its_inherited_stdout_is_bounded_and_ended() {
    let dir = tempfile::tempdir().unwrap();
    let escapee = "import os\nopen(sys.argv[2], \"w\").write(str(os.getpid()))\nflood(sys.stdout.buffer, 30)\n";
    std::fs::write(
        dir.path().join("escapee.py"),
        format!("{FLOOD_PY}{escapee}"),
    )
    .unwrap();
    let pidfile = dir.path().join("escaped.pid");
    let config = format!(
        r#"
[run]
rounds = 2
warmup = "100ms"
duration = "500ms"

[[client]]
name = "escapes"
kind = "command"
command = ["sh", "-c", "if [ -s {pidfile} ] && kill -0 $(cat {pidfile}); then exit 9; fi; setsid env -i \"$(command -v python3)\" escapee.py 268435456 {pidfile} & end=$(( $(date +%s) + 1 )); while [ $(date +%s) -le $end ]; do curl -s -o /dev/null \"$BENCHGATE_URL\"; done"]
timeout = "60s"

[[scenario]]
name = "get"
path = "/bytes/22"
"#,
        pidfile = pidfile.display()
    );
    let (output, peak) = run_sampled(dir.path(), &config);
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .expect("the escaped process wrote its pid")
        .trim()
        .parse()
        .unwrap();
    let ended = crate::command_clients::killed_within(pid, Duration::from_secs(2));
    // SAFETY: kill(2) of the flood this test started, should it be left.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    assert!(ended, "the escaped grandchild (pid {pid}) outlived the run");
    assert!(peak < PEAK_LIMIT, "scratch space peaked at {peak} bytes");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // Both rounds measured: the second did not find the first one's flood.
    let r = RunResults::read(&dir.path().join("results.json")).unwrap();
    let trials = &cell(&r, "get", "escapes").trials;
    let failures: Vec<_> = trials.iter().filter_map(|t| t.failure.as_deref()).collect();
    assert!(
        failures.is_empty(),
        "{:?}",
        failures
            .iter()
            .map(|f| &f[..f.len().min(200)])
            .collect::<Vec<_>>()
    );
}

/// A server under test flooding stdout at full speed for 3 s, where the
/// machine allows GB/s: stopped while its output is folded whenever it gets
/// 16 MiB ahead, so that the disk stays within the documented bound.
#[test]
fn a_server_flooding_stdout_at_full_speed_stays_within_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let flood = dir.path().join("flood.py");
    let server_py =
        "import sys\nn = flood(sys.stdout.buffer, 3)\nopen(\"flooded\", \"w\").write(str(n))\n";
    std::fs::write(&flood, format!("{FLOOD_PY}{server_py}")).unwrap();
    let config = format!(
        r#"
[run]
rounds = 1
warmup = "100ms"
duration = "4s"

[[client]]
name = "hyper"
kind = "hyper"

[[server]]
name = "flooding"
command = ["sh", "-c", "python3 \"$1\" 1e15 & exec \"$0\" serve --no-tls --listen 127.0.0.1:$BENCHGATE_SERVER_PORT", "{exe}", "{flood}"]
cwd = "{dir}"
ready = "http://127.0.0.1:{{port}}/bytes/1"
ready_timeout = "10s"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
"#,
        exe = exe(),
        flood = flood.display(),
        dir = dir.path().display()
    );
    let (output, peak) = run_sampled(dir.path(), &config);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(peak < PEAK_LIMIT, "scratch space peaked at {peak} bytes");
    let flooded: u64 = std::fs::read_to_string(dir.path().join("flooded"))
        .expect("the flood ran to its end")
        .parse()
        .unwrap();
    assert!(
        flooded > PEAK_LIMIT,
        "the server flooded only {flooded} bytes"
    );
}
