//! The comparison plan: what a run is compared with, decided once.
//!
//! Every entry point states what it was asked ([`Asked`]: command-line flags,
//! or what an action flow compares with) and [`ComparisonPlan::resolve`] is
//! the one place that turns that and the config's `[compare]` into what is
//! compared. The extra rounds during the run (`[run] max_rounds`,
//! `orchestrate::extend`) and the verdict after it both come from
//! [`ComparisonPlan::compare`], so the two can never disagree.
//!
//! Precedence, the same everywhere: a stored run asked for explicitly
//! (`--baseline FILE`; the action's push flow, which shows the change from the
//! previous baseline), then `--compare-base REF`, then side-by-side flags
//! (`--side-by-side`, `--side-by-side-server`), then the config's
//! `[compare]`, then the entry point's own default ([`Otherwise`]).

use crate::compare::{self, stats, Comparison, ComparisonMode, Pairing, SideBySide};
use crate::config::{CompareBase, CompareSettings, GateConfig, RunSettings, Suite};
use crate::results::RunResults;

/// The base commit of `[compare] base = "git"` when `--compare-base` gives
/// none: the first parent of the checked-out commit (on a pull request's
/// merge commit, the base branch's commit it merges into).
pub const DEFAULT_BASE_REF: &str = "HEAD^";

/// What an entry point was asked, beyond the config's `[compare]`.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// Compare with a stored run, whatever `[compare]` says: `--baseline
    /// FILE` (handed over with [`ComparisonPlan::with_stored`]), or the
    /// action's push flow.
    pub stored: bool,
    /// `--side-by-side CLIENT`.
    pub side_by_side_client: Option<String>,
    /// `--side-by-side-server SERVER`.
    pub side_by_side_server: Option<String>,
    /// `--compare-base REF`: base vs head, whatever `[compare]` says.
    pub compare_base: Option<String>,
    /// What `[compare] base = "git"` compares with when `compare_base`
    /// gives no commit.
    pub git_base: GitBase,
    /// When nothing above is asked and the config has no `[compare]`.
    pub otherwise: Otherwise,
}

/// What `[compare] base = "git"` means at an entry point that gives no
/// `--compare-base`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum GitBase {
    /// [`DEFAULT_BASE_REF`] (the command line).
    #[default]
    FirstParent,
    /// This commit: a pull request's base.
    Commit(String),
    /// Nothing here: the stored baseline instead (the action's push and
    /// schedule runs, which keep and compare the history).
    Stored,
}

/// An entry point's default when neither flags nor `[compare]` say what to
/// compare with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Otherwise {
    /// Measure only (`benchgate run`).
    #[default]
    Nothing,
    /// The stored baseline (every action flow).
    Stored,
    /// Refuse: comparing is the command's whole point (`benchgate compare`);
    /// the text names the input that is missing.
    Refuse(String),
}

/// The resolved plan: what is compared, under which gate.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ComparisonPlan {
    /// `None`: nothing is compared (no verdict, no extra rounds).
    pub mode: Option<ComparisonMode>,
    /// [`ComparisonMode::Baseline`]: the stored run compared with, once
    /// handed over ([`ComparisonPlan::with_stored`]; `None`: none stored).
    pub stored: Option<Box<RunResults>>,
    /// [`ComparisonMode::SideBySide`]: the baseline client and/or server.
    pub baseline_client: Option<String>,
    pub baseline_server: Option<String>,
    /// [`ComparisonMode::BaseVsHead`]: the base commit, whose builds (as
    /// `NAME@base`, `orchestrate::base_tree`) each cell is compared with.
    pub base_ref: Option<String>,
    pub gate: GateConfig,
    /// Where the gate came from when not from the config in hand (base vs
    /// head: the base commit's), as a markdown paragraph for the report.
    pub gate_note: Option<String>,
}

impl ComparisonPlan {
    /// Decides what `run` is compared with. `config` supplies `[compare]` and
    /// the gate; names given on the command line must be clients and servers
    /// of `run` (`source` names it in errors).
    pub fn resolve(
        asked: Asked,
        config: &Suite,
        run: &Suite,
        source: &str,
    ) -> anyhow::Result<ComparisonPlan> {
        let plan = ComparisonPlan {
            gate: config.gate.clone(),
            ..ComparisonPlan::default()
        };
        let stored = ComparisonPlan {
            mode: Some(ComparisonMode::Baseline),
            ..plan.clone()
        };
        let base_vs_head = |base_ref: String| ComparisonPlan {
            mode: Some(ComparisonMode::BaseVsHead),
            base_ref: Some(base_ref),
            ..plan.clone()
        };
        let side_by_side = |client: Option<String>, server: Option<String>| ComparisonPlan {
            mode: Some(ComparisonMode::SideBySide),
            baseline_client: client,
            baseline_server: server,
            ..plan.clone()
        };
        let (client, server) = (asked.side_by_side_client, asked.side_by_side_server);
        Ok(if asked.stored {
            stored
        } else if let Some(base_ref) = asked.compare_base {
            base_vs_head(base_ref)
        } else if client.is_some() || server.is_some() {
            check_names(client.as_deref(), server.as_deref(), run, source)?;
            side_by_side(client, server)
        } else if let Some(CompareSettings {
            baseline_client,
            baseline_server,
            base,
        }) = &config.compare
        {
            match (base, asked.git_base) {
                (Some(CompareBase::Git), GitBase::FirstParent) => {
                    base_vs_head(DEFAULT_BASE_REF.to_string())
                }
                (Some(CompareBase::Git), GitBase::Commit(base_ref)) => base_vs_head(base_ref),
                (Some(CompareBase::Git), GitBase::Stored) => stored,
                (None, _) => side_by_side(baseline_client.clone(), baseline_server.clone()),
            }
        } else {
            match asked.otherwise {
                Otherwise::Nothing => plan,
                Otherwise::Stored => stored,
                Otherwise::Refuse(why) => anyhow::bail!(why),
            }
        })
    }

    /// Whether the plan compares with a stored run (which the caller reads
    /// or looks up, then hands over with [`ComparisonPlan::with_stored`]).
    pub fn wants_stored(&self) -> bool {
        self.pairing().is_some_and(|p| p.stored().is_some())
    }

    /// The plan with the stored run it compares with (`None`: none stored).
    /// A plan that does not compare with a stored run is unchanged.
    pub fn with_stored(mut self, stored: Option<RunResults>) -> ComparisonPlan {
        if self.wants_stored() {
            self.stored = stored.map(Box::new);
        }
        self
    }

    /// Base vs head: the base commit.
    pub fn base_ref(&self) -> Option<&str> {
        match self.mode? {
            ComparisonMode::BaseVsHead => self.base_ref.as_deref(),
            ComparisonMode::Baseline | ComparisonMode::SideBySide => None,
        }
    }

    /// Whether the run has anything to compare with while it runs: not a
    /// stored run that is missing (nothing stored yet, or a measure step
    /// that compares later, as the fork-safe split's does). Without it a
    /// budget takes no look (a look at nothing would spend alpha and stop
    /// the rounds).
    pub fn compares_during_run(&self) -> bool {
        self.pairing()
            .is_some_and(|p| p.stored().is_none_or(|s| s.is_some()))
    }

    /// What the comparison pairs, as planned; `None`: nothing.
    fn pairing(&self) -> Option<Pairing<'_>> {
        Some(Pairing {
            mode: self.mode?,
            stored: self.stored.as_deref(),
            sides: SideBySide {
                client: self.baseline_client.as_deref(),
                server: self.baseline_server.as_deref(),
            },
        })
    }

    /// The smallest p-value its test can reach after `rounds` rounds: a
    /// paired one 2 / 2^n; against a stored run, the rank-sum test's with as
    /// many trials as the stored run's fullest cell (the plan of looks drops
    /// the looks that could decide nothing, `compare::looks`).
    pub fn smallest_p(&self, rounds: u32) -> f64 {
        let n = rounds as usize;
        match self.pairing() {
            Some(p) if p.mode.paired() => stats::min_p_paired(n),
            Some(p) => {
                let stored = p.stored().flatten();
                let m = stored.map_or(n, |s| {
                    s.results.iter().map(|c| c.trials.len()).max().unwrap_or(0)
                });
                stats::min_p_two_sample(n, m)
            }
            None => 1.0,
        }
    }

    /// Why this plan can never reach a verdict with `run`'s rounds, when it
    /// cannot: the smallest p-value its trials allow is above `alpha`, so
    /// every gating metric would be inconclusive (issue 16, point 4). The
    /// rounds counted are `max_rounds` (extra rounds buy trials) and, against
    /// a stored run, as many on the stored side.
    pub fn unreachable(&self, run: &RunSettings, source: &str) -> Option<String> {
        let paired = self.mode?.paired();
        let n = run.max_rounds.max(run.rounds) as usize;
        let alpha = self.gate.alpha;
        // Paired: `[gate] paired_test`'s two tests share the bound 2 / 2^n.
        let (min_p, needed, mode) = if paired {
            (
                stats::min_p_paired(n),
                stats::rounds_needed_paired(alpha),
                "a comparison paired by round (side by side, base vs head)",
            )
        } else {
            (
                stats::min_p_two_sample(n, n),
                stats::rounds_needed_two_sample(alpha),
                "a comparison with a stored run",
            )
        };
        (min_p > alpha).then(|| {
            format!(
                "{source}: {mode} of {n} rounds can reach p = {min_p:.3} at best, never p <= {alpha} ([gate] alpha): every gating metric would be inconclusive; set [run] rounds (or max_rounds) to {needed} or more"
            )
        })
    }

    /// [`Self::unreachable`] as the run's verdict on its own settings: a
    /// warning to print (`Ok(Some)`), nothing (`Ok(None)`), or, under
    /// `[gate] strict = true` (of the gate this plan applies: base's in base
    /// vs head), an error that stops the run before it measures anything.
    pub fn check_reachable(
        &self,
        run: &RunSettings,
        source: &str,
    ) -> anyhow::Result<Option<String>> {
        match self.unreachable(run, source) {
            Some(why) if self.gate.strict => {
                anyhow::bail!("{why} ([gate] strict = true makes this an error; or remove strict to run with a warning)")
            }
            other => Ok(other),
        }
    }

    /// `current` compared as planned: the one comparison a run makes, during
    /// it (extra rounds) and after it (the verdict). `None`: the plan
    /// compares nothing.
    pub fn compare(&self, current: &RunResults) -> Option<Comparison> {
        self.compare_under(current, &self.gate)
    }

    /// [`Self::compare`] under `gate` in place of the plan's own (a planned
    /// look's alpha, `[run] budget`), without copying the plan's stored run.
    pub fn compare_under(&self, current: &RunResults, gate: &GateConfig) -> Option<Comparison> {
        Some(compare::compare_cells(self.pairing()?, current, gate))
    }
}

/// Names from the command line must be a client and a server of the run.
fn check_names(
    client: Option<&str>,
    server: Option<&str>,
    run: &Suite,
    source: &str,
) -> anyhow::Result<()> {
    if let Some(client) = client {
        let clients: Vec<&str> = run.clients.iter().map(|c| c.name.as_str()).collect();
        anyhow::ensure!(
            clients.contains(&client),
            "--side-by-side {client:?}: {source} has no client of that name; it has: {}",
            clients.join(", ")
        );
    }
    if let Some(server) = server {
        let servers: Vec<&str> = run.servers.iter().map(|s| s.name.as_str()).collect();
        anyhow::ensure!(
            servers.contains(&server),
            "--side-by-side-server {server:?}: {source} has no server under test of that name; it has: {}",
            if servers.is_empty() {
                "none".to_string()
            } else {
                servers.join(", ")
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests;
