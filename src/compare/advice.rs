//! What would decide an undecided comparison, from its measured noise.
//!
//! A gating metric is undecided ([`MetricComparison::undecided`]) when its
//! interval straddles the fail threshold or too few trials reach `alpha`. The
//! interval's width shrinks as `1 / sqrt(n)`, so the rounds that bring the
//! minimum detectable effect (MDE) down to the threshold are about
//! `n * (MDE / threshold)^2`. That is an estimate from this run's noise, said
//! as such: a change that sits right at the threshold stays undecided at any
//! count. When the estimate exceeds what the settings allow (`[run]
//! max_rounds`, at most [`ROUNDS_CAP`]), the advice names the smallest
//! threshold those settings can check instead (`MDE * sqrt(n / max_rounds)`).

use serde::{Deserialize, Serialize};

use super::model::MetricComparison;
use super::stats;
use crate::config::gate::{MetricGate, Threshold};
use crate::metric::Direction;

pub use crate::config::validate::MAX_MAX_ROUNDS as ROUNDS_CAP;

/// What would decide one undecided gating metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Advice {
    /// The threshold the interval is checked against (the fail threshold, or
    /// the warn threshold of a metric without one), signed in the bad
    /// direction: `+10%`, `-5%`, `+10% and +2000 us`.
    pub threshold: String,
    /// The threshold as a relative change (its floor counted against the
    /// baseline's median).
    pub threshold_relative: f64,
    /// Rounds (pairs, or trials a side) this comparison rests on.
    pub rounds: u32,
    /// Rounds that would likely decide it at the measured noise; absent when
    /// the trials gave no noise estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_needed: Option<u32>,
    /// The most rounds these settings allow (`[run] max_rounds`).
    pub max_rounds: u32,
    /// When `rounds_needed` exceeds `max_rounds`: the smallest relative
    /// threshold these settings can check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smallest_threshold: Option<f64>,
    /// When the two sides of an unpaired comparison have different trial
    /// counts (a stored baseline keeps its own run's count, while extra rounds
    /// add to the current run only): both counts. The estimates then count
    /// their harmonic mean as the trials a side, and `rounds` is the smaller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uneven: Option<Uneven>,
}

/// The trial counts of an unpaired comparison's two sides, when they differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Uneven {
    pub baseline: u32,
    pub current: u32,
}

impl Uneven {
    /// The trials a side that give the same interval width as these two
    /// counts: the width goes as `sqrt(1/baseline + 1/current)`.
    fn per_side(self) -> f64 {
        let (b, c) = (f64::from(self.baseline), f64::from(self.current));
        2.0 * b * c / (b + c)
    }
}

/// The advice for `m` under its gate `g`, or `None` when `m` is decided.
/// `paired`: rounds are pairs; `alpha`: the gate's level; `max_rounds`: the
/// run's `[run] max_rounds`.
pub fn advise(
    m: &MetricComparison,
    g: &MetricGate,
    paired: bool,
    alpha: f64,
    max_rounds: u32,
) -> Option<Advice> {
    if !m.undecided() {
        return None;
    }
    let target = g.fail.or(g.warn)?;
    let rel = relative_threshold(&target, m.baseline_median);
    let (nb, nc) = (m.baseline.len() as u32, m.current.len() as u32);
    let n = nb.min(nc);
    let uneven = (!paired && nb != nc && n > 0).then_some(Uneven {
        baseline: nb,
        current: nc,
    });
    // Trials a side, as the interval's width counts them.
    let per_side = uneven.map_or(f64::from(n), Uneven::per_side);
    let least = if paired {
        stats::rounds_needed_paired(alpha)
    } else {
        stats::rounds_needed_two_sample(alpha)
    } as u32;
    let by_noise = m
        .mde
        .filter(|v| v.is_finite() && *v > 0.0 && rel > 0.0 && n > 0)
        .map(|mde| {
            let k = (per_side * (mde.abs() / rel).powi(2)).ceil();
            if k > f64::from(u32::MAX / 2) {
                u32::MAX / 2
            } else {
                k as u32
            }
        });
    let rounds_needed = match by_noise {
        Some(k) => Some(k.max(least).max(per_side.floor() as u32 + 1)),
        None if n < least => Some(least),
        None => None,
    };
    let max_rounds = max_rounds.clamp(1, ROUNDS_CAP);
    let smallest_threshold = match (rounds_needed, m.mde) {
        (Some(k), Some(mde)) if k > max_rounds && n > 0 && mde.is_finite() => {
            Some(mde.abs() * (per_side / f64::from(max_rounds)).sqrt())
        }
        _ => None,
    };
    let direction = m.direction;
    Some(Advice {
        threshold: show(&target, direction, m),
        threshold_relative: rel,
        rounds: n,
        rounds_needed,
        max_rounds,
        smallest_threshold,
        uneven,
    })
}

/// The threshold as a relative change: its relative bound, or its floor
/// against the baseline's median when that is larger.
fn relative_threshold(t: &Threshold, baseline_median: Option<f64>) -> f64 {
    let floor = match (t.absolute, baseline_median) {
        (Some(a), Some(b)) if b.abs() > 0.0 => a / b.abs(),
        _ => 0.0,
    };
    t.relative.max(floor)
}

fn show(t: &Threshold, direction: Direction, m: &MetricComparison) -> String {
    let unit = crate::metric::metric_def(&m.metric).map_or("", |d| d.unit);
    super::verdict::show_threshold(t, direction, unit)
}

/// What the advice says, in one sentence: `6 rounds reached an MDE of ±25.0%
/// against the threshold +10%; about 38 rounds would decide it, more than
/// max_rounds = 12: the smallest threshold these settings can check is
/// ±17.7%`.
pub fn sentence(m: &MetricComparison, a: &Advice) -> String {
    let trials = match a.uneven {
        Some(u) => format!("{} baseline and {} current trials", u.baseline, u.current),
        None => format!("{} rounds", a.rounds),
    };
    let reached = match m.mde.filter(|v| v.is_finite()) {
        Some(mde) => format!(
            "{trials} reached an MDE of ±{:.1}% against the threshold {}",
            mde.abs() * 100.0,
            a.threshold
        ),
        None => format!(
            "{trials} gave no noise estimate against the threshold {}",
            a.threshold
        ),
    };
    let next = match a.rounds_needed {
        None => "more rounds would narrow the interval".to_string(),
        // The baseline is the short side: the current run's extra rounds
        // cannot make up for it, the run that stores the baseline can.
        Some(k) if k <= a.max_rounds && a.uneven.is_some_and(|u| u.baseline < u.current) => {
            format!(
                "about {k} trials a side would decide it; extra rounds add to the current run only, so the baseline needs them too (`[run] rounds` = {k} in the run that stores it)"
            )
        }
        Some(k) if k <= a.max_rounds => {
            format!("about {k} rounds would decide it (`[run] rounds` or `max_rounds` = {k})")
        }
        Some(k) => {
            let limit = if a.max_rounds >= ROUNDS_CAP {
                format!("more than the cap of {ROUNDS_CAP}")
            } else if k <= ROUNDS_CAP {
                format!(
                    "more than these settings allow: raise `[run] max_rounds` (now {}) to {k}",
                    a.max_rounds
                )
            } else {
                format!(
                    "more than the cap of {ROUNDS_CAP} (`[run] max_rounds` is now {})",
                    a.max_rounds
                )
            };
            let smallest = a.smallest_threshold.map_or(String::new(), |s| {
                format!(
                    "; the smallest threshold these settings can check is ±{:.1}%",
                    s * 100.0
                )
            });
            format!("about {k} rounds would decide it, {limit}{smallest}")
        }
    };
    format!("{reached}; {next}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Tier, Verdict};
    use crate::metric::Direction;

    fn row(n: usize, mde: Option<f64>) -> MetricComparison {
        MetricComparison {
            scenario: "s".into(),
            client: "c".into(),
            baseline_client: "c".into(),
            server: None,
            baseline_server: None,
            metric: "cpu_us_per_request".into(),
            direction: Direction::LowerIsBetter,
            baseline: vec![10.0; n],
            current: vec![11.0; n],
            baseline_median: Some(10.0),
            current_median: Some(11.0),
            change: Some(0.1),
            ci_low: Some(-0.1),
            ci_high: Some(0.3),
            confidence: Some(0.96),
            p_value: Some(0.3),
            mde,
            verdict: Verdict::Inconclusive,
            tier: Tier::Warn,
            gating: true,
            reason: String::new(),
            invalid: vec![],
            lacking: vec![],
            advice: None,
            undecidable: None,
        }
    }

    fn gate() -> MetricGate {
        MetricGate {
            metric: "cpu_us_per_request".into(),
            fail: Some(Threshold {
                relative: 0.10,
                absolute: None,
            }),
            warn: None,
            gating: true,
        }
    }

    #[test]
    fn rounds_grow_with_the_square_of_mde_over_threshold() {
        // MDE 25% against 10% at 6 rounds: about 6 * 6.25 = 37.5, so 38 rounds.
        let a = advise(&row(6, Some(0.25)), &gate(), true, 0.05, 60).unwrap();
        assert_eq!((a.rounds, a.rounds_needed, a.max_rounds), (6, Some(38), 60));
        assert_eq!(a.smallest_threshold, None);
        let s = sentence(&row(6, Some(0.25)), &a);
        assert!(s.contains("about 38 rounds would decide it"), "{s}");
        // Beyond max_rounds = 12: say so, and the smallest threshold 12
        // rounds can check, 25% * sqrt(6 / 12).
        let a = advise(&row(6, Some(0.25)), &gate(), true, 0.05, 12).unwrap();
        let smallest = a.smallest_threshold.unwrap();
        assert!((smallest - 0.25 * 0.5f64.sqrt()).abs() < 1e-9, "{smallest}");
        let s = sentence(&row(6, Some(0.25)), &a);
        assert!(s.contains("raise `[run] max_rounds` (now 12) to 38"), "{s}");
        assert!(s.contains("±17.7%"), "{s}");
        // Beyond the cap of 300.
        let a = advise(&row(6, Some(2.0)), &gate(), true, 0.05, 300).unwrap();
        assert!(sentence(&row(6, Some(2.0)), &a).contains("the cap of 300"));
    }

    #[test]
    fn a_stored_baseline_with_fewer_trials_is_the_short_side_and_is_named() {
        // 5 stored trials against 10 current ones (the current run bought
        // rounds up to max_rounds = 10): the width goes as sqrt(1/5 + 1/10),
        // as 6.67 trials a side; MDE 33.6% against 50%: 6.67 * 0.45 = 3.0,
        // so at least one more than the 6 whole trials a side, 7.
        let mut m = row(10, Some(0.336));
        m.baseline.truncate(5);
        let a = advise(&m, &gate50(), false, 0.05, 10).unwrap();
        assert_eq!(
            a.uneven,
            Some(Uneven {
                baseline: 5,
                current: 10
            })
        );
        assert_eq!((a.rounds, a.rounds_needed), (5, Some(7)));
        let s = sentence(&m, &a);
        assert!(
            s.starts_with("5 baseline and 10 current trials reached an MDE of ±33.6%"),
            "{s}"
        );
        assert!(
            s.contains(
                "the baseline needs them too (`[run] rounds` = 7 in the run that stores it)"
            ),
            "{s}"
        );
        assert!(!s.contains("max_rounds` = 7"), "{s}");
        // Paired rounds are never uneven; even sides say rounds as before.
        let a = advise(&m, &gate50(), true, 0.05, 10).unwrap();
        assert_eq!(a.uneven, None);
        let even = row(5, Some(0.336));
        let a = advise(&even, &gate50(), false, 0.05, 10).unwrap();
        assert_eq!(a.uneven, None);
        assert!(sentence(&even, &a).starts_with("5 rounds reached"));
    }

    fn gate50() -> MetricGate {
        MetricGate {
            fail: Some(Threshold {
                relative: 0.50,
                absolute: None,
            }),
            ..gate()
        }
    }

    #[test]
    fn too_few_rounds_for_alpha_ask_for_the_fewest_that_can_reach_it() {
        let a = advise(&row(3, None), &gate(), true, 0.05, 3).unwrap();
        assert_eq!(a.rounds_needed, Some(6), "paired: 6 pairs reach p < 0.05");
        let a = advise(&row(3, None), &gate(), false, 0.05, 3).unwrap();
        assert_eq!(a.rounds_needed, Some(4), "4 a side reach p < 0.05");
    }

    #[test]
    fn a_decided_metric_gets_no_advice() {
        let mut m = row(6, Some(0.2));
        m.verdict = Verdict::Unchanged;
        assert!(advise(&m, &gate(), true, 0.05, 60).is_none());
        let mut m = row(6, Some(0.2));
        m.gating = false;
        assert!(advise(&m, &gate(), true, 0.05, 60).is_none());
    }
}
