//! Crafted JMH result files read as results (issue 53, point 1): the
//! results-file bar holds for them. SampleTime counts that wrap a u64 sum,
//! figures that are finite in the file's unit but not once converted, and
//! more entries than a results file may hold are refused with an error that
//! names the file, the benchmark and the field; never a panic, never an
//! `n/a` cell that leaves the gate.

use std::process::Command;

use crate::common;

use benchgate::results::jmh::TrialUnit;
use benchgate::results::RunResults;
use serde_json::{json, Value};

const BENCH: &str = "org.example.HttpBench.get";

/// One JMH entry of `mode` in `unit` with `metric`'s fields added to its
/// `primaryMetric`.
fn entry(mode: &str, unit: &str, metric: Value) -> Value {
    let mut primary = json!({ "score": 1.0, "scoreUnit": unit });
    primary
        .as_object_mut()
        .unwrap()
        .extend(metric.as_object().unwrap().clone());
    json!({ "jmhVersion": "1.37", "benchmark": BENCH, "mode": mode, "params": {}, "primaryMetric": primary })
}

/// A SampleTime entry whose one fork holds `iterations` of [value, count] pairs.
fn sample(unit: &str, iterations: Value) -> Value {
    entry("sample", unit, json!({ "rawDataHistogram": [iterations] }))
}

/// The error of reading `entries` as a JMH file named `f.json`, both ways.
fn refused(entries: &[Value]) -> String {
    let bytes = Value::Array(entries.to_vec()).to_string();
    let mut shown = Vec::new();
    for unit in [TrialUnit::Forks, TrialUnit::Iterations] {
        let e = benchgate::results::jmh::parse(bytes.as_bytes(), "f.json", unit)
            .map(|_| ())
            .unwrap_err();
        shown.push(format!("{e:#}"));
    }
    // A fork is a trial where every results file is read.
    let e = RunResults::parse_bytes(bytes.as_bytes(), "f.json").unwrap_err();
    assert_eq!(format!("{e:#}"), shown[0]);
    shown.swap_remove(0)
}

fn says(shown: &str, parts: &[&str]) {
    for p in parts {
        assert!(shown.contains(p), "{p:?} not in: {shown}");
    }
}

#[test]
fn sample_counts_that_add_up_to_2_64_or_more_are_refused_naming_the_field() {
    let half = 1u64 << 63;
    // Two pairs of one iteration, and one pair in each of two iterations of
    // one fork (pooled into one trial): 2^64 and 2^64 + 1 samples.
    for iterations in [
        json!([[[100.0, half], [200.0, half]]]),
        json!([[[100.0, half], [200.0, half], [300.0, 1]]]),
        json!([[[100.0, half]], [[200.0, half]]]),
        json!([[[100.0, u64::MAX]], [[200.0, 2]]]),
    ] {
        let e = refused(&[sample("us/op", iterations.clone())]);
        says(
            &e,
            &[
                "f.json: [0] (org.example.HttpBench.get): primaryMetric.rawDataHistogram[0]",
                "counts add up to more than 2^64 samples",
            ],
        );
    }
    // Below 2^64 but over the limit every histogram read from outside has.
    let limit = benchgate::measure::histogram::MAX_TOTAL_COUNT;
    let e = refused(&[sample("us/op", json!([[[100.0, limit], [200.0, 1]]]))]);
    says(
        &e,
        &[
            "primaryMetric.rawDataHistogram[0]",
            &format!(
                "counts add up to {} samples, over the limit of {limit}",
                limit + 1
            ),
        ],
    );
}

#[test]
fn sample_counts_that_wrap_a_u64_fail_compare_with_exit_2_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wrap.json");
    let half = 1u64 << 63;
    let doc = Value::Array(vec![sample(
        "us/op",
        json!([[[100.0, half], [200.0, half]]]),
    )]);
    std::fs::write(&file, doc.to_string()).unwrap();
    for args in [
        vec!["compare", "--current", file.to_str().unwrap()],
        vec![
            "merge",
            file.to_str().unwrap(),
            "--out",
            dir.path().join("m.json").to_str().unwrap(),
        ],
    ] {
        let o = Command::new(common::exe()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        says(
            &stderr,
            &["wrap.json", BENCH, "rawDataHistogram[0]", "2^64"],
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn figures_finite_in_the_files_unit_but_not_in_ns_are_refused() {
    // 1e300 days is finite; in ns it is not.
    let e = refused(&[sample("day/op", json!([[[1e300, 1]]]))]);
    says(
        &e,
        &[
            "f.json: [0] (org.example.HttpBench.get): primaryMetric.rawDataHistogram[0]",
            "1e300 day/op",
            "not a finite time >= 0 once converted to ns",
        ],
    );
    // Each value converts, their mean (weighted by the counts) does not.
    let e = refused(&[sample("ns/op", json!([[[1e308, 2], [1e308, 2]]]))]);
    says(
        &e,
        &[
            "primaryMetric.rawDataHistogram[0]",
            "mean is inf ns, not a finite time >= 0",
        ],
    );
    for (mode, unit) in [("avgt", "day/op"), ("ss", "day/op"), ("thrpt", "ops/ns")] {
        let e = refused(&[entry(mode, unit, json!({ "rawData": [[1e300]] }))]);
        says(
            &e,
            &[
                "f.json: [0] (org.example.HttpBench.get): primaryMetric.rawData[0]",
                "inf",
                "not a finite value >= 0",
            ],
        );
    }
    // A fork's mean that overflows: each iteration is finite.
    let e = refused(&[entry(
        "avgt",
        "ns/op",
        json!({ "rawData": [[1e308, 1e308]] }),
    )]);
    says(&e, &["primaryMetric.rawData[0]", "inf ns/op"]);
}

#[test]
fn an_allocation_rate_that_is_not_finite_or_negative_is_refused_not_dropped() {
    let with_alloc = |raw: Value| {
        let mut e = entry("avgt", "ns/op", json!({ "rawData": [[10.0]] }));
        e["secondaryMetrics"] =
            json!({ "gc.alloc.rate.norm": { "score": 1.0, "scoreUnit": "B/op", "rawData": raw } });
        e
    };
    let shown = refused(&[with_alloc(json!([[-1.0]]))]);
    says(
        &shown,
        &[
            "f.json: [0] (org.example.HttpBench.get): secondaryMetrics gc.alloc.rate.norm.rawData[0]",
            "gives -1.0 B/op, not a finite value >= 0",
        ],
    );
    // A fork's mean that overflows (each iteration alone is finite).
    let bytes = Value::Array(vec![with_alloc(json!([[1e308, 1e308]]))]).to_string();
    let e = RunResults::parse_bytes(bytes.as_bytes(), "f.json").unwrap_err();
    says(
        &format!("{e:#}"),
        &["secondaryMetrics gc.alloc.rate.norm.rawData[0] gives inf B/op"],
    );
}

/// A JMH file of `n` AverageTime entries of 4 forks, one benchmark each.
fn many(n: usize, prefix: &str) -> String {
    let entries: Vec<Value> = (0..n)
        .map(|i| {
            let mut e = entry(
                "avgt",
                "us/op",
                json!({ "rawData": [[1.0], [1.1], [1.2], [1.3]] }),
            );
            e["benchmark"] = format!("org.example.{prefix}.m{i}").into();
            e
        })
        .collect();
    Value::Array(entries).to_string()
}

#[test]
fn more_entries_than_a_results_file_has_cells_are_refused_at_load() {
    let limit = benchgate::results::check::MAX_CELLS;
    let text = many(limit + 1, "B");
    let e = refused_text(&text);
    says(
        &e,
        &[
            "f.json (a JMH result file) holds 10001 results (a benchmark with its params in one mode each), over the limit of 10000 cells",
            "run the benchmarks in parts",
        ],
    );
    // At the limit: read, one cell each.
    let text = many(limit, "B");
    for unit in [TrialUnit::Forks, TrialUnit::Iterations] {
        let r = benchgate::results::jmh::parse(text.as_bytes(), "f.json", unit).unwrap();
        assert_eq!(r.results.len(), limit);
    }
}

/// The error of reading `text` as a JMH file named `f.json`, both ways.
fn refused_text(text: &str) -> String {
    let entries: Vec<Value> = serde_json::from_str(text).unwrap();
    refused(&entries)
}

#[test]
fn a_merge_of_more_cells_than_a_results_file_holds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, many(6_000, "A")).unwrap();
    std::fs::write(&b, many(4_001, "B")).unwrap();
    let out = dir.path().join("merged.json");
    let o = Command::new(common::exe())
        .arg("merge")
        .args([a.to_str().unwrap(), b.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    says(
        &stderr,
        &[
            "a.json",
            "b.json",
            "hold 10001 cells (a benchmark with its params each), over the limit of 10000",
        ],
    );
    assert!(!out.exists(), "a merged file no reader accepts was written");
}
