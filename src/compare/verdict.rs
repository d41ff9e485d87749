//! The verdict of one (scenario, client, metric): one pure function, [`decide`].
//!
//! The rule is criterion.rs's: a change counts only when it is statistically
//! significant **and** its confidence interval lies entirely beyond the threshold.
//!
//! - **Regressed** when `p <= alpha` and the whole interval is worse than the
//!   threshold in the metric's bad direction: relative bound **and** absolute floor
//!   both exceeded (`+12%` on a 300 µs p99 is 36 µs, under a 2 ms floor: not a
//!   regression). Tier `fail` for the fail threshold on a gating metric, `warn` for
//!   the warn threshold (and for a non-gating metric beyond its fail threshold).
//!   On a gating metric a warn-tier regression also needs the interval's worse
//!   end inside the fail threshold; one that reaches past it is undecided.
//! - **Improved** symmetrically: significant and the whole interval better than the
//!   smallest threshold mirrored. Tier `pass`.
//! - A **gating** metric has three answers (statistics primer, "Three answers,
//!   not two"): regressed as above; **within threshold** (serialized
//!   `unchanged`) when the interval's worse end lies inside the fail threshold
//!   on both scales, at a confidence of at least `1 - alpha`: a one-sided
//!   non-inferiority test at `alpha / 2`, so a true regression at or beyond the
//!   threshold is called within it in at most 2.5% of comparisons whatever the
//!   noise or the rounds; and **inconclusive** otherwise (too few trials to
//!   reach `alpha`, or an interval that straddles the threshold), tier `warn`:
//!   the gate could not check it, and the run's outcome says so.
//! - A **non-gating** (informative) metric is unchanged when the comparison
//!   could have seen a change of the threshold's size (the minimum detectable
//!   effect, MDE, at most `max(relative * baseline, floor)`), else
//!   inconclusive, tier `pass`.
//! - Identical samples (every trial of both sides measured the same value, as
//!   0 errors against 0 errors) are unchanged with any number of trials: no
//!   shift and no noise to hide one.
//! - **NotComparable** / **NoBaseline** come from the caller's evidence; their tier
//!   follows `[gate] not_comparable` and `missing_baseline` on gating metrics.
//! - **Inconclusive** also when a side measured nothing because the machine
//!   starved every trial of it (`Evidence::Unmeasured`): tier `warn` on a
//!   gating metric, so the run is at best inconclusive, never a pass.
//! - **Failed**: every trial of a side the pull request is responsible for
//!   failed, so nothing was measured. Tier `fail`, whatever the metric's gate
//!   says: a gate that passes when nothing was measured cannot be trusted.
//!
//! ## False alarms across many cells
//! A suite has many (scenario, client, metric) cells. With a plain test at 0.05,
//! 30 cells give about 1.5 false alarms per run. The gate does not rest on the
//! test alone: a cell fails only when its interval lies entirely beyond the fail
//! threshold. Under no change (A/A), that needs the interval to miss 0 by more
//! than the threshold, an event far rarer than `alpha/2` whenever the interval is
//! narrower than the threshold (which is also when it can be shown within it). Holm's
//! step-down correction (`stats::holm`) is *not* applied by default: with the few
//! trials of a CI run the smallest attainable p-value is already near `alpha`
//! (2/70 = 0.029 for 4 vs 4), so dividing `alpha` by the number of cells would make
//! every regression undetectable. The false-alarm rate is measured with A/A runs
//! (`scripts/gate-quality.sh`) rather than assumed.

use crate::config::gate::{
    GateConfig, MetricGate, MissingBaseline, MissingCellPolicy, NotComparablePolicy, Threshold,
};
use crate::metric::{metric_def, Direction};

use super::model::{Tier, Verdict};
use super::stats;

/// An estimate with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// A metric measured on both sides, with its change on both scales.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Baseline median, in the metric's unit (what relative changes are relative to).
    pub baseline_center: f64,
    /// Relative change (0.1 = +10%).
    pub relative: Interval,
    /// Change in the metric's unit.
    pub absolute: Interval,
    /// Achieved confidence of the intervals.
    pub confidence: f64,
    pub p_value: f64,
    pub min_p_value: f64,
    /// Minimum detectable change, in the metric's unit; `None`: undetectable.
    pub mde_absolute: Option<f64>,
    /// Trials (or pairs) on each side, for the reason.
    pub n_baseline: usize,
    pub n_current: usize,
    /// Paired by round (side-by-side) rather than independent samples.
    pub paired: bool,
    /// Every trial of both sides measured the same value (0 errors -> 0
    /// errors): no change and no noise, whatever the number of trials.
    pub identical: bool,
    /// Why these trials cannot decide anything, whatever they show (a JMH
    /// file with fewer forks than `results::jmh::MIN_FORKS`): inconclusive.
    pub undecidable: Option<String>,
}

/// What the comparison of one metric rests on.
#[derive(Debug, Clone, PartialEq)]
pub enum Evidence {
    Measured(Measured),
    /// The baseline side lacks the cell or the metric (`current_lacks: false`), or
    /// the current side does (`true`: the current run failed to measure it).
    Missing {
        current_lacks: bool,
        reason: String,
    },
    /// Environment or load profile differ; the differences, in words.
    NotComparable(Vec<String>),
    /// Every trial of the current cell (or, side by side, of its baseline
    /// cell) failed; the reason quotes the first failure.
    Failed(String),
    /// Every trial of a side was starved by the machine (`results::validity`):
    /// nothing measured, no one's failure; the reason says which side.
    /// Inconclusive on a gating metric, never a pass.
    Unmeasured(String),
    /// The baseline has the cell and the current run does not; the reason
    /// names it. Its tier is `[gate] missing_cell`'s, whatever the metric's
    /// gate says.
    MissingFromRun(String),
}

/// A verdict, what it does to the gate, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    pub tier: Tier,
    pub reason: String,
}

/// Decides one metric's verdict under its gate and the gate's policies.
pub fn decide(evidence: &Evidence, gate: &MetricGate, config: &GateConfig) -> Decision {
    let gated = |tier: Tier| if gate.gating { tier } else { Tier::Pass };
    let m = match evidence {
        // Not subject to `gating`: nothing was measured, so nothing was checked.
        Evidence::Failed(reason) => return decision(Verdict::Failed, Tier::Fail, reason.clone()),
        Evidence::Unmeasured(reason) => {
            return decision(
                Verdict::Inconclusive,
                gated(Tier::Warn),
                format!("not measured, so not decided: {reason}"),
            )
        }
        Evidence::MissingFromRun(reason) => {
            let tier = match config.missing_cell {
                MissingCellPolicy::Warn => Tier::Warn,
                MissingCellPolicy::Fail => Tier::Fail,
            };
            return decision(Verdict::Missing, tier, reason.clone());
        }
        Evidence::NotComparable(diffs) => {
            let tier = match config.not_comparable {
                NotComparablePolicy::Warn => Tier::Warn,
                NotComparablePolicy::Fail => Tier::Fail,
            };
            return decision(
                Verdict::NotComparable,
                gated(tier),
                format!("not comparable: {}", diffs.join("; ")),
            );
        }
        Evidence::Missing {
            current_lacks,
            reason,
        } => {
            let tier = match (current_lacks, config.missing_baseline) {
                (true, _) => Tier::Warn,
                (false, MissingBaseline::Neutral) => Tier::Pass,
                (false, MissingBaseline::Fail) => Tier::Fail,
            };
            return decision(Verdict::NoBaseline, gated(tier), reason.clone());
        }
        Evidence::Measured(m) => m,
    };
    if let Some(why) = &m.undecidable {
        return decision(
            Verdict::Inconclusive,
            gated(Tier::Warn),
            format!("{}: {why}", summary(m)),
        );
    }
    let direction = metric_def(&gate.metric).map_or(Direction::LowerIsBetter, |d| d.direction);
    let unit = metric_def(&gate.metric).map_or("", |d| d.unit);
    let significant = m.p_value <= config.alpha;
    let summary = summary(m);
    let show = |t: &Threshold| show_threshold(t, direction, unit);

    // A gating metric beyond its warn threshold whose interval still reaches
    // past the fail threshold is undecided, not a warning.
    let (end_rel, end_abs) = worse_end(m, direction);
    let fail_decided = gate.fail.is_none_or(|f| !worse_than(&f, end_rel, end_abs));
    if significant {
        for (name, threshold) in [("fail", gate.fail), ("warn", gate.warn)] {
            if name == "warn" && gate.gating && !fail_decided {
                continue;
            }
            if let Some(t) = threshold.filter(|t| beyond(m, direction, t, Side::Worse)) {
                // A non-gating metric beyond its fail threshold warns.
                let tier = if name == "fail" && gate.gating {
                    Tier::Fail
                } else {
                    Tier::Warn
                };
                return decision(
                    Verdict::Regressed,
                    tier,
                    format!(
                        "{summary}: the whole interval is beyond the {name} threshold {}",
                        show(&t)
                    ),
                );
            }
        }
        let smallest = gate.warn.or(gate.fail);
        if let Some(t) = smallest.filter(|t| beyond(m, direction, t, Side::Better)) {
            return decision(
                Verdict::Improved,
                Tier::Pass,
                format!(
                    "{summary}: the whole interval is better than the threshold {} mirrored",
                    show(&t)
                ),
            );
        }
    }

    if m.identical {
        return decision(
            Verdict::Unchanged,
            Tier::Pass,
            format!("{summary}: every trial of both sides measured the same value"),
        );
    }
    let inconclusive = |why: String| decision(Verdict::Inconclusive, gated(Tier::Warn), why);
    let Some(target) = gate.fail.or(gate.warn) else {
        return decision(
            Verdict::Unchanged,
            Tier::Pass,
            format!("{summary}: no threshold"),
        );
    };
    if m.min_p_value > config.alpha {
        // Paired: the signed-rank and the sign test (`[gate] paired_test`)
        // share the smallest p-value, 2 / 2^n, so one count serves both.
        let needed = if m.paired {
            stats::rounds_needed_paired(config.alpha)
        } else {
            stats::rounds_needed_two_sample(config.alpha)
        };
        let sides = if m.paired {
            format!("{} pairs", m.n_current)
        } else {
            format!("{} vs {} trials", m.n_baseline, m.n_current)
        };
        return inconclusive(format!(
            "{summary}: {sides} cannot reach p < {} (it takes {needed} {})",
            config.alpha,
            if m.paired { "pairs" } else { "trials a side" }
        ));
    }
    if gate.gating {
        return within_or_undecided(m, direction, &target, &summary, &show(&target), config);
    }
    let effective = (target.relative * m.baseline_center.abs()).max(target.absolute.unwrap_or(0.0));
    match m.mde_absolute {
        Some(mde) if mde <= effective => decision(
            Verdict::Unchanged,
            Tier::Pass,
            format!(
                "{summary}: not beyond the threshold {}, which this comparison could detect",
                show(&target)
            ),
        ),
        Some(mde) => inconclusive(format!(
            "{summary}: too noisy to check the threshold {} (detectable change {})",
            show(&target),
            show_abs_or_rel(mde, m.baseline_center, unit)
        )),
        None => inconclusive(format!("{summary}: no noise estimate from so few trials")),
    }
}

/// A gating metric that is neither a regression beyond its fail threshold
/// nor an improvement (`target`: its fail threshold, else its warn one):
/// *within threshold* when the interval's worse end lies inside the
/// threshold, on both scales as [`beyond`] reads them, at a confidence of at
/// least `1 - alpha`. That is a one-sided non-inferiority test at `alpha / 2`
/// (the logic of TOST: Schuirmann 1987; Lakens 2017): a true change at or
/// beyond the threshold is called within it in at most 2.5% of comparisons
/// at `alpha = 0.05`, whatever the noise or the number of rounds. Anything
/// else is *inconclusive*, said as such (see [`undecided`]).
fn within_or_undecided(
    m: &Measured,
    direction: Direction,
    target: &Threshold,
    summary: &str,
    shown: &str,
    config: &GateConfig,
) -> Decision {
    let worse_end = worse_end(m, direction);
    let reached = m.confidence + 1e-9 >= 1.0 - config.alpha;
    if !reached {
        return decision(
            Verdict::Inconclusive,
            Tier::Warn,
            format!(
                "{summary}: the interval's confidence is below {:.0}%, too few trials to show the change is within {shown}",
                (1.0 - config.alpha) * 100.0
            ),
        );
    }
    if worse_than(target, worse_end.0, worse_end.1) {
        return decision(
            Verdict::Inconclusive,
            Tier::Warn,
            format!(
                "{summary}: the interval reaches past the threshold {shown}, so neither a regression nor a change within it is shown"
            ),
        );
    }
    decision(
        Verdict::Unchanged,
        Tier::Pass,
        format!("{summary}: within the threshold {shown} (the interval's worse end is inside it)"),
    )
}

/// The interval's worse end in "worse-by" coordinates (positive is worse):
/// (relative, absolute).
fn worse_end(m: &Measured, direction: Direction) -> (f64, f64) {
    match direction {
        Direction::LowerIsBetter => (m.relative.high, m.absolute.high),
        Direction::HigherIsBetter => (-m.relative.low, -m.absolute.low),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Worse,
    Better,
}

/// Whether the whole interval lies beyond `t` on `side`, on both scales.
fn beyond(m: &Measured, direction: Direction, t: &Threshold, side: Side) -> bool {
    // "Worse-by" coordinates: positive is worse.
    let worse = |iv: &Interval| match direction {
        Direction::LowerIsBetter => (iv.low, iv.high),
        Direction::HigherIsBetter => (-iv.high, -iv.low),
    };
    let (rel_lo, rel_hi) = worse(&m.relative);
    let (abs_lo, abs_hi) = worse(&m.absolute);
    match side {
        Side::Worse => worse_than(t, rel_lo, abs_lo),
        Side::Better => worse_than(t, -rel_hi, -abs_hi),
    }
}

/// A change of `relative` and `absolute` (in "worse-by" coordinates:
/// positive is worse) is beyond `t`: past both its relative bound and its
/// floor, and worse at all.
pub fn worse_than(t: &Threshold, relative: f64, absolute: f64) -> bool {
    relative > t.relative && absolute > t.absolute.unwrap_or(0.0) && absolute > 0.0
}

fn decision(verdict: Verdict, tier: Tier, reason: String) -> Decision {
    Decision {
        verdict,
        tier,
        reason,
    }
}

/// `+12.3% (96.8% CI +10.1% to +14.0%), p = 0.008`.
fn summary(m: &Measured) -> String {
    let r = &m.relative;
    let pct = |v: f64| {
        if v.is_finite() {
            format!("{:+.1}%", v * 100.0)
        } else {
            format!("{:+}", m.absolute.estimate)
        }
    };
    if r.estimate.is_finite() && r.low.is_finite() && r.high.is_finite() {
        format!(
            "{} ({:.1}% CI {} to {}), p = {:.3}",
            pct(r.estimate),
            m.confidence * 100.0,
            pct(r.low),
            pct(r.high),
            m.p_value
        )
    } else {
        let a = &m.absolute;
        format!(
            "{:+} ({:.1}% CI {:+} to {:+}), p = {:.3}",
            a.estimate,
            m.confidence * 100.0,
            a.low,
            a.high,
            m.p_value
        )
    }
}

/// `+10% and +2000 us`, signed in the metric's bad direction.
pub fn show_threshold(t: &Threshold, direction: Direction, unit: &str) -> String {
    let sign = direction.worse_sign();
    match (t.relative, t.absolute) {
        (r, Some(a)) if r > 0.0 => format!("{sign}{}% and {sign}{a} {unit}", r * 100.0),
        (_, Some(a)) => format!("{sign}{a} {unit}"),
        (r, None) => format!("{sign}{}%", r * 100.0),
    }
}

fn show_abs_or_rel(abs: f64, base: f64, unit: &str) -> String {
    if base > 0.0 {
        format!("{:.1}%", abs / base * 100.0)
    } else {
        format!("{abs:.3} {unit}")
    }
}

#[cfg(test)]
mod tests;
