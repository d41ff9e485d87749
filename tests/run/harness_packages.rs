//! The harness packages in harness/ (Java, Python, Node) end to end: each one's
//! example client in fixtures/clients runs through `benchgate run`, in a closed and
//! an open loop, and the harness's own request count agrees with the reference
//! server's count within 1%; its histogram decodes into latency figures.
//!
//! The 20-line quickstarts in harness/*/examples run the same way, and
//! docs/external-clients.md shows them exactly as they are.
//!
//! Needs what `scripts/install-test-deps.sh` installs (the README's test command
//! runs it first); without it these tests fail and say so.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use common::{cell, run_config};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One run at a time: two clients and their servers at once on a 2-core machine
/// delay the window markers and skew the counts being compared.
static SERIAL: Mutex<()> = Mutex::new(());

fn config(client: &str, command: &str, rounds: u32) -> String {
    format!(
        r#"[run]
rounds = {rounds}
warmup = "500ms"
duration = "2s"

[[client]]
name = "{client}"
kind = "command"
cwd = {ROOT:?}
command = {command}
timeout = "60s"

[[scenario]]
name = "closed"
path = "/bytes/22"
concurrency = 4

[[scenario]]
name = "open"
path = "/bytes/22"
rate = 400
max_in_flight = 8
"#
    )
}

/// Runs one harness-based client in both scenarios; its counts must match the server's.
fn agrees_with_the_server(client: &str, command: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = run_config(&config(client, command, 2), &[]);
    let r = run.results();
    for scenario in ["closed", "open"] {
        let c = cell(&r, scenario, client);
        for t in &c.trials {
            assert_eq!(t.failure, None, "{client}/{scenario}");
            let (m, s) = (t.metrics.as_ref().unwrap(), t.server.as_ref().unwrap());
            assert!(
                m.requests > 100,
                "{client}/{scenario}: {} requests",
                m.requests
            );
            let diff = (m.requests as f64 - s.requests as f64).abs() / m.requests as f64;
            assert!(
                diff <= 0.01,
                "{client}/{scenario}: the harness counted {}, the server {} ({:.2}%)",
                m.requests,
                s.requests,
                diff * 100.0
            );
            assert_eq!(m.ok, m.requests, "{client}/{scenario}: no errors");
            let (p50, p99) = (m.latency_p50_us.unwrap(), m.latency_p99_us.unwrap());
            assert!(
                p50 > 0.0 && p99 >= p50,
                "{client}/{scenario}: p50 {p50} p99 {p99}"
            );
        }
        assert!(
            c.histogram.is_some(),
            "{client}/{scenario}: a latency histogram"
        );
    }
    // Open loop: the harness paced its sends at the rate, not as fast as it could
    // (a schedule that fell behind in the warmup catches up inside the window).
    let open = cell(&r, "open", client);
    for t in &open.trials {
        let m = t.metrics.as_ref().unwrap();
        let rate = m.requests as f64 / m.elapsed_s;
        assert!(
            (300.0..=600.0).contains(&rate),
            "{client}: {rate:.0} requests/s completed in an open loop at 400/s"
        );
    }
}

fn require(what: &str, ok: bool) {
    assert!(
        ok,
        "{what} is missing; run scripts/install-test-deps.sh (scripts/test.sh does)"
    );
}

#[test]
fn python_harness_client_agrees_with_the_server() {
    let installed = Command::new("python3")
        .args(["-c", "import benchgate_harness, requests"])
        .status()
        .is_ok_and(|s| s.success());
    require(
        "the Python harness (pip install ./harness/python)",
        installed,
    );
    agrees_with_the_server(
        "python-requests",
        r#"["python3", "fixtures/clients/python_client.py"]"#,
    );
}

#[test]
fn node_harness_client_agrees_with_the_server() {
    let installed = Path::new(ROOT)
        .join("fixtures/clients/node_modules/benchgate-harness/package.json")
        .exists();
    require(
        "the Node harness (npm install --prefix fixtures/clients)",
        installed,
    );
    agrees_with_the_server(
        "node-http",
        r#"["node", "fixtures/clients/node_client.mjs"]"#,
    );
}

#[test]
fn java_harness_client_agrees_with_the_server() {
    let built = Path::new(ROOT)
        .join("fixtures/clients/java/out/benchgate-harness.jar")
        .exists();
    require(
        "the Java harness and clients (sh fixtures/clients/java/build.sh)",
        built,
    );
    agrees_with_the_server(
        "jdk-httpclient",
        r#"["sh", "fixtures/clients/java/run.sh", "JdkBench"]"#,
    );
}

/// The quickstarts: (file, code fence language, command).
const QUICKSTARTS: [(&str, &str, &str); 3] = [
    (
        "harness/python/examples/quickstart.py",
        "python",
        r#"["python3", "harness/python/examples/quickstart.py"]"#,
    ),
    (
        "harness/node/examples/quickstart.mjs",
        "js",
        r#"["node", "harness/node/examples/quickstart.mjs"]"#,
    ),
    (
        "harness/java/examples/QuickStart.java",
        "java",
        r#"["java", "-cp", "harness/java/out/benchgate-harness.jar:/usr/share/java/hdrhistogram.jar", "harness/java/examples/QuickStart.java"]"#,
    ),
];

#[test]
fn the_docs_show_the_quickstarts_as_they_are() {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/external-clients.md")).unwrap();
    for (file, lang, _) in QUICKSTARTS {
        let text = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        assert!(
            doc.contains(&format!("```{lang}\n{text}```")),
            "docs/external-clients.md must show {file} exactly, in a ```{lang} block"
        );
    }
}

#[test]
fn quickstarts_run_through_benchgate_and_agree_with_the_server() {
    require(
        "the Java harness jar (sh harness/java/build.sh)",
        Path::new(ROOT)
            .join("harness/java/out/benchgate-harness.jar")
            .exists(),
    );
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for (file, _, command) in QUICKSTARTS {
        let run = run_config(&config("quickstart", command, 1), &[]);
        let r = run.results();
        for scenario in ["closed", "open"] {
            for t in &cell(&r, scenario, "quickstart").trials {
                assert_eq!(t.failure, None, "{file}/{scenario}");
                let (m, s) = (t.metrics.as_ref().unwrap(), t.server.as_ref().unwrap());
                let diff = (m.requests as f64 - s.requests as f64).abs() / m.requests.max(1) as f64;
                assert!(
                    m.requests > 100 && diff <= 0.01,
                    "{file}/{scenario}: the harness counted {}, the server {}",
                    m.requests,
                    s.requests
                );
            }
        }
    }
}
