//! The real JMH result files of fixtures/jmh and `benchgate compare` on
//! them (tests/gate/jmh_results.rs, tests/gate/jmh_config.rs, tests/gate/jmh_merge.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchgate::compare::{Comparison, MetricComparison};
use serde_json::Value;

use super::exe;

pub const FORK_REASON: &str = "needs at least 4 forks per side (`-f 4`)";

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jmh")
        .join(name)
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `benchgate compare --baseline B --current C --json J [extra]`: the exit
/// code, stdout + stderr, and the comparison it wrote.
pub fn compare(base: &Path, cur: &Path, extra: &[&str]) -> (i32, String, Comparison) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cmp.json");
    let mut args = vec![
        "compare",
        "--baseline",
        base.to_str().unwrap(),
        "--current",
        cur.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o: Output = Command::new(exe()).args(&args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let code = o.status.code().unwrap();
    let c = std::fs::read_to_string(&json)
        .unwrap_or_else(|_| panic!("no comparison written (exit {code}): {text}"));
    (code, text, serde_json::from_str(&c).unwrap())
}

/// `file` with every measured value made 20% worse: times x1.2, throughput
/// x0.8 (`rawData`, `rawDataHistogram` values, scores and percentiles).
pub fn worse(file: &Value) -> Value {
    worse_by(file, 0.8, 1.2)
}

/// `file` with every throughput multiplied by `thrpt` and every time by `time`.
pub fn worse_by(file: &Value, thrpt: f64, time: f64) -> Value {
    let mut out = file.clone();
    for e in out.as_array_mut().unwrap() {
        let k = if e["mode"] == "thrpt" { thrpt } else { time };
        let pm = &mut e["primaryMetric"];
        scale(&mut pm["score"], k);
        scale(&mut pm["scorePercentiles"], k);
        scale(&mut pm["rawData"], k);
        if let Some(forks) = pm["rawDataHistogram"].as_array_mut() {
            for pair in forks.iter_mut().flat_map(|f| f.as_array_mut().unwrap()) {
                for p in pair.as_array_mut().unwrap() {
                    scale(&mut p[0], k);
                }
            }
        }
    }
    out
}

pub fn scale(v: &mut Value, k: f64) {
    match v {
        Value::Number(n) => *v = Value::from(n.as_f64().unwrap() * k),
        Value::Array(a) => a.iter_mut().for_each(|x| scale(x, k)),
        Value::Object(o) => o.values_mut().for_each(|x| scale(x, k)),
        _ => {}
    }
}

/// The rows of the primary score of each mode (the gating JMH metrics).
pub fn primary(c: &Comparison) -> Vec<&MetricComparison> {
    c.metrics.iter().filter(|m| m.gating).collect()
}

/// The fixture `name` with times x`k` and throughputs /`k` ([`worse_by`]),
/// written into `dir`.
pub fn write_worse(dir: &Path, name: &str, k: f64) -> PathBuf {
    let path = dir.join(format!("worse-{k}-{name}"));
    let file = worse_by(&read_json(&fixture(name)), 1.0 / k, k);
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

/// `text` written to `dir/benchgate.toml`.
pub fn write_config(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("benchgate.toml");
    std::fs::write(&path, text).unwrap();
    path
}
