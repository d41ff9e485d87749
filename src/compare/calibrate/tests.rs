//! The calibration's analysis on synthetic A/A runs.

use super::*;
use crate::config::{gate::default_gate, Suite};
use crate::results::synthetic;

/// One scenario (`get-22b`), two clients.
fn suite() -> Suite {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(1);
    s
}

/// A run `k` of `rounds` trials: trial noise `within` (fraction, a fixed
/// pattern) around a run offset `1 + between * pattern(k)`.
fn run(k: u32, rounds: u32, within: f64, between: f64) -> RunResults {
    const P: [f64; 7] = [0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8];
    synthetic::run(suite(), rounds, |_, _, r| {
        let f = (1.0 + between * P[(k % 7) as usize]) * (1.0 + within * P[((r + k) % 7) as usize]);
        Some(synthetic::metrics(10_000.0 / f, 2000.0 * f, 50.0 * f))
    })
}

fn runs(n: u32, rounds: u32, within: f64, between: f64) -> Vec<RunResults> {
    (0..n).map(|k| run(k, rounds, within, between)).collect()
}

fn cell<'a>(c: &'a Calibration, client: &str, metric: &str) -> &'a CellNoise {
    c.cells
        .iter()
        .find(|n| n.client == client && n.metric == metric)
        .unwrap_or_else(|| panic!("no {client}/{metric}"))
}

fn suggestion<'a>(c: &'a Calibration, metric: &str) -> &'a Suggestion {
    c.suggestions
        .iter()
        .find(|s| s.metric == metric)
        .unwrap_or_else(|| panic!("no suggestion for {metric}"))
}

#[test]
fn covers_every_gating_metric_of_every_cell() {
    let c = calibrate(&runs(5, 4, 0.01, 0.0), &default_gate(), Options::default());
    assert_eq!(c.runs, 5);
    assert_eq!(c.comparisons, 20, "ordered pairs of 5 runs");
    let metrics: Vec<&str> = c
        .cells
        .iter()
        .filter(|n| n.client == "hyper")
        .map(|n| n.metric.as_str())
        .collect();
    assert_eq!(
        metrics,
        [
            "throughput_rps",
            "latency_p99_us",
            "error_rate",
            "cpu_us_per_request"
        ]
    );
    assert_eq!(c.cells.len(), 8, "2 clients x 4 gating metrics");
    let n = cell(&c, "hyper", "cpu_us_per_request");
    assert_eq!((n.runs, n.trials, n.shifts.len()), (5, 4, 10));
    assert_eq!(n.scale, Scale::Log);
    assert_eq!(cell(&c, "hyper", "error_rate").scale, Scale::Absolute);
}

#[test]
fn identical_runs_have_no_between_run_spread_and_no_shift() {
    let c = calibrate(&runs(4, 4, 0.02, 0.0), &default_gate(), Options::default());
    let n = cell(&c, "reqwest", "cpu_us_per_request");
    assert!(n.within_sd > 0.005, "{n:?}");
    assert!(n.between_sd < 1e-9, "{n:?}");
    assert!(n.shift_q < 0.02, "{n:?}");
    assert_eq!(n.false_alarms, 0);
    assert_eq!(c.failed_comparisons, 0);
}

#[test]
fn a_run_level_offset_shows_as_between_run_spread_and_raises_the_threshold() {
    let quiet = calibrate(&runs(6, 4, 0.005, 0.0), &default_gate(), Options::default());
    let drifty = calibrate(
        &runs(6, 4, 0.005, 0.06),
        &default_gate(),
        Options::default(),
    );
    let (q, d) = (
        cell(&quiet, "hyper", "throughput_rps"),
        cell(&drifty, "hyper", "throughput_rps"),
    );
    assert!(d.between_sd > 0.03, "{d:?}");
    assert!(q.between_sd < 0.005, "{q:?}");
    assert!(d.shift_q > 0.08, "{d:?}");
    assert!(
        suggestion(&drifty, "throughput_rps").fail.relative
            > suggestion(&quiet, "throughput_rps").fail.relative
    );
    // Offsets of up to 12% between runs beat the default 5% throughput gate.
    assert!(d.false_alarms > 0, "{d:?}");
    assert!(drifty.failed_comparisons > 0);
}

#[test]
fn suggestion_is_the_largest_aa_bound_rounded_up_with_a_floor() {
    let c = calibrate(&runs(5, 4, 0.01, 0.0), &default_gate(), Options::default());
    for s in c.suggestions.iter().filter(|s| s.scale == Scale::Log) {
        let worst = c
            .cells
            .iter()
            .filter(|n| n.metric == s.metric)
            .map(|n| n.needed)
            .fold(0.0, f64::max);
        assert!(s.fail.relative >= worst, "{s:?}");
        assert!(s.fail.relative >= 0.02, "floor: {s:?}");
        assert!(s.fail.relative < worst.max(0.02) + 0.01 + 1e-9, "{s:?}");
        let pct = s.fail.relative * 100.0;
        assert!((pct - pct.round()).abs() < 1e-9, "whole percent: {s:?}");
        assert!(s.warn.relative <= s.fail.relative);
    }
    // p99 keeps its absolute floor; the error rate its absolute threshold.
    let p99 = suggestion(&c, "latency_p99_us");
    assert_eq!(p99.fail.absolute, Some(2000.0));
    let e = suggestion(&c, "error_rate");
    assert_eq!(e.fail.absolute, Some(0.01));
    assert_eq!(e.fail.relative, 0.0);
}

/// The gate with the suggestions applied.
fn apply(gate: &GateConfig, suggestions: &[Suggestion]) -> GateConfig {
    let mut g = gate.clone();
    for s in suggestions {
        let m = g.metrics.iter_mut().find(|m| m.metric == s.metric).unwrap();
        m.fail = Some(s.fail);
        m.warn = Some(s.warn);
    }
    g
}

#[test]
fn suggested_thresholds_fail_none_of_the_calibration_comparisons() {
    // Run offsets of up to 8% fail the default gate; the suggestion must not.
    let drifty = runs(6, 10, 0.005, 0.08);
    let c = calibrate(&drifty, &default_gate(), Options::default());
    assert!(c.failed_comparisons > 0, "the default gate cries wolf here");
    let cpu = cell(&c, "hyper", "cpu_us_per_request");
    assert!(cpu.aa_bound > 0.0, "{cpu:?}");
    let tuned = apply(&default_gate(), &c.suggestions);
    let again = calibrate(&drifty, &tuned, Options::default());
    assert_eq!(again.failed_comparisons, 0, "{:?}", again.suggestions);
    // ... and stays as small as that allows: within a percent (plus rounding).
    let s = suggestion(&c, "cpu_us_per_request");
    assert!(
        s.fail.relative <= cpu.aa_bound.max(0.02) + 0.01 + 1e-9,
        "{s:?}"
    );
}

#[test]
fn noise_beyond_the_config_limit_is_capped_and_still_parses() {
    let wild = runs(5, 6, 0.01, 0.95);
    let c = calibrate(&wild, &default_gate(), Options::default());
    let s = suggestion(&c, "latency_p99_us");
    assert!(s.capped, "{s:?}");
    assert_eq!(s.fail.relative, MAX_RELATIVE);
    let snippet = gate_snippet(&c, "");
    assert!(snippet.contains("consider gating = false"), "{snippet}");
    let text = format!(
        "{}\n{snippet}",
        include_str!("../../../fixtures/configs/minimal.toml")
            .split("[gate]")
            .next()
            .unwrap()
    );
    Suite::from_toml(&text, "snippet").expect("a capped snippet parses");
}

#[test]
fn three_rounds_have_no_mde_and_still_get_a_suggestion() {
    let c = calibrate(&runs(3, 3, 0.01, 0.0), &default_gate(), Options::default());
    let n = cell(&c, "hyper", "cpu_us_per_request");
    assert_eq!(n.mde, None, "3 vs 3 cannot reach alpha 0.05");
    assert!(suggestion(&c, "cpu_us_per_request").fail.relative >= 0.02);
}

#[test]
fn spread_separates_within_and_between() {
    let (w, b) = spread(&[vec![1.0, 3.0], vec![11.0, 13.0]]);
    assert!((w - 2f64.sqrt()).abs() < 1e-12);
    // var(means) = 50, within^2 / 2 = 1.
    assert!((b - 49f64.sqrt()).abs() < 1e-12);
    assert_eq!(spread(&[vec![5.0, 5.0], vec![5.0, 5.0]]), (0.0, 0.0));
}

#[test]
fn quantiles_and_rounding() {
    assert_eq!(quantile_sorted(&[], 0.95), 0.0);
    assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0], 0.5), 2.0);
    assert!((quantile_sorted(&[0.0, 10.0], 0.95) - 9.5).abs() < 1e-12);
    assert_eq!(round_up_percent(0.05), 0.05);
    assert_eq!(round_up_percent(0.0501), 0.06);
    assert_eq!(round_up_percent(0.011), 0.02);
    assert!((round_up_abs(0.0123) - 0.02).abs() < 1e-12);
    assert!((round_up_abs(0.01) - 0.01).abs() < 1e-12);
}

fn sample() -> Vec<Suggestion> {
    let c = calibrate(&runs(5, 4, 0.01, 0.02), &default_gate(), Options::default());
    c.suggestions
}

#[test]
fn snippet_parses_as_a_gate_with_the_suggested_thresholds() {
    let c = calibrate(&runs(5, 4, 0.01, 0.02), &default_gate(), Options::default());
    let snippet = gate_snippet(&c, " of get-22b");
    let text = format!(
        "{}\n{snippet}",
        include_str!("../../../fixtures/configs/minimal.toml")
            .split("[gate]")
            .next()
            .unwrap()
    );
    let suite = Suite::from_toml(&text, "snippet").expect("the snippet parses");
    for s in &c.suggestions {
        let g = suite
            .gate
            .metrics
            .iter()
            .find(|g| g.metric == s.metric)
            .unwrap();
        assert_eq!(g.fail, Some(s.fail), "{}", s.metric);
        assert_eq!(g.warn, Some(s.warn), "{}", s.metric);
        assert!(g.gating);
    }
    let table = render_table(&c);
    assert!(table.contains("cpu_us_per_request"), "{table}");
    assert!(table.contains("ordered A/A comparisons"), "{table}");
}

#[test]
fn rewrite_replaces_gate_entries_and_keeps_every_other_byte() {
    let text = "# top comment\r\n[run]\r\nrounds = 4 # keep\r\n\r\n[gate]\r\nalpha = 0.05\r\nthroughput_rps = \"-5%\" # tp\r\n  cpu_us_per_request = { fail = \"+10%\" }\r\n\r\n[[gate.override]]\r\nscenario = \"x\"\r\nthroughput_rps = \"-9%\"\r\n";
    let s = sample();
    let out = rewrite_gate(text, "benchgate.toml", &s).unwrap();
    let tp = s.iter().find(|s| s.metric == "throughput_rps").unwrap();
    let cpu = s.iter().find(|s| s.metric == "cpu_us_per_request").unwrap();
    let expected_head =
        "# top comment\r\n[run]\r\nrounds = 4 # keep\r\n\r\n[gate]\r\nalpha = 0.05\r\n";
    assert!(out.starts_with(expected_head), "{out}");
    assert!(
        out.contains(&format!("{} # tp\r\n", gate_line(tp))),
        "{out}"
    );
    assert!(out.contains(&format!("  {}\r\n", gate_line(cpu))), "{out}");
    // p99 and error_rate were missing: added after the last entry of [gate].
    let p99 = out.find("latency_p99_us").unwrap();
    assert!(p99 < out.find("[[gate.override]]").unwrap(), "{out}");
    assert!(out.ends_with(
        "\r\n\r\n[[gate.override]]\r\nscenario = \"x\"\r\nthroughput_rps = \"-9%\"\r\n"
    ));
    // Idempotent.
    assert_eq!(rewrite_gate(&out, "benchgate.toml", &s).unwrap(), out);
}

#[test]
fn rewrite_appends_a_gate_table_when_there_is_none() {
    let s = sample();
    let out = rewrite_gate("[run]\nrounds = 4", "benchgate.toml", &s).unwrap();
    assert!(out.starts_with("[run]\nrounds = 4\n\n[gate]\n"), "{out}");
    assert_eq!(out.matches(" = { fail = ").count(), s.len());
}

#[test]
fn trailing_comments_outside_strings_only() {
    // A `#` inside a string is not a comment; an entry without a comment gets none.
    let text = "[[client]]\nname = \"a#x\"\nkind = \"hyper\"\n\n[gate]\nthroughput_rps = \"-5%\" # c \"#x\"\ncpu_us_per_request = \"+10%\"\n";
    let s = sample();
    let out = rewrite_gate(text, "benchgate.toml", &s).unwrap();
    let line = |m: &str| gate_line(s.iter().find(|s| s.metric == m).unwrap());
    assert!(out.starts_with("[[client]]\nname = \"a#x\"\n"), "{out}");
    assert!(
        out.contains(&format!("\n{} # c \"#x\"\n", line("throughput_rps"))),
        "{out}"
    );
    assert!(
        out.contains(&format!("\n{}\n", line("cpu_us_per_request"))),
        "{out}"
    );
}

/// Anchored A/A runs whose offsets hit the whole machine (the anchor too):
/// the calibration analyses the anchored figures the gate will judge, under
/// the raw metric's name, and their drift is gone from them.
#[test]
fn anchored_runs_are_calibrated_on_their_anchored_figures() {
    const P: [f64; 7] = [0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8];
    let anchored: Vec<RunResults> = (0..5)
        .map(|k| {
            let mut s = suite();
            s.run.anchor = Some(crate::config::anchor::Anchor::fixed());
            synthetic::run(s, 10, |_, _, r| {
                let f =
                    (1.0 + 0.10 * P[(k % 7) as usize]) * (1.0 + 0.01 * P[((r + k) % 7) as usize]);
                Some(synthetic::metrics(10_000.0 / f, 2000.0 * f, 50.0 * f))
            })
        })
        .collect();
    let c = calibrate(&anchored, &default_gate(), Options::default());
    let n = cell(&c, "hyper", "cpu_us_per_request");
    assert_eq!(n.values_of, "cpu_us_per_request_anchored");
    assert!(
        n.between_sd < 1e-9,
        "the machine's offset divides out: {}",
        n.between_sd
    );
    assert!(c
        .cells
        .iter()
        .all(|n| n.client != crate::config::anchor::NAME));
    let raw = calibrate(
        &runs(5, 10, 0.01, 0.10),
        &default_gate(),
        Options::default(),
    );
    let r = cell(&raw, "hyper", "cpu_us_per_request");
    assert_eq!(r.values_of, "cpu_us_per_request");
    assert!(r.between_sd > 0.03, "raw, it stays: {}", r.between_sd);
    let fail = |c: &Calibration| {
        c.suggestions
            .iter()
            .find(|s| s.metric == "cpu_us_per_request")
            .unwrap()
            .fail
            .relative
    };
    assert!(fail(&c) < fail(&raw), "{} vs {}", fail(&c), fail(&raw));
}
