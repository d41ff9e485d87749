//! Comparison of two runs (or two clients of one run) and the gate's verdict.
//! Pure: no I/O.
//!
//! - [`compare`]: baseline mode. Each (scenario, client) of the current run
//!   against the same cell of a baseline run: independent samples (one value
//!   per trial, a trial is one fresh process), Mann-Whitney / Hodges-Lehmann.
//! - [`compare_side_by_side`]: every other client of a scenario against
//!   `[compare] baseline_client` in the same run, paired by round (the rounds are
//!   interleaved, so a pair shares the machine's state): Wilcoxon signed-rank /
//!   Hodges-Lehmann on the per-round differences, or with `[gate] paired_test =
//!   "sign"` the sign test and their median. [`compare_cells`] also pairs
//!   servers under test (`baseline_server`): each client on every other
//!   server against the same client on the baseline server; and base vs head.
//!
//! Cells are keyed by (scenario, client, server); a server under test whose
//! command or url changed between two runs makes its cells not comparable.
//!
//! Ratio-scale metrics are compared as `ln(value)` (`stats` works on that scale
//! and the change is reported as `exp(shift) - 1`); metrics that can be 0 (the
//! error rate and the error counts, see
//! [`scale_of`](crate::metric::scale_of)) as raw differences, with
//! absolute thresholds. A ratio-scale cell holding a 0 falls back to raw
//! differences. The verdict rule is in `verdict`; the model in `model`; whether
//! two cells can be compared at all in `results::profile`.
//!
//! A cell with trials and no successful trial measured nothing. Where the pull
//! request is responsible for it (the current cell; side by side, the
//! compared cell or its baseline cell, both from the run under test) it gets
//! one `failed` row, on its primary gated metric ([`primary_gate`]), instead
//! of one row per metric: one failure, counted once, that fails the gate. A
//! stored baseline whose cell failed is not the pull request's fault: its
//! metrics are `no_baseline`, as for a missing cell. A cell with no trial
//! that counts because the machine starved them, on either side (a stored
//! baseline's included), is no one's failure and no pass: each gating metric
//! its trials recorded is `inconclusive`, saying so ([`all_starved`]).

pub mod advice;
mod anchor;
pub mod calibrate;
pub mod changepoint;
pub mod drift;
pub mod looks;
pub mod model;
pub mod stats;
pub mod verdict;

mod cells;
mod lacking;
mod pairing;
pub mod settled;
mod validity;

pub use advice::{Advice, ROUNDS_CAP};
pub use model::*;

use std::collections::HashMap;

use crate::config::gate::{
    GateConfig, InconclusivePolicy, MetricGate, MissingBaseline, NotComparablePolicy, PairedTest,
};
use crate::metric::METRICS;
use crate::results::{profile, CellIndex, CellResult, RunResults};

pub use cells::{all_failed, all_starved, AllFailed, AllStarved};
use cells::{cell_values, Cell};
pub use pairing::{ComparisonMode, Pairing, SideBySide, WithinRun};
use pairing::{Context, Start};
use verdict::Evidence;

/// Version of the comparison document layout ([`Comparison::schema_version`]).
pub const COMPARISON_SCHEMA_VERSION: u32 = 1;

/// The gate that applies to `metric` in the cell (`scenario`, `client`): the
/// `[gate]` entry (or its default), replaced by every matching override in
/// order (an override's scenario may be a glob, `config::glob`).
/// `None`: the metric is not compared.
pub fn gate_for<'a>(
    config: &'a GateConfig,
    scenario: &str,
    client: &str,
    metric: &str,
) -> Option<&'a MetricGate> {
    let mut gate = config.metrics.iter().find(|g| g.metric == metric);
    for o in &config.overrides {
        let applies = o
            .scenario
            .as_deref()
            .is_none_or(|s| crate::config::glob::matches(s, scenario))
            && o.client.as_deref().is_none_or(|c| c == client);
        if applies {
            if let Some(g) = o.metrics.iter().find(|g| g.metric == metric) {
                gate = Some(g);
            }
        }
    }
    gate
}

/// The metric a cell with no successful trial is reported on: its first
/// gating metric in `METRICS` order, else its first compared one (`None`:
/// nothing of the cell is compared).
pub fn primary_gate<'a>(
    config: &'a GateConfig,
    scenario: &str,
    client: &str,
) -> Option<(&'static str, &'a MetricGate)> {
    let gates = || {
        METRICS
            .iter()
            .filter_map(|d| Some((d.name, gate_for(config, scenario, client, d.name)?)))
    };
    gates().find(|(_, g)| g.gating).or_else(|| gates().next())
}

/// The gating metrics of a cell a side of which measured nothing (every
/// trial starved): those a trial of either side recorded, counted or not,
/// else its primary gate.
fn unmeasured_gates<'a>(
    config: &'a GateConfig,
    sides: &[Option<&CellResult>],
    scenario: &str,
    client: &str,
) -> Vec<(&'static str, &'a MetricGate)> {
    let recorded = |name: &str| {
        let trials = sides.iter().flatten().flat_map(|c| &c.trials);
        trials
            .filter_map(|t| t.metrics.as_ref()?.get(name))
            .any(f64::is_finite)
    };
    let gates: Vec<_> = METRICS
        .iter()
        .filter(|d| d.anchored_from.is_none() && recorded(d.name))
        .filter_map(|d| Some((d.name, gate_for(config, scenario, client, d.name)?)))
        .filter(|(_, g)| g.gating)
        .collect();
    if gates.is_empty() {
        return primary_gate(config, scenario, client).into_iter().collect();
    }
    gates
}

/// Why a comparison measured nothing, when the current cell (`current`) or
/// its baseline cell in the same run (`baseline`, side by side) has no
/// successful trial: the count and the first failure line.
fn failed_reason(current: Option<AllFailed>, baseline: Option<AllFailed>) -> Option<String> {
    Some(match (current, baseline) {
        (Some(c), None) => format!("every trial failed ({0} of {0}): {1}", c.trials, c.first),
        (Some(c), Some(b)) => format!(
            "every trial failed ({0} of {0}), as did every trial of the baseline ({1} of {1}): {2}",
            c.trials, b.trials, c.first
        ),
        (None, Some(b)) => format!(
            "every trial of the baseline failed ({0} of {0}): {1}",
            b.trials, b.first
        ),
        (None, None) => return None,
    })
}

/// Why a comparison measured nothing that anyone failed: every trial of the
/// current cell (`current`) or of its baseline cell (`baseline`, stored or
/// in the same run) was starved by the machine.
fn starved_reason(current: Option<AllStarved>, baseline: Option<AllStarved>) -> Option<String> {
    let count = |s: &AllStarved| match s.trials - s.starved {
        0 => format!("{0} of {0}", s.trials),
        failed => format!("{} of {}, the other {failed} failed", s.starved, s.trials),
    };
    Some(match (current, baseline) {
        (Some(c), None) => format!(
            "every trial was starved by the machine ({}): {}",
            count(&c),
            c.first
        ),
        (Some(c), Some(b)) => format!(
            "every trial was starved by the machine ({}), as was every trial of the baseline ({}): {}",
            count(&c),
            count(&b),
            c.first
        ),
        (None, Some(b)) => format!(
            "every trial of the baseline was starved by the machine ({}): {}",
            count(&b),
            b.first
        ),
        (None, None) => return None,
    })
}

/// Baseline mode: `current` against `baseline` (`None`: no baseline, every metric
/// is `no_baseline` and `[gate] missing_baseline` decides the exit code).
///
/// Counts: `regressions` are metrics that fail the gate as regressed,
/// `improvements` metrics judged improved, `warnings` metrics at tier `warn`
/// (warn-tier regressions, inconclusive gating metrics, not comparable). A
/// current cell without a successful trial is one `failed` row and fails the
/// gate, with or without a baseline.
pub fn compare(
    baseline: Option<&RunResults>,
    current: &RunResults,
    gate: &GateConfig,
) -> Comparison {
    let pairing = Pairing {
        mode: ComparisonMode::Baseline,
        stored: baseline,
        sides: SideBySide::default(),
    };
    compare_cells(pairing, current, gate)
}

/// Side-by-side mode: in one run, every client of each scenario against
/// `baseline_client`, paired by round. Cells of scenarios that do not run
/// `baseline_client` are `no_baseline`.
pub fn compare_side_by_side(
    run: &RunResults,
    baseline_client: &str,
    gate: &GateConfig,
) -> Comparison {
    let sides = SideBySide {
        client: Some(baseline_client),
        server: None,
    };
    let pairing = Pairing {
        mode: ComparisonMode::SideBySide,
        stored: None,
        sides,
    };
    compare_cells(pairing, run, gate)
}

/// `current` compared under any [`Pairing`]: the one loop over cells, each
/// cell with its baseline side, a `failed` row when it measured nothing
/// (side by side: either cell of a pair, both the run under test), else a
/// row per compared metric; then the baseline's cells this run lacks, the
/// validity guard and the outcome.
pub fn compare_cells(pairing: Pairing<'_>, current: &RunResults, gate: &GateConfig) -> Comparison {
    let ctx = Context::new(pairing, current, gate);
    let looked = settled::last_looks(current, gate);
    let mut metrics = cell_rows(&ctx, gate, &looked);
    settled::settle(pairing, current, gate, &mut metrics);
    let stored = pairing.stored();
    if let Some(Some(b)) = stored {
        missing_cells(b, current, ctx.current_cells(), gate, &mut metrics);
    }
    lacking::count(&mut metrics, ctx.current_cells(), ctx.baseline_cells());
    validity::guard(
        &mut metrics,
        ctx.current_cells(),
        ctx.baseline_cells(),
        gate,
    );
    let this = run_ref(current);
    // What differs by pairing: the test, the baseline run, the environments.
    let (test, baseline_run, env_diffs, no_baseline_run) = match stored {
        Some(baseline) => (
            None,
            baseline.map(run_ref),
            baseline
                .map(|b| {
                    let mut d =
                        profile::environment_differences(&b.environment, &current.environment);
                    d.extend(profile::protocol_differences(
                        &b.config.run,
                        &current.config.run,
                    ));
                    d
                })
                .unwrap_or_default(),
            baseline.is_none(),
        ),
        None => (
            Some(gate.paired_test),
            Some(this.clone()),
            Vec::new(),
            false,
        ),
    };
    let mut cmp = finish(
        pairing.mode,
        method(test, gate.alpha),
        baseline_run,
        this,
        env_diffs,
        no_baseline_run,
        metrics,
        gate,
    );
    if let Some(stored) = stored {
        cmp.anchoring = anchor::note(ctx.anchoring(), &cmp.metrics);
        cmp.environment_changes = stored
            .map(|b| profile::environment_changes(&b.environment, &current.environment))
            .unwrap_or_default();
    }
    let iterations = |r: &RunResults| {
        r.jmh
            .as_ref()
            .is_some_and(|o| o.trials == crate::results::jmh::TrialUnit::Iterations)
    };
    cmp.optimistic = iterations(current) || matches!(stored, Some(Some(b)) if iterations(b));
    if let Some(note) = settled::note(&looked) {
        cmp.method.push_str(&note);
    }
    cmp
}

/// The rows of every cell of the run: a `failed` row for a cell that
/// measured nothing, else a row per compared metric; a scenario the run
/// looked at under `[run] budget` at its gate in `looked`.
fn cell_rows(
    ctx: &Context<'_>,
    gate: &GateConfig,
    looked: &HashMap<&str, GateConfig>,
) -> Vec<MetricComparison> {
    let max_rounds = ctx.current.config.run.max_rounds;
    let mut metrics = Vec::new();
    for cell in &ctx.current.results {
        let Some(side) = ctx.side(cell) else {
            continue;
        };
        let gate = looked.get(cell.scenario.as_str()).unwrap_or(gate);
        let base_who = (side.client.as_str(), side.server.as_deref());
        match ctx.start(cell, &side) {
            Start::Skip => {}
            Start::Failed(reason) => {
                if let Some((metric, g)) = primary_gate(gate, &cell.scenario, &cell.client) {
                    let c = ctx.failed_cell(cell, &side, metric);
                    let evidence = Evidence::Failed(reason);
                    metrics.push(c.comparison(cell, base_who, g, &evidence, gate, max_rounds));
                }
            }
            Start::Unmeasured(reason) => {
                let sides = [Some(cell), side.cell];
                for (metric, g) in unmeasured_gates(gate, &sides, &cell.scenario, &cell.client) {
                    let c = ctx.failed_cell(cell, &side, metric);
                    let evidence = Evidence::Unmeasured(reason.clone());
                    metrics.push(c.comparison(cell, base_who, g, &evidence, gate, max_rounds));
                }
            }
            Start::Measure => {
                for (c, g, evidence, note) in ctx.rows(cell, &side, gate) {
                    let mut m = c.comparison(cell, base_who, &g, &evidence, gate, max_rounds);
                    if let Some(note) = note {
                        m.reason = format!("{note}; {}", m.reason);
                    }
                    metrics.push(m);
                }
            }
        }
    }
    metrics
}

/// One `missing` row per cell of `baseline` that `current` lacks (a dropped
/// scenario, a truncated or unfinished run), on the cell's primary gate, so
/// nothing the baseline measured is dropped without a word. A shard's own
/// file is held only to the scenarios it ran.
fn missing_cells(
    baseline: &RunResults,
    current: &RunResults,
    index: &CellIndex<'_>,
    gate: &GateConfig,
    out: &mut Vec<MetricComparison>,
) {
    let max_rounds = current.config.run.max_rounds;
    let shard_only = current.shard.as_ref().is_some_and(|s| s.index.is_some());
    let ran: std::collections::HashSet<&str> = current
        .config
        .scenarios
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    for b in &baseline.results {
        if b.anchor
            || index
                .get(&b.scenario, &b.client, b.server.as_deref())
                .is_some()
        {
            continue;
        }
        if shard_only && !ran.contains(b.scenario.as_str()) {
            continue;
        }
        let Some((metric, g)) = primary_gate(gate, &b.scenario, &b.client) else {
            continue;
        };
        let reason = format!(
            "missing from this run: the baseline measured {} in scenario {:?}{}, this run did not ([gate] missing_cell = \"{}\")",
            crate::results::client_label(&b.client, None),
            b.scenario,
            b.server
                .as_deref()
                .map_or(String::new(), |s| format!(" on server {s:?}")),
            gate.missing_cell.name()
        );
        let c = Cell {
            metric,
            baseline: cell_values(b, metric),
            current: Vec::new(),
            paired: false,
        };
        let same = (b.client.as_str(), b.server.as_deref());
        out.push(c.comparison(
            b,
            same,
            g,
            &Evidence::MissingFromRun(reason),
            gate,
            max_rounds,
        ));
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    mode: ComparisonMode,
    method: String,
    baseline_run: Option<RunRef>,
    current_run: RunRef,
    environment_differences: Vec<String>,
    no_baseline_run: bool,
    metrics: Vec<MetricComparison>,
    gate: &GateConfig,
) -> Comparison {
    let count =
        |f: &dyn Fn(&MetricComparison) -> bool| metrics.iter().filter(|m| f(m)).count() as u32;
    let any_fail = metrics.iter().any(|m| m.tier == Tier::Fail);
    // A cell that measured nothing fails whatever else is true of the runs.
    let any_failed = metrics.iter().any(|m| m.verdict == Verdict::Failed);
    let all_missing =
        !metrics.is_empty() && metrics.iter().all(|m| m.verdict == Verdict::NoBaseline);
    let gating_not_comparable = metrics
        .iter()
        .any(|m| m.gating && m.verdict == Verdict::NotComparable);
    let undecided = metrics
        .iter()
        .any(|m| m.undecided() || m.verdict == Verdict::Missing);
    let outcome = if any_failed {
        GateOutcome::Fail
    } else if no_baseline_run || all_missing {
        GateOutcome::NoBaseline
    } else if !environment_differences.is_empty() {
        GateOutcome::NotComparable
    } else if any_fail {
        GateOutcome::Fail
    } else if gating_not_comparable {
        GateOutcome::NotComparable
    } else if undecided {
        GateOutcome::Inconclusive
    } else {
        GateOutcome::Pass
    };
    let policy_fails = match outcome {
        GateOutcome::NoBaseline => gate.missing_baseline == MissingBaseline::Fail,
        GateOutcome::NotComparable => gate.not_comparable == NotComparablePolicy::Fail,
        GateOutcome::Inconclusive => gate.inconclusive == InconclusivePolicy::Fail,
        _ => false,
    };
    Comparison {
        schema_version: COMPARISON_SCHEMA_VERSION,
        mode,
        method,
        baseline_run,
        current_run,
        environment_differences,
        environment_changes: Vec::new(),
        outcome,
        exit_code: u8::from(any_fail || policy_fails),
        regressions: count(&|m| m.verdict == Verdict::Regressed && m.tier == Tier::Fail),
        improvements: count(&|m| m.verdict == Verdict::Improved),
        // Informative metrics carry no tier in any report, so they count
        // as no warning either.
        warnings: count(&|m| m.tier == Tier::Warn && (m.gating || m.verdict == Verdict::Missing)),
        anchoring: None,
        inconclusive_policy: gate.inconclusive,
        optimistic: false,
        metrics,
    }
}

/// The method line of a report: the test (`paired`: the `[gate] paired_test`
/// of a comparison paired by round; `None`: independent samples) and the rule.
fn method(paired: Option<PairedTest>, alpha: f64) -> String {
    let test = match paired {
        Some(PairedTest::SignedRank) => {
            "Wilcoxon signed-rank test on per-round differences, paired by round (exact \
         conditional distribution up to 50 pairs) with the Hodges-Lehmann estimate from \
         Walsh averages and its distribution-free interval (Hollander, Wolfe & Chicken, \
         Nonparametric Statistical Methods, ch. 3)"
        }
        Some(PairedTest::Sign) => {
            "sign test on per-round differences, paired by round (exact binomial \
             distribution up to 50 nonzero pairs, zero differences dropped) with the \
             median of the differences and its order-statistic interval (Hollander, Wolfe \
             & Chicken, Nonparametric Statistical Methods, sections 3.4-3.6)"
        }
        None => {
            "Mann-Whitney U test (exact conditional distribution up to 50 trials a side, else \
         normal approximation with tie correction) with the Hodges-Lehmann shift and its \
         distribution-free interval (Hollander, Wolfe & Chicken, Nonparametric Statistical \
         Methods, ch. 4)"
        }
    };
    format!(
        "{test}, on ln(value) per trial (error rate and error counts: absolute differences); \
         a metric regresses when significant at alpha = {alpha} and its whole interval is \
         beyond the threshold (criterion.rs rule)"
    )
}

fn run_ref(r: &RunResults) -> RunRef {
    RunRef {
        run_id: r.run_id.clone(),
        started_at: r.started_at.clone(),
        git_sha: r.git.sha.clone(),
        git_ref: r.git.ref_name.clone(),
    }
}

#[cfg(test)]
mod server_tests;
#[cfg(test)]
mod spread_tests;
#[cfg(test)]
mod tests;
