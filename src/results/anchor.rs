//! The anchored figures (`[run] anchor = true`): every trial's metric divided
//! by the anchor's same metric in the same round.
//!
//! Why: on a shared runner the speed of the whole machine moves in blocks of
//! seconds to a minute (docs/measurements.md, "Gate quality, measured": CPU per request
//! between ~9.5 and ~11 µs, the same for every process), invisible from inside
//! one run and the same size as the regressions the gate must catch. Paired by
//! round, side by side, it cancels; against a stored run from another job it
//! does not. The anchor is a fixed workload (`config::anchor`) measured in
//! every round of every run; a trial's figure over the anchor's figure of its
//! round is what is left once the machine's speed of the moment is divided
//! out: `cpu_us_per_request_anchored = cpu_us_per_request / anchor's
//! cpu_us_per_request`, `throughput_rps_anchored = throughput_rps / anchor's
//! throughput_rps`. Both are plain ratios (no constant scales them), so they
//! carry the direction of the metric they come from and nothing else.
//!
//! Side by side the anchored figures compare exactly like the raw ones: the
//! two members of a pair share their round's anchor, so the anchor cancels
//! in their ratio. The raw figures stay as measured; the anchored ones are
//! stored beside them under their own names (`registry.rs`).

use super::Trial;
use crate::metric::TrialMetrics;

/// `value / anchor`, when both were measured, are finite and the anchor is
/// positive; `None` otherwise (never estimated).
fn ratio(value: Option<f64>, anchor: Option<f64>) -> Option<f64> {
    let (v, a) = (value?, anchor?);
    (v.is_finite() && a.is_finite() && a > 0.0).then(|| v / a)
}

/// Sets `trial`'s anchored figures from the anchor's trial of the same round
/// (`None`: the anchor failed that round, and the trial has none).
pub fn normalize(trial: &mut TrialMetrics, anchor: Option<&TrialMetrics>) {
    trial.throughput_rps_anchored =
        ratio(trial.throughput_rps, anchor.and_then(|a| a.throughput_rps));
    trial.cpu_us_per_request_anchored = ratio(
        trial.cpu_us_per_request,
        anchor.and_then(|a| a.cpu_us_per_request),
    );
}

/// Gives every trial of a cell its anchored figures from the anchor's trial
/// of the same round among `anchor_trials` (none where that one failed).
pub fn normalize_trials(trials: &mut [Trial], anchor_trials: &[Trial]) {
    for t in trials {
        let anchor = of_round(anchor_trials, t.round);
        if let Some(m) = &mut t.metrics {
            normalize(m, anchor);
        }
    }
}

/// The successful trial of `round` among `anchor_trials`, if any.
fn of_round(anchor_trials: &[Trial], round: u32) -> Option<&TrialMetrics> {
    anchor_trials
        .iter()
        .filter(|t| t.round == round && t.failure.is_none())
        .find_map(|t| t.metrics.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::synthetic;

    fn trial(round: u32, metrics: Option<TrialMetrics>) -> Trial {
        Trial {
            round,
            failure: metrics.is_none().then(|| "failed".to_string()),
            metrics,
            server: None,
            invalid: vec![],
            ..Default::default()
        }
    }

    #[test]
    fn divides_by_the_anchor_of_the_round() {
        let mut m = synthetic::metrics(80_000.0, 100.0, 11.0);
        let anchor = synthetic::metrics(100_000.0, 90.0, 10.0);
        normalize(&mut m, Some(&anchor));
        assert_eq!(m.throughput_rps_anchored, Some(0.8));
        assert_eq!(m.cpu_us_per_request_anchored, Some(1.1));
        // The raw figures stay as measured.
        assert_eq!(
            (m.throughput_rps, m.cpu_us_per_request),
            (Some(80_000.0), Some(11.0))
        );
    }

    /// The point of the anchor: a machine 10% slower for both leaves the
    /// anchored figures where they were.
    #[test]
    fn a_slowdown_of_the_whole_machine_cancels() {
        let (mut quiet, mut slow) = (
            synthetic::metrics(80_000.0, 100.0, 11.0),
            synthetic::metrics(80_000.0 / 1.1, 110.0, 11.0 * 1.1),
        );
        normalize(&mut quiet, Some(&synthetic::metrics(100_000.0, 90.0, 10.0)));
        normalize(
            &mut slow,
            Some(&synthetic::metrics(100_000.0 / 1.1, 99.0, 10.0 * 1.1)),
        );
        let close = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs() < 1e-12;
        assert!(close(
            quiet.cpu_us_per_request_anchored,
            slow.cpu_us_per_request_anchored
        ));
        assert!(close(
            quiet.throughput_rps_anchored,
            slow.throughput_rps_anchored
        ));
    }

    #[test]
    fn nothing_is_estimated_without_a_measured_anchor() {
        let mut m = synthetic::metrics(80_000.0, 100.0, 11.0);
        normalize(&mut m, None);
        assert_eq!(
            (m.throughput_rps_anchored, m.cpu_us_per_request_anchored),
            (None, None)
        );
        let mut zero = synthetic::metrics(0.0, 100.0, 0.0);
        zero.cpu_us_per_request = None;
        normalize(&mut m, Some(&zero));
        assert_eq!(
            (m.throughput_rps_anchored, m.cpu_us_per_request_anchored),
            (None, None),
            "a zero or missing anchor figure gives none"
        );
    }

    #[test]
    fn each_trial_takes_the_anchor_of_its_own_round() {
        let anchors = vec![
            trial(1, Some(synthetic::metrics(100_000.0, 90.0, 10.0))),
            trial(2, None),
            trial(3, Some(synthetic::metrics(50_000.0, 90.0, 20.0))),
        ];
        let mut trials: Vec<Trial> = (1..=4)
            .map(|r| trial(r, Some(synthetic::metrics(80_000.0, 100.0, 11.0))))
            .collect();
        trials.push(trial(5, None));
        normalize_trials(&mut trials, &anchors);
        let cpu: Vec<Option<f64>> = trials
            .iter()
            .map(|t| {
                t.metrics
                    .as_ref()
                    .and_then(|m| m.cpu_us_per_request_anchored)
            })
            .collect();
        assert_eq!(
            cpu,
            [Some(1.1), None, Some(0.55), None, None],
            "round 2 failed, 4 not run"
        );
        let rps = trials[2].metrics.as_ref().unwrap().throughput_rps_anchored;
        assert_eq!(rps, Some(1.6));
    }
}
