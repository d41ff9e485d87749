//! What would decide an undecided comparison, from where its interval stands.
//!
//! A gating metric is undecided ([`MetricComparison::undecided`]) when its
//! interval straddles the fail threshold or too few trials reach `alpha`. The
//! interval's width shrinks as `1 / sqrt(n)`, so its end facing the threshold
//! `T` (the worse end when the estimate `e` is inside it, the better end when
//! beyond) crosses it once its half-width on that side, `h`, has shrunk to the
//! gap: at about `n * (h / |T - e|)^2` rounds ([`Standing`]). That is an
//! estimate from this run's interval, said as such; when the estimate sits
//! within one standard error of the threshold (`SE`, the interval's own,
//! `stats::interval_se`) the rounds so far cannot tell on which side of the
//! threshold the change lies, so no count is projected: the advice says "not
//! at this threshold so far" (more rounds decide it only if the change lies
//! clear of the threshold; beside the noisy neighbour half of the metrics so
//! called at an early look were decided later in the same run). When the count exceeds what the settings allow
//! (`[run] max_rounds`, at most [`ROUNDS_CAP`]), the advice names the smallest
//! threshold those settings can check instead (`MDE * sqrt(n / max_rounds)`,
//! the MDE from the same interval).
//!
//! Under `[run] budget` the same standing decides whether a metric is worth
//! more rounds at all ([`undecidable_within`]).

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
    /// Rounds at which the interval's end facing the threshold would likely
    /// cross it; absent when the trials gave no interval at `alpha`, or when
    /// the estimate is within one standard error of the threshold
    /// (`at_threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_needed: Option<u32>,
    /// The estimate lies within one standard error of the threshold: no
    /// round count can be projected ("not at this threshold so far").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_threshold: bool,
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

/// Where an interval stands against a threshold `T`, as relative changes in
/// the metric's bad direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// `|T - e|`: how far the estimate lies from the threshold.
    pub gap: f64,
    /// `h`: the interval's half-width on the side facing the threshold (from
    /// the estimate to the worse end when the estimate is inside the
    /// threshold, to the better end when beyond it).
    pub facing: f64,
    /// The standard error the interval implies (`stats::interval_se`).
    pub se: f64,
}

impl Standing {
    /// Where `m`'s interval stands against the relative threshold
    /// `threshold`; `None` without a finite interval.
    pub fn of(m: &MetricComparison, threshold: f64) -> Option<Standing> {
        let (e, lo, hi) = (m.change?, m.ci_low?, m.ci_high?);
        let se = stats::interval_se(lo, hi, m.confidence?)?;
        // "Worse-by" coordinates: positive is worse.
        let (e, lo, hi) = match m.direction {
            Direction::LowerIsBetter => (e, lo, hi),
            Direction::HigherIsBetter => (-e, -hi, -lo),
        };
        let (gap, facing) = if e < threshold {
            (threshold - e, hi - e)
        } else {
            (e - threshold, e - lo)
        };
        Some(Standing {
            gap,
            facing: facing.max(0.0),
            se,
        })
    }

    /// Within one standard error of the threshold: "not at this threshold so far".
    pub fn at_threshold(&self) -> bool {
        self.gap <= self.se
    }

    /// Rounds at which the facing end would cross the threshold, from `n`
    /// (trials a side, or pairs): `n * (h / |T - e|)^2`.
    fn crossing(&self, n: f64) -> f64 {
        n * (self.facing / self.gap).powi(2)
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
    // An interval at `alpha` (the MDE says the trials reach it) and a threshold.
    let standing = m
        .mde
        .filter(|_| rel > 0.0 && n > 0)
        .and_then(|_| Standing::of(m, rel));
    let at_threshold = standing.is_some_and(|s| s.at_threshold());
    let by_estimate = standing.filter(|s| !s.at_threshold()).map(|s| {
        let k = s.crossing(per_side).ceil();
        if k > f64::from(u32::MAX / 2) {
            u32::MAX / 2
        } else {
            k as u32
        }
    });
    let rounds_needed = match by_estimate {
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
        at_threshold,
        max_rounds,
        smallest_threshold,
        uneven,
    })
}

/// Whether the undecided gating metric `m`, advised `a`, cannot be decided
/// within `rounds` rounds (the most its scenario's share of `[run] budget`
/// still buys): its half-width facing the threshold, projected to `rounds`,
/// still exceeds the gap plus one standard error, `h * f > |T - e| + SE`.
/// The projection `f` is `sqrt(n / N)` for pairs; unpaired, only the current
/// side grows (a stored baseline keeps its `b` trials), so `f = sqrt((1/b +
/// 1/N) / (1/b + 1/c))`. Without an interval at `alpha` yet: undecidable when
/// `rounds` cannot reach the fewest that can decide anything.
pub fn undecidable_within(m: &MetricComparison, a: &Advice, paired: bool, rounds: u32) -> bool {
    let Some(s) = m.mde.and_then(|_| Standing::of(m, a.threshold_relative)) else {
        return a.rounds_needed.is_some_and(|k| rounds < k);
    };
    let big_n = f64::from(rounds.max(1));
    let (b, c) = (m.baseline.len() as f64, m.current.len() as f64);
    let shrink = if paired || b == 0.0 || c == 0.0 {
        (f64::from(a.rounds) / big_n).sqrt()
    } else {
        ((1.0 / b + 1.0 / big_n) / (1.0 / b + 1.0 / c)).sqrt()
    };
    s.facing * shrink.min(1.0) > s.gap + s.se
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
    let standing = Standing::of(m, a.threshold_relative).filter(|_| a.at_threshold);
    let next = match a.rounds_needed {
        None => match standing {
            Some(s) => format!(
                "the estimate {:+.1}% is within one standard error ({:.1}%) of the threshold: not at this threshold so far (no round count can be projected; more rounds decide it only if the change lies clear of the threshold)",
                m.change.unwrap_or(0.0) * 100.0,
                s.se * 100.0
            ),
            None => "more rounds would narrow the interval".to_string(),
        },
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

    /// An undecided CPU per request row of `n` pairs: `change` with its
    /// interval `[lo, hi]` at 96%, the MDE from that interval at 0.05.
    fn row(n: usize, change: f64, lo: f64, hi: f64) -> MetricComparison {
        let se = stats::interval_se(lo, hi, 0.96).unwrap();
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
            change: Some(change),
            ci_low: Some(lo),
            ci_high: Some(hi),
            confidence: Some(0.96),
            p_value: Some(0.3),
            mde: Some(stats::mde_of_se(se, 0.05)),
            verdict: Verdict::Inconclusive,
            tier: Tier::Warn,
            gating: true,
            reason: String::new(),
            invalid: vec![],
            lacking: vec![],
            advice: None,
            undecidable: None,
            decided_at: None,
            stopped_at: None,
        }
    }

    /// The same row on throughput (higher is better).
    fn throughput(n: usize, change: f64, lo: f64, hi: f64) -> MetricComparison {
        MetricComparison {
            metric: "throughput_rps".into(),
            direction: Direction::HigherIsBetter,
            ..row(n, change, lo, hi)
        }
    }

    fn gate_at(relative: f64) -> MetricGate {
        MetricGate {
            metric: "cpu_us_per_request".into(),
            fail: Some(Threshold {
                relative,
                absolute: None,
            }),
            warn: None,
            gating: true,
        }
    }

    fn gate() -> MetricGate {
        gate_at(0.10)
    }

    #[test]
    fn rounds_count_from_where_the_interval_stands() {
        // +2% [-6%, +14%] against +10%: the upper end is 12% from the
        // estimate, 8% of it from the threshold: 6 * (12 / 8)^2 = 13.5.
        let m = row(6, 0.02, -0.06, 0.14);
        let a = advise(&m, &gate(), true, 0.05, 60).unwrap();
        assert_eq!((a.rounds, a.rounds_needed, a.max_rounds), (6, Some(14), 60));
        assert!(!a.at_threshold);
        assert_eq!(a.smallest_threshold, None);
        let s = sentence(&m, &a);
        assert!(s.contains("about 14 rounds would decide it"), "{s}");
        // Beyond the threshold the lower end faces it: +16% [+4%, +28%] is
        // 6% past +10% with 12% below the estimate: 6 * 2^2 = 24.
        let beyond = row(6, 0.16, 0.04, 0.28);
        let a = advise(&beyond, &gate(), true, 0.05, 60).unwrap();
        assert_eq!(a.rounds_needed, Some(24));
        // The same interval nearer the threshold needs more: the square of
        // the ratio, not the MDE's size against the threshold.
        let near = row(6, 0.05, -0.03, 0.13);
        let a = advise(&near, &gate(), true, 0.05, 60).unwrap();
        assert_eq!(a.rounds_needed, Some(16), "6 * (8 / 5)^2 = 15.4: {a:?}");
    }

    #[test]
    fn higher_is_better_faces_the_threshold_from_below() {
        // Throughput +1% [-7%, +9%] against -5%: the lower end is 8% from
        // the estimate, 6% of it from the threshold: 6 * (8 / 6)^2 = 10.7.
        let m = throughput(6, 0.01, -0.07, 0.09);
        let a = advise(&m, &gate_at(0.05), true, 0.05, 60).unwrap();
        assert_eq!(a.rounds_needed, Some(11), "{a:?}");
    }

    #[test]
    fn beyond_max_rounds_names_the_smallest_threshold_and_the_cap() {
        let m = row(6, 0.02, -0.06, 0.14);
        let a = advise(&m, &gate(), true, 0.05, 12).unwrap();
        let mde = m.mde.unwrap();
        let smallest = a.smallest_threshold.unwrap();
        assert!((smallest - mde * 0.5f64.sqrt()).abs() < 1e-9, "{smallest}");
        let s = sentence(&m, &a);
        assert!(s.contains("raise `[run] max_rounds` (now 12) to 14"), "{s}");
        assert!(s.contains(&format!("±{:.1}%", smallest * 100.0)), "{s}");
        // Beyond the cap of 300: 0% [-9.5%, +9.5%] after 100 rounds
        // against +5%, 100 * (9.5 / 5)^2 = 361. (With the estimate more than
        // one SE from the threshold, a symmetric interval crosses it within
        // about z^2 = 4.2 times the rounds so far.)
        let wide = row(100, 0.0, -0.095, 0.095);
        let a = advise(&wide, &gate_at(0.05), true, 0.05, 300).unwrap();
        assert_eq!(a.rounds_needed, Some(361));
        assert!(sentence(&wide, &a).contains("the cap of 300"), "{a:?}");
    }

    #[test]
    fn an_estimate_within_one_standard_error_of_the_threshold_is_not_at_this_threshold() {
        // +9% [+1%, +17%]: SE = 16% / (2 z(0.98)) = 3.9%, the gap 1%.
        let m = row(6, 0.09, 0.01, 0.17);
        let a = advise(&m, &gate(), true, 0.05, 60).unwrap();
        assert!(a.at_threshold, "{a:?}");
        assert_eq!((a.rounds_needed, a.smallest_threshold), (None, None));
        let s = sentence(&m, &a);
        assert!(s.contains("the estimate +9.0% is within one standard error (3.9%) of the threshold: not at this threshold so far (no round count can be projected"), "{s}");
        // Throughput -4% [-10%, +2%] against -5%: within one SE of it too.
        let t = throughput(6, -0.04, -0.10, 0.02);
        assert!(
            advise(&t, &gate_at(0.05), true, 0.05, 60)
                .unwrap()
                .at_threshold
        );
    }

    #[test]
    fn a_stored_baseline_with_fewer_trials_is_the_short_side_and_is_named() {
        // 5 stored trials against 10 current ones (the current run bought
        // rounds up to max_rounds = 10): the width goes as sqrt(1/5 + 1/10),
        // as 6.67 trials a side; +10% [-10%, +30%] against +50%: 6.67 *
        // (20 / 40)^2 = 1.7, so at least one more than the 6 whole trials a
        // side, 7.
        let mut m = row(10, 0.1, -0.1, 0.3);
        m.baseline.truncate(5);
        let a = advise(&m, &gate_at(0.5), false, 0.05, 10).unwrap();
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
            s.starts_with("5 baseline and 10 current trials reached an MDE of"),
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
        let a = advise(&m, &gate_at(0.5), true, 0.05, 10).unwrap();
        assert_eq!(a.uneven, None);
        let even = row(5, 0.1, -0.1, 0.3);
        let a = advise(&even, &gate_at(0.5), false, 0.05, 10).unwrap();
        assert_eq!(a.uneven, None);
        assert!(sentence(&even, &a).starts_with("5 rounds reached"));
    }

    #[test]
    fn too_few_rounds_for_alpha_ask_for_the_fewest_that_can_reach_it() {
        let mut m = row(3, 0.1, -0.1, 0.3);
        m.mde = None;
        let a = advise(&m, &gate(), true, 0.05, 3).unwrap();
        assert_eq!(a.rounds_needed, Some(6), "paired: 6 pairs reach p < 0.05");
        let a = advise(&m, &gate(), false, 0.05, 3).unwrap();
        assert_eq!(a.rounds_needed, Some(4), "4 a side reach p < 0.05");
    }

    #[test]
    fn a_decided_metric_gets_no_advice() {
        let mut m = row(6, 0.02, -0.06, 0.14);
        m.verdict = Verdict::Unchanged;
        assert!(advise(&m, &gate(), true, 0.05, 60).is_none());
        let mut m = row(6, 0.02, -0.06, 0.14);
        m.gating = false;
        assert!(advise(&m, &gate(), true, 0.05, 60).is_none());
    }

    /// +5% [0%, +10%] at 20 rounds against +6.5%: the gap 1.5%, SE 2.4%
    /// (at 96%), the upper end 5% from the estimate. Paired, 5% * sqrt(20 /
    /// N) falls within 1.5% + 2.4% from N = 33 on; unpaired against a stored
    /// baseline of 20 only the current side grows, so from N = 84.
    #[test]
    fn undecidable_when_the_projected_half_width_stays_beyond_the_gap_and_one_se() {
        let m = row(20, 0.05, 0.0, 0.10);
        let a = advise(&m, &gate_at(0.065), true, 0.05, 300).unwrap();
        assert!(undecidable_within(&m, &a, true, 20));
        assert!(undecidable_within(&m, &a, true, 32));
        assert!(!undecidable_within(&m, &a, true, 33));
        assert!(undecidable_within(&m, &a, false, 33));
        assert!(undecidable_within(&m, &a, false, 83));
        assert!(!undecidable_within(&m, &a, false, 84));
        // No interval at alpha yet: undecidable only below the fewest
        // rounds that can reach it.
        let mut short = row(3, 0.1, -0.1, 0.3);
        short.mde = None;
        let a = advise(&short, &gate(), true, 0.05, 300).unwrap();
        assert!(undecidable_within(&short, &a, true, 5));
        assert!(!undecidable_within(&short, &a, true, 6));
    }
}
