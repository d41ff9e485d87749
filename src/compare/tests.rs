//! `compare` and `compare_side_by_side` on synthetic runs.

use proptest::prelude::*;

use super::*;
use crate::config::gate::{default_gate, GateOverride, Threshold};
use crate::config::Suite;
use crate::metric::TrialMetrics;
use crate::results::synthetic;

/// A small suite: two scenarios, two clients each.
fn suite() -> Suite {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(2);
    s
}

/// Per-round noise: a fixed pattern of about +-2%.
fn noise(round: u32, salt: u32) -> f64 {
    const N: [f64; 7] = [0.0, 0.012, -0.018, 0.007, -0.004, 0.019, -0.011];
    1.0 + N[((round + salt * 3) % 7) as usize]
}

/// A run where `slow` multiplies latency and CPU and divides throughput.
fn run(rounds: u32, slow: f64, salt: u32) -> RunResults {
    synthetic::run(suite(), rounds, |_, _, r| {
        let k = noise(r, salt) * slow;
        Some(synthetic::metrics(10_000.0 / k, 2000.0 * k, 50.0 * k))
    })
}

fn find<'a>(c: &'a Comparison, scenario: &str, client: &str, metric: &str) -> &'a MetricComparison {
    c.metrics
        .iter()
        .find(|m| m.scenario == scenario && m.client == client && m.metric == metric)
        .unwrap_or_else(|| panic!("no {scenario}/{client}/{metric}"))
}

#[test]
fn a_clear_regression_fails_the_gate() {
    let gate = default_gate();
    let c = compare(Some(&run(5, 1.0, 0)), &run(5, 1.3, 1), &gate);
    assert_eq!(c.outcome, GateOutcome::Fail);
    assert_eq!(c.exit_code, 1);
    let rps = find(&c, "get-22b", "hyper", "throughput_rps");
    assert_eq!(
        (rps.verdict, rps.tier),
        (Verdict::Regressed, Tier::Fail),
        "{}",
        rps.reason
    );
    assert!(
        (rps.change.unwrap() + 0.23).abs() < 0.03,
        "{:?}",
        rps.change
    );
    assert!(rps.ci_low.unwrap() <= rps.change.unwrap() && rps.change <= rps.ci_high);
    assert!(rps.p_value.unwrap() < 0.05 && rps.mde.unwrap() < 0.05);
    assert_eq!(rps.baseline.len(), 5);
    // p99: 4 ms -> 5.2 ms is +30% and +1.2 ms: under the 2 ms floor.
    let p99 = find(&c, "get-22b", "hyper", "latency_p99_us");
    assert_ne!(p99.verdict, Verdict::Regressed, "{}", p99.reason);
    // Counts: 2 scenarios x 2 clients x (throughput, cpu) fail.
    assert_eq!(c.regressions, 8);
    assert_eq!(c.mode, ComparisonMode::Baseline);
    assert!(c.method.contains("Mann-Whitney") && c.method.contains("Hollander"));
}

#[test]
fn a_vs_a_passes_and_swapping_sides_flips_the_verdict() {
    let gate = default_gate();
    let c = compare(Some(&run(5, 1.0, 0)), &run(5, 1.0, 1), &gate);
    assert_eq!(
        (c.outcome, c.exit_code, c.regressions),
        (GateOutcome::Pass, 0, 0)
    );
    let rps = find(&c, "get-22b", "hyper", "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Unchanged, "{}", rps.reason);
    let back = compare(Some(&run(5, 1.3, 1)), &run(5, 1.0, 0), &gate);
    assert_eq!(back.outcome, GateOutcome::Pass);
    let rps = find(&back, "get-22b", "hyper", "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Improved, "{}", rps.reason);
    assert!(back.improvements >= 8 && back.regressions == 0);
}

#[test]
fn three_rounds_are_inconclusive_with_the_reason() {
    let c = compare(Some(&run(3, 1.0, 0)), &run(3, 1.5, 1), &default_gate());
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Inconclusive, 0));
    let rps = find(&c, "get-22b", "hyper", "throughput_rps");
    assert_eq!((rps.verdict, rps.tier), (Verdict::Inconclusive, Tier::Warn));
    assert!(
        rps.reason
            .contains("3 vs 3 trials cannot reach p < 0.05 (it takes 4 trials a side)"),
        "{}",
        rps.reason
    );
    assert_eq!(rps.mde, None);
    assert!(c.warnings >= 4);
}

#[test]
fn no_baseline_and_missing_cells() {
    let mut gate = default_gate();
    let c = compare(None, &run(5, 1.0, 0), &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::NoBaseline, 0));
    assert!(c.metrics.iter().all(|m| m.verdict == Verdict::NoBaseline));
    assert!(c.baseline_run.is_none());
    gate.missing_baseline = MissingBaseline::Fail;
    assert_eq!(compare(None, &run(5, 1.0, 0), &gate).exit_code, 1);

    // A cell only the current run has.
    let mut base = run(5, 1.0, 0);
    base.results.retain(|c| c.scenario != "get-20kb");
    let c = compare(Some(&base), &run(5, 1.0, 1), &default_gate());
    assert_eq!(c.outcome, GateOutcome::Pass);
    let m = find(&c, "get-20kb", "reqwest", "throughput_rps");
    assert_eq!((m.verdict, m.tier), (Verdict::NoBaseline, Tier::Pass));
    assert!(
        m.reason.contains("no results for this scenario"),
        "{}",
        m.reason
    );
}

#[test]
fn a_baseline_of_another_schedule_or_windows_per_fork_is_not_comparable() {
    let gate = default_gate();
    let mut base = run(5, 1.0, 0);
    base.config.run.windows = 4;
    base.config.run.schedule = crate::config::Schedule::Interleaved;
    let c = compare(Some(&base), &run(5, 2.0, 1), &gate);
    assert_eq!(c.outcome, GateOutcome::NotComparable);
    assert_eq!(
        c.environment_differences,
        [
            "schedule differs (\"interleaved\" vs \"sequential\")",
            "windows per fork differ (4 vs 1)"
        ]
    );
    assert!(c
        .metrics
        .iter()
        .all(|m| m.verdict == Verdict::NotComparable));
}

#[test]
fn environment_or_load_profile_differences_are_not_comparable() {
    let mut gate = default_gate();
    let mut base = run(5, 1.0, 0);
    base.environment.cpu_model = "Other CPU".into();
    let c = compare(Some(&base), &run(5, 2.0, 1), &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::NotComparable, 0));
    assert_eq!(c.environment_differences.len(), 1);
    assert!(c
        .metrics
        .iter()
        .all(|m| m.verdict == Verdict::NotComparable));
    gate.not_comparable = NotComparablePolicy::Fail;
    assert_eq!(compare(Some(&base), &run(5, 2.0, 1), &gate).exit_code, 1);

    let mut base = run(5, 1.0, 0);
    base.config.scenarios[0].load = crate::config::Load::Closed { concurrency: 1 };
    let c = compare(Some(&base), &run(5, 2.0, 1), &default_gate());
    let m = find(&c, "get-22b", "hyper", "throughput_rps");
    assert_eq!((m.verdict, m.tier), (Verdict::NotComparable, Tier::Warn));
    assert!(m.reason.contains("load differs"), "{}", m.reason);
    // The other scenario still gates.
    assert_eq!(
        find(&c, "get-20kb", "hyper", "throughput_rps").verdict,
        Verdict::Regressed
    );
    assert_eq!(c.outcome, GateOutcome::Fail);
}

#[test]
fn overrides_apply_per_scenario_and_client() {
    let mut gate = default_gate();
    gate.overrides.push(GateOverride {
        scenario: Some("get-22b".into()),
        client: Some("hyper".into()),
        metrics: vec![MetricGate {
            metric: "throughput_rps".into(),
            fail: Some(Threshold {
                relative: 0.5,
                absolute: None,
            }),
            warn: None,
            gating: true,
        }],
    });
    let c = compare(Some(&run(5, 1.0, 0)), &run(5, 1.3, 1), &gate);
    assert_eq!(
        find(&c, "get-22b", "hyper", "throughput_rps").verdict,
        Verdict::Unchanged
    );
    assert_eq!(
        find(&c, "get-22b", "reqwest", "throughput_rps").verdict,
        Verdict::Regressed
    );
    assert_eq!(
        gate_for(&gate, "get-20kb", "hyper", "throughput_rps")
            .unwrap()
            .fail
            .unwrap()
            .relative,
        0.05
    );
}

/// The suite's runs where `fails(client)` fails every trial of that client.
fn failing(rounds: u32, fails: impl Fn(&str) -> bool) -> RunResults {
    synthetic::run(suite(), rounds, |_, client, r| {
        (!fails(client)).then(|| synthetic::metrics(10_000.0 * noise(r, 1), 2000.0, 50.0))
    })
}

/// The rows of (scenario, client).
fn rows<'a>(c: &'a Comparison, scenario: &str, client: &str) -> Vec<&'a MetricComparison> {
    c.metrics
        .iter()
        .filter(|m| m.scenario == scenario && m.client == client)
        .collect()
}

/// One `failed` row for the cell, on its primary gated metric, quoting the
/// first failure.
fn assert_failed_cell(c: &Comparison, scenario: &str, client: &str, reason: &str) {
    let rows = rows(c, scenario, client);
    assert_eq!(rows.len(), 1, "one row for the cell: {rows:#?}");
    let m = rows[0];
    assert_eq!(
        (m.verdict, m.tier),
        (Verdict::Failed, Tier::Fail),
        "{}",
        m.reason
    );
    assert_eq!(m.metric, "throughput_rps", "the first gating metric");
    assert!(m.gating);
    assert!(m.current.is_empty() || m.baseline.is_empty(), "{m:?}");
    assert!(m.reason.starts_with(reason), "{}", m.reason);
    assert!(
        m.reason.contains("FAILED: synthetic failure"),
        "{}",
        m.reason
    );
}

#[test]
fn a_current_cell_where_every_trial_failed_fails_the_gate() {
    let cur = failing(5, |c| c == "hyper");
    for baseline in [Some(run(5, 1.0, 0)), None] {
        let c = compare(baseline.as_ref(), &cur, &default_gate());
        assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
        assert_eq!(c.regressions, 0, "not a regression: nothing was measured");
        for sc in ["get-22b", "get-20kb"] {
            assert_failed_cell(
                &c,
                sc,
                "hyper",
                &format!("every trial failed (5 of 5): {sc} / hyper round 1/5: FAILED: "),
            );
            assert!(
                rows(&c, sc, "reqwest").len() > 1,
                "the other client gates as usual"
            );
        }
    }
    // Even when the runs are not comparable, or the cell is new.
    let mut base = run(5, 1.0, 0);
    base.environment.cpu_model = "Other CPU".into();
    base.results.retain(|c| c.scenario != "get-20kb");
    let c = compare(Some(&base), &cur, &default_gate());
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    assert_failed_cell(&c, "get-20kb", "hyper", "every trial failed (5 of 5)");
    assert_failed_cell(&c, "get-22b", "hyper", "every trial failed (5 of 5)");
    // Both runs failed everywhere: never "pass, 0 metrics".
    let none = failing(4, |_| true);
    let c = compare(Some(&none), &none, &default_gate());
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    assert_eq!(c.metrics.len(), 4, "one row per cell");
    assert!(c.metrics.iter().all(|m| m.verdict == Verdict::Failed));
}

#[test]
fn a_stored_baseline_where_every_trial_failed_is_no_baseline_not_a_failure() {
    let base = failing(5, |c| c == "hyper");
    let c = compare(Some(&base), &run(5, 1.0, 1), &default_gate());
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Pass, 0));
    let m = find(&c, "get-22b", "hyper", "throughput_rps");
    assert_eq!(
        (m.verdict, m.tier),
        (Verdict::NoBaseline, Tier::Pass),
        "{}",
        m.reason
    );
    assert!(
        m.reason
            .starts_with("every trial of the baseline failed (5 of 5): get-22b / hyper round 1/5"),
        "{}",
        m.reason
    );
    assert_eq!(m.current.len(), 5, "the current values are kept");
    assert!(c.metrics.iter().all(|m| m.verdict != Verdict::Failed));
}

#[test]
fn side_by_side_a_cell_where_every_trial_failed_fails_the_gate() {
    let gate = default_gate();
    // The compared client.
    let c = compare_side_by_side(&failing(6, |c| c == "reqwest"), "hyper", &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    assert_failed_cell(
        &c,
        "get-22b",
        "reqwest",
        "every trial failed (6 of 6): get-22b / reqwest round 1/6",
    );
    assert_eq!(
        find(&c, "get-22b", "reqwest", "throughput_rps")
            .baseline
            .len(),
        6
    );
    // The baseline client: the run under test too.
    let c = compare_side_by_side(&failing(6, |c| c == "hyper"), "hyper", &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    assert_failed_cell(
        &c,
        "get-22b",
        "reqwest",
        "every trial of the baseline failed (6 of 6): get-22b / hyper round 1/6",
    );
    // Both: never "pass, 0 metrics".
    let c = compare_side_by_side(&failing(6, |_| true), "hyper", &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    assert_eq!(c.metrics.len(), 2, "one row per compared cell");
    assert_failed_cell(
        &c,
        "get-20kb",
        "reqwest",
        "every trial failed (6 of 6), as did every trial of the baseline (6 of 6): get-20kb / reqwest round 1/6",
    );
    // A cell without a baseline cell.
    let mut r = failing(6, |c| c == "reqwest");
    r.results
        .retain(|c| !(c.scenario == "get-22b" && c.client == "hyper"));
    let c = compare_side_by_side(&r, "hyper", &gate);
    assert_failed_cell(&c, "get-22b", "reqwest", "every trial failed (6 of 6)");
    assert_eq!(c.exit_code, 1);
}

#[test]
fn partly_failed_cells_keep_their_statistics() {
    // Rounds 1 and 4 of hyper failed: 4 trials left, still compared.
    let cur = synthetic::run(suite(), 6, |_, client, r| {
        (client != "hyper" || (r != 1 && r != 4))
            .then(|| synthetic::metrics(10_000.0 * noise(r, 1), 2000.0, 50.0))
    });
    let c = compare(Some(&run(6, 1.0, 0)), &cur, &default_gate());
    let m = find(&c, "get-22b", "hyper", "throughput_rps");
    assert_eq!(m.current.len(), 4);
    assert!(m.p_value.is_some(), "{}", m.reason);
    assert!(c.metrics.iter().all(|m| m.verdict != Verdict::Failed));
    assert_eq!(c.exit_code, 0);
}

#[test]
fn errors_are_compared_as_absolute_differences() {
    let base = run(5, 1.0, 0);
    // Errors appear: compared as absolute differences of the rate.
    let cur = synthetic::run(suite(), 5, |_, _, r| {
        let mut m = synthetic::metrics(10_000.0, 2000.0, 50.0);
        m.error_rate = 0.05 * noise(r, 2);
        Some(m)
    });
    let c = compare(Some(&base), &cur, &default_gate());
    let m = find(&c, "get-22b", "hyper", "error_rate");
    assert_eq!(
        (m.verdict, m.tier),
        (Verdict::Regressed, Tier::Fail),
        "{}",
        m.reason
    );
    assert_eq!(m.change, None, "relative to a 0 baseline is undefined");
    assert!(m.reason.contains("+0.05"), "{}", m.reason);
}

#[test]
fn side_by_side_pairs_by_round() {
    // reqwest is 20% slower in every round; rounds drift together by +-30%.
    let drift = |r: u32| 1.0 + 0.1 * (r as f64 - 3.0);
    let r = synthetic::run(suite(), 6, |_, client, round| {
        let k =
            drift(round) * if client == "reqwest" { 1.2 } else { 1.0 } * noise(round, 0).powf(0.2);
        Some(synthetic::metrics(10_000.0 / k, 2000.0 * k, 50.0 * k))
    });
    let c = compare_side_by_side(&r, "hyper", &default_gate());
    assert_eq!(c.mode, ComparisonMode::SideBySide);
    assert!(c.method.contains("Wilcoxon"));
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    let m = find(&c, "get-22b", "reqwest", "cpu_us_per_request");
    assert_eq!(m.baseline_client, "hyper");
    assert_eq!(
        (m.verdict, m.tier),
        (Verdict::Regressed, Tier::Fail),
        "{}",
        m.reason
    );
    assert!((m.change.unwrap() - 0.2).abs() < 0.01);
    assert!(c.metrics.iter().all(|m| m.client == "reqwest"));
    // Unpaired, the drift would hide it.
    let mut a = r.clone();
    a.results.retain(|c| c.client == "hyper");
    let mut b = r.clone();
    b.results.retain(|c| c.client == "reqwest");
    for cell in &mut b.results {
        cell.client = "hyper".into();
    }
    let unpaired = compare(Some(&a), &b, &default_gate());
    assert_ne!(
        find(&unpaired, "get-22b", "hyper", "cpu_us_per_request").verdict,
        Verdict::Regressed
    );
    // 5 rounds cannot reach 0.05 paired.
    let r5 = synthetic::run(suite(), 5, |_, client, _| {
        let k = if client == "reqwest" { 1.5 } else { 1.0 };
        Some(synthetic::metrics(10_000.0 / k, 2000.0 * k, 50.0 * k))
    });
    let c = compare_side_by_side(&r5, "hyper", &default_gate());
    let m = find(&c, "get-22b", "reqwest", "throughput_rps");
    assert_eq!(m.verdict, Verdict::Inconclusive);
    assert!(m.reason.contains("(it takes 6 pairs)"), "{}", m.reason);
}

fn trial_strategy() -> impl Strategy<Value = Vec<(f64, f64, f64)>> {
    prop::collection::vec(
        (1000.0f64..20_000.0, 100.0f64..10_000.0, 5.0f64..500.0),
        4..8,
    )
}

fn from_values(values: &[(f64, f64, f64)], scale: f64) -> RunResults {
    let values = values.to_vec();
    synthetic::run(suite(), values.len() as u32, move |_, _, r| {
        let (t, l, c) = values[(r - 1) as usize];
        let mut m: TrialMetrics = synthetic::metrics(t * scale, l * scale, c * scale);
        m.error_rate = 0.0;
        Some(m)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn identical_samples_never_regress(values in trial_strategy()) {
        let r = from_values(&values, 1.0);
        let c = compare(Some(&r), &r, &default_gate());
        prop_assert_eq!(c.exit_code, 0);
        prop_assert!(c.metrics.iter().all(|m| m.verdict != Verdict::Regressed && m.verdict != Verdict::Improved));
        prop_assert!(c.metrics.iter().all(|m| m.change.is_none_or(|x| x == 0.0)));
    }

    #[test]
    fn scaling_the_current_side_moves_the_estimate_by_the_factor(values in trial_strategy(), k in 0.5f64..2.0) {
        let base = from_values(&values, 1.0);
        let c = compare(Some(&base), &from_values(&values, k), &default_gate());
        for m in c.metrics.iter().filter(|m| m.metric == "latency_p50_us") {
            prop_assert!((m.change.unwrap() - (k - 1.0)).abs() < 1e-9, "{:?}", m.change);
        }
    }

    #[test]
    fn swapping_sides_flips_improved_and_regressed(a in trial_strategy(), b in trial_strategy()) {
        let (ra, rb) = (from_values(&a, 1.0), from_values(&b, 1.0));
        let ab = compare(Some(&ra), &rb, &default_gate());
        let ba = compare(Some(&rb), &ra, &default_gate());
        for (x, y) in ab.metrics.iter().zip(&ba.metrics) {
            let flipped = match x.verdict {
                Verdict::Regressed => Verdict::Improved,
                Verdict::Improved => Verdict::Regressed,
                v => v,
            };
            // Thresholds are symmetric on the log scale, but floors are relative
            // to each side's baseline: only the direction is guaranteed.
            if x.verdict == Verdict::Regressed || x.verdict == Verdict::Improved {
                prop_assert!(y.verdict == flipped || y.verdict == Verdict::Unchanged || y.verdict == Verdict::Inconclusive,
                    "{} {}: {:?} vs {:?}", x.scenario, x.metric, x.verdict, y.verdict);
            }
            prop_assert!((x.p_value.unwrap() - y.p_value.unwrap()).abs() < 1e-12);
        }
    }
}

#[test]
fn trials_a_signal_cut_short_are_not_the_clients_failures() {
    // A run stopped by SIGTERM: hyper's only trial of each scenario was
    // interrupted. Nothing failed; nothing was measured either.
    let mut cur = failing(1, |c| c == "hyper");
    for cell in cur.results.iter_mut().filter(|c| c.client == "hyper") {
        for t in &mut cell.trials {
            t.failure = Some(format!("{}SIGTERM", crate::interrupt::INTERRUPTED_PREFIX));
        }
    }
    let c = compare(Some(&cur), &cur, &default_gate());
    assert!(
        c.metrics.iter().all(|m| m.verdict != Verdict::Failed),
        "{:#?}",
        c.metrics
    );
    // A client failure before the interruption still fails the cell.
    let cell = cur
        .results
        .iter_mut()
        .find(|c| c.client == "hyper")
        .unwrap();
    let mut failed = cell.trials[0].clone();
    failed.round = 2;
    failed.failure = Some("the driver panicked: boom".into());
    cell.trials.push(failed);
    let c = compare(Some(&cur), &cur, &default_gate());
    assert_eq!(
        c.metrics
            .iter()
            .filter(|m| m.verdict == Verdict::Failed)
            .count(),
        1,
        "{:#?}",
        c.metrics
    );
}

/// 0 errors against 0 errors is no change, even with too few trials to reach
/// alpha (issue 16, point 5); one differing trial is measured as before.
#[test]
fn identical_samples_are_unchanged_with_any_number_of_trials() {
    let gate = default_gate();
    let c = compare(Some(&run(3, 1.0, 0)), &run(3, 1.0, 1), &gate);
    let errors = find(&c, "get-22b", "hyper", "error_rate");
    assert_eq!(
        (errors.verdict, errors.tier),
        (Verdict::Unchanged, Tier::Pass),
        "{}",
        errors.reason
    );
    assert!(errors
        .reason
        .contains("every trial of both sides measured the same value"));
    // Throughput moves from trial to trial: 3 vs 3 still cannot reach alpha.
    let rps = find(&c, "get-22b", "hyper", "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Inconclusive, "{}", rps.reason);
}

/// Not a timing test (run by hand, `--ignored --nocapture`): how long a
/// comparison of `cells` cells takes, to see that it grows linearly.
#[test]
#[ignore]
fn scaling_in_cells_by_hand() {
    for scenarios in [1250usize, 5000] {
        let mut s = Suite::default_suite();
        let template = s.scenarios[0].clone();
        s.scenarios = (0..scenarios)
            .map(|i| crate::config::Scenario {
                name: format!("s{i}"),
                ..template.clone()
            })
            .collect();
        let a = synthetic::run(s.clone(), 6, |_, _, r| {
            Some(synthetic::metrics(10_000.0 * noise(r, 0), 2000.0, 50.0))
        });
        let b = synthetic::run(s, 6, |_, _, r| {
            Some(synthetic::metrics(10_000.0 * noise(r, 1), 2000.0, 50.0))
        });
        let t = std::time::Instant::now();
        let c = compare(Some(&a), &b, &default_gate());
        crate::stderrln!(
            "{} cells: {:?} ({} rows)",
            a.results.len(),
            t.elapsed(),
            c.metrics.len()
        );
    }
}

#[test]
fn a_baseline_cell_missing_from_the_run_is_named_and_never_passes() {
    let base = run(8, 1.0, 0);
    let mut current = run(8, 1.0, 1);
    let dropped = current.results.remove(0);
    let c = compare(Some(&base), &current, &default_gate());
    let rows: Vec<_> = c
        .metrics
        .iter()
        .filter(|m| m.verdict == Verdict::Missing)
        .collect();
    assert_eq!(rows.len(), 1, "one row per missing cell");
    let m = rows[0];
    assert_eq!(
        (m.scenario.as_str(), m.client.as_str(), m.tier),
        (
            dropped.scenario.as_str(),
            dropped.client.as_str(),
            Tier::Warn
        )
    );
    assert!(m.reason.contains(&dropped.scenario), "{}", m.reason);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Inconclusive, 0));
    let mut gate = default_gate();
    gate.missing_cell = crate::config::gate::MissingCellPolicy::Fail;
    let c = compare(Some(&base), &current, &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    // A cell new in this run is listed as new, and passes.
    let c = compare(Some(&current), &base, &default_gate());
    let new = find(&c, &dropped.scenario, &dropped.client, "throughput_rps");
    assert_eq!(new.verdict, Verdict::NoBaseline);
    assert!(new.reason.starts_with("new in this run"), "{}", new.reason);
    assert!(c.metrics.iter().all(|m| m.verdict != Verdict::Missing));
}

#[test]
fn an_undecided_run_is_inconclusive_and_its_policy_sets_the_exit_code() {
    use crate::config::gate::InconclusivePolicy;
    // 3 vs 3 trials cannot decide anything: inconclusive, never a pass.
    let mut gate = default_gate();
    let c = compare(Some(&run(3, 1.0, 0)), &run(3, 1.0, 1), &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Inconclusive, 0));
    assert!(!c.clean_pass());
    let undecided = c.metrics.iter().filter(|m| m.undecided()).count();
    assert!(undecided > 0);
    // Each undecided gating metric says what would decide it.
    for m in c.metrics.iter().filter(|m| m.undecided()) {
        let a = m.advice.as_ref().expect("advice on an undecided metric");
        assert_eq!(a.rounds, 3);
        assert!(a.rounds_needed.is_some_and(|k| k >= 4), "{a:?}");
    }
    gate.inconclusive = InconclusivePolicy::Fail;
    let c = compare(Some(&run(3, 1.0, 0)), &run(3, 1.0, 1), &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Inconclusive, 1));
    gate.inconclusive = InconclusivePolicy::Pass;
    let c = compare(Some(&run(3, 1.0, 0)), &run(3, 1.0, 1), &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Inconclusive, 0));
    // Enough quiet rounds show A/A within every threshold: a clean pass.
    let c = compare(Some(&run(8, 1.0, 0)), &run(8, 1.0, 1), &default_gate());
    assert_eq!(c.outcome, GateOutcome::Pass);
    assert!(c.clean_pass());
}

#[test]
fn informative_metrics_never_make_a_comparison_changed() {
    // Only an informative metric moves (p50 latency, +30%): the gating
    // ones stay within threshold, so comment: on-change stays quiet.
    let base = run(8, 1.0, 0);
    let mut cur = run(8, 1.0, 1);
    for cell in &mut cur.results {
        for t in &mut cell.trials {
            if let Some(m) = t.metrics.as_mut() {
                m.latency_p50_us = m.latency_p50_us.map(|v| v * 1.3);
            }
        }
    }
    let c = compare(Some(&base), &cur, &default_gate());
    let p50 = find(&c, "get-22b", "hyper", "latency_p50_us");
    assert!(!p50.gating);
    assert_eq!(p50.verdict, Verdict::Regressed, "{}", p50.reason);
    assert_eq!(c.outcome, GateOutcome::Pass);
    assert_eq!(c.warnings, 0, "an informative metric counted as a warning");
    assert!(
        c.clean_pass(),
        "{:?}",
        c.metrics
            .iter()
            .filter(|m| m.gating && m.verdict != Verdict::Unchanged)
            .collect::<Vec<_>>()
    );
}

/// A run that looked at its evidence under `[run] budget` is judged at its
/// last look's alpha (`results::budget`), not the gate's: the regression that
/// 5 + 5 trials show at 0.05 is out of reach at 0.0001.
#[test]
fn a_budgeted_run_is_judged_at_its_last_looks_alpha() {
    use crate::results::budget::{Look, ScenarioBudget, Stop};
    let gate = default_gate();
    let base = run(5, 1.0, 0);
    let mut cur = run(5, 1.3, 1);
    let at_gate = compare(Some(&base), &cur, &gate);
    let rps = find(&at_gate, "get-22b", "hyper", "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Regressed, "{}", rps.reason);
    cur.budget.push(ScenarioBudget {
        scenario: "get-22b".into(),
        share_s: 10.0,
        elapsed_s: 9.0,
        rounds_s: None,
        rounds: 5,
        looks: vec![Look {
            round: 5,
            alpha: 0.0001,
        }],
        decided: vec![],
        undecidable: vec![],
        stopped: Stop::Budget,
    });
    let looked = compare(Some(&base), &cur, &gate);
    assert!(
        looked
            .method
            .ends_with("1 scenario(s) judged at their last look's alpha = 1.0e-4"),
        "{}",
        looked.method
    );
    assert!(!at_gate.method.contains("budget"), "{}", at_gate.method);
    let rps = find(&looked, "get-22b", "hyper", "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Inconclusive, "{}", rps.reason);
    // The other scenario did not look: the gate's alpha.
    let other = &cur
        .results
        .iter()
        .find(|c| c.scenario != "get-22b")
        .unwrap()
        .scenario;
    let rps = find(&looked, other, "hyper", "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Regressed, "{}", rps.reason);
}
