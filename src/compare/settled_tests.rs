//! Decisions final at their look: the comparison of a budgeted run keeps
//! each gating metric's decision from the look that made it.

use super::super::*;
use crate::config::gate::default_gate;
use crate::config::Suite;
use crate::results::budget::{Decided, Look, ScenarioBudget, Stop, Undecidable};
use crate::results::synthetic;

/// A per-round wobble of about +-0.5%.
fn wobble(round: u32) -> f64 {
    const W: [f64; 5] = [0.0, 0.004, -0.005, 0.002, -0.003];
    1.0 + W[round as usize % 5]
}

/// `get-22b`, `hyper` against `reqwest` for `rounds` rounds: reqwest's
/// throughput is hyper's times `rps(round)`, its CPU per request times
/// `cpu(round)`, each with a wobble.
fn run(rounds: u32, rps: impl Fn(u32) -> f64, cpu: impl Fn(u32) -> f64) -> RunResults {
    let mut suite = Suite::default_suite();
    suite.scenarios.truncate(1);
    synthetic::run(suite, rounds, |_, client, r| {
        let (t, c) = if client == "reqwest" {
            (rps(r) * wobble(r), cpu(r) * wobble(r + 2))
        } else {
            (1.0, 1.0)
        };
        Some(synthetic::metrics(10_000.0 * t, 2000.0, 50.0 * c))
    })
}

fn decided(metric: &str, round: u32, alpha: f64) -> Decided {
    Decided {
        client: "reqwest".into(),
        server: None,
        metric: metric.into(),
        round,
        alpha,
    }
}

fn budget(rounds: u32, looks: &[u32], alpha: f64, stopped: Stop) -> ScenarioBudget {
    ScenarioBudget {
        scenario: "get-22b".into(),
        share_s: 60.0,
        elapsed_s: 30.0,
        rounds_s: None,
        rounds,
        looks: looks.iter().map(|&round| Look { round, alpha }).collect(),
        decided: vec![],
        undecidable: vec![],
        stopped,
    }
}

fn row<'a>(c: &'a Comparison, metric: &str) -> &'a MetricComparison {
    c.metrics
        .iter()
        .find(|m| m.client == "reqwest" && m.metric == metric)
        .unwrap_or_else(|| panic!("no row for {metric}"))
}

/// Throughput within its -5% at the look after 8 rounds, then 7% slower
/// in rounds 9 to 16 (while CPU per request kept the rounds going): all 16
/// rounds, at the last look's alpha, straddle -5%. The look's decision
/// stands, with its interval, values and alpha.
#[test]
fn a_metric_decided_at_a_look_keeps_that_looks_decision() {
    let mut r = run(16, |round| if round <= 8 { 1.0 } else { 0.93 }, |_| 1.01);
    let cleared = compare_side_by_side(&r, "hyper", &default_gate());
    let all = row(&cleared, "throughput_rps");
    assert_eq!(all.verdict, Verdict::Inconclusive, "{}", all.reason);
    let mut b = budget(16, &[8, 16], 0.025, Stop::Decided);
    b.decided = vec![
        decided("throughput_rps", 8, 0.025),
        decided("cpu_us_per_request", 16, 0.025),
    ];
    r.budget.push(b);
    let c = compare_side_by_side(&r, "hyper", &default_gate());
    let rps = row(&c, "throughput_rps");
    assert_eq!(
        (rps.verdict, rps.tier),
        (Verdict::Unchanged, Tier::Pass),
        "{}",
        rps.reason
    );
    assert_eq!(
        rps.decided_at,
        Some(Look {
            round: 8,
            alpha: 0.025
        })
    );
    assert_eq!((rps.baseline.len(), rps.current.len()), (8, 8));
    assert!(rps.ci_low.unwrap() > -0.05, "{:?}", rps.ci_low);
    assert!(
        rps.reason
            .ends_with("; decided at the look after round 8 (alpha 0.025), final"),
        "{}",
        rps.reason
    );
    let cpu = row(&c, "cpu_us_per_request");
    assert_eq!(cpu.verdict, Verdict::Unchanged, "{}", cpu.reason);
    assert_eq!(cpu.current.len(), 16);
    assert_eq!(c.outcome, GateOutcome::Pass, "{:?}", c.metrics);
}

/// A scenario that stopped because a gating metric failed: the failure is
/// the look's, and the metrics it left undecided say so instead of advice.
#[test]
fn metrics_left_undecided_by_a_failure_say_the_scenario_failed() {
    // CPU per request +30% from the start; throughput 3% slower: its
    // interval straddles -5% after 8 rounds.
    let mut r = run(
        8,
        |round| 0.97 * (1.0 + 0.04 * (f64::from(round % 3) - 1.0)),
        |_| 1.3,
    );
    let mut b = budget(8, &[8], 0.025, Stop::Failed);
    b.decided = vec![decided("cpu_us_per_request", 8, 0.025)];
    r.budget.push(b);
    let c = compare_side_by_side(&r, "hyper", &default_gate());
    assert_eq!(c.outcome, GateOutcome::Fail);
    let cpu = row(&c, "cpu_us_per_request");
    assert_eq!(cpu.verdict, Verdict::Regressed, "{}", cpu.reason);
    let rps = row(&c, "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Inconclusive, "{}", rps.reason);
    assert_eq!(rps.stopped_at, Some(8));
    assert_eq!(rps.undecidable, None);
    assert_eq!(rps.advice, None);
    assert!(
        rps.reason
            .ends_with("; stopped at round 8: the scenario failed"),
        "{}",
        rps.reason
    );
}

/// A metric that stopped drawing rounds, undecidable within its share,
/// says so, and keeps the advice on what would decide it.
#[test]
fn an_undecidable_metric_says_it_stopped_drawing_rounds() {
    let mut r = run(
        8,
        |round| 0.97 * (1.0 + 0.04 * (f64::from(round % 3) - 1.0)),
        |_| 1.0,
    );
    let mut b = budget(8, &[8], 0.025, Stop::Undecidable);
    b.decided = vec![decided("cpu_us_per_request", 8, 0.025)];
    b.undecidable = vec![Undecidable {
        client: "reqwest".into(),
        server: None,
        metric: "throughput_rps".into(),
        round: 8,
        within: 11,
    }];
    r.budget.push(b);
    let c = compare_side_by_side(&r, "hyper", &default_gate());
    assert_eq!(c.outcome, GateOutcome::Inconclusive);
    let rps = row(&c, "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Inconclusive, "{}", rps.reason);
    let why = rps.undecidable.as_deref().unwrap();
    assert!(
        why.starts_with("undecidable within the budget: at the look after round 8, the 11 rounds its share could buy"),
        "{why}"
    );
    assert!(rps.advice.is_some());
    // Without a budget (a share of 0 s), max_rounds alone bounded it.
    r.budget[0].share_s = 0.0;
    let c = compare_side_by_side(&r, "hyper", &default_gate());
    let why = row(&c, "throughput_rps").undecidable.clone().unwrap();
    assert!(
        why.starts_with("undecidable within max_rounds: at the look after round 8, the 11 rounds allowed in all"),
        "{why}"
    );
}

/// Against a stored baseline the look's rounds are the current run's: the
/// baseline keeps all its trials.
#[test]
fn against_a_stored_baseline_the_look_narrows_the_current_run_only() {
    let base = run(10, |_| 1.0, |_| 1.0);
    let mut cur = run(16, |round| if round <= 8 { 1.0 } else { 0.9 }, |_| 1.0);
    let mut b = budget(16, &[8, 16], 0.025, Stop::Decided);
    b.decided = vec![decided("throughput_rps", 8, 0.025)];
    cur.budget.push(b);
    let c = compare(Some(&base), &cur, &default_gate());
    let rps = row(&c, "throughput_rps");
    assert_eq!(rps.verdict, Verdict::Unchanged, "{}", rps.reason);
    assert_eq!((rps.baseline.len(), rps.current.len()), (10, 8));
    assert!(rps.decided_at.is_some());
}
