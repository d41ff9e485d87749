//! `[run] anchor = true` end to end (issue 16, point 1): real runs (the mock
//! driver for every client, the anchor included, against the real reference
//! server and process per trial) carry the anchor's cell and every trial's
//! anchored figures, valid against the schema; `benchgate compare` of two
//! anchored runs gates on the anchored figures and says so; a baseline
//! without the anchor is compared raw, with the note.

use crate::common;

use std::path::Path;
use std::process::Command;

use benchgate::compare::Comparison;
use benchgate::results::RunResults;
use common::{exe, run_config, schema_path, Run};

/// One client, three rounds of 40 scripted requests; anchored or not.
fn config(anchor: bool) -> String {
    format!(
        r#"
[run]
rounds = 3
warmup = "50ms"
requests = 40
anchor = {anchor}

[[client]]
name = "scripted"
kind = "hyper"

[[scenario]]
name = "mocked"
path = "/bytes/22"
concurrency = 2
"#
    )
}

fn run(anchor: bool) -> Run {
    run_config(&config(anchor), &["--quiet", "--mock-latencies-us", "200"])
}

fn assert_schema_valid(doc: &serde_json::Value, schema: &Path) {
    let errors = common::errors_against(schema, doc);
    assert!(errors.is_empty(), "not valid:\n{}", errors.join("\n"));
}

/// `benchgate compare --baseline <base> --current <cur> --json`: the
/// comparison and the terminal report.
fn compare(base: &Run, cur: &Run) -> (Comparison, String) {
    let json = cur.dir.path().join("comparison.json");
    let out = Command::new(exe())
        .arg("compare")
        .arg("--baseline")
        .arg(&base.out)
        .arg("--current")
        .arg(&cur.out)
        .arg("--json")
        .arg(&json)
        .env("CI", "true")
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/comparison.schema.json");
    assert_schema_valid(&doc, &schema);
    (
        serde_json::from_value(doc).unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn row<'a>(
    c: &'a Comparison,
    client: &str,
    metric: &str,
) -> &'a benchgate::compare::MetricComparison {
    c.metrics
        .iter()
        .find(|m| m.client == client && m.metric == metric)
        .unwrap_or_else(|| panic!("no row {client}/{metric}"))
}

#[test]
fn an_anchored_run_carries_the_anchor_and_every_trial_s_anchored_figures() {
    let r = run(true);
    let results: RunResults = r.results();
    assert_schema_valid(
        &serde_json::from_slice(&std::fs::read(&r.out).unwrap()).unwrap(),
        schema_path(),
    );
    assert!(results.config.run.anchor.is_some());
    let anchor = results
        .cell_at("mocked", "anchor", None)
        .expect("the anchor's cell");
    assert!(anchor.anchor);
    assert_eq!(anchor.trials.len(), 3, "one anchor trial per round");
    let cell = results.cell_at("mocked", "scripted", None).unwrap();
    assert!(!cell.anchor);
    for t in &cell.trials {
        let m = t.metrics.as_ref().unwrap();
        let a = anchor
            .trials
            .iter()
            .find(|a| a.round == t.round)
            .and_then(|a| a.metrics.as_ref())
            .unwrap();
        // Each trial over the anchor of its own round, the raw figure kept
        // (to the last bits: the file's figures are the ratio's inputs after
        // a JSON round trip).
        let close = |got: Option<f64>, want: f64| {
            got.is_some_and(|g| (g - want).abs() <= 1e-12 * want.abs())
        };
        let want = m.cpu_us_per_request.unwrap() / a.cpu_us_per_request.unwrap();
        assert!(
            close(m.cpu_us_per_request_anchored, want),
            "round {}: {:?} != {want}",
            t.round,
            m.cpu_us_per_request_anchored
        );
        let want = m.throughput_rps.unwrap() / a.throughput_rps.unwrap();
        assert!(
            close(m.throughput_rps_anchored, want),
            "round {}: {:?} != {want}",
            t.round,
            m.throughput_rps_anchored
        );
    }
    assert!(cell.summary.contains_key("cpu_us_per_request_anchored"));
    for t in &anchor.trials {
        let m = t.metrics.as_ref().unwrap();
        assert_eq!(m.cpu_us_per_request_anchored, None, "not over itself");
    }
    // The run's table shows the anchored columns and the anchor's row.
    let table = String::from_utf8_lossy(&r.output.stdout);
    assert!(table.contains("cpu ÷ anchor"), "{table}");
    assert!(
        table.lines().any(|l| l.starts_with("mocked    anchor")),
        "{table}"
    );
}

#[test]
fn two_anchored_runs_gate_on_the_anchored_figures() {
    let (base, cur) = (run(true), run(true));
    let (c, text) = compare(&base, &cur);
    let note = c.anchoring.as_deref().unwrap();
    assert!(
        note.starts_with("Anchored: both runs measured the anchor"),
        "{note}"
    );
    assert!(
        text.contains("Anchored: both runs measured the anchor"),
        "{text}"
    );
    let anchored = row(&c, "scripted", "cpu_us_per_request_anchored");
    assert!(anchored.gating, "{}", anchored.reason);
    assert!(anchored
        .reason
        .starts_with("gates in place of cpu_us_per_request"));
    assert!(row(&c, "scripted", "throughput_rps_anchored").gating);
    let raw = row(&c, "scripted", "cpu_us_per_request");
    assert!(!raw.gating, "{}", raw.reason);
    assert!(!row(&c, "scripted", "throughput_rps").gating);
    let drift = row(&c, "anchor", "cpu_us_per_request");
    assert!(
        !drift.gating && drift.reason.contains("the anchor"),
        "{}",
        drift.reason
    );
}

#[test]
fn a_baseline_without_the_anchor_is_compared_raw_with_the_note() {
    let (base, cur) = (run(false), run(true));
    let (c, text) = compare(&base, &cur);
    let note = "Compared raw: the baseline run has no anchor";
    assert!(
        c.anchoring.as_deref().unwrap().starts_with(note),
        "{:?}",
        c.anchoring
    );
    assert!(text.contains(note), "{text}");
    assert!(row(&c, "scripted", "cpu_us_per_request").gating);
    assert!(row(&c, "scripted", "throughput_rps").gating);
    assert!(!row(&c, "scripted", "cpu_us_per_request_anchored").gating);
}

#[test]
fn a_config_that_cannot_have_the_anchor_is_told_how_to_fix_it() {
    let named = config(true).replace("name = \"scripted\"", "name = \"anchor\"");
    let r = run_config(&named, &[]);
    assert_eq!(r.output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.output.stderr);
    assert!(
        err.contains("benchgate.toml:9") && err.contains("the anchor's"),
        "{err}"
    );
    assert!(err.contains("rename the client"), "{err}");
    let servers = format!(
        "{}\n[[server]]\nname = \"main\"\nurl = \"http://127.0.0.1:9/\"\n",
        config(true)
    );
    let r = run_config(&servers, &[]);
    assert_eq!(r.output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.output.stderr);
    assert!(
        err.contains("run.anchor") && err.contains("remove anchor = true"),
        "{err}"
    );
}
