//! Helpers shared by the integration tests: run the real binary on a config
//! (here); run `benchgate action` as the container does (`action_env`) and read
//! its `GITHUB_OUTPUT` (`outputs`); check a config's errors (`config_errors`);
//! build and serve a release archive of the test build (`release`); a git
//! repository with a command client at two commits (`git_repo`); stored
//! histories of real noise with planted shifts (`drift`); synthetic runs
//! (`synthetic`) and trial metrics with every field set (`measured`), which
//! the library's unit tests include too.

#![allow(dead_code)]

pub mod action_env;
pub mod config_errors;
pub mod drift;
pub mod git_repo;
pub mod jmh;
pub mod measured;
pub mod outputs;
pub mod release;
pub mod synthetic;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchgate::results::{CellResult, RunResults};

/// The `[gate]` of an A/A run of the mock driver (a built-in client under
/// `--mock-latencies-us` or `BENCHGATE_TEST_MOCK_LATENCIES_US`, which sleeps
/// its latency): its CPU per request is scheduler noise, gated far beyond it
/// and never failing the run; a pass must be shown (the interval's worse end
/// inside the threshold), and the mock's throughput and p99 move by several %
/// between short trials on a busy 2-core machine, so an A/A run is decided
/// only with wide thresholds.
pub const MOCK_AA_GATE: &str = r#"
[gate]
cpu_us_per_request = { fail = "+200%", gating = false }
throughput_rps = "-25%"
latency_p99_us = { fail = "+25%", floor = "20ms" }
"#;

/// A closed-loop Python client (standard library only, one keep-alive
/// connection) that prints the window markers, waits for their
/// acknowledgements on stdin (no request is in flight meanwhile, so its count
/// and the server's agree exactly), and writes a result file with a latency
/// list; it sleeps `delay_ms.txt` (in its directory, when there is one)
/// before each request.
pub const PY_CLIENT: &str = r#"
import http.client, json, os, sys, time, urllib.parse
ack = os.environ.get("BENCHGATE_WINDOW_ACK") == "stdin"
delay = float(open("delay_ms.txt").read()) / 1000 if os.path.exists("delay_ms.txt") else 0
u = urllib.parse.urlparse(os.environ["BENCHGATE_URL"])
conn = http.client.HTTPConnection(u.hostname, u.port)
warm = int(os.environ["BENCHGATE_WARMUP_MS"]) / 1000
dur = int(os.environ["BENCHGATE_DURATION_MS"]) / 1000
t0 = time.monotonic()
lat = []
opened = False
while True:
    t = time.monotonic()
    if t - t0 >= warm + dur:
        break
    if t - t0 >= warm and not opened:
        print("BENCHGATE-WINDOW-OPEN", flush=True)
        if ack:
            sys.stdin.readline()
        opened = True
    if delay:
        time.sleep(delay)
    conn.request("GET", u.path)
    conn.getresponse().read()
    if opened:
        lat.append(int((time.monotonic() - t) * 1e6))
print("BENCHGATE-WINDOW-CLOSE", flush=True)
if ack:
    sys.stdin.readline()
out = {"benchgate_result": 1, "requests": len(lat), "ok": len(lat), "elapsed_s": dur, "latency_us": lat}
json.dump(out, open(os.environ["BENCHGATE_RESULT_PATH"], "w"))
"#;

/// Terminal control sequences that a hostile program's output or a hostile
/// file may hold (issue 53, point 5): a screen clear, an OSC 8 hyperlink, an
/// OSC 52 clipboard write, an OSC 0 title with BEL, a bare carriage return,
/// BEL, a C1 CSI (U+009B) and a bidi override (U+202E).
pub const CONTROLS: &str = "clear\x1b[2J link\x1b]8;;http://evil.example\x1b\\here\x1b]8;;\x1b\\ \
    clip\x1b]52;c;ZXZpbA==\x07 title\x1b]0;pwned\x07 over\rwrite bell\x07 csi\u{9b}31m bidi\u{202e}gpj.exe";

/// How each control of [`CONTROLS`] shows in benchgate's output: escaped.
pub const CONTROLS_SHOWN: [&str; 8] = [
    "clear\\u{1b}[2J",
    "link\\u{1b}]8;;http://evil.example\\u{1b}\\here",
    "clip\\u{1b}]52;c;ZXZpbA==\\u{7}",
    "title\\u{1b}]0;pwned\\u{7}",
    "over\\rwrite",
    "bell\\u{7}",
    "csi\\u{9b}31m",
    "bidi\\u{202e}gpj.exe",
];

/// Panics unless `bytes` (what benchgate printed on `stream`) hold none of
/// the controls of [`CONTROLS`] raw: no ESC, BEL, carriage return, C1
/// control or bidi control.
#[track_caller]
pub fn assert_no_raw_controls(stream: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let raw: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect();
    assert!(raw.is_empty(), "raw controls {raw:?} on {stream}:\n{text}");
}

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_benchgate")
}

/// A finished `benchgate run` in its own temporary directory.
pub struct Run {
    pub dir: tempfile::TempDir,
    pub out: PathBuf,
    pub output: Output,
}

impl Run {
    pub fn results(&self) -> RunResults {
        assert!(
            self.output.status.success(),
            "benchgate run failed: {}",
            String::from_utf8_lossy(&self.output.stderr)
        );
        RunResults::read(&self.out).unwrap()
    }

    /// The results of a run compared with nothing in which every trial of
    /// each of `cells` (`scenario / client`, or `client @ server`) failed:
    /// it exits 2, naming each such cell (and no other) on one stderr line.
    pub fn results_with_failed_cells(&self, cells: &[&str]) -> RunResults {
        let stderr = String::from_utf8_lossy(&self.output.stderr);
        assert_eq!(
            self.output.status.code(),
            Some(2),
            "every trial of {cells:?} failed: exit 2: {stderr}"
        );
        let named: Vec<&str> = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("benchgate: error: every trial failed ("))
            .collect();
        assert_eq!(named.len(), cells.len(), "{stderr}");
        for cell in cells {
            let line = format!(": {cell} round ");
            assert_eq!(
                named.iter().filter(|l| l.contains(&line)).count(),
                1,
                "no line for {cell:?} in: {stderr}"
            );
        }
        RunResults::read(&self.out).unwrap()
    }
}

/// Runs `benchgate run --config <toml> --out <tmp>` with `extra` arguments.
pub fn run_config(toml: &str, extra: &[&str]) -> Run {
    run_config_with(Path::new(exe()), toml, extra)
}

/// [`run_config`] with another benchgate binary (a release build, say).
pub fn run_config_with(exe: &Path, toml: &str, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("benchgate.toml");
    std::fs::write(&config, toml).unwrap();
    let out = dir.path().join("results.json");
    let output = Command::new(exe)
        .arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .env("CI", "true")
        .output()
        .unwrap();
    Run { dir, out, output }
}

pub fn cell<'a>(r: &'a RunResults, scenario: &str, client: &str) -> &'a CellResult {
    r.cell_at(scenario, client, None)
        .unwrap_or_else(|| panic!("no cell {scenario}/{client}"))
}

/// Median of a metric over a cell's trials.
pub fn median(c: &CellResult, metric: &str) -> f64 {
    c.summary
        .get(metric)
        .unwrap_or_else(|| panic!("{}/{} has no {metric}", c.scenario, c.client))
        .median
}

pub fn schema_path() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schema/results.schema.json"
    ))
}

/// Where `doc` breaks the JSON Schema at `schema`: each error with where it
/// is (empty: valid).
pub fn errors_against(schema: &Path, doc: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(schema).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

/// Where `doc` breaks schema/results.schema.json (empty: valid).
pub fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    errors_against(schema_path(), doc)
}

/// Asserts that the results file at `path` holds to schema/results.schema.json.
pub fn assert_results_valid(path: &Path) {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let errors = schema_errors(&doc);
    assert!(
        errors.is_empty(),
        "{} does not hold to the schema:\n{}",
        path.display(),
        errors.join("\n")
    );
}
