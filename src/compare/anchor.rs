//! Which figures gate a comparison with a stored run: the anchored ones
//! (`results::anchor`) when both runs measured the same anchor, the raw ones
//! otherwise. Decided once per comparison ([`anchoring`]) and applied per
//! metric ([`Anchoring::role`]); the report says which it was ([`note`]).
//!
//! - Both runs anchored (the same workload, `[gate] anchored` not `false`):
//!   each anchored figure gates in place of the metric it is derived from,
//!   under that metric's `[gate]` entry (thresholds, tiers, overrides), and the
//!   raw metric informs. A cell where either side has no anchored value of a
//!   metric (the anchor failed in every round of its scenario) keeps the raw
//!   gate for it.
//! - Otherwise: the raw metrics gate, the anchored ones (if one side has them)
//!   inform, and the note says why the comparison is raw.
//! - The anchor's own cells gate nothing: their change between the runs is
//!   the machine's drift, shown in their rows and summed up in the note.
//!
//! Side by side (paired by round) the two members of a pair share their
//! round's anchor, which cancels in their ratio: the anchored figures would
//! repeat the raw comparison, so they are not compared there at all.

use crate::config::gate::{GateConfig, MetricGate};
use crate::metric::{anchored_twin, MetricDef};
use crate::results::RunResults;

use super::model::MetricComparison;
use super::stats::median;

/// What a comparison with a stored run gates on.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Anchoring {
    /// Both runs measured the same anchor: the anchored figures gate.
    Anchored,
    /// The raw figures gate; why (a sentence for the report).
    Raw(String),
    /// Neither run measured the anchor: raw, as before it existed, and
    /// nothing to say about it.
    Off,
}

/// How `current` is compared with the stored run `baseline`: anchored, raw
/// (and why), or raw because neither run has the anchor.
pub(super) fn anchoring(
    baseline: &RunResults,
    current: &RunResults,
    gate: &GateConfig,
) -> Anchoring {
    let raw = |why: &str| Anchoring::Raw(why.to_string());
    match (&baseline.config.run.anchor, &current.config.run.anchor) {
        (None, None) => Anchoring::Off,
        (None, Some(_)) => raw("the baseline run has no anchor ([run] anchor = true in the run that stores the baseline too divides the machine's drift out)"),
        (Some(_), None) => raw("this run has no anchor, the baseline run has ([run] anchor = true here too divides the machine's drift out)"),
        (Some(_), Some(_)) if !gate.anchored => raw("[gate] anchored = false"),
        (Some(b), Some(c)) if !b.same_workload(c) => raw("the two runs' anchors measured different workloads (benchgate versions with different anchors)"),
        (Some(_), Some(_)) => Anchoring::Anchored,
    }
}

/// Whether every two of `runs` compare anchored (calibration's A/A runs:
/// then their anchored figures are what the gate will judge).
pub(super) fn all_anchored(runs: &[RunResults], gate: &GateConfig) -> bool {
    runs.len() >= 2
        && runs
            .windows(2)
            .all(|w| anchoring(&w[0], &w[1], gate) == Anchoring::Anchored)
}

/// A metric's part in one cell's comparison: its gate and, when the
/// anchoring changed it, the words that say so.
pub(super) struct Role {
    pub gate: MetricGate,
    pub note: Option<String>,
}

impl Anchoring {
    /// The gate of `def` in a cell whose `[gate]` entry for a metric is
    /// `gate_of(name)`; `has_anchored(name)`: both sides have values of that
    /// anchored figure. `None`: the metric is not compared.
    pub fn role(
        &self,
        def: &MetricDef,
        gate_of: impl Fn(&str) -> Option<MetricGate>,
        has_anchored: impl Fn(&str) -> bool,
    ) -> Option<Role> {
        let stands_in = |name: &str| *self == Anchoring::Anchored && has_anchored(name);
        if let Some(of) = def.anchored_from {
            let mut gate = gate_of(of)?;
            gate.metric = def.name.to_string();
            if stands_in(def.name) {
                let note = gate
                    .gating
                    .then(|| format!("gates in place of {of} (both runs anchored)"));
                return Some(Role { gate, note });
            }
            gate.gating = false;
            return Some(Role { gate, note: None });
        }
        let mut gate = gate_of(def.name)?;
        let twin = anchored_twin(def.name).filter(|t| stands_in(t.name));
        let note = match twin {
            Some(t) if gate.gating => {
                gate.gating = false;
                Some(format!(
                    "informs: {} gates in its place (both runs anchored)",
                    t.name
                ))
            }
            _ => None,
        };
        Some(Role { gate, note })
    }
}

/// The gate of a metric in one of the anchor's cells: informative.
pub(super) fn anchor_cell_gate(gate: &MetricGate) -> Role {
    Role {
        gate: MetricGate {
            gating: false,
            ..gate.clone()
        },
        note: Some(
            "the anchor: its change is the machine's drift between the runs; gates nothing".into(),
        ),
    }
}

/// The report's sentence on the anchoring of a comparison with a stored run,
/// with the anchor's own change (its rows among `metrics`) when both runs
/// measured it; `None` when neither did.
pub(super) fn note(anchoring: &Anchoring, metrics: &[MetricComparison]) -> Option<String> {
    let why = match anchoring {
        Anchoring::Off => return None,
        Anchoring::Raw(why) => return Some(format!("Compared raw: {why}.")),
        Anchoring::Anchored => "Anchored: both runs measured the anchor (hyper, GET /bytes/22 at 16 workers) in every round; throughput_rps and cpu_us_per_request gate as their anchored figures (each trial against the anchor of its round), the raw figures inform",
    };
    let drift = |metric: &str| {
        let changes: Vec<f64> = metrics
            .iter()
            .filter(|m| m.client == crate::config::anchor::NAME && m.metric == metric)
            .filter_map(|m| m.change)
            .collect();
        median(&changes).map(|c| format!("{metric} {:+.1}%", c * 100.0))
    };
    let moved: Vec<String> = ["cpu_us_per_request", "throughput_rps"]
        .iter()
        .filter_map(|m| drift(m))
        .collect();
    Some(if moved.is_empty() {
        format!("{why}.")
    } else {
        format!(
            "{why}. The anchor itself moved between the runs (the machine's drift, median over its cells): {}.",
            moved.join(", ")
        )
    })
}

#[cfg(test)]
#[path = "anchor_tests.rs"]
mod tests;
