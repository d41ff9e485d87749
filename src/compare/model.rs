//! The comparison's data model: the per-metric results it produces. Pure data
//! (serde), shared by the statistics (`compare`), the renderers (`report`) and,
//! later, the publishers. The gate settings it applies are the config's
//! (`config::gate`).

use serde::{Deserialize, Serialize};

use crate::metric::Direction;

use super::pairing::ComparisonMode;

/// A metric's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly worse, and worse than the threshold.
    Regressed,
    /// Significantly better, and better than the threshold mirrored.
    Improved,
    /// Within the threshold: on a gating metric, the interval's worse end lies
    /// inside the fail threshold (shown, not assumed); on an informative one,
    /// no change beyond the threshold that the comparison could have seen.
    /// Displayed "within threshold".
    Unchanged,
    /// Undecided: too few trials, or an interval that straddles the threshold
    /// (too noisy to tell a change of the threshold's size).
    Inconclusive,
    /// Environment or load profile differ: the numbers cannot be compared.
    NotComparable,
    /// One side has no value for this metric (or no baseline at all).
    NoBaseline,
    /// Every trial of a cell failed, so nothing was measured: the current
    /// cell (baseline mode), or the compared cell or its baseline cell (side
    /// by side, both from the run under test). One row per such cell, on its
    /// primary gated metric; always fails the gate.
    Failed,
    /// A cell of the baseline that the current run lacks (a dropped
    /// scenario, a truncated or unfinished run): one row per cell, on its
    /// primary gated metric; `[gate] missing_cell` sets its tier.
    Missing,
}

/// What a metric's verdict does to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Pass,
    Warn,
    Fail,
}

/// One (scenario, client, metric) compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricComparison {
    pub scenario: String,
    /// The client measured as "current".
    pub client: String,
    /// The client measured as "baseline": the same client (baseline mode) or
    /// `[compare] baseline_client` (side-by-side mode).
    pub baseline_client: String,
    /// The server under test the current side drove (absent: the reference server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The server the baseline side drove: the same one (baseline mode) or
    /// `[compare] baseline_server` (side-by-side mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_server: Option<String>,
    pub metric: String,
    pub direction: Direction,
    /// Per-trial values, in round order.
    pub baseline: Vec<f64>,
    pub current: Vec<f64>,
    pub baseline_median: Option<f64>,
    pub current_median: Option<f64>,
    /// Estimated relative change of current vs baseline (0.12 = +12%).
    pub change: Option<f64>,
    /// Confidence interval of `change`, same scale.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Achieved confidence level of the interval (e.g. 0.95, or 0.9714 for an
    /// exact rank interval).
    pub confidence: Option<f64>,
    /// Two-sided p-value of the significance test.
    pub p_value: Option<f64>,
    /// Minimum detectable relative effect at the observed noise and trial count.
    pub mde: Option<f64>,
    pub verdict: Verdict,
    pub tier: Tier,
    /// Whether this metric can fail the gate.
    pub gating: bool,
    /// One sentence on why: method, threshold, what decided it.
    pub reason: String,
    /// The validity guard's marks on the trials of either side (`round 2:
    /// open loop reached ...`); absent: every trial valid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<String>,
    /// A gating metric: the trials of either side that measured other
    /// figures but not this one, which another trial of their cell measured
    /// (`round 2`, `baseline round 4`): left out of the comparison, and
    /// counted in its reason. Absent: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacking: Vec<String>,
    /// An undecided gating metric ([`MetricComparison::undecided`]): what
    /// would decide it, from the measured noise. Absent otherwise, and when
    /// no number of rounds could ([`MetricComparison::undecidable`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice: Option<super::advice::Advice>,
    /// Why it was left undecided whatever its trials show: a JMH file with
    /// too few forks (no advice then), or, under `[run] budget`, a metric
    /// that stopped drawing rounds, undecidable within its scenario's share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecidable: Option<String>,
    /// Under `[run] budget`, an undecided gating metric whose scenario
    /// stopped after this round because another gating metric failed at
    /// that look: "stopped at round k: the scenario failed", not merely
    /// inconclusive. No advice then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<u32>,
    /// Under `[run] budget`, a gating metric decided at a planned look: that
    /// look (its round and alpha). The decision is final there: the row's
    /// interval, verdict and values are those of the rounds up to it, tested
    /// at its alpha. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<crate::results::budget::Look>,
}

impl MetricComparison {
    /// Whether the gate could not decide this gating metric: its interval
    /// straddles the fail threshold, or too few trials reach `alpha`. The one
    /// rule for "more evidence would decide it", read by the extra rounds
    /// (`orchestrate::extend`) and the run's outcome.
    pub fn undecided(&self) -> bool {
        self.gating && self.verdict == Verdict::Inconclusive
    }

    /// The current side as reports name it: `client` or `client @ server`.
    pub fn who(&self) -> String {
        crate::results::client_label(&self.client, self.server.as_deref())
    }

    /// The baseline side as reports name it.
    pub fn baseline_who(&self) -> String {
        crate::results::client_label(&self.baseline_client, self.baseline_server.as_deref())
    }
}

/// The whole comparison's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// Every gating metric of every cell is within its threshold or improved.
    Pass,
    Fail,
    /// Not every gating metric was decided (inconclusive, or a baseline cell
    /// missing from the run); nothing failed. Never a pass; its exit code is
    /// `[gate] inconclusive`'s.
    Inconclusive,
    NoBaseline,
    NotComparable,
}

/// A comparison of two runs (or of two clients in one run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    pub schema_version: u32,
    /// What the comparison pairs.
    pub mode: ComparisonMode,
    /// Statistical method, named with its source.
    pub method: String,
    pub baseline_run: Option<RunRef>,
    pub current_run: RunRef,
    /// Environment differences that make the runs not comparable (empty: comparable).
    pub environment_differences: Vec<String>,
    /// Against a stored run: what else differs in the environment (kernel,
    /// runner image, governor, versions; `profile::environment_changes`),
    /// which does not stop the comparison but moves its figures. Absent:
    /// nothing, or no stored run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment_changes: Vec<String>,
    pub outcome: GateOutcome,
    /// The gate's exit code: 0 pass, 1 fail.
    pub exit_code: u8,
    pub regressions: u32,
    pub improvements: u32,
    pub warnings: u32,
    /// Baseline mode: whether the anchored figures (`[run] anchor`) gated or
    /// the raw ones, and why, with the anchor's own change between the runs;
    /// a sentence the reports show. Absent side by side (the anchor cancels
    /// in pairs) and in comparisons written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchoring: Option<String>,
    /// `[gate] inconclusive` of the gate applied: what an inconclusive outcome
    /// does to `exit_code` and whether the action warns. Absent: the default
    /// (`neutral`).
    #[serde(
        default,
        skip_serializing_if = "crate::config::gate::InconclusivePolicy::is_default"
    )]
    pub inconclusive_policy: crate::config::gate::InconclusivePolicy,
    /// Whether a side is a JMH file read with iterations as trials (`[jmh]
    /// iterations_as_trials`): iterations of one fork are not independent,
    /// so the intervals are narrower than the truth and the reports say so.
    /// Absent: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optimistic: bool,
    pub metrics: Vec<MetricComparison>,
}

impl Comparison {
    /// A clean pass on the gating metrics: the outcome passes and every
    /// gating metric is within its threshold without a mark (no warn-tier
    /// regression, no improvement, no invalid trials). What `comment:
    /// on-change` calls "nothing changed"; informative metrics never count.
    pub fn clean_pass(&self) -> bool {
        self.outcome == GateOutcome::Pass
            && self.metrics.iter().filter(|m| m.gating).all(|m| {
                m.verdict == Verdict::Unchanged && m.tier == Tier::Pass && m.invalid.is_empty()
            })
    }
}

/// Which run a side came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRef {
    pub run_id: String,
    pub started_at: String,
    pub git_sha: Option<String>,
    pub git_ref: Option<String>,
}
