//! The action's three steps, and how state passes between them.
//!
//! On the runner the composite action (`action.yml`) runs benchgate three
//! times, so that the process that runs the benchmarked programs (the pull
//! request's own code: command clients, servers under test, their `setup`)
//! never holds a token; a program can read its parent's environment through
//! `/proc` as the same user, so removing variables from the children is not
//! enough:
//!
//! 1. `lookup` (token): finds the stored baseline the flow compares with and
//!    records what it found (`pipeline::Lookup::record`: beside the results,
//!    the baseline's results next to it);
//! 2. `measure` (no token; [`scrub_secrets`] re-executes itself without any):
//!    runs the suite and writes the results file (`mode: merge`: merges the
//!    shard jobs' results instead, `shards`);
//! 3. `publish` (token): reads both files back, compares, comments, stores,
//!    publishes.
//!
//! `all` (the container image) runs the three in turn, the measure step in a
//! child process that cannot reach the token (`isolate`). Every flow goes through [`Action::looked_up`] and
//! [`Action::measured`], which alone know the step: each step runs one stage
//! of the pipeline.

use std::ffi::OsString;

use anyhow::Context as _;

use crate::cli::ActionStep;
use crate::config::Suite;
use crate::orchestrate::child_env::secret_vars;
use crate::pipeline::{Baseline, Lookup, Where};
use crate::plan::GitBase;
use crate::results::RunResults;

use super::inputs::ModeInput;
use super::Action;

/// What [`Action::measured`] hands back.
pub(crate) enum Measured {
    /// Results to compare (steps `all` and `publish`).
    Results(Box<RunResults>),
    /// This process's part is done: exit with this code.
    Done(u8),
}

impl Action {
    /// This flow's [`Lookup`] in the store `w` now (`all`; `lookup`, which
    /// records it and ends the step: `Ok(None)`), or read back from what the
    /// lookup step recorded for `flow` (`measure`, `publish`).
    pub(crate) fn looked_up(
        &self,
        suite: &Suite,
        stored: bool,
        git_base: GitBase,
        flow: &str,
        w: Where<'_>,
    ) -> anyhow::Result<Option<Lookup>> {
        let results = self.results_path();
        let informative = w.informative;
        let baseline = match self.step {
            ActionStep::All | ActionStep::Lookup => Baseline::Store(w),
            ActionStep::Measure | ActionStep::Publish => Baseline::Recorded {
                results: &results,
                flow,
                informative,
            },
        };
        let lookup = self.lookup(suite, (stored, git_base), baseline)?;
        if self.step == ActionStep::Lookup {
            lookup.record(&results, flow, informative)?;
            return Ok(None);
        }
        Ok(Some(lookup))
    }

    /// The results of this run: measured now (`all`; `measure`, which then
    /// ends the step), or read back from the measure step's results file
    /// (`publish`, which refuses a partial run). A cancelled run ends with its
    /// exit code (`Action::cancelled`). `lookup` measures nothing.
    pub(crate) fn measured(
        &self,
        suite: &Suite,
        lookup: &Lookup,
        compared: bool,
    ) -> anyhow::Result<Measured> {
        match self.step {
            ActionStep::Lookup => Ok(Measured::Done(0)),
            ActionStep::All | ActionStep::Measure => {
                // The merge job merges the shard jobs' results; it runs nothing.
                let results = if self.inputs.mode == ModeInput::Merge {
                    self.merged_shards(suite)?
                } else if suite.gates_only() {
                    // A JMH team's config runs nothing: its own step wrote
                    // the results (`-rf json -rff` at `results-path`).
                    self.given_results(suite)?
                } else {
                    let (results, signal) = self.run_suite(suite, lookup, compared)?;
                    if let Some(code) = self.cancelled(&results, signal)? {
                        return Ok(Measured::Done(code));
                    }
                    results
                };
                let mut results = results;
                self.stamp_commit(&mut results);
                if self.step == ActionStep::Measure {
                    self.write_outputs(&[(
                        "results-path",
                        self.results_path().display().to_string(),
                    )])?;
                    return Ok(Measured::Done(0));
                }
                Ok(Measured::Results(Box::new(results)))
            }
            ActionStep::Publish => {
                let path = self.results_path();
                let trials = crate::results::jmh::TrialUnit::of(&suite.jmh);
                let mut results = RunResults::read_as(&path, trials).with_context(|| {
                    "the measure step (`benchgate action --step measure`) writes it; did it run?"
                })?;
                if let Some(signal) = &results.interrupted {
                    anyhow::bail!(
                        "{} is a partial run (stopped by {signal}): nothing is compared, stored or commented; re-run the job",
                        path.display()
                    );
                }
                self.stamp_commit(&mut results);
                Ok(Measured::Results(Box::new(results)))
            }
        }
    }
}

impl Action {
    /// A JMH file (or a merge of them) records no commit: it gets this
    /// job's (`GITHUB_SHA`, `GITHUB_REF`), as a run measured here would, so
    /// its stored baseline and its reports name the commit.
    pub(crate) fn stamp_commit(&self, results: &mut RunResults) {
        if results.jmh.is_some() && results.git.sha.is_none() {
            results.git = crate::results::GitInfo {
                sha: self.ctx.sha.clone(),
                ref_name: self.ctx.ref_name.clone(),
            };
        }
    }

    /// The results a config that runs nothing ([`Suite::gates_only`]) is
    /// compared with: the file at `results-path` (a JMH result file, or a
    /// benchgate results file) written by an earlier step of the job, read
    /// with the suite's `[jmh]`.
    fn given_results(&self, suite: &Suite) -> anyhow::Result<RunResults> {
        let path = self.results_path();
        let trials = crate::results::jmh::TrialUnit::of(&suite.jmh);
        let results = RunResults::read_as(&path, trials).with_context(|| {
            format!(
                "input `results-path`: {} has no [[client]] or [[scenario]], so the action runs nothing and reads the results an earlier step wrote there (e.g. java -jar target/benchmarks.jar -f 4 -rf json -rff {}); write them there, or point `results-path` at them",
                suite.source,
                path.display()
            )
        })?;
        let line = format!(
            "benchgate: {} runs nothing: comparing the results at input `results-path` {} ({})",
            suite.source,
            path.display(),
            if results.jmh.is_some() {
                "a JMH result file"
            } else {
                "a benchgate results file"
            }
        );
        crate::stderrln!("{}", crate::report::untrusted::for_log(&line));
        Ok(results)
    }
}

/// The `measure` step's guard: when its environment holds anything
/// [`secret_vars`] names (a job-level `GITHUB_TOKEN`, AWS credentials from
/// an earlier step, a variable holding the same value as one of them),
/// benchgate executes itself again with the same arguments and without those
/// variables, so that neither it nor any program it starts has them, not even
/// in `/proc/<pid>/environ`. Returns only when there was nothing to remove; an
/// exec failure is an error.
pub fn scrub_secrets() -> anyhow::Result<()> {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let found = secret_vars(&vars);
    if found.is_empty() {
        return Ok(());
    }
    crate::stderrln!(
        "benchgate: the measure step runs without {} variable(s) that may hold credentials: {}",
        found.len(),
        found
            .iter()
            .map(|k| k.to_string_lossy())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let exe = std::env::current_exe().context("finding the benchgate executable")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(std::env::args_os().skip(1))
        .env_clear()
        .envs(vars.into_iter().filter(|(k, _)| !found.contains(k)));
    use std::os::unix::process::CommandExt as _;
    let err = cmd.exec();
    Err(anyhow::anyhow!(err).context("re-executing benchgate without the secret variables"))
}
