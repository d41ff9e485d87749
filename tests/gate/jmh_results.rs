//! JMH result files as benchgate's input (issue 31), end to end through the
//! binary on the real public files of fixtures/jmh (sources in its README):
//! `benchgate compare` reads them where it reads its own results, a fork is
//! a trial, fewer than 4 forks a side is inconclusive and says why, a
//! throughput against a time per operation is not comparable.

use crate::common;

use benchgate::compare::{GateOutcome, Verdict};
use benchgate::results::RunResults;
use common::jmh::{compare, fixture, primary, read_json, worse, FORK_REASON};
use serde_json::Value;

/// The real JMH result files of fixtures/jmh.
const FILES: &[&str] = &[
    "nebula-client-avgt.json",
    "pg-client-sample-params.json",
    "raiser-rpc-createUser-3-modes.json",
    "tkrs-thrpt-2-forks-gc.json",
    "xnav-1.37-avgt-a.json",
    "xnav-1.37-avgt-b.json",
];

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
        .cell_at(
            "com.raiser.benchmark.client.ClientBenchmark.createUser",
            "jmh",
            None,
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
