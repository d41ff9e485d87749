//! The validity guard in the comparison: a cell whose trials the results mark
//! invalid (`results::validity`: an open loop under 95% of its rate, a load
//! generator saturated against a server under test) cannot pass silently.
//!
//! Every row of such a cell lists the marks (`MetricComparison::invalid`) and
//! says so in its reason; a gating row's tier is raised to at least `warn`, or
//! to `fail` under `[gate] invalid = "fail"`. The verdict itself is left as the
//! statistics decided it. Marks on either side count: the current cell and the
//! cell it is compared with (the baseline run's, or the baseline client's).

use crate::config::gate::{GateConfig, InvalidPolicy};
use crate::results::{CellIndex, CellResult};

use super::model::{MetricComparison, Tier};

/// Marks listed per row; the rest are counted (a results file is untrusted
/// input, and a reason stays a sentence).
const MAX_LISTED: usize = 4;

/// Applies the guard to every row: `current_index` holds the cells of the
/// run under test, `baseline_index` those of the run the baseline side comes
/// from (the same run side by side).
pub fn guard(
    rows: &mut [MetricComparison],
    current_index: &CellIndex<'_>,
    baseline_index: Option<&CellIndex<'_>>,
    config: &GateConfig,
) {
    let floor = match config.invalid {
        InvalidPolicy::Warn => Tier::Warn,
        InvalidPolicy::Fail => Tier::Fail,
    };
    for row in rows {
        let cur = current_index.get(&row.scenario, &row.client, row.server.as_deref());
        let base = baseline_index.and_then(|b| {
            b.get(
                &row.scenario,
                &row.baseline_client,
                row.baseline_server.as_deref(),
            )
        });
        let mut marks = cur.map(|c| marks_of(c, "")).unwrap_or_default();
        if let Some(b) = base.filter(|b| !cur.is_some_and(|c| std::ptr::eq(*b, c))) {
            marks.extend(marks_of(b, "baseline "));
        }
        if marks.is_empty() {
            continue;
        }
        if marks.len() > MAX_LISTED {
            let more = marks.len() - MAX_LISTED;
            marks.truncate(MAX_LISTED);
            marks.push(format!("and {more} more"));
        }
        if row.gating {
            row.tier = row.tier.max(floor);
        }
        // First, so that a report shortening the reason keeps it.
        row.reason = format!(
            "invalid trials ([gate] invalid = \"{}\"): {}. {}",
            config.invalid.name(),
            marks.join("; "),
            row.reason
        );
        row.invalid = marks;
    }
}

/// The marks of a cell's trials, one phrase each: `round 2: open loop
/// reached ...`, prefixed with `side` (`baseline `).
fn marks_of(cell: &CellResult, side: &str) -> Vec<String> {
    cell.trials
        .iter()
        .flat_map(|t| {
            t.invalid
                .iter()
                .map(move |m| format!("{side}round {}: {}", t.round, m.describe()))
        })
        .collect()
}

#[cfg(test)]
#[path = "validity_tests.rs"]
mod tests;
