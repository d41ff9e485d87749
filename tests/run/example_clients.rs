//! The example clients in fixtures/clients (curl, Python `requests`, Java Apache
//! HttpClient 5 with HdrHistogram) run through `benchgate run`, and the Java
//! histogram decodes in benchgate to exactly what Java printed.
//!
//! Needs what `scripts/install-test-deps.sh` installs (the README's test command
//! runs it first); without it these tests fail and say so.

use crate::common;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use benchgate::measure::LatencyHistogram;
use common::{cell, exe, run_config};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One client at a time: two clients and their servers at once on a 2-core
/// machine delay the window markers and skew the counts being compared.
static SERIAL: Mutex<()> = Mutex::new(());

fn require_deps() -> std::sync::MutexGuard<'static, ()> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let java_built = Path::new(ROOT)
        .join("fixtures/clients/java/out/ApacheBench.class")
        .exists();
    let requests = Command::new("python3")
        .args(["-c", "import requests"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        java_built && requests,
        "example client dependencies are missing (java classes built: {java_built}, python requests: {requests}); run scripts/install-test-deps.sh (scripts/test.sh does)"
    );
    serial
}

fn config(client: &str, command: &str) -> String {
    format!(
        r#"[run]
rounds = 2
warmup = "500ms"
duration = "1500ms"

[[client]]
name = "{client}"
kind = "command"
cwd = {ROOT:?}
command = {command}
timeout = "60s"

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 4
"#
    )
}

/// Runs one example client; its own count must match the server's within 1%,
/// or within what the window's edges allow, whichever is more: the requests
/// in flight at each edge (one per worker) and what completes while benchgate
/// reads the program's window markers (bounded at 10 ms per edge, as
/// tests/run_e2e.rs bounds a built-in driver's control call).
fn own_count_agrees(client: &str, command: &str) {
    let _serial = require_deps();
    let run = run_config(&config(client, command), &[]);
    let r = run.results();
    let c = cell(&r, "get", client);
    for t in &c.trials {
        assert_eq!(t.failure, None, "{client}");
        let (m, s) = (t.metrics.as_ref().unwrap(), t.server.as_ref().unwrap());
        let diff = m.ok.abs_diff(s.requests);
        let edges = 2 * 4 + (m.throughput_rps.unwrap() * 0.010 * 2.0).ceil() as u64;
        let slack = edges.max(m.ok / 100);
        assert!(
            diff <= slack,
            "{client}: program counted {}, server {} ({:.2}%, allowed {slack})",
            m.ok,
            s.requests,
            diff as f64 * 100.0 / m.ok.max(1) as f64
        );
        assert!(m.latency_p99_us.unwrap() >= m.latency_p50_us.unwrap());
        assert!(
            m.peak_threads >= 4,
            "{client}: one thread per worker at least"
        );
    }
}

#[test]
fn python_requests_client_agrees_with_the_server() {
    own_count_agrees(
        "python-requests",
        r#"["python3", "fixtures/clients/python_client.py"]"#,
    );
}

#[test]
fn java_apache_httpclient5_agrees_with_the_server() {
    own_count_agrees(
        "apache-httpclient5",
        r#"["sh", "fixtures/clients/java/run.sh", "ApacheBench"]"#,
    );
}

#[test]
fn curl_black_box_has_throughput_and_no_latency() {
    let _serial = require_deps();
    let run = run_config(
        &config("curl", r#"["bash", "fixtures/clients/curl.sh"]"#),
        &[],
    );
    let r = run.results();
    for t in &cell(&r, "get", "curl").trials {
        assert_eq!(t.failure, None);
        let m = t.metrics.as_ref().unwrap();
        assert!(m.throughput_rps.unwrap() > 0.0);
        assert_eq!(m.latency_p50_us, None);
    }
}

#[test]
fn java_histogram_decodes_to_what_java_printed() {
    let _serial = require_deps();
    // A reference server of our own, and the Java client run by hand.
    let mut server = Command::new(exe())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-tls",
            "--exit-on-stdin-eof",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let base = lines.next().unwrap().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result.json");
    let out = Command::new("sh")
        .args(["fixtures/clients/java/run.sh", "ApacheBench"])
        .current_dir(ROOT)
        .env("BENCHGATE_URL", format!("{base}/delay/1"))
        .env("BENCHGATE_BASE_URL", &base)
        .env("BENCHGATE_METHOD", "GET")
        .env("BENCHGATE_PATH", "/delay/1")
        .env("BENCHGATE_BODY_BYTES", "0")
        .env("BENCHGATE_CONCURRENCY", "4")
        .env("BENCHGATE_RATE", "0")
        .env("BENCHGATE_WARMUP_MS", "200")
        .env("BENCHGATE_DURATION_MS", "1000")
        .env("BENCHGATE_REQUESTS", "0")
        .env("BENCHGATE_TIMEOUT_MS", "5000")
        .env("BENCHGATE_HTTP_VERSION", "1.1")
        .env("BENCHGATE_TLS", "0")
        .env("BENCHGATE_RESULT_PATH", &result)
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("HDR "))
        .expect("Java printed its HDR line");
    let field = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .unwrap()
            .parse()
            .unwrap()
    };
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
    let encoded = doc["latency_histogram"]
        .as_str()
        .expect("Java wrote a histogram");
    let h = LatencyHistogram::decode(encoded).unwrap();
    let s = h.summary().unwrap();
    assert!(field("count") > 100);
    assert_eq!(s.count, field("count"));
    assert_eq!(s.min_us, field("min"));
    assert_eq!(s.max_us, field("max"));
    assert_eq!(s.p99_us, field("p99"));
    assert!(s.min_us >= 1000, "every request waited 1 ms on the server");
}
