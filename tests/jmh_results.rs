//! JMH result files as benchgate's input (issue 31), end to end through the
//! binary on the real public files of fixtures/jmh (sources in its README):
//! `benchgate compare` reads them where it reads its own results, a fork is
//! a trial, fewer than 4 forks a side is inconclusive and says why, a
//! throughput against a time per operation is not comparable.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchgate::compare::{Comparison, GateOutcome, MetricComparison, Verdict};
use benchgate::results::RunResults;
use common::exe;
use serde_json::Value;

const FORK_REASON: &str = "needs at least 4 forks per side (`-f 4`)";

/// The real JMH result files of fixtures/jmh.
const FILES: &[&str] = &[
    "nebula-client-avgt.json",
    "pg-client-sample-params.json",
    "raiser-rpc-createUser-3-modes.json",
    "tkrs-thrpt-2-forks-gc.json",
    "xnav-1.37-avgt-a.json",
    "xnav-1.37-avgt-b.json",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jmh")
        .join(name)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `benchgate compare --baseline B --current C --json J [extra]`: the exit
/// code, stdout + stderr, and the comparison it wrote.
fn compare(base: &Path, cur: &Path, extra: &[&str]) -> (i32, String, Comparison) {
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

/// The rows of the primary score of each mode (the gating JMH metrics).
fn primary(c: &Comparison) -> Vec<&MetricComparison> {
    c.metrics.iter().filter(|m| m.gating).collect()
}

/// `file` with every measured value made 20% worse: times x1.2, throughput
/// x0.8 (`rawData`, `rawDataHistogram` values, scores and percentiles).
fn worse(file: &Value) -> Value {
    let mut out = file.clone();
    for e in out.as_array_mut().unwrap() {
        let k = if e["mode"] == "thrpt" { 0.8 } else { 1.2 };
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

fn scale(v: &mut Value, k: f64) {
    match v {
        Value::Number(n) => *v = Value::from(n.as_f64().unwrap() * k),
        Value::Array(a) => a.iter_mut().for_each(|x| scale(x, k)),
        Value::Object(o) => o.values_mut().for_each(|x| scale(x, k)),
        _ => {}
    }
}

#[test]
fn every_file_against_itself_never_fails_and_names_the_fork_rule() {
    for name in FILES {
        let f = fixture(name);
        let (code, text, c) = compare(&f, &f, &[]);
        assert_eq!(code, 0, "{name}: {text}");
        assert_ne!(c.outcome, GateOutcome::Fail, "{name}");
        let rows = primary(&c);
        assert!(!rows.is_empty(), "{name}: nothing gated: {text}");
        // Every fixture has fewer than 4 forks: nothing can be decided.
        for m in rows {
            assert_eq!(m.verdict, Verdict::Inconclusive, "{name}: {m:?}");
            assert!(m.reason.contains(FORK_REASON), "{name}: {}", m.reason);
        }
    }
}

#[test]
fn twenty_percent_worse_fails_or_is_inconclusive_for_the_fork_count() {
    let dir = tempfile::tempdir().unwrap();
    for name in FILES {
        let f = fixture(name);
        let slow = dir.path().join(format!("worse-{name}"));
        std::fs::write(&slow, worse(&read_json(&f)).to_string()).unwrap();
        let (code, text, c) = compare(&f, &slow, &[]);
        let rows = primary(&c);
        assert!(!rows.is_empty(), "{name}: {text}");
        if c.outcome == GateOutcome::Fail {
            assert_eq!(code, 1, "{name}: {text}");
            continue;
        }
        for m in rows {
            assert_eq!(m.verdict, Verdict::Inconclusive, "{name}: {m:?}");
            assert!(m.reason.contains(FORK_REASON), "{name}: {}", m.reason);
            // The change is still measured and shown: 20% worse.
            let change = m.change.unwrap();
            let expected = if m.metric == "jmh.ops_per_s" {
                -0.2
            } else {
                0.2
            };
            assert!((change - expected).abs() < 0.01, "{name}: {m:?}");
        }
    }
}

#[test]
fn two_jmh_1_37_files_of_one_fork_compare_and_name_the_benchmark() {
    let (a, b) = (
        fixture("xnav-1.37-avgt-a.json"),
        fixture("xnav-1.37-avgt-b.json"),
    );
    let (code, text, c) = compare(&a, &b, &[]);
    assert!(code == 0 || code == 1, "{code}: {text}");
    assert!(
        text.contains("com.github.lombrozo.xnav.XnavBenchmark.xpath"),
        "{text}"
    );
    let rows = primary(&c);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].metric, "jmh.avgt_ns");
    assert!(
        rows[0]
            .reason
            .contains("(`-f 4`): the baseline has 1, this run 1"),
        "{}",
        rows[0].reason
    );
}

#[test]
fn a_throughput_against_a_time_per_operation_is_not_comparable() {
    // One benchmark measured in three modes: its thrpt and its avgt entries, each alone.
    let all = read_json(&fixture("raiser-rpc-createUser-3-modes.json"));
    let only = |mode: &str| {
        let e: Vec<Value> = all
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["mode"] == mode)
            .cloned()
            .collect();
        Value::Array(e).to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let (thrpt, avgt) = (dir.path().join("thrpt.json"), dir.path().join("avgt.json"));
    std::fs::write(&thrpt, only("thrpt")).unwrap();
    std::fs::write(&avgt, only("avgt")).unwrap();
    let (code, text, c) = compare(&thrpt, &avgt, &[]);
    assert_eq!(c.outcome, GateOutcome::NotComparable, "{text}");
    assert_eq!(code, 0, "{text}");
    assert!(!c.metrics.is_empty());
    for m in &c.metrics {
        assert_eq!(m.verdict, Verdict::NotComparable, "{m:?}");
        assert!(
            m.reason.contains("JMH mode differs (thrpt vs avgt)"),
            "{}",
            m.reason
        );
    }
}

#[test]
fn sample_time_percentiles_come_from_the_raw_histogram() {
    // One fork: the fork's p99 is the file's own p0.99 (JMH pools the forks).
    let path = fixture("raiser-rpc-createUser-3-modes.json");
    let file = read_json(&path);
    let sample = file
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["mode"] == "sample")
        .unwrap();
    assert_eq!(sample["primaryMetric"]["scoreUnit"], "ms/op");
    let p99_ms = sample["primaryMetric"]["scorePercentiles"]["99.0"]
        .as_f64()
        .unwrap();
    let run = RunResults::read(&path).unwrap();
    let cell = run
        .cell(
            "com.raiser.benchmark.client.ClientBenchmark.createUser",
            "jmh",
        )
        .unwrap();
    let p99_ns = cell.summary["jmh.sample_p99_ns"];
    assert_eq!(p99_ns.n, 1);
    let ratio = p99_ns.median / (p99_ms * 1e6);
    assert!(
        (ratio - 1.0).abs() <= 0.001,
        "{} ns vs {p99_ms} ms",
        p99_ns.median
    );
}
