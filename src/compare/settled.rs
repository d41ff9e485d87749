//! A run that looked at its evidence under `[run] budget` is judged as it
//! stopped (`results::budget`, `orchestrate::budget`), in the run and in a
//! later `benchgate compare` of the same file:
//!
//! - a gating metric **decided at a look** keeps that look's decision: its
//!   row is the comparison of the rounds up to that look at that look's
//!   alpha (its interval, verdict and values), marked with the look
//!   ([`MetricComparison::decided_at`]). Re-testing it at the last look
//!   could read a metric that failed at one look as inconclusive at the end;
//!   the alpha split across the planned looks already bounds the error over
//!   all of them, whichever decides;
//! - every other row of the scenario tests at its last look's alpha, never
//!   above the gate's;
//! - an undecided gating metric says why it was left so: it stopped drawing
//!   rounds, undecidable within its share ([`MetricComparison::undecidable`]),
//!   or its scenario stopped because another metric failed
//!   ([`MetricComparison::stopped_at`]).

use std::collections::HashMap;

use crate::config::gate::GateConfig;
use crate::results::budget::{Look, Names, ScenarioBudget, Stop, Undecidable};
use crate::results::{CellResult, RunResults};

use super::looks::show_alpha;
use super::model::{MetricComparison, Verdict};
use super::pairing::{Context, Pairing};

/// The gate of each scenario the run looked at: the gate at its last look's
/// alpha (never above the gate's own).
pub(super) fn last_looks<'r>(
    current: &'r RunResults,
    gate: &GateConfig,
) -> HashMap<&'r str, GateConfig> {
    current
        .budget
        .iter()
        .filter_map(|b| {
            let alpha = b.alpha()?.min(gate.alpha);
            Some((
                b.scenario.as_str(),
                GateConfig {
                    alpha,
                    ..gate.clone()
                },
            ))
        })
        .collect()
}

/// Applies what the looks settled to `metrics`, the rows of every cell of
/// `current` compared under `pairing` at [`last_looks`].
pub(super) fn settle(
    pairing: Pairing<'_>,
    current: &RunResults,
    gate: &GateConfig,
    metrics: &mut [MetricComparison],
) {
    for b in &current.budget {
        keep_decisions(pairing, current, b, gate, metrics);
        for m in metrics.iter_mut() {
            if m.scenario == b.scenario && m.undecided() && m.decided_at.is_none() {
                mark_undecided(b, m);
            }
        }
    }
}

/// Each metric of `b.decided` gets the row of its look: the comparison of
/// the rounds up to it, at its alpha, made as the run made it (the
/// scenario's cells alone). A row that does not decide there (the file
/// compared under another gate) keeps the one from every round.
fn keep_decisions(
    pairing: Pairing<'_>,
    current: &RunResults,
    b: &ScenarioBudget,
    gate: &GateConfig,
    metrics: &mut [MetricComparison],
) {
    let mut looks: Vec<Look> = Vec::new();
    for d in &b.decided {
        let look = Look {
            round: d.round,
            alpha: d.alpha,
        };
        if !looks.contains(&look) {
            looks.push(look);
        }
    }
    for look in looks {
        let run = rounds_up_to(current, &b.scenario, look.round);
        let at_look = GateConfig {
            alpha: look.alpha.min(gate.alpha),
            ..gate.clone()
        };
        let ctx = Context::new(pairing, &run, &at_look);
        let rows = super::cell_rows(&ctx, &at_look, &HashMap::new());
        let here = b
            .decided
            .iter()
            .filter(|d| d.round == look.round && d.alpha == look.alpha);
        for d in here {
            let names = |m: &&mut MetricComparison| {
                m.scenario == b.scenario && d.names(&m.client, m.server.as_deref(), &m.metric)
            };
            let Some(slot) = metrics.iter_mut().find(names) else {
                continue;
            };
            let found = rows.iter().find(|m| {
                m.scenario == b.scenario && d.names(&m.client, m.server.as_deref(), &m.metric)
            });
            let Some(row) = found.filter(|m| decides(m)) else {
                continue;
            };
            *slot = MetricComparison {
                reason: format!(
                    "{}; decided at the look after round {} (alpha {}), final",
                    row.reason,
                    look.round,
                    show_alpha(look.alpha)
                ),
                decided_at: Some(look),
                ..row.clone()
            };
        }
    }
}

/// A gating row that decides: regressed, improved or within its threshold.
fn decides(m: &MetricComparison) -> bool {
    m.gating
        && !m.undecided()
        && matches!(
            m.verdict,
            Verdict::Regressed | Verdict::Improved | Verdict::Unchanged
        )
}

/// Why the undecided gating row `m` of the budgeted scenario `b` was left
/// undecided, when the budget is why.
fn mark_undecided(b: &ScenarioBudget, m: &mut MetricComparison) {
    if b.stopped == Stop::Failed {
        m.advice = None;
        m.stopped_at = Some(b.rounds);
        m.reason = format!("{}; {}", m.reason, stopped_by_failure(b.rounds));
        return;
    }
    let names = |u: &&Undecidable| u.names(&m.client, m.server.as_deref(), &m.metric);
    if let Some(u) = b.undecidable.iter().find(names) {
        // A share of 0 s: no budget, `max_rounds` alone bounded the rounds.
        let why = if b.share_s > 0.0 {
            format!(
                "undecidable within the budget: at the look after round {}, the {} rounds its share could buy in all (at most max_rounds) were unlikely to decide it, so it stopped drawing rounds",
                u.round, u.within
            )
        } else {
            format!(
                "undecidable within max_rounds: at the look after round {}, the {} rounds allowed in all were unlikely to decide it, so it stopped drawing rounds",
                u.round, u.within
            )
        };
        m.reason = format!("{}; {why}", m.reason);
        m.undecidable = Some(why);
    }
}

/// What a metric left undecided by its scenario's failure says: `stopped at
/// round 8: the scenario failed`.
pub fn stopped_by_failure(round: u32) -> String {
    format!("stopped at round {round}: the scenario failed")
}

/// `current` narrowed to `scenario`'s cells and their trials up to round
/// `round`: what the run had when it looked after that round.
fn rounds_up_to(current: &RunResults, scenario: &str, round: u32) -> RunResults {
    let results = current
        .results
        .iter()
        .filter(|c| c.scenario == scenario)
        .map(|c| {
            let trials: Vec<_> = c
                .trials
                .iter()
                .filter(|t| t.round <= round)
                .cloned()
                .collect();
            CellResult {
                summary: crate::results::summarize(&trials),
                trials,
                ..c.clone()
            }
        })
        .collect();
    RunResults {
        results,
        budget: Vec::new(),
        ..current.clone()
    }
}

/// What the method says when scenarios were judged as their looks under
/// `[run] budget` settled them.
pub(super) fn note(looked: &HashMap<&str, GateConfig>) -> Option<String> {
    if looked.is_empty() {
        return None;
    }
    let alphas = looked.values().map(|g| g.alpha);
    let low = alphas.clone().fold(f64::INFINITY, f64::min);
    let high = alphas.fold(0.0, f64::max);
    let at = if (high - low).abs() < 1e-12 {
        format!("alpha = {}", show_alpha(low))
    } else {
        format!("alpha {} to {}", show_alpha(low), show_alpha(high))
    };
    Some(format!(
        "; under [run] budget the evidence was looked at during the run at planned rounds only, alpha split across the looks: a gating metric decided at a look keeps that look's decision, interval and alpha, the rest of {} scenario(s) judged at their last look's {at}",
        looked.len()
    ))
}

#[cfg(test)]
#[path = "settled_tests.rs"]
mod tests;
