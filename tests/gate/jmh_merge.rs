//! `benchgate merge` on JMH result files (issue 31) through the binary, on
//! the real files of fixtures/jmh: shards of a JMH suite (each a subset of
//! the benchmarks) join into one benchgate results file that compares like
//! the whole file; the same cell in two files, a benchmark in two modes, and
//! a JMH file beside a benchgate results file are refused (exit 2), naming
//! the files and the benchmark; `--config` reads them with iterations as
//! trials.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchgate::compare::GateOutcome;
use benchgate::results::jmh::TrialUnit;
use benchgate::results::RunResults;
use common::jmh::{compare, fixture, read_json, write_config};
use serde_json::Value;

const FOLD: &str = "bench.ArrayAccumulateBench.foldLeftAcc";

fn merge(dir: &Path, files: &[&Path], extra: &[&str]) -> (Output, PathBuf) {
    let out = dir.join("merged.json");
    let o = Command::new(common::exe())
        .arg("merge")
        .args(files)
        .args(["--out", out.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    (o, out)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The entries of fixture `name` that `keep` selects, written into `dir`.
fn part(dir: &Path, name: &str, file: &str, keep: impl Fn(&Value) -> bool) -> PathBuf {
    let all = read_json(&fixture(name));
    let kept: Vec<Value> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| keep(e))
        .cloned()
        .collect();
    assert!(!kept.is_empty());
    let path = dir.join(file);
    std::fs::write(&path, Value::Array(kept).to_string()).unwrap();
    path
}

fn size(e: &Value) -> &str {
    e["params"]["size"].as_str().unwrap()
}

fn names(r: &RunResults) -> Vec<String> {
    let mut v: Vec<String> = r.results.iter().map(|c| c.scenario.clone()).collect();
    v.sort();
    v
}

#[test]
fn shards_of_a_jmh_suite_merge_into_the_cells_of_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tkrs = "tkrs-thrpt-2-forks-gc.json";
    let a = part(d, tkrs, "a.json", |e| size(e) != "500");
    let b = part(d, tkrs, "b.json", |e| size(e) == "500");
    let (o, out) = merge(d, &[&a, &b], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("merged 2 JMH result files (3 cells)"),
        "{}",
        stderr(&o)
    );
    let merged = RunResults::read(&out).unwrap();
    let whole = RunResults::read(&fixture(tkrs)).unwrap();
    assert_eq!(names(&merged), names(&whole));
    assert_eq!(merged.jmh.as_ref().unwrap().trials, TrialUnit::Forks);
    for cell in &whole.results {
        let m = merged.cell_at(&cell.scenario, "jmh", None).unwrap();
        // The same forks (serde_json reads a written double back within
        // an ulp, not always bit for bit: no `float_roundtrip`).
        let (got, want) = (m.values("jmh.ops_per_s"), cell.values("jmh.ops_per_s"));
        assert_eq!(got.len(), want.len(), "{}", cell.scenario);
        for ((_, g), (_, w)) in got.iter().zip(&want) {
            assert!((g / w - 1.0).abs() < 1e-12, "{}: {g} vs {w}", cell.scenario);
        }
    }
    // It is a benchgate results file (the schema holds) that compares like
    // the whole file: every cell found, none missing.
    common::assert_results_valid(&out);
    let (code, text, c) = compare(&fixture(tkrs), &out, &[]);
    assert_eq!(code, 0, "{text}");
    assert_ne!(c.outcome, GateOutcome::Fail);
    assert!(
        c.metrics
            .iter()
            .all(|m| m.reason.contains("forks") || !m.gating),
        "{text}"
    );
    assert!(text.contains(&format!("{FOLD} (size=500)")), "{text}");
    assert!(!text.contains("missing"), "{text}");

    // Files of other benchmarks and JMH versions join too.
    let (o, out) = merge(
        d,
        &[
            &fixture("nebula-client-avgt.json"),
            &fixture("xnav-1.37-avgt-a.json"),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(RunResults::read(&out).unwrap().results.len(), 3);
}

#[test]
fn the_same_cell_in_two_files_is_refused_naming_both_and_the_benchmark() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tkrs = "tkrs-thrpt-2-forks-gc.json";
    let a = part(d, tkrs, "a.json", |e| size(e) != "500");
    let b = part(d, tkrs, "b.json", |e| size(e) != "10");
    let (o, out) = merge(d, &[&a, &b], &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(a.to_str().unwrap()) && e.contains(b.to_str().unwrap()),
        "{e}"
    );
    assert!(e.contains(&format!("both hold {FOLD} (size=100)")), "{e}");
    assert!(!out.exists());
}

#[test]
fn a_benchmark_in_two_modes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let raiser = "raiser-rpc-createUser-3-modes.json";
    let thrpt = part(d, raiser, "thrpt.json", |e| e["mode"] == "thrpt");
    let avgt = part(d, raiser, "avgt.json", |e| e["mode"] == "avgt");
    let (o, _) = merge(d, &[&thrpt, &avgt], &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("holds com.raiser.benchmark.client.ClientBenchmark.createUser in JMH mode avgt"),
        "{e}"
    );
    assert!(
        e.contains(thrpt.to_str().unwrap()) && e.contains("in mode thrpt"),
        "{e}"
    );
    assert!(e.contains("-bm"), "{e}");
}

#[test]
fn a_jmh_file_beside_a_benchgate_results_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/two-clients.json");
    let jmh = fixture("nebula-client-avgt.json");
    let (o, _) = merge(dir.path(), &[&jmh, &ours], &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("is a JMH result file and"), "{e}");
    assert!(
        e.contains("two-clients.json a benchgate results file"),
        "{e}"
    );
}

#[test]
fn merge_with_a_config_reads_iterations_as_trials() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = write_config(d, "[jmh]\niterations_as_trials = true\n");
    let (a, b) = (
        fixture("nebula-client-avgt.json"),
        fixture("xnav-1.37-avgt-a.json"),
    );
    let (o, out) = merge(d, &[&a, &b], &["--config", config.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = RunResults::read(&out).unwrap();
    assert_eq!(merged.jmh.as_ref().unwrap().trials, TrialUnit::Iterations);
    // 5 iterations of one fork: 5 trials, not 1.
    let cell = merged
        .results
        .iter()
        .find(|c| c.scenario.contains("NebulaClient5"))
        .unwrap();
    assert_eq!(cell.trials.len(), 5);
    // The merged file compares as optimistic with the same config.
    let (code, text, c) = compare(&out, &out, &["--config", config.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(c.optimistic, "{text}");
}
