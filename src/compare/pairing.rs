//! What each cell of the current run is compared with. The comparison mode
//! ([`ComparisonMode`]) is one enum from the plan (`plan::ComparisonPlan`
//! decides it once) through the comparison to every renderer, serialized as
//! the comparison's `mode`, and matched with `match` only: what the rest of
//! the code asks of it is a method here (tests/house/mode_matches.rs). One
//! [`Pairing`] per comparison (the mode and what it pairs with) answers the
//! one cell loop ([`super::compare_cells`]): each cell's baseline side,
//! whether the comparison measured nothing, the evidence per metric.

use serde::{Deserialize, Serialize};

use crate::config::base_variants::BASE_SUFFIX;
use crate::config::gate::{GateConfig, MetricGate};
use crate::metric::{MetricDef, METRICS};
use crate::results::{jmh, profile, CellIndex, CellResult, RunResults};

use super::anchor::{self, Anchoring};
use super::cells::{all_failed, all_starved, cell_values, paired_values, Cell};
use super::verdict::Evidence;
use super::{failed_reason, gate_for, starved_reason};

/// What a comparison pairs; serialized as `baseline`, `side_by_side`,
/// `base_vs_head`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonMode {
    /// The same cell of a stored run: independent samples; the anchored
    /// figures may gate in place of the raw ones (`anchor`), and
    /// environments and load profiles must match.
    Baseline,
    /// Another client and/or server of the same run ([`SideBySide`]), paired
    /// by round (the anchor cancels in pairs).
    SideBySide,
    /// Each cell against its own build at the base commit, in the same run,
    /// paired by round.
    BaseVsHead,
}

/// How the reports state a comparison within one run: the terminal's
/// "{name} in RUN{terminal}, paired by round", the markdown's "{markdown} in
/// the same run, RUN, paired by round."
pub struct WithinRun {
    pub name: &'static str,
    pub terminal: &'static str,
    pub markdown: &'static str,
}

impl ComparisonMode {
    /// Whether the two sides come from one run, paired by round.
    pub fn paired(self) -> bool {
        self.within_run().is_some()
    }

    /// `None`: two runs (the reports name the baseline run).
    pub fn within_run(self) -> Option<WithinRun> {
        match self {
            ComparisonMode::Baseline => None,
            ComparisonMode::SideBySide => Some(WithinRun {
                name: "side by side",
                terminal: "",
                markdown: "Side by side: each client against its baseline client",
            }),
            ComparisonMode::BaseVsHead => Some(WithinRun {
                name: "base vs head",
                terminal: ": each against its base commit's build",
                markdown: "Base vs head: each client and server of the repository against its own build at the base commit (`NAME@base`)",
            }),
        }
    }
}

/// What the current run's cells are compared with: the mode, and its baseline.
#[derive(Debug, Clone, Copy)]
pub struct Pairing<'a> {
    pub mode: ComparisonMode,
    /// [`ComparisonMode::Baseline`]: the stored run (`None`: nothing stored:
    /// every metric `no_baseline`).
    pub stored: Option<&'a RunResults>,
    /// [`ComparisonMode::SideBySide`]: the baseline side.
    pub sides: SideBySide<'a>,
}

impl<'a> Pairing<'a> {
    /// The stored run compared with (`Some(None)`: none stored); `None`: the
    /// mode compares within the run.
    pub fn stored(&self) -> Option<Option<&'a RunResults>> {
        match self.mode {
            ComparisonMode::Baseline => Some(self.stored),
            ComparisonMode::SideBySide | ComparisonMode::BaseVsHead => None,
        }
    }
}

/// The baseline side of a side-by-side comparison: a client (`[compare]
/// baseline_client`), a server under test (`baseline_server`), or both. What
/// is not named is the compared cell's own: with only a server, each client on
/// every other server is compared with the same client on that server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SideBySide<'a> {
    pub client: Option<&'a str>,
    pub server: Option<&'a str>,
}

impl SideBySide<'_> {
    /// The (client, server) of `cell`'s baseline cell; `None` when `cell` is
    /// itself a baseline cell.
    fn base_of(&self, cell: &CellResult) -> Option<(String, Option<String>)> {
        let client = self.client.unwrap_or(&cell.client);
        let server = self.server.or(cell.server.as_deref());
        if client == cell.client && server == cell.server.as_deref() {
            return None; // a baseline cell
        }
        Some((client.to_string(), server.map(str::to_string)))
    }
}

/// Base vs head: the (client, server) of `cell`'s own build at the base
/// commit, client `X@base` where the run has it, server `S@base` where it has
/// that; `None` for a base-side cell, and for a cell with neither (a built-in
/// client on the reference server): reported, it gates nothing.
fn base_twin(cell: &CellResult, run: &CellIndex<'_>) -> Option<(String, Option<String>)> {
    let server = cell.server.as_deref();
    if cell.client.ends_with(BASE_SUFFIX) || server.is_some_and(|s| s.ends_with(BASE_SUFFIX)) {
        return None; // a base-side cell
    }
    let client_v = format!("{}{BASE_SUFFIX}", cell.client);
    let server_v = server.map(|s| format!("{s}{BASE_SUFFIX}"));
    let has_client_v = run.has_client(&client_v);
    let has_server_v = server_v.as_deref().is_some_and(|v| run.has_server(v));
    if !has_client_v && !has_server_v {
        return None; // nothing of it lives in the repository
    }
    Some((
        if has_client_v {
            client_v
        } else {
            cell.client.clone()
        },
        if has_server_v {
            server_v
        } else {
            cell.server.clone()
        },
    ))
}

/// One current cell's baseline side.
pub struct Side<'r> {
    /// The baseline side's client and server (the cell's own, stored).
    pub client: String,
    pub server: Option<String>,
    /// The baseline cell, when there is one to compare with.
    pub cell: Option<&'r CellResult>,
    /// Why a baseline cell that exists cannot be compared with (every trial
    /// of it failed): a neutral `no_baseline` on each metric.
    pub unusable: Option<String>,
}

/// What a cell's comparison rests on before any metric is looked at.
pub enum Start {
    /// Compare metric by metric.
    Measure,
    /// One `failed` row: the pull request's side measured nothing (the reason).
    Failed(String),
    /// An `inconclusive` row per gating metric: a side measured nothing, every
    /// trial of it starved by the machine (the reason).
    Unmeasured(String),
    /// Nothing to report (an anchor cell whose trials failed or starved: its
    /// scenario gates raw, its failures are in the run's output).
    Skip,
}

/// What the loop over one run's cells needs of the comparison, built once.
pub struct Context<'a> {
    pub pairing: Pairing<'a>,
    pub current: &'a RunResults,
    /// The current run's cells, indexed once for every lookup of the
    /// comparison (the baseline side's too, side by side).
    current_cells: CellIndex<'a>,
    /// A stored baseline's cells, indexed.
    stored_cells: Option<CellIndex<'a>>,
    anchoring: Anchoring,
}

impl<'a> Context<'a> {
    pub fn new(pairing: Pairing<'a>, current: &'a RunResults, gate: &GateConfig) -> Context<'a> {
        let (stored_cells, anchoring) = match pairing.stored() {
            Some(b) => (
                b.map(RunResults::index),
                b.map_or(Anchoring::Off, |b| anchor::anchoring(b, current, gate)),
            ),
            None => (None, Anchoring::Off),
        };
        Context {
            pairing,
            current,
            current_cells: current.index(),
            stored_cells,
            anchoring,
        }
    }

    /// The current run's cells.
    pub fn current_cells(&self) -> &CellIndex<'a> {
        &self.current_cells
    }

    /// The cells the baseline side comes from: the stored run's, or side by
    /// side the current run's.
    pub fn baseline_cells(&self) -> Option<&CellIndex<'a>> {
        match self.pairing.stored() {
            Some(_) => self.stored_cells.as_ref(),
            None => Some(&self.current_cells),
        }
    }

    pub fn anchoring(&self) -> &Anchoring {
        &self.anchoring
    }

    /// `cell`'s baseline side; `None`: the cell is not compared (a baseline
    /// cell itself, the anchor side by side, or a cell with no base build).
    pub fn side(&self, cell: &'a CellResult) -> Option<Side<'a>> {
        let ((client, server), twin) = match self.pairing.mode {
            ComparisonMode::Baseline => return Some(self.stored_side(cell)),
            _ if cell.anchor => return None, // the anchor: no side of any pair
            ComparisonMode::SideBySide => (self.pairing.sides.base_of(cell)?, false),
            ComparisonMode::BaseVsHead => (base_twin(cell, &self.current_cells)?, true),
        };
        let mut base = self
            .current_cells
            .get(&cell.scenario, &client, server.as_deref());
        let mut unusable = None;
        if twin && all_failed(cell).is_none() {
            // The base commit failed (its setup did not build): neutral.
            if let Some(f) = base.and_then(all_failed) {
                unusable = Some(format!(
                    "every trial of the base commit's {client} failed ({0} of {0}): {1}",
                    f.trials, f.first
                ));
                base = None;
            }
        }
        Some(Side {
            client,
            server,
            cell: base,
            unusable,
        })
    }

    /// Against a stored run: the same cell of it.
    fn stored_side(&self, cell: &'a CellResult) -> Side<'a> {
        let base = self
            .baseline_cells()
            .and_then(|b| b.get(&cell.scenario, &cell.client, cell.server.as_deref()))
            .filter(|b| b.anchor == cell.anchor);
        let unusable = base.and_then(all_failed).map(|f| {
            format!(
                "every trial of the baseline failed ({0} of {0}): {1}; nothing to compare with",
                f.trials, f.first
            )
        });
        Side {
            client: cell.client.clone(),
            server: cell.server.clone(),
            cell: base,
            unusable,
        }
    }

    /// Whether the cell measured nothing on a side the pull request is
    /// responsible for: the current cell; side by side also its baseline
    /// cell, both from the run under test. A stored baseline that failed is
    /// not the pull request's fault ([`Side::unusable`]).
    pub fn start(&self, cell: &CellResult, side: &Side<'_>) -> Start {
        let failed = match self.pairing.stored() {
            Some(_) => failed_reason(all_failed(cell), None),
            None => failed_reason(all_failed(cell), side.cell.and_then(all_failed)),
        };
        // Starved on either side, a stored one included: no one's failure,
        // and no pass either.
        let start = failed.map(Start::Failed).or_else(|| {
            starved_reason(all_starved(cell), side.cell.and_then(all_starved))
                .map(Start::Unmeasured)
        });
        match start {
            Some(_) if cell.anchor => Start::Skip,
            Some(s) => s,
            None => Start::Measure,
        }
    }

    /// The values of a row on `metric` for a cell a side of which measured
    /// nothing (`failed` or starved): each side's values, if any.
    pub fn failed_cell(&self, cell: &CellResult, side: &Side<'_>, metric: &'static str) -> Cell {
        Cell {
            metric,
            baseline: side
                .cell
                .map(|b| cell_values(b, metric))
                .unwrap_or_default(),
            current: cell_values(cell, metric),
            paired: self.pairing.mode.paired(),
        }
    }

    /// Every metric row of a measured cell: the metric, its gate, its values,
    /// the evidence, and a note that goes before its reason.
    pub fn rows(
        &self,
        cell: &CellResult,
        side: &Side<'_>,
        gate: &GateConfig,
    ) -> Vec<(Cell, MetricGate, Evidence, Option<String>)> {
        match self.pairing.stored() {
            Some(baseline) => self.stored_rows(baseline, cell, side, gate),
            None => paired_rows(cell, side, gate),
        }
    }

    fn stored_rows(
        &self,
        baseline: Option<&RunResults>,
        cell: &CellResult,
        side: &Side<'_>,
        gate: &GateConfig,
    ) -> Vec<(Cell, MetricGate, Evidence, Option<String>)> {
        let current = self.current;
        let base_cell = side.cell;
        // Each cell on its own runner: a merged file's shards ran on several.
        let cell_env_diffs = baseline
            .map(|b| profile::cell_environment_differences(b, current, &cell.scenario))
            .unwrap_or_default();
        let profile_diffs = match (baseline, base_cell) {
            (Some(b), Some(_)) => profile::profile_differences(b, current, cell),
            _ => Vec::new(),
        };
        let has_anchored = |name: &str| {
            !cell_values(cell, name).is_empty()
                && base_cell.is_some_and(|b| !cell_values(b, name).is_empty())
        };
        let mut rows = Vec::new();
        for def in METRICS {
            let gate_of = |name: &str| gate_for(gate, &cell.scenario, &cell.client, name).cloned();
            let role = if cell.anchor {
                gate_of(def.name).map(|g| anchor::anchor_cell_gate(&g))
            } else {
                self.anchoring.role(def, gate_of, has_anchored)
            };
            let Some(role) = role else {
                continue;
            };
            let cur = cell_values(cell, def.name);
            let base = base_cell.map(|b| cell_values(b, def.name));
            if cur.is_empty() && base.as_ref().is_none_or(|b| b.is_empty()) {
                continue;
            }
            let c = Cell {
                metric: def.name,
                baseline: base.unwrap_or_default(),
                current: cur,
                paired: false,
            };
            let evidence = if baseline.is_none() {
                missing(false, "no baseline run to compare with")
            } else if !cell_env_diffs.is_empty() {
                Evidence::NotComparable(cell_env_diffs.clone())
            } else if base_cell.is_none() {
                missing(
                    false,
                    if cell.server.is_some() {
                        "new in this run: the baseline run has no results for this scenario, client and server"
                    } else {
                        "new in this run: the baseline run has no results for this scenario and client"
                    },
                )
            } else if let Some(why) = &side.unusable {
                missing(false, why)
            } else if !profile_diffs.is_empty() {
                Evidence::NotComparable(profile_diffs.clone())
            } else {
                let mut evidence = c.evidence(gate);
                if let (Evidence::Measured(m), Some(b), Some(bc)) =
                    (&mut evidence, baseline, base_cell)
                {
                    m.undecidable = jmh::too_few_forks(def, (b, bc), (current, cell));
                }
                evidence
            };
            rows.push((c, role.gate, evidence, role.note));
        }
        rows
    }
}

/// The rows of a cell paired by round with its baseline cell. Paired by
/// round the anchor cancels: its figures would repeat the raw comparison
/// (`anchor`), so only the raw metrics are compared.
fn paired_rows(
    cell: &CellResult,
    side: &Side<'_>,
    gate: &GateConfig,
) -> Vec<(Cell, MetricGate, Evidence, Option<String>)> {
    let mut rows = Vec::new();
    for def in METRICS
        .iter()
        .filter(|d: &&MetricDef| d.anchored_from.is_none())
    {
        let Some(g) = gate_for(gate, &cell.scenario, &cell.client, def.name) else {
            continue;
        };
        let (c, evidence) = match side.cell {
            None => {
                let cur = cell_values(cell, def.name);
                if cur.is_empty() {
                    continue;
                }
                let base_client = &side.client;
                let reason = match (&side.unusable, side.server.as_deref()) {
                    (Some(failed), _) => failed.clone(),
                    (None, None) => format!(
                        "scenario {:?} has no results for the baseline client {base_client:?}",
                        cell.scenario
                    ),
                    (None, Some(server)) => format!(
                        "scenario {:?} has no results for the baseline client {base_client:?} on server {server:?}",
                        cell.scenario
                    ),
                };
                let c = Cell {
                    metric: def.name,
                    baseline: Vec::new(),
                    current: cur,
                    paired: true,
                };
                (c, missing(false, &reason))
            }
            Some(b) => {
                let (base_all, cur_all) = (cell_values(b, def.name), cell_values(cell, def.name));
                if base_all.is_empty() && cur_all.is_empty() {
                    continue;
                }
                let (base, cur) = paired_values(b, cell, def.name);
                let c = Cell {
                    metric: def.name,
                    baseline: base,
                    current: cur,
                    paired: true,
                };
                let evidence = if base_all.is_empty() {
                    missing(false, "the baseline client did not measure this metric")
                } else if cur_all.is_empty() {
                    missing(true, "no successful trial of this client measured it")
                } else if c.current.is_empty() {
                    Evidence::Unmeasured(format!(
                        "no round has a counted trial of both sides (the baseline's in {} of {} rounds, this one's in {} of {}; the others starved or failed)",
                        base_all.len(),
                        b.trials.len(),
                        cur_all.len(),
                        cell.trials.len()
                    ))
                } else {
                    c.evidence(gate)
                };
                (c, evidence)
            }
        };
        rows.push((c, g.clone(), evidence, None));
    }
    rows
}

fn missing(current_lacks: bool, reason: &str) -> Evidence {
    Evidence::Missing {
        current_lacks,
        reason: reason.to_string(),
    }
}
