//! Drift: the change points ([`changepoint`]) of each gating metric's history
//! per cell. Pure: it takes the stored runs, oldest first, and the gate that
//! says which metrics gate.
//!
//! A cell's series is its median per run (`summary.<metric>.median`), in the
//! order the runs were stored; a run without the cell, or without a finite
//! median of the metric, is left out of the series (the change point still
//! names the run it starts at). A cell **drifts** when its newest change
//! point moved the metric in its bad direction (the registry's
//! [`Direction`]) by more than the metric's warn threshold (its fail
//! threshold without one; [`worse_than`], the gate's own rule for a
//! change beyond the noise band): a later change back ends the drift. So a
//! significant shift of p99 by 6% of 250 µs is a change point but not drift
//! (its default gate's floor is 2 ms), as it would not warn in a pull request.
//!
//! A change point where the environment fingerprint moved (the run before it
//! and the run it starts at were measured on machines that differ: CPU,
//! cores, kernel, runner image, governor, versions;
//! [`fingerprint_moves`]) is marked with what moved, and is not drift: a new
//! runner image is not a regression in the code.

use std::collections::BTreeSet;

use super::changepoint::{change_points, ChangePoint, Options};
use super::gate_for;
use super::verdict::worse_than;
use crate::config::GateConfig;
use crate::metric::METRICS;
use crate::metric::{metric_def, Direction};
use crate::results::profile::fingerprint_moves;
use crate::results::RunResults;

/// One gating metric's history in one cell, and its change points.
#[derive(Debug, Clone, PartialEq)]
pub struct CellHistory {
    pub scenario: String,
    pub client: String,
    /// The server under test; `None`: the reference server.
    pub server: Option<String>,
    pub metric: String,
    /// `(run, median)`: the index of the run in the history and the cell's
    /// median then, oldest first.
    pub values: Vec<(usize, f64)>,
    /// In order of position.
    pub shifts: Vec<Shift>,
}

/// One change point of a cell's history.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// Its position in [`CellHistory::values`] (the first value after it).
    pub point: ChangePoint,
    /// The index of the run it starts at, in the history.
    pub run: usize,
    /// The mean after is worse than the mean before, by the metric's direction.
    pub worse: bool,
    /// Worse by more than the metric's warn threshold (its fail threshold
    /// without one), as a pull request's verdict would need to warn.
    pub past_warn: bool,
    /// What moved in the environment fingerprint between the run before the
    /// change and the run it starts at; empty: the same machine.
    pub environment: Vec<String>,
}

impl Shift {
    /// The environment fingerprint moved at this change point.
    pub fn environment_moved(&self) -> bool {
        !self.environment.is_empty()
    }
}

impl CellHistory {
    /// The newest change point is a change for the worse, past the warn
    /// threshold, on an unchanged environment.
    pub fn drifting(&self) -> bool {
        self.shifts
            .last()
            .is_some_and(|s| s.worse && s.past_warn && !s.environment_moved())
    }

    /// Each value's segment mean (between its neighbouring change points),
    /// aligned with [`CellHistory::values`]: the levels a chart draws.
    pub fn segment_means(&self) -> Vec<f64> {
        let n = self.values.len();
        let mut out = Vec::with_capacity(n);
        for s in &self.shifts {
            out.resize(s.point.index.min(n), s.point.mean_before);
        }
        let last = match self.shifts.last() {
            Some(s) => s.point.mean_after,
            None => self.values.iter().map(|(_, v)| v).sum::<f64>() / n.max(1) as f64,
        };
        out.resize(n, last);
        out
    }
}

/// The history of every gating metric (by `gate`, per cell) of every cell
/// in `runs` (oldest first), cells in name order, metrics in registry order,
/// with its change points.
pub fn histories(runs: &[&RunResults], gate: &GateConfig, opts: Options) -> Vec<CellHistory> {
    let mut out = gating_series(runs, gate);
    for c in &mut out {
        let Some(g) = gate_for(gate, &c.scenario, &c.client, &c.metric) else {
            continue;
        };
        let band = g.warn.or(g.fail);
        let direction = metric_def(&c.metric).map_or(Direction::LowerIsBetter, |d| d.direction);
        let series: Vec<f64> = c.values.iter().map(|(_, v)| *v).collect();
        c.shifts = change_points(&series, opts)
            .into_iter()
            .map(|point| {
                let (relative, absolute) = worse_by(direction, point.mean_before, point.mean_after);
                let run = c.values[point.index].0;
                // The series' run before the change point (a change point
                // has values on both sides).
                let before = c.values[point.index.saturating_sub(1)].0;
                Shift {
                    run,
                    worse: absolute > 0.0,
                    past_warn: band.is_none_or(|t| worse_than(&t, relative, absolute)),
                    environment: fingerprint_moves(
                        runs[before].environment_of(&c.scenario),
                        runs[run].environment_of(&c.scenario),
                    ),
                    point,
                }
            })
            .collect();
    }
    out
}

/// The series of every gating metric of every cell in `runs` (oldest
/// first), as [`histories`] orders them, without change points: what a
/// trend chart draws.
pub fn gating_series(runs: &[&RunResults], gate: &GateConfig) -> Vec<CellHistory> {
    let cells: BTreeSet<(&str, &str, Option<&str>)> = runs
        .iter()
        .flat_map(|r| &r.results)
        .map(|c| (c.scenario.as_str(), c.client.as_str(), c.server.as_deref()))
        .collect();
    let mut out = Vec::new();
    for (scenario, client, server) in cells {
        for def in METRICS {
            if !gate_for(gate, scenario, client, def.name).is_some_and(|g| g.gating) {
                continue;
            }
            let values: Vec<(usize, f64)> = runs
                .iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let cell = r.results.iter().find(|c| {
                        c.scenario == scenario
                            && c.client == client
                            && c.server.as_deref() == server
                    })?;
                    let v = cell.summary.get(def.name)?.median;
                    v.is_finite().then_some((i, v))
                })
                .collect();
            if values.is_empty() {
                continue;
            }
            out.push(CellHistory {
                scenario: scenario.to_string(),
                client: client.to_string(),
                server: server.map(str::to_string),
                metric: def.name.to_string(),
                values,
                shifts: Vec::new(),
            });
        }
    }
    out
}

/// The change from `before` to `after`, relative and absolute, in
/// "worse-by" coordinates (positive is worse for `direction`); from 0, any
/// worsening is infinitely relative.
fn worse_by(direction: Direction, before: f64, after: f64) -> (f64, f64) {
    let absolute = match direction {
        Direction::LowerIsBetter => after - before,
        Direction::HigherIsBetter => before - after,
    };
    let relative = match before.abs() {
        b if b > 0.0 => absolute / b,
        _ if absolute == 0.0 => 0.0,
        _ => f64::INFINITY * absolute.signum(),
    };
    (relative, absolute)
}

#[cfg(test)]
#[path = "drift_tests.rs"]
mod tests;
