//! `benchgate compare` end to end through the binary, on results files built
//! with `results::synthetic` (no benchmark runs): exit 0 pass, 1 gate failed,
//! 2 error with a message naming the file and the fix.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchgate::compare::{Comparison, GateOutcome, Verdict};
use benchgate::config::Suite;
use benchgate::results::RunResults;

use crate::common::synthetic;
use common::exe;

fn suite() -> Suite {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(2);
    s
}

/// +-2% of deterministic per-round noise.
fn noise(round: u32, salt: u32) -> f64 {
    const N: [f64; 7] = [0.0, 0.012, -0.018, 0.007, -0.004, 0.019, -0.011];
    1.0 + N[((round + salt * 3) % 7) as usize]
}

/// A 5-round run; `slow` multiplies latency and CPU and divides throughput.
fn run(slow: f64, salt: u32) -> RunResults {
    synthetic::run(suite(), 5, |_, _, r| {
        let k = noise(r, salt) * slow;
        Some(synthetic::metrics(10_000.0 / k, 2000.0 * k, 50.0 * k))
    })
}

fn write(dir: &Path, name: &str, r: &RunResults) -> PathBuf {
    let path = dir.join(name);
    r.write_atomic(&path).unwrap();
    path
}

fn bench(args: &[&str]) -> Output {
    Command::new(exe()).args(args).output().unwrap()
}

fn compare(baseline: &Path, current: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "compare",
        "--baseline",
        baseline.to_str().unwrap(),
        "--current",
        current.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    bench(&args)
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_clear_regression_exits_1_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.json", &run(1.0, 0));
    let cur = write(dir.path(), "cur.json", &run(1.3, 1));
    let json = dir.path().join("cmp.json");
    let o = compare(&base, &cur, &["--json", json.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(code(&o), 1, "{out}{err}");
    assert!(out.starts_with("benchgate: FAIL (8 regressed"), "{out}");
    assert!(out.contains("throughput_rps"), "{out}");
    let c: Comparison = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
}

#[test]
fn a_vs_a_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.json", &run(1.0, 0));
    let cur = write(dir.path(), "cur.json", &run(1.0, 1));
    let o = compare(&base, &cur, &[]);
    let (out, err) = text(&o);
    assert_eq!(code(&o), 0, "{out}{err}");
    assert!(out.starts_with("benchgate: PASS (0 regressed"), "{out}");
}

#[test]
fn gate_config_from_a_file_overrides_the_stored_one() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.json", &run(1.0, 0));
    let cur = write(dir.path(), "cur.json", &run(1.3, 1));
    let config = dir.path().join("gate.toml");
    std::fs::write(
        &config,
        "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/\"\n\
         [gate]\nthroughput_rps = \"-50%\"\ncpu_us_per_request = \"+50%\"\n",
    )
    .unwrap();
    let o = compare(&base, &cur, &["--config", config.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{:?}", text(&o));
    // A bad gate config is an error with its location.
    std::fs::write(
        &config,
        "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/\"\n[gate]\nthroughput_rps = \"+5%\"\n",
    )
    .unwrap();
    let o = compare(&base, &cur, &["--config", config.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(code(&o), 2);
    assert!(err.contains("gate.toml:8:18: gate.throughput_rps"), "{err}");
}

#[test]
fn environment_mismatch_is_not_comparable() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = run(1.0, 0);
    b.environment.cores = 64;
    let base = write(dir.path(), "base.json", &b);
    let cur = write(dir.path(), "cur.json", &run(1.3, 1));
    let json = dir.path().join("cmp.json");
    let o = compare(&base, &cur, &["--json", json.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert_eq!(code(&o), 0, "not_comparable = \"warn\" by default: {out}");
    assert!(out.starts_with("benchgate: NOT COMPARABLE"), "{out}");
    assert!(out.contains("cores differ (64 vs 2)"), "{out}");
    let c: Comparison = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(c
        .metrics
        .iter()
        .all(|m| m.verdict == Verdict::NotComparable));
}

#[test]
fn missing_cell_is_no_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = run(1.0, 0);
    b.results.retain(|c| c.client != "reqwest");
    let base = write(dir.path(), "base.json", &b);
    let cur = write(dir.path(), "cur.json", &run(1.0, 1));
    let json = dir.path().join("cmp.json");
    let o = compare(&base, &cur, &["--json", json.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{:?}", text(&o));
    let c: Comparison = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(c.outcome, GateOutcome::Pass);
    let reqwest: Vec<_> = c.metrics.iter().filter(|m| m.client == "reqwest").collect();
    assert!(!reqwest.is_empty());
    assert!(reqwest.iter().all(|m| m.verdict == Verdict::NoBaseline));
}

/// `r` with every trial of every cell starved by the machine.
fn starved(mut r: RunResults) -> RunResults {
    for t in r.results.iter_mut().flat_map(|c| &mut c.trials) {
        t.invalid = vec![benchgate::results::validity::InvalidMark::Starved {
            reason: "it completed no request in its window".into(),
        }];
    }
    r
}

#[test]
fn every_trial_starved_is_inconclusive_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.json", &starved(run(1.0, 0)));
    let cur = write(dir.path(), "cur.json", &starved(run(1.0, 1)));
    let json = dir.path().join("cmp.json");
    let o = compare(&base, &cur, &["--json", json.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(code(&o), 0, "[gate] inconclusive = \"neutral\": {out}{err}");
    assert!(out.starts_with("benchgate: INCONCLUSIVE"), "{out}");
    assert!(
        out.contains("every trial was starved by the machine (5 of 5)"),
        "{out}"
    );
    let c: Comparison = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(c.outcome, GateOutcome::Inconclusive);
    assert_eq!(c.metrics.iter().filter(|m| m.gating).count(), 4 * 4);
    // Side by side, from one run.
    let o = bench(&[
        "compare",
        "--current",
        cur.to_str().unwrap(),
        "--side-by-side",
        "hyper",
    ]);
    let (out, err) = text(&o);
    assert_eq!(code(&o), 0, "{out}{err}");
    assert!(out.starts_with("benchgate: INCONCLUSIVE"), "{out}");
    // `[gate] inconclusive = "fail"`: exit 1.
    let config = dir.path().join("gate.toml");
    std::fs::write(
        &config,
        "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/\"\n\
         [gate]\ninconclusive = \"fail\"\n",
    )
    .unwrap();
    let o = compare(&base, &cur, &["--config", config.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{:?}", text(&o));
}

#[test]
fn side_by_side_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let r = synthetic::run(suite(), 6, |_, client, round| {
        let k = noise(round, 0) * if client == "reqwest" { 1.3 } else { 1.0 };
        Some(synthetic::metrics(10_000.0 / k, 2000.0 * k, 50.0 * k))
    });
    let cur = write(dir.path(), "cur.json", &r);
    let o = bench(&[
        "compare",
        "--current",
        cur.to_str().unwrap(),
        "--side-by-side",
        "hyper",
    ]);
    let (out, err) = text(&o);
    assert_eq!(code(&o), 1, "{out}{err}");
    assert!(out.contains("side by side in"), "{out}");
    let o = bench(&[
        "compare",
        "--current",
        cur.to_str().unwrap(),
        "--side-by-side",
        "curl",
    ]);
    let (_, err) = text(&o);
    assert_eq!(code(&o), 2);
    assert!(
        err.contains("--side-by-side \"curl\"") && err.contains("it has: hyper"),
        "{err}"
    );
    let o = bench(&["compare", "--current", cur.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(code(&o), 2);
    assert!(
        err.contains("give --baseline FILE, or --side-by-side CLIENT"),
        "{err}"
    );
}

/// Every malformed input exits 2 with the file named and a fix.
#[test]
fn malformed_results_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &run(1.0, 0));
    let good_text = std::fs::read_to_string(&good).unwrap();
    let case = |name: &str, content: &str, expect: &[&str]| {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let o = compare(&path, &good, &[]);
        let (_, err) = text(&o);
        assert_eq!(code(&o), 2, "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
        for e in expect {
            assert!(err.contains(e), "{name} lacks {e:?}: {err}");
        }
    };
    case("not-json.json", "<html>", &["is not valid JSON"]);
    case(
        "v99.json",
        &good_text.replacen("\"schema_version\": 1", "\"schema_version\": 99", 1),
        &[
            "schema_version 99",
            "re-run the benchmark with this version",
        ],
    );
    case(
        "nan.json",
        &good_text.replacen(
            "\"throughput_rps\": ",
            "\"throughput_rps\": NaN, \"x\": ",
            1,
        ),
        &["not valid JSON"],
    );
    case(
        "huge-number.json",
        &good_text.replacen(
            "\"latency_p99_us\": ",
            "\"latency_p99_us\": 1e999, \"x\": ",
            1,
        ),
        &["not valid JSON"],
    );
    let mut negative = run(1.0, 0);
    negative.results[0].trials[2]
        .metrics
        .as_mut()
        .unwrap()
        .latency_p50_us = Some(-3.0);
    let neg_text = serde_json::to_string(&negative).unwrap();
    case(
        "negative.json",
        &neg_text,
        &["results[0] (scenario \"get-22b\", client \"hyper\").trials[2].metrics.latency_p50_us is -3", "re-run the benchmark"],
    );
    case(
        "wrong-shape.json",
        "{\"schema_version\": 1, \"run_id\": 3}",
        &["does not match the results schema"],
    );
    // Over the size limit (a sparse file: no disk used).
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(300 * 1024 * 1024)
        .unwrap();
    let o = compare(&huge, &good, &[]);
    let (_, err) = text(&o);
    assert_eq!(code(&o), 2);
    assert!(
        err.contains("huge.json") && err.contains("over the"),
        "{err}"
    );
    let o = compare(&dir.path().join("absent.json"), &good, &[]);
    assert_eq!(code(&o), 2);
    assert!(text(&o).1.contains("absent.json"));
}

#[test]
fn compare_writes_the_pr_comment_job_summary_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.json", &run(1.0, 0));
    let cur = write(dir.path(), "cur.json", &run(1.3, 1));
    let (md, summary, exports) = (
        dir.path().join("comment.md"),
        dir.path().join("summary.md"),
        dir.path().join("exports"),
    );
    let o = compare(
        &base,
        &cur,
        &[
            "--markdown",
            md.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
            "--export-dir",
            exports.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 1);
    let comment = std::fs::read_to_string(&md).unwrap();
    assert!(comment.chars().count() <= 65_536);
    assert!(comment.contains("throughput_rps"), "{comment}");
    assert_eq!(
        comment.matches("<details>").count(),
        comment.matches("</details>").count()
    );
    assert!(std::fs::read_to_string(&summary)
        .unwrap()
        .contains("throughput_rps"));
    for name in [
        "benchmark-bigger-is-better.json",
        "benchmark-smaller-is-better.json",
    ] {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(exports.join(name)).unwrap()).unwrap();
        assert!(!v.as_array().unwrap().is_empty(), "{name}");
    }
}

/// Issue 54, point 7: the comment made from two results files whose
/// environment fingerprints differ names what changed in its head, before
/// the tables; the terminal and the JSON say it too.
#[test]
fn a_comment_names_what_changed_in_the_machine_between_the_two_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = run(1.0, 0);
    b.environment.kernel = "6.5.0-1025-azure".into();
    b.environment.runner_image = Some("ubuntu22 20250105.1.0".into());
    b.environment.governor = Some("performance".into());
    let mut c = run(1.0, 1);
    c.environment.kernel = "6.8.0-1017-azure".into();
    c.environment.runner_image = Some("ubuntu24 20250112.1.0".into());
    c.environment.governor = Some("performance".into());
    let base = write(dir.path(), "base.json", &b);
    let cur = write(dir.path(), "cur.json", &c);
    let (md, json) = (dir.path().join("comment.md"), dir.path().join("cmp.json"));
    let o = compare(
        &base,
        &cur,
        &[
            "--markdown",
            md.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(
        code(&o),
        0,
        "a changed kernel does not stop the comparison: {out}{err}"
    );
    let comment = std::fs::read_to_string(&md).unwrap();
    let head = &comment[..comment.find("\n| ").expect("a table")];
    assert!(head.contains("**The machine changed**"), "{comment}");
    for field in ["kernel", "runner\\_image"] {
        assert!(
            head.contains(&format!("> - {field} differs")),
            "{field}: {head}"
        );
    }
    assert!(head.contains("6.8.0-1017-azure") && head.contains("ubuntu24 20250112.1.0"));
    assert!(
        !head.contains("governor"),
        "the same governor is no change: {head}"
    );
    assert!(out.contains("machine changed: kernel differs"), "{out}");
    let c: Comparison = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(c.outcome, GateOutcome::Pass);
    assert_eq!(
        c.environment_changes.len(),
        2,
        "{:?}",
        c.environment_changes
    );
    // Two runs of one machine: no note.
    let same = write(dir.path(), "same.json", &b);
    let o = compare(&base, &same, &["--markdown", md.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
    assert!(!std::fs::read_to_string(&md)
        .unwrap()
        .contains("machine changed"));
}
