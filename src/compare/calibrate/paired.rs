//! `benchgate calibrate` for a config that compares within the run (side by
//! side, base vs head): every run is an A/A comparison of its own, paired by
//! round, and the question is which thresholds the run's budget can *check*.
//!
//! A threshold `T` is checkable when a change of exactly `T` would be shown
//! beyond "no change" with power `1 - β` at the rounds the budget buys:
//! `T ≥ (z(1 - α_look / 2) + z(1 - β)) · SE_N`, where `SE_N` is the standard
//! error of the paired estimate at those `N` rounds. `SE` comes from the
//! gate's own interval (`stats::interval_se`: its width over `2z`, the same
//! robust spread the MDE and the advice use), measured at the `n` rounds the
//! run made and projected as `SE · sqrt(n / N)`. `N` is what the scenario's
//! share of `[run] budget` buys at the run's pace (`rounds · share / elapsed`,
//! at most `max_rounds`; the rounds run when there is no budget), and `α_look`
//! one planned look's share of the gate's alpha (`looks::LookPlan`). β is
//! [`BETA`] per metric, so that a run gating on a few metrics passes an
//! unchanged pull request about 80% of the time. The median over the A/A runs
//! is the cell's figure; the metric's suggestion is its largest cell's,
//! and at least the largest A/A interval bound (what any of these runs
//! would have failed).

use super::{quantile_sorted, CellNoise, Options};
use crate::compare::looks::LookPlan;
use crate::compare::model::{Comparison, MetricComparison, Tier};
use crate::compare::stats::{self, normal_quantile};
use crate::metric::{scale_of, Direction};
use crate::results::{client_label, RunResults};

/// The miss rate allowed per gating metric (≈ 7%: four gating metrics at
/// 93% power each give about 75-80% for the whole run).
pub const BETA: f64 = 0.07;

/// One run's paired comparison of one cell and metric, as calibrate reads it.
struct Reading {
    estimate: f64,
    /// The worse-direction interval bound when the interval excludes "no
    /// change" on the bad side (what a threshold must clear not to fail).
    worse_bound: f64,
    /// The standard error at `rounds`, projected to `budget_rounds`.
    se_at_budget: f64,
    rounds: u32,
    budget_rounds: u32,
    alpha_look: f64,
    failed: bool,
    median: Option<f64>,
    mde: Option<f64>,
    /// The standard error at the rounds run.
    se: f64,
}

/// The noise of every gating row of `comparisons` (one per A/A run, each the
/// run's own paired comparison, `runs[i]` the run of `comparisons[i]`), as
/// [`CellNoise`] with its `checkable` figure; `needed` is the larger of the
/// checkable threshold and the largest A/A bound.
pub fn cells(runs: &[RunResults], comparisons: &[Comparison], opts: Options) -> Vec<CellNoise> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for m in comparisons.iter().flat_map(|c| &c.metrics) {
        let key = row_key(m);
        if m.gating && !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .filter_map(|key| {
            let readings: Vec<Reading> = runs
                .iter()
                .zip(comparisons)
                .filter_map(|(run, c)| {
                    let m = c.metrics.iter().find(|m| m.gating && row_key(m) == key)?;
                    reading(run, m)
                })
                .collect();
            (!readings.is_empty()).then(|| cell(key, &readings, opts))
        })
        .collect()
}

/// A gating row's (scenario, client label, metric): one cell of the calibration.
pub(super) fn row_key(m: &MetricComparison) -> (String, String, String) {
    (
        m.scenario.clone(),
        client_label(&m.client, m.server.as_deref()),
        m.metric.clone(),
    )
}

/// What one run's row says, when it has an interval.
fn reading(run: &RunResults, m: &MetricComparison) -> Option<Reading> {
    let (estimate, lo, hi) = (m.change?, m.ci_low?, m.ci_high?);
    let se = stats::interval_se(lo, hi, m.confidence?)?;
    let rounds = u32::try_from(m.current.len().min(m.baseline.len())).ok()?;
    if rounds == 0 {
        return None;
    }
    let settings = &run.config.run;
    let plan_alpha = |gate_alpha: f64| {
        LookPlan::new(settings.rounds, settings.max_rounds, gate_alpha, |r| {
            stats::min_p_paired(r as usize)
        })
        .per_look()
    };
    let (budget_rounds, alpha_look) = match run.budget.iter().find(|b| b.scenario == m.scenario) {
        Some(b) if b.elapsed_s > 0.0 && b.rounds > 0 => {
            let bought = f64::from(b.rounds) * b.share_s / b.elapsed_s;
            let n = (bought.floor() as u32).clamp(rounds, settings.max_rounds.max(rounds));
            (n, plan_alpha(run.config.gate.alpha))
        }
        _ => (rounds, run.config.gate.alpha),
    };
    let worse_bound = match m.direction {
        Direction::LowerIsBetter => lo,
        Direction::HigherIsBetter => -hi,
    };
    Some(Reading {
        estimate,
        worse_bound: worse_bound.max(0.0),
        se_at_budget: se * (f64::from(rounds) / f64::from(budget_rounds)).sqrt(),
        rounds,
        budget_rounds,
        alpha_look,
        failed: m.tier == Tier::Fail,
        median: m.current_median,
        mde: m.mde,
        se,
    })
}

fn cell(
    (scenario, client, metric): (String, String, String),
    r: &[Reading],
    opts: Options,
) -> CellNoise {
    let med = |v: Vec<f64>| stats::median(&v).unwrap_or(0.0);
    let checkable = med(r
        .iter()
        .map(|x| {
            (normal_quantile(1.0 - x.alpha_look / 2.0) + normal_quantile(1.0 - BETA))
                * x.se_at_budget
        })
        .collect());
    let budget_rounds = med(r.iter().map(|x| f64::from(x.budget_rounds)).collect()).round() as u32;
    let shifts: Vec<f64> = r.iter().map(|x| x.estimate).collect();
    let mut abs: Vec<f64> = shifts.iter().map(|s| s.abs()).collect();
    abs.sort_by(f64::total_cmp);
    // The spread of one pair (√n · SE), and the runs' estimates' spread
    // beyond what their own standard errors explain.
    let within_sd = med(r
        .iter()
        .map(|x| x.se * f64::from(x.rounds).sqrt())
        .collect());
    let mean = shifts.iter().sum::<f64>() / shifts.len() as f64;
    let var = if shifts.len() > 1 {
        shifts.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (shifts.len() - 1) as f64
    } else {
        0.0
    };
    let se2 = r.iter().map(|x| x.se.powi(2)).sum::<f64>() / r.len() as f64;
    let aa_bound = r.iter().map(|x| x.worse_bound).fold(0.0, f64::max);
    let mdes: Vec<f64> = r.iter().filter_map(|x| x.mde).collect();
    let scale = scale_of(&metric);
    CellNoise {
        values_of: metric.clone(),
        scale,
        runs: r.len(),
        trials: r.iter().map(|x| x.rounds as usize).min().unwrap_or(0),
        center: med(r.iter().filter_map(|x| x.median).collect()),
        within_sd,
        between_sd: (var - se2).max(0.0).sqrt(),
        shift_q: quantile_sorted(&abs, opts.quantile),
        shifts,
        mde: stats::median(&mdes),
        aa_bound,
        false_alarms: r.iter().filter(|x| x.failed).count(),
        needed: aa_bound.max(checkable),
        checkable: Some((checkable, budget_rounds)),
        scenario,
        client,
        metric,
    }
}
