//! One (scenario, client, metric) of a comparison: the two sides' values, their
//! statistics on the metric's scale, and the finished [`MetricComparison`].

use crate::config::gate::{GateConfig, MetricGate, PairedTest};
use crate::metric::{metric_def, scale_of, Scale};
use crate::results::CellResult;

use super::model::MetricComparison;
use super::stats::{self, median};
use super::verdict::{decide, Evidence, Interval, Measured};

/// The values of one metric on both sides, in round order.
pub(super) struct Cell {
    pub metric: &'static str,
    pub baseline: Vec<f64>,
    pub current: Vec<f64>,
    /// `baseline[i]` and `current[i]` come from the same round.
    pub paired: bool,
}

/// Longest failure reason a comparison quotes.
const MAX_FAILURE_CHARS: usize = 8_000;

/// A cell with trials and not one successful trial: nothing was measured.
pub struct AllFailed {
    /// Its trials (every one failed).
    pub trials: usize,
    /// The first failure, as the run printed it:
    /// `get-22b / hyper round 1/4: FAILED: the driver panicked: ... (full output: ...)`.
    pub first: String,
}

/// `Some` when `cell` has trials that ran to their end and none succeeded (a
/// trial succeeds when it has no failure and recorded metrics). Trials a
/// signal cut short ([`crate::results::Trial::interrupted`]) are not the
/// client's failures: a cell with only those is not "failed".
pub fn all_failed(cell: &CellResult) -> Option<AllFailed> {
    let finished: Vec<_> = cell.trials.iter().filter(|t| !t.interrupted()).collect();
    let n = finished.len();
    let ok = |t: &&crate::results::Trial| t.failure.is_none() && t.metrics.is_some();
    if n == 0 || finished.iter().any(ok) {
        return None;
    }
    let first = finished
        .iter()
        .filter(|t| t.failure.is_some())
        .min_by_key(|t| t.round)
        .or_else(|| finished.iter().min_by_key(|t| t.round))?;
    // A results file may hold 64 KiB of it: the first line and the output
    // tails it quotes are shown.
    let what = first
        .failure
        .as_deref()
        .map_or("the trial recorded no metrics".into(), |f| {
            crate::files::shortened(f, MAX_FAILURE_CHARS)
        });
    Some(AllFailed {
        trials: n,
        first: format!(
            "{} / {} round {}/{}: FAILED: {what}",
            cell.scenario,
            cell.label(),
            first.round,
            cell.trials.len()
        ),
    })
}

/// A cell with trials that ran to their end, not [`all_failed`], and not one
/// that counts: every trial the machine starved (or failed). Nothing was
/// measured, and it is no one's failure.
pub struct AllStarved {
    /// Its finished trials.
    pub trials: usize,
    /// Those the machine starved (the rest failed).
    pub starved: usize,
    /// The first starved trial: `get-22b / hyper round 1/4: starved by the
    /// machine: it completed no request in its window`.
    pub first: String,
}

/// `Some` when `cell` is [`AllStarved`].
pub fn all_starved(cell: &CellResult) -> Option<AllStarved> {
    if all_failed(cell).is_some() {
        return None;
    }
    let finished: Vec<_> = cell.trials.iter().filter(|t| !t.interrupted()).collect();
    let counts =
        |t: &&crate::results::Trial| t.failure.is_none() && t.metrics.is_some() && !t.starved();
    if finished.is_empty() || finished.iter().any(counts) {
        return None;
    }
    let starved: Vec<_> = finished.iter().filter(|t| t.starved()).collect();
    let first = starved.iter().min_by_key(|t| t.round)?;
    let mark = first.invalid.iter().find(|m| m.is_starved())?;
    Some(AllStarved {
        trials: finished.len(),
        starved: starved.len(),
        first: format!(
            "{} / {} round {}/{}: {}",
            cell.scenario,
            cell.label(),
            first.round,
            cell.trials.len(),
            mark.describe()
        ),
    })
}

/// Values of every successful trial, in round order.
pub(super) fn cell_values(cell: &CellResult, metric: &str) -> Vec<f64> {
    cell.values(metric).into_iter().map(|(_, v)| v).collect()
}

/// Values of the rounds both cells measured, in round order.
pub(super) fn paired_values(
    baseline: &CellResult,
    current: &CellResult,
    metric: &str,
) -> (Vec<f64>, Vec<f64>) {
    let base = baseline.values(metric);
    current
        .values(metric)
        .into_iter()
        .filter_map(|(round, c)| {
            let b = base.iter().find(|(r, _)| *r == round)?.1;
            Some((b, c))
        })
        .unzip()
}

impl Cell {
    /// The scale actually used: a ratio-scale metric holding a value <= 0 falls
    /// back to absolute differences.
    fn scale(&self) -> Scale {
        let positive = self.baseline.iter().chain(&self.current).all(|v| *v > 0.0);
        match scale_of(self.metric) {
            Scale::Log if positive => Scale::Log,
            _ => Scale::Absolute,
        }
    }

    /// The statistics of this cell under the gate's `alpha` (and, paired by
    /// round, its `paired_test`), or why there are none.
    pub fn evidence(&self, config: &GateConfig) -> Evidence {
        let alpha = config.alpha;
        let missing = |current_lacks: bool, reason: String| Evidence::Missing {
            current_lacks,
            reason,
        };
        if self.baseline.is_empty() {
            return missing(
                false,
                format!(
                    "the baseline has no successful trial measuring {}",
                    self.metric
                ),
            );
        }
        if self.current.is_empty() {
            return missing(
                true,
                format!("no successful current trial measured {}", self.metric),
            );
        }
        let scale = self.scale();
        let tx = |v: &[f64]| -> Vec<f64> {
            match scale {
                Scale::Log => v.iter().map(|x| x.ln()).collect(),
                Scale::Absolute => v.to_vec(),
            }
        };
        let (b, c) = (tx(&self.baseline), tx(&self.current));
        let shift = if self.paired {
            let d: Vec<f64> = b.iter().zip(&c).map(|(b, c)| c - b).collect();
            match config.paired_test {
                PairedTest::SignedRank => stats::paired(&d, alpha),
                PairedTest::Sign => stats::paired_sign(&d, alpha),
            }
        } else {
            stats::two_sample(&b, &c, alpha)
        };
        let Some(s) = shift else {
            return missing(false, "no values to compare".into());
        };
        let base = median(&self.baseline).unwrap_or(0.0);
        // (relative, absolute) of a shift on the comparison scale.
        let both = |x: f64| match scale {
            Scale::Log => (x.exp_m1(), base * x.exp_m1()),
            Scale::Absolute if base > 0.0 => (x / base, x),
            Scale::Absolute if x == 0.0 => (0.0, 0.0),
            Scale::Absolute => (x.signum() * f64::INFINITY, x),
        };
        let (est, lo, hi) = (both(s.estimate), both(s.ci_low), both(s.ci_high));
        Evidence::Measured(Measured {
            baseline_center: base,
            relative: Interval {
                estimate: est.0,
                low: lo.0,
                high: hi.0,
            },
            absolute: Interval {
                estimate: est.1,
                low: lo.1,
                high: hi.1,
            },
            confidence: s.confidence,
            p_value: s.p_value,
            min_p_value: s.min_p_value,
            mde_absolute: s.mde.map(|m| both(m).1),
            n_baseline: self.baseline.len(),
            n_current: self.current.len(),
            paired: self.paired,
            identical: self
                .baseline
                .iter()
                .chain(&self.current)
                .all(|v| *v == self.baseline[0]),
            undecidable: None,
        })
    }

    /// The finished comparison of this cell under its gate; `baseline` is the
    /// (client, server) of the other side.
    pub fn comparison(
        self,
        cell: &CellResult,
        baseline: (&str, Option<&str>),
        gate: &MetricGate,
        evidence: &Evidence,
        config: &GateConfig,
        max_rounds: u32,
    ) -> MetricComparison {
        let decision = decide(evidence, gate, config);
        let paired = self.paired;
        let finite = |v: f64| v.is_finite().then_some(v);
        let mut out = MetricComparison {
            scenario: cell.scenario.clone(),
            client: cell.client.clone(),
            baseline_client: baseline.0.to_string(),
            server: cell.server.clone(),
            baseline_server: baseline.1.map(String::from),
            metric: self.metric.to_string(),
            direction: metric_def(self.metric)
                .map_or(crate::metric::Direction::LowerIsBetter, |d| d.direction),
            baseline_median: median(&self.baseline),
            current_median: median(&self.current),
            change: None,
            ci_low: None,
            ci_high: None,
            confidence: None,
            p_value: None,
            mde: None,
            verdict: decision.verdict,
            tier: decision.tier,
            gating: gate.gating,
            reason: decision.reason,
            invalid: Vec::new(),
            lacking: Vec::new(),
            baseline: Vec::new(),
            current: Vec::new(),
            advice: None,
            undecidable: None,
            decided_at: None,
            stopped_at: None,
        };
        if let Evidence::Unmeasured(why) = evidence {
            // No interval to advise on: the headline shows why instead.
            out.undecidable = Some(why.clone());
        }
        if let Evidence::Measured(m) = evidence {
            out.undecidable = m.undecidable.clone();
            out.change = finite(m.relative.estimate);
            out.ci_low = finite(m.relative.low);
            out.ci_high = finite(m.relative.high);
            out.confidence = Some(m.confidence);
            out.p_value = Some(m.p_value);
            out.mde = m
                .mde_absolute
                .filter(|_| m.baseline_center > 0.0)
                .map(|a| a / m.baseline_center);
            if scale_of(self.metric) == Scale::Log && self.scale() == Scale::Absolute {
                out.reason
                    .push_str(" (compared as absolute differences: a value is 0)");
            }
        }
        out.baseline = self.baseline;
        out.current = self.current;
        if out.undecidable.is_none() {
            out.advice = super::advice::advise(&out, gate, paired, config.alpha, max_rounds);
        }
        out
    }
}
