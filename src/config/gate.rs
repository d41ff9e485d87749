//! `[gate]` and `[compare]`: thresholds per metric (warn and fail tiers, relative
//! bound plus absolute floor), per-scenario / per-client overrides, and what a
//! missing or not comparable baseline does. Validated from the spanned tree with
//! located errors, like the rest of the config (`gate_parse`), into the settings
//! types here ([`GateConfig`] and its parts), which `compare` applies: config
//! owns them and imports nothing from `compare`.
//!
//! ## Defaults (when `[gate]` does not mention a metric)
//!
//! Each metric's entry in the registry (`metric/registry.rs`) holds its
//! default gate; the registry's docs table them and say why.

use serde::{Deserialize, Serialize};

use crate::metric::METRICS;

/// A warn or fail bound; defined with the registry's default gates.
pub use crate::metric::registry::Threshold;

/// `[gate] alpha` when absent.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// `[compare]`: side-by-side mode settings: `base = "git"`, or a baseline
/// client and/or server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSettings {
    /// The client every other client of a scenario is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_client: Option<String>,
    /// The server under test (`[[server]]` name) every other server's cells are
    /// compared with, client by client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_server: Option<String>,
    /// `base = "git"`: every command client and server under test that lives
    /// in the repository measured at two commits in one run, head against
    /// base (`plan::ComparisonPlan::base_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<CompareBase>,
}

/// Where `[compare] base` takes the base side from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareBase {
    /// Another commit of the git repository the config lives in.
    Git,
}

/// How one metric is gated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricGate {
    /// Stable metric name (`metric::METRICS`).
    pub metric: String,
    pub warn: Option<Threshold>,
    pub fail: Option<Threshold>,
    /// Whether a failing verdict fails the gate (false: informs only).
    pub gating: bool,
}

/// Metric gates for the cells an override applies to (scenario and/or client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateOverride {
    /// A scenario name, or a glob on it with `*` and `?` (`super::glob`).
    pub scenario: Option<String>,
    pub client: Option<String>,
    pub metrics: Vec<MetricGate>,
}

/// What a missing baseline does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingBaseline {
    /// Neutral "no baseline" verdict; the gate passes.
    Neutral,
    /// The gate fails.
    Fail,
}

/// `[gate] inconclusive`: the exit code of a run the gate could not decide
/// (some gating metric inconclusive, or a baseline cell missing from the run).
/// Whatever it says, the outcome, the headline and the action's `verdict`
/// say `inconclusive`, never pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InconclusivePolicy {
    /// Exit 0, with a warning annotation in the action.
    #[default]
    Neutral,
    /// Exit 1: the check fails until the comparison decides.
    Fail,
    /// Exit 0 without a warning: the team accepts undecided runs.
    Pass,
}

impl InconclusivePolicy {
    /// The names `[gate] inconclusive` accepts, in the order of the variants.
    pub const NAMES: [&'static str; 3] = ["neutral", "fail", "pass"];

    /// The value `[gate] inconclusive` takes for this policy.
    pub fn name(self) -> &'static str {
        match self {
            InconclusivePolicy::Neutral => Self::NAMES[0],
            InconclusivePolicy::Fail => Self::NAMES[1],
            InconclusivePolicy::Pass => Self::NAMES[2],
        }
    }

    /// Whether this is the default (kept out of files that do not set it).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// `[gate] missing_cell`: what a cell of the baseline that the current run
/// lacks does (a dropped scenario, a truncated or unfinished run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingCellPolicy {
    /// A warning row, and the run's outcome is at best inconclusive.
    #[default]
    Warn,
    /// The gate fails.
    Fail,
}

impl MissingCellPolicy {
    /// The value `[gate] missing_cell` takes for this policy.
    pub fn name(self) -> &'static str {
        match self {
            MissingCellPolicy::Warn => "warn",
            MissingCellPolicy::Fail => "fail",
        }
    }

    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// What a not-comparable baseline does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotComparablePolicy {
    /// Report it as a warning; the gate passes.
    Warn,
    /// The gate fails.
    Fail,
}

/// What a cell with trials the validity guard marked (`results::validity`)
/// does to its gating metrics: at least a warning, or a failure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidPolicy {
    /// Report it as a warning; the gate passes.
    #[default]
    Warn,
    /// The gate fails.
    Fail,
}

impl InvalidPolicy {
    /// The value `[gate] invalid` takes for this policy.
    pub fn name(self) -> &'static str {
        match self {
            InvalidPolicy::Warn => "warn",
            InvalidPolicy::Fail => "fail",
        }
    }
}

/// `[gate] paired_test`: the test on per-round differences when a comparison
/// is paired by round (side by side, base vs head). Stored runs are always
/// compared as independent samples (Mann-Whitney), whatever this says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairedTest {
    /// Wilcoxon signed-rank test with the Hodges-Lehmann interval (the
    /// default): the more efficient test when the differences are near normal.
    #[default]
    SignedRank,
    /// Sign test with the median and its order-statistic interval: it ignores
    /// how far a difference lies from 0, so heavy symmetric tails (single
    /// trials jumping 20-50%) widen its interval less.
    Sign,
}

impl PairedTest {
    /// The names `[gate] paired_test` accepts, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["signed-rank", "sign"];

    /// The value `[gate] paired_test` takes for this test (one of [`Self::NAMES`]).
    pub fn name(self) -> &'static str {
        match self {
            PairedTest::SignedRank => Self::NAMES[0],
            PairedTest::Sign => Self::NAMES[1],
        }
    }

    /// Whether this is the default (kept out of results files, so runs that
    /// do not set it write what they wrote before).
    pub fn is_default(&self) -> bool {
        *self == PairedTest::default()
    }
}

/// The `[gate]` table, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Significance level per comparison (two-sided), default 0.05.
    pub alpha: f64,
    /// Gates for every cell (defaults plus `[gate]` entries).
    pub metrics: Vec<MetricGate>,
    /// Per-scenario / per-client overrides, applied in order (later wins).
    pub overrides: Vec<GateOverride>,
    pub missing_baseline: MissingBaseline,
    pub not_comparable: NotComparablePolicy,
    /// `[gate] invalid`: marked trials warn (default) or fail. Absent in
    /// results written before the validity guard existed.
    #[serde(default)]
    pub invalid: InvalidPolicy,
    /// `[gate] paired_test`: the test of comparisons paired by round.
    #[serde(default, skip_serializing_if = "PairedTest::is_default")]
    pub paired_test: PairedTest,
    /// `[gate] strict`: a comparison that can never reach `alpha` with the
    /// configured rounds is an error at load instead of a warning.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// `[gate] anchored`: compared with a stored run, when both runs measured
    /// the anchor (`[run] anchor`), the anchored figures gate in place of the
    /// raw ones (`compare::anchor`; default true). `false`: compare raw.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub anchored: bool,
    /// `[gate] inconclusive`: the exit code of an undecided run.
    #[serde(default, skip_serializing_if = "InconclusivePolicy::is_default")]
    pub inconclusive: InconclusivePolicy,
    /// `[gate] missing_cell`: a baseline cell the current run lacks.
    #[serde(default, skip_serializing_if = "MissingCellPolicy::is_default")]
    pub missing_cell: MissingCellPolicy,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

impl Default for GateConfig {
    fn default() -> GateConfig {
        default_gate()
    }
}

/// The gate with every default (see the module docs): each metric's default
/// gate from the registry, in its order.
pub fn default_gate() -> GateConfig {
    // An anchored figure has no gate of its own (`compare::anchor`).
    let metrics = METRICS
        .iter()
        .filter(|d| d.anchored_from.is_none())
        .map(|d| MetricGate {
            metric: d.name.into(),
            gating: d.gate.fail.is_some(),
            fail: d.gate.fail,
            warn: d.gate.warn,
        })
        .collect();
    GateConfig {
        alpha: DEFAULT_ALPHA,
        metrics,
        overrides: Vec::new(),
        missing_baseline: MissingBaseline::Neutral,
        not_comparable: NotComparablePolicy::Warn,
        invalid: InvalidPolicy::Warn,
        paired_test: PairedTest::SignedRank,
        strict: false,
        anchored: true,
        inconclusive: InconclusivePolicy::Neutral,
        missing_cell: MissingCellPolicy::Warn,
    }
}
