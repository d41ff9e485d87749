//! `[gate]` and `[compare]`: thresholds per metric (warn and fail tiers, relative
//! bound plus absolute floor), per-scenario / per-client overrides, and what a
//! missing or not comparable baseline does. Validated from the spanned tree with
//! located errors, like the rest of the config.
//!
//! ## Defaults (when `[gate]` does not mention a metric)
//!
//! Each metric's entry in the registry (`results/registry.rs`) holds its
//! default gate; the registry's docs table them and say why.

use crate::compare::model::{GateConfig, MetricGate, MissingBaseline, NotComparablePolicy};
use crate::results::METRICS;

/// `[gate] alpha` when absent.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// `[compare]`: side-by-side mode settings (at least one of the two is set).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSettings {
    /// The client every other client of a scenario is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_client: Option<String>,
    /// The server under test (`[[server]]` name) every other server's cells are
    /// compared with, client by client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_server: Option<String>,
}

impl Default for GateConfig {
    fn default() -> GateConfig {
        default_gate()
    }
}

/// The gate with every default (see the module docs): each metric's default
/// gate from the registry, in its order.
pub fn default_gate() -> GateConfig {
    let metrics = METRICS
        .iter()
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
    }
}
