//! The rounds of one scenario: every client's trials, interleaved, against the
//! reference server (one process for the whole run) or against each server
//! under test (`[[server]]`: started fresh for every round, the servers' order
//! alternating by round, A B then B A, so drift hits both alike).
//!
//! Against the reference server the order of the scenario's cells (its
//! clients, base-vs-head twins `NAME@base` among them) is counterbalanced
//! ([`round_order`]): two cells alternate, A B then B A; more cells also
//! rotate, so that every pair of cells runs in both orders in every two
//! rounds and every cell takes every position. Whatever a position does to a
//! trial (the previous trial's leftovers, a cache, the clock) then enters the
//! paired comparisons with both signs. Cells are still written in config
//! order; each trial's `started_at` records the order it ran in.
//!
//! With `[run] anchor = true` every round against the reference server starts
//! with one trial of the anchor (`config::anchor`), and once the round's
//! trials are in, each gets its anchored figures from it (`results::anchor`).
//! The anchor stays first in every round (outside the counterbalancing): it is
//! the round's yardstick, not a side of any comparison.

mod cell;
mod extra;
mod pair;
mod servers;
mod side;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context as _};

use super::budget::Spend;
use super::command;
use super::command_loop::Broken;
use super::driver::TrialSpec;
use super::extend::Extend;
use super::progress::Progress;
use super::server_proc::ServerProcess;
use super::target::Target;
use super::trial::{self, Latencies};
use crate::config::{ClientKind, Driver, Scenario, Schedule, StopRule, Suite};
use crate::interrupt;
use crate::metric::TrialMetrics;
use crate::results::environment::Pinning;
use crate::results::{validity, CellResult, RunResults, Trial};
use cell::CellAcc;

/// What every trial of a run shares.
pub(super) struct Rounds<'a> {
    pub suite: &'a Suite,
    pub exe: &'a Path,
    pub pinning: &'a Pinning,
    /// A duet's two lanes of CPUs, each with its reference server (the
    /// run's servers in the same order); set exactly when the schedule is
    /// `duet`, so a paired round runs as a duet by it.
    pub lanes: Option<&'a [Vec<usize>; 2]>,
    /// Runtime threads for async drivers.
    pub client_threads: usize,
    pub scratch: &'a Path,
    /// Base-side twins of command clients whose setup step failed (the base
    /// commit does not build: no baseline), with the reason; a head client's
    /// failed setup stopped the run before the rounds.
    pub setup_failed: &'a BTreeMap<String, String>,
    /// Servers under test whose setup step failed, with the reason: every
    /// round on them fails.
    pub server_setup_failed: &'a BTreeMap<String, String>,
    pub quiet: bool,
    /// Extra rounds while a comparison is inconclusive (`[run] max_rounds`).
    pub extend: Option<&'a Extend>,
    /// The run's environment and config, for those comparisons.
    pub header: &'a RunResults,
    /// Where a failed driver's whole output is kept (created on first use).
    pub logs: &'a Path,
    /// The test knob [`crate::knobs::MARKER_LAG_VAR`] (command clients).
    pub marker_lag: Option<std::time::Duration>,
    /// The test knob [`crate::knobs::CLOSE_LAG_VAR`] (command clients).
    pub close_lag: Option<std::time::Duration>,
}

impl Rounds<'_> {
    /// Trials in the whole run, for the progress bar.
    pub fn total_trials(&self) -> u64 {
        let anchor = usize::from(self.suite.run.anchor.is_some());
        let per_round: usize = self
            .suite
            .scenarios
            .iter()
            .map(|s| s.clients.len() + anchor)
            .sum();
        (per_round * self.suite.run.rounds as usize * self.suite.servers.len().max(1)) as u64
    }

    /// One scenario against the reference server (a duet's: one per lane,
    /// the first serving rounds not run as a duet): one cell per client.
    pub fn reference(
        &self,
        scenario: &Scenario,
        servers: &[ServerProcess],
        progress: &mut Progress,
        mut spend: Option<&mut Spend>,
    ) -> Vec<CellResult> {
        let targets: Vec<Target> = servers.iter().map(Target::reference).collect();
        let target = &targets[0];
        let mut cells: Vec<CellAcc> = scenario
            .clients
            .iter()
            .map(|c| CellAcc::new(&scenario.name, c, None))
            .collect();
        let mut anchor = self.suite.run.anchor.as_ref().map(|a| {
            (
                a.scenario_in(&scenario.name),
                CellAcc::anchor(&scenario.name),
            )
        });
        // A cell whose client's setup failed (a base commit that does not
        // build, or has no benchgate.toml yet) measures nothing: its
        // partner's forks then run alone, as in a sequential round, so the
        // head is measured and the verdict is "no baseline".
        let unbuilt = (cells.iter())
            .find(|c| self.setup_failed.contains_key(c.result.client.as_str()))
            .map(|c| c.label());
        let paired = match self.suite.run.schedule {
            Schedule::Sequential => false,
            Schedule::Interleaved | Schedule::Duet => {
                if let Some(c) = &unbuilt {
                    progress.note(&format!(
                        "benchgate: {}: {c}'s setup failed, so the other side's forks run alone, one after another",
                        scenario.name,
                    ));
                }
                unbuilt.is_none()
            }
        };
        let mut round = 0;
        // Attempts of the current round dropped because a trial was starved.
        let mut reruns = 0;
        'rounds: loop {
            if reruns == 0 {
                round += 1;
            }
            // The anchor first, then the cells; whether interrupted.
            let mut one = |s: &Scenario, cell: &mut CellAcc| {
                self.run_one(s, cell, target, round, progress, &mut || None);
                interrupt::received().is_some()
            };
            if let Some((s, cell)) = &mut anchor {
                if one(s, cell) {
                    break 'rounds;
                }
            }
            if paired {
                self.paired(scenario, &mut cells, &targets, round, progress);
                if interrupt::received().is_some() {
                    break 'rounds;
                }
            } else {
                for i in round_order(cells.len(), round) {
                    if one(scenario, &mut cells[i]) {
                        break 'rounds;
                    }
                }
            }
            // A starved trial: the whole round again (pairs stay pairs), at
            // most MAX_STARVED_RERUNS times; after that it keeps its mark. A
            // broken window loop: once more, then its fork counts as failed.
            let starved = cells
                .iter()
                .chain(anchor.as_ref().map(|(_, c)| c))
                .find_map(|c| c.starved_in(round))
                .map(|why| (why, validity::MAX_STARVED_RERUNS));
            let broken = || {
                cells
                    .iter()
                    .find_map(|c| c.broken_in(round))
                    .map(|why| (why, MAX_BROKEN_LOOP_RERUNS))
            };
            let again = starved.or_else(broken).filter(|(_, max)| reruns < *max);
            if let Some((why, max)) = again {
                reruns += 1;
                progress.note(&format!(
                    "benchgate: {} round {round}: {why}; running the round again ({reruns} of {max})",
                    scenario.name,
                ));
                for c in cells.iter_mut().chain(anchor.as_mut().map(|(_, c)| c)) {
                    c.drop_round(round);
                }
                continue;
            }
            for c in cells.iter_mut().chain(anchor.as_mut().map(|(_, c)| c)) {
                c.keep_round(round, reruns);
            }
            reruns = 0;
            if let Some((_, anchor_cell)) = &anchor {
                for cell in cells.iter_mut() {
                    let trials = &mut cell.result.trials;
                    crate::results::anchor::normalize_trials(trials, &anchor_cell.result.trials);
                }
            }
            let all = cells.iter().chain(anchor.as_ref().map(|(_, c)| c));
            if !self.another_round(round, all, progress, spend.as_deref_mut()) {
                break;
            }
        }
        cells
            .into_iter()
            .chain(anchor.map(|(_, c)| c))
            .map(CellAcc::finish)
            .collect()
    }

    /// Runs one trial and records it in the cell, failed or not. The trial
    /// fails when `server_gone` gives a reason, before or after it runs (a
    /// server under test that exited).
    fn run_one(
        &self,
        scenario: &Scenario,
        cell: &mut CellAcc,
        target: &Target,
        round: u32,
        progress: &mut Progress,
        server_gone: &mut dyn FnMut() -> Option<String>,
    ) {
        progress.start(&scenario.name, &cell.label(), round);
        let trial = planned(scenario, round);
        let log = self.log_path(scenario, cell, round);
        if let Some(reason) = server_gone() {
            progress.finish_trial(None, Some(&reason));
            cell.fail(trial, reason);
            return;
        }
        // What the runner saw of the window goes into `measured`; `trial`
        // stays as planned, for a failure.
        let mut measured = trial.clone();
        let result = self.try_trial(scenario, &cell.result, target, &log, &mut measured);
        let run = Ran {
            trial,
            measured,
            result,
        };
        self.record(scenario, cell, target, run, progress, server_gone);
    }

    /// Where the failed trial of `cell` in round `round` keeps its output.
    fn log_path(&self, scenario: &Scenario, cell: &CellAcc, round: u32) -> std::path::PathBuf {
        super::failure::log_path(
            self.logs,
            &scenario.name,
            &cell.result.client,
            cell.result.server.as_deref(),
            round,
        )
    }

    /// Records a trial that ran in `cell`, failed or not: its validity
    /// marks, its latencies (pending until the round is kept), or its
    /// failure (a broken window loop's noted for a rerun of the round).
    fn record(
        &self,
        scenario: &Scenario,
        cell: &mut CellAcc,
        target: &Target,
        ran: Ran,
        progress: &mut Progress,
        server_gone: &mut dyn FnMut() -> Option<String>,
    ) {
        let Ran {
            trial,
            measured,
            result,
        } = ran;
        let round = trial.round;
        match result {
            Ok((metrics, latencies)) => {
                if let Some(reason) = server_gone() {
                    progress.finish_trial(None, Some(&reason));
                    cell.fail(trial, reason);
                    return;
                }
                progress.finish_trial(Some(&metrics), None);
                let mut invalid =
                    validity::assess(&scenario.load, &metrics, self.placement(target));
                // A built-in driver opens and closes the server's window
                // itself, so the server's length of it is the driver's; a
                // command client's is bracketed by the parent reading its
                // markers, whose own lag would read as starvation.
                let command = self
                    .suite
                    .client(&cell.result.client)
                    .is_some_and(|c| c.kind.driver() == Driver::Program);
                let starved = validity::starved(
                    &metrics,
                    measured.window_planned_s,
                    measured
                        .server
                        .as_ref()
                        .filter(|_| !command)
                        .map(|s| s.window_secs),
                );
                match starved {
                    // Its latencies describe the neighbour: kept out of the
                    // cell's histograms too.
                    Some(mark) => invalid.push(mark),
                    None => cell.pending.push(latencies),
                }
                cell.result.trials.push(Trial {
                    metrics: Some(metrics),
                    invalid,
                    ..measured
                });
            }
            Err(e) => {
                // A trial that fails once a signal arrived was cut short by it
                // (killed, or its server gone with Ctrl-C).
                let reason = match interrupt::received() {
                    Some(signal) => signal.reason(),
                    None => format!("{e:#}"),
                };
                progress.finish_trial(None, Some(&reason));
                if interrupt::received().is_none() && e.is::<Broken>() {
                    cell.broken.push(round);
                }
                cell.fail(trial, reason);
            }
        }
    }

    /// Where a trial against `target` runs, for the validity guard: the cores
    /// of the pinning plan, or every core when nothing is pinned.
    fn placement(&self, target: &Target) -> validity::Placement {
        let all = self.header.environment.cores as usize;
        let cores = |pinned: &[usize]| {
            if self.pinning.enabled {
                pinned.len()
            } else {
                all
            }
        };
        validity::Placement {
            server_under_test: target.name.is_some(),
            client_cores: cores(&self.pinning.client_cpus),
            server_cores: cores(&self.pinning.server_cpus),
        }
    }

    /// One trial of `cell`'s client (the anchor's, for the anchor's cell),
    /// `trial` as [`planned`] began it; what it saw of its window goes into
    /// `trial` once it measured.
    fn try_trial(
        &self,
        scenario: &Scenario,
        cell: &CellResult,
        target: &Target,
        log: &Path,
        trial: &mut Trial,
    ) -> anyhow::Result<(TrialMetrics, Latencies)> {
        let spec = self.spec(scenario, cell, target, trial.round)?;
        let cpus = &self.pinning.client_cpus;
        match &spec.client.kind {
            ClientKind::Command(cmd) => {
                command::run_trial(cmd, &spec, target, cpus, self.scratch, log, trial)
            }
            _ => trial::run_trial(self.exe, &spec, target, cpus, self.scratch, log, trial),
        }
    }

    /// What the trial of `cell`'s client (the anchor's, for the anchor's
    /// cell) in round `round` is asked to do.
    fn spec(
        &self,
        scenario: &Scenario,
        cell: &CellResult,
        target: &Target,
        round: u32,
    ) -> anyhow::Result<TrialSpec> {
        let client = cell.client.as_str();
        if let Some(reason) = self.setup_failed.get(client) {
            bail!("the client's setup step failed: {reason}");
        }
        let anchor = self.suite.run.anchor.as_ref().filter(|_| cell.anchor);
        let client = match anchor {
            Some(a) => &a.client,
            None => self.suite.client(client).with_context(|| {
                format!("scenario {} names unknown client {client}", scenario.name)
            })?,
        };
        let base_url = if client.tls {
            target
                .https_url
                .clone()
                .context("the client wants TLS but the server has no TLS port")?
        } else {
            target.http_url.clone()
        };
        Ok(TrialSpec {
            scenario: scenario.clone(),
            client: client.clone(),
            base_url,
            round,
            control_url: target.reference.map(|s| s.control_url.clone()),
            threads: self.client_threads,
            server_watch: target.watch,
            windows: self.suite.run.windows,
            marker_lag: self.marker_lag,
            close_lag: self.close_lag,
        })
    }
}

/// A trial that ran: as [`planned`] began it (what a failure records), what
/// it saw of its window, and its figures or why it failed.
struct Ran {
    trial: Trial,
    measured: Trial,
    result: anyhow::Result<(TrialMetrics, Latencies)>,
}

/// How many times a round whose window loop broke ([`Broken`]) runs again
/// before that fork counts as failed.
const MAX_BROKEN_LOOP_RERUNS: u32 = 1;

/// A trial of round `round` of `scenario` beginning now: its round, start
/// time and planned window, nothing measured yet.
fn planned(scenario: &Scenario, round: u32) -> Trial {
    Trial {
        round,
        started_at: Some(super::now_rfc3339_micros()),
        window_planned_s: match scenario.stop {
            StopRule::Duration(d) => Some(d.as_secs_f64()),
            StopRule::Requests(_) => None,
        },
        ..Trial::default()
    }
}

/// The order in which round `round` (1-based) runs `n` cells, as indices in
/// config order: counterbalanced, so that a position's effect on a trial
/// enters every paired comparison with both signs.
///
/// Odd rounds run forward, even rounds reverse the round before: with two
/// cells A B, B A, A B, ... With more, the forward order also rotates by one
/// every two rounds (A B C, C B A, B C A, A C B, C A B, B A C): every pair of
/// cells runs in both orders in every two rounds (a plain rotation by one each
/// round would keep neighbours, such as a client and its `@base` twin, in one
/// order in all but one round in `n`), and every cell takes every position
/// twice in every `2n` rounds.
pub(super) fn round_order(n: usize, round: u32) -> Vec<usize> {
    let round = round.max(1) as usize;
    let shift = if n > 2 { (round - 1) / 2 % n } else { 0 };
    let mut order: Vec<usize> = (0..n).map(|i| (i + shift) % n).collect();
    if round.is_multiple_of(2) {
        order.reverse();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::round_order;

    /// The names of `cells` in the order of `round`.
    fn names<'a>(cells: &[&'a str], round: u32) -> Vec<&'a str> {
        round_order(cells.len(), round)
            .into_iter()
            .map(|i| cells[i])
            .collect()
    }

    #[test]
    fn two_cells_alternate_and_more_rotate() {
        let two = ["a", "b"];
        for round in 1..=6 {
            let want = if round % 2 == 1 {
                ["a", "b"]
            } else {
                ["b", "a"]
            };
            assert_eq!(names(&two, round), want, "round {round}");
        }
        let three = ["a", "b", "c"];
        let rounds: Vec<String> = (1..=7).map(|r| names(&three, r).concat()).collect();
        assert_eq!(rounds, ["abc", "cba", "bca", "acb", "cab", "bac", "abc"]);
        assert_eq!(names(&["only"], 2), ["only"]);
        assert!(round_order(0, 1).is_empty());
    }

    /// For any number of cells: every pair runs in both orders in every two
    /// rounds, and every cell takes every position equally often.
    #[test]
    fn every_pair_in_both_orders_and_every_cell_in_every_position() {
        for n in 1..=7usize {
            for first in (1..=2 * n as u32).step_by(2) {
                let (odd, even) = (round_order(n, first), round_order(n, first + 1));
                let at = |order: &[usize], cell| order.iter().position(|&c| c == cell).unwrap();
                for i in 0..n {
                    for j in i + 1..n {
                        assert_ne!(
                            at(&odd, i) < at(&odd, j),
                            at(&even, i) < at(&even, j),
                            "n {n}, rounds {first} and {}: cells {i} and {j}",
                            first + 1
                        );
                    }
                }
            }
            let mut seen = vec![vec![0; n]; n];
            for round in 1..=2 * n as u32 {
                let order = round_order(n, round);
                let mut sorted = order.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "a permutation");
                for (position, &cell) in order.iter().enumerate() {
                    seen[cell][position] += 1;
                }
            }
            for (cell, positions) in seen.iter().enumerate() {
                assert!(
                    positions.iter().all(|&k| k == 2),
                    "n {n}: cell {cell} took positions {positions:?} in {} rounds",
                    2 * n
                );
            }
        }
    }

    /// Base-vs-head twins sit next to each other in config order (the head
    /// side first, `config::base_variants`): each runs first in half the
    /// rounds, in every two rounds, whatever else the scenario runs.
    #[test]
    fn base_and_head_twins_take_turns_first() {
        for cells in [
            &["py", "py@base"][..],
            &["py", "py@base", "hyper"],
            &["py", "py@base", "java", "java@base"],
            &["hyper", "py", "py@base", "java", "java@base"],
        ] {
            for twin in ["py", "java"].into_iter().filter(|t| cells.contains(t)) {
                let base = format!("{twin}@base");
                let head_first: Vec<bool> = (1..=12)
                    .map(|r| {
                        let order = names(cells, r);
                        let at = |c: &str| order.iter().position(|x| *x == c).unwrap();
                        at(twin) < at(&base)
                    })
                    .collect();
                for (k, pair) in head_first.chunks(2).enumerate() {
                    assert_ne!(
                        pair[0],
                        pair[1],
                        "{cells:?}: {twin}, rounds {}..",
                        2 * k + 1
                    );
                }
            }
        }
    }
}
