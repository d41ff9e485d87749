//! What an inconclusive run could not decide, for every renderer: one entry
//! per undecided gating metric (its change, interval, and what would decide
//! it: `compare::advice`) and per baseline cell missing from the run. The
//! headline of an inconclusive run carries these, so the decision is never
//! hidden in a collapsed section.

use crate::compare::advice::sentence;
use crate::compare::{Comparison, GateOutcome, MetricComparison, Verdict};

use super::rows::{change_with_ci, row_order};

/// Most entries a headline lists; the rest are counted.
pub const MAX_ENTRIES: usize = 5;

/// One thing the gate could not decide.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<'a> {
    /// The row it comes from (untrusted names: escape them where printed).
    pub row: &'a MetricComparison,
    /// What was measured and what would decide it (our own text, from
    /// numbers), or why the cell is missing.
    pub detail: String,
}

/// The undecided rows of an inconclusive comparison, most important first;
/// empty for any other outcome.
pub fn entries(cmp: &Comparison) -> Vec<Entry<'_>> {
    if cmp.outcome != GateOutcome::Inconclusive {
        return Vec::new();
    }
    let mut rows: Vec<&MetricComparison> = cmp
        .metrics
        .iter()
        .filter(|m| m.undecided() || m.verdict == Verdict::Missing)
        .collect();
    rows.sort_by(|a, b| {
        let missing = |m: &MetricComparison| m.verdict == Verdict::Missing;
        missing(a).cmp(&missing(b)).then(row_order(a, b))
    });
    rows.into_iter()
        .map(|row| {
            let detail = if row.verdict == Verdict::Missing {
                "missing from this run: the baseline has this cell, the current run does not"
                    .to_string()
            } else {
                // Why it was left undecided (a JMH file with too few forks,
                // a metric undecidable within the budget) comes before how
                // many rounds would decide it.
                let why = row.undecidable.iter().map(|w| format!("; {w}"));
                let advice = row.advice.iter().map(|a| format!("; {}", sentence(row, a)));
                let advice: String = why.chain(advice).collect();
                format!("{}{advice}", change_with_ci(row))
            };
            Entry { row, detail }
        })
        .collect()
}

/// The sentence that opens an inconclusive run's headline: how many gating
/// metrics are undecided and cells missing, and that the gate did not pass them.
pub fn summary(entries: &[Entry<'_>]) -> String {
    let missing = entries
        .iter()
        .filter(|e| e.row.verdict == Verdict::Missing)
        .count();
    let undecided = entries.len() - missing;
    let mut parts = Vec::new();
    if undecided > 0 {
        parts.push(format!(
            "{undecided} gating metric{} could be neither shown within {} threshold nor shown to regress",
            if undecided == 1 { "" } else { "s" },
            if undecided == 1 { "its" } else { "their" }
        ));
    }
    if missing > 0 {
        parts.push(format!(
            "{missing} cell{} of the baseline {} missing from this run",
            if missing == 1 { "" } else { "s" },
            if missing == 1 { "is" } else { "are" }
        ));
    }
    format!(
        "Inconclusive: {}; the gate could not pass this run.",
        parts.join(", and ")
    )
}
