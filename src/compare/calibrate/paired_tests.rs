//! Calibration of a config that compares within the run: the checkable
//! threshold from each A/A run's own paired interval.

use super::*;
use crate::compare::compare_side_by_side;
use crate::compare::looks::LookPlan;
use crate::compare::stats::{interval_se, normal_quantile};
use crate::config::{gate::default_gate, Suite};
use crate::results::budget::{ScenarioBudget, Stop};
use crate::results::synthetic;

const P: [f64; 7] = [0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8];

/// A/A run `k` of `rounds` pairs: reqwest's CPU per request is hyper's times
/// `1 + within * pattern`, a different pattern each run.
fn run(k: u32, rounds: u32, within: f64) -> RunResults {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(1);
    synthetic::run(s, rounds, |_, client, r| {
        let f = if client == "reqwest" {
            1.0 + within * P[((r * 3 + k) % 7) as usize]
        } else {
            1.0
        };
        Some(synthetic::metrics(10_000.0 / f, 2000.0 * f, 50.0 * f))
    })
}

fn calibrated(runs: &[RunResults]) -> (Calibration, Vec<Comparison>) {
    let gate = default_gate();
    let comparisons: Vec<Comparison> = runs
        .iter()
        .map(|r| compare_side_by_side(r, "hyper", &gate))
        .collect();
    (
        calibrate_paired(runs, &comparisons, &gate, Options::default()),
        comparisons,
    )
}

fn cpu(c: &Calibration) -> &CellNoise {
    c.cells
        .iter()
        .find(|n| n.client == "reqwest" && n.metric == "cpu_us_per_request")
        .expect("reqwest's CPU per request is calibrated")
}

/// `(z(1 - alpha/2) + z(1 - BETA)) * SE * sqrt(n / budget_rounds)` of one row.
fn expected(c: &Comparison, alpha: f64, budget_rounds: u32) -> f64 {
    let m = c
        .metrics
        .iter()
        .find(|m| m.client == "reqwest" && m.metric == "cpu_us_per_request")
        .unwrap();
    let se = interval_se(m.ci_low.unwrap(), m.ci_high.unwrap(), m.confidence.unwrap()).unwrap();
    let n = m.current.len() as f64;
    (normal_quantile(1.0 - alpha / 2.0) + normal_quantile(1.0 - BETA))
        * se
        * (n / f64::from(budget_rounds)).sqrt()
}

#[test]
fn without_a_budget_the_checkable_threshold_is_the_power_statement_at_the_rounds_run() {
    let runs: Vec<RunResults> = (0..3).map(|k| run(k, 20, 0.04)).collect();
    let (c, comparisons) = calibrated(&runs);
    assert!(c.paired);
    assert_eq!(c.comparisons, 3, "one comparison a run");
    let n = cpu(&c);
    let (t, rounds) = n.checkable.expect("paired runs have a checkable figure");
    assert_eq!(rounds, 20);
    let mut each: Vec<f64> = comparisons
        .iter()
        .map(|c| expected(c, default_gate().alpha, 20))
        .collect();
    each.sort_by(f64::total_cmp);
    assert!((t - each[1]).abs() < 1e-12, "median of {each:?}: {t}");
    assert!(t > 0.0);
    assert!(n.needed >= t);
    // The suggestion is that figure rounded up to a whole percent.
    let s = c
        .suggestions
        .iter()
        .find(|s| s.metric == "cpu_us_per_request")
        .unwrap();
    assert_eq!(s.fail.relative, round_up_percent(n.needed.max(0.02)));
    assert!(render_table(&c).contains("checkable"));
    assert!(gate_snippet(&c, "").contains("93% power"));
}

#[test]
fn a_budget_that_buys_more_rounds_checks_a_smaller_threshold() {
    let plain: Vec<RunResults> = (0..3).map(|k| run(k, 20, 0.04)).collect();
    let mut budgeted = plain.clone();
    for r in &mut budgeted {
        r.config.run.max_rounds = 300;
        r.budget = vec![ScenarioBudget {
            scenario: r.results[0].scenario.clone(),
            // 20 rounds took 10 s of a 40 s share: the share buys 80.
            share_s: 40.0,
            elapsed_s: 10.0,
            rounds_s: None,
            rounds: 20,
            looks: vec![],
            decided: vec![],
            undecidable: vec![],
            stopped: Stop::Decided,
        }];
    }
    let (c, comparisons) = calibrated(&budgeted);
    let (t, rounds) = cpu(&c).checkable.unwrap();
    assert_eq!(rounds, 80);
    let settings = &budgeted[0].config.run;
    let alpha = LookPlan::new(
        settings.rounds,
        settings.max_rounds,
        default_gate().alpha,
        |r| crate::compare::stats::min_p_paired(r as usize),
    )
    .per_look();
    let mut each: Vec<f64> = comparisons.iter().map(|c| expected(c, alpha, 80)).collect();
    each.sort_by(f64::total_cmp);
    assert!((t - each[1]).abs() < 1e-12, "median of {each:?}: {t}");
    let (unbudgeted, _) = cpu(&calibrated(&plain).0).checkable.unwrap();
    assert!(t < unbudgeted, "{t} at 80 rounds vs {unbudgeted} at 20");
}
