//! `[jmh] iterations_as_trials` (issue 31) end to end through `benchgate
//! compare --config` on the real JMH files of fixtures/jmh: a config of a
//! JMH-only team (no clients) loads, a 1-fork file decides with iterations
//! as trials, and every report labels that comparison optimistic.

use crate::common;

use benchgate::compare::{GateOutcome, Verdict};
use common::jmh::{compare, fixture, primary, write_config, write_worse, FORK_REASON};

/// 1 fork of 5 measurement iterations, AverageTime (two benchmarks).
const ONE_FORK: &str = "nebula-client-avgt.json";

const OPTIMISTIC: &str = "optimistic: iterations of one JMH fork taken as independent trials";

#[test]
fn iterations_as_trials_decides_a_1_fork_file_and_says_it_is_optimistic() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "[jmh]\niterations_as_trials = true\n");
    let base = fixture(ONE_FORK);
    // Twice as slow: 5 iterations a side can show it (p = 0.008 at best).
    let slow = write_worse(dir.path(), ONE_FORK, 2.0);
    let md = dir.path().join("comment.md");
    let extra = [
        "--config",
        config.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ];
    let (code, text, c) = compare(&base, &slow, &extra);
    assert_eq!(code, 1, "{text}");
    assert_eq!(c.outcome, GateOutcome::Fail, "{text}");
    assert!(c.optimistic, "{text}");
    let rows = primary(&c);
    assert_eq!(rows.len(), 2, "{rows:?}");
    for m in rows {
        assert_eq!(m.verdict, Verdict::Regressed, "{m:?}");
        assert!(!m.reason.contains(FORK_REASON), "{}", m.reason);
    }
    // Next to the verdict: the terminal's first lines, the comment's head.
    let head: String = text.lines().take(3).collect::<Vec<_>>().join("\n");
    assert!(head.contains(OPTIMISTIC), "{text}");
    let comment = std::fs::read_to_string(&md).unwrap();
    let top: String = comment.lines().take(4).collect::<Vec<_>>().join("\n");
    assert!(top.contains(OPTIMISTIC), "{comment}");
    assert!(top.contains("benchgate: fail"), "{comment}");

    // Against itself it never fails (one benchmark's noisy iterations may
    // leave it undecided, never for the fork count), still labelled.
    let (code, text, c) = compare(&base, &base, &extra);
    assert_eq!(code, 0, "{text}");
    assert_ne!(c.outcome, GateOutcome::Fail, "{text}");
    assert!(c.optimistic);
    assert!(
        primary(&c).iter().all(|m| m.undecidable.is_none()),
        "{text}"
    );
    assert!(!text.contains(FORK_REASON), "{text}");
}

#[test]
fn the_json_report_carries_optimistic_only_when_iterations_are_trials() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture(ONE_FORK);
    let json_of = |extra: &[&str]| {
        let out = dir.path().join("cmp.json");
        let mut args = vec![
            "compare",
            "--baseline",
            base.to_str().unwrap(),
            "--current",
            base.to_str().unwrap(),
            "--json",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = std::process::Command::new(common::exe())
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        v
    };
    let config = write_config(dir.path(), "[jmh]\niterations_as_trials = true\n");
    let on = json_of(&["--config", config.to_str().unwrap()]);
    assert_eq!(on["optimistic"], serde_json::Value::Bool(true), "{on}");
    // Forks (the default): no field, every row undecided for the fork count.
    let off = json_of(&[]);
    assert!(off.get("optimistic").is_none(), "{off}");
    let schema =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/comparison.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    assert_eq!(schema["properties"]["optimistic"]["type"], "boolean");
}

#[test]
fn a_jmh_only_config_loads_for_compare_and_refuses_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "[gate]\n\"jmh.avgt_ns\" = \"+50%\"\n");
    let base = fixture(ONE_FORK);
    let (code, text, c) = compare(&base, &base, &["--config", config.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(!c.optimistic);
    let o = std::process::Command::new(common::exe())
        .args(["run", "--config", config.to_str().unwrap()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("has nothing to run"), "{err}");
    assert!(err.contains("benchgate compare --config"), "{err}");
}

#[test]
fn a_bad_jmh_table_is_a_located_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "[jmh]\niterations_as_trials = 1\n");
    let base = fixture(ONE_FORK);
    let o = std::process::Command::new(common::exe())
        .args(["compare", "--baseline", base.to_str().unwrap()])
        .args(["--current", base.to_str().unwrap()])
        .args(["--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("benchgate.toml:2:"), "{err}");
    assert!(err.contains("iterations_as_trials = true"), "{err}");
}

/// 2 forks of 10 iterations, Throughput, one benchmark at sizes 10, 100, 500.
const THREE_SIZES: &str = "tkrs-thrpt-2-forks-gc.json";
const FOLD: &str = "bench.ArrayAccumulateBench.foldLeftAcc";

#[test]
fn an_override_glob_loosens_the_benchmarks_it_matches_only() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture(THREE_SIZES);
    // 20% fewer operations per second, every size.
    let slow = write_worse(dir.path(), THREE_SIZES, 1.25);
    let strict = "[jmh]\niterations_as_trials = true\n";
    let config = write_config(dir.path(), strict);
    let (code, text, c) = compare(&base, &slow, &["--config", config.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    let failed = |c: &benchgate::compare::Comparison| -> Vec<String> {
        let mut v: Vec<String> = primary(c)
            .iter()
            .filter(|m| m.verdict == Verdict::Regressed)
            .map(|m| m.scenario.clone())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        failed(&c),
        [
            format!("{FOLD} (size=10)"),
            format!("{FOLD} (size=100)"),
            format!("{FOLD} (size=500)")
        ],
        "{text}"
    );
    // `*` and `?`: size=100 only (not 10, not 500), within a looser -50%.
    let loose = format!(
        "{strict}[gate]\n[[gate.override]]\nscenario = \"bench.*(size=1?0)\"\n\"jmh.ops_per_s\" = \"-50%\"\n"
    );
    let config = write_config(dir.path(), &loose);
    let (code, text, c) = compare(&base, &slow, &["--config", config.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(
        failed(&c),
        [format!("{FOLD} (size=10)"), format!("{FOLD} (size=500)")],
        "{text}"
    );
    let hundred = primary(&c)
        .into_iter()
        .find(|m| m.scenario == format!("{FOLD} (size=100)"))
        .unwrap();
    assert_eq!(hundred.verdict, Verdict::Unchanged, "{hundred:?}");
    assert_eq!(hundred.tier, benchgate::compare::Tier::Pass, "{hundred:?}");
}

#[test]
fn an_empty_or_malformed_override_glob_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture(THREE_SIZES);
    let err_of = |scenario: &str| {
        let text = format!(
            "[gate]\n[[gate.override]]\nscenario = {scenario:?}\n\"jmh.ops_per_s\" = \"-50%\"\n"
        );
        let config = write_config(dir.path(), &text);
        let o = std::process::Command::new(common::exe())
            .args(["compare", "--baseline", base.to_str().unwrap()])
            .args(["--current", base.to_str().unwrap()])
            .args(["--config", config.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{scenario:?}: {o:?}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = err_of("");
    assert!(e.contains("benchgate.toml:3:"), "{e}");
    assert!(e.contains("gate.override[0].scenario"), "{e}");
    assert!(e.contains("cannot be empty"), "{e}");
    let e = err_of("bench.[ab]*");
    assert!(e.contains("benchgate.toml:3:"), "{e}");
    assert!(
        e.contains("knows only * (any characters) and ? (one character)"),
        "{e}"
    );
    // A pattern that matches nothing in a config with scenarios loads.
    let text = "[[client]]\nname = \"h\"\nkind = \"hyper\"\n[[scenario]]\nname = \"get\"\npath = \"/bytes/1\"\n[gate]\n[[gate.override]]\nscenario = \"org.openjdk.*\"\n\"jmh.avgt_ns\" = \"+50%\"\n";
    benchgate::config::Suite::from_toml(text, "b.toml").unwrap();
}
