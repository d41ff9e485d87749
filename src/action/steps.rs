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
//!    writes what it found to [`lookup_path`] (the baseline's results next
//!    to it);
//! 2. `measure` (no token; [`scrub_secrets`] re-executes itself without any):
//!    runs the suite and writes the results file (`mode: merge`: merges the
//!    shard jobs' results instead, `shards`);
//! 3. `publish` (token): reads both files back, compares, comments, stores,
//!    publishes.
//!
//! `all` (the container image) runs the three in turn, the measure step in a
//! child process that cannot reach the token (`isolate`). Every flow goes through [`Action::looked_up`] and
//! [`Action::measured`], which alone know the step.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::baseline::{BaselineKey, FoundBaseline};
use crate::cli::ActionStep;
use crate::config::Suite;
use crate::files::json::{self, Limits};
use crate::files::read_untrusted;
use crate::orchestrate::child_env::secret_vars;
use crate::plan::ComparisonPlan;
use crate::report::markdown::MetricHistory;
use crate::results::RunResults;

use super::inputs::ModeInput;
use super::Action;

/// What the lookup step found: the baseline (if any) and whether the base
/// commit's history was available to find the nearest older one.
pub(crate) struct Looked {
    pub found: Option<FoundBaseline>,
    pub history: bool,
    /// What the store said about the lookup (a missing data branch, ...).
    pub notes: Vec<String>,
    /// The base branch's last stored values per gating metric, for the
    /// comment's trend charts (pull requests; empty otherwise).
    pub trend: Vec<MetricHistory>,
}

/// The lookup step's file. The baseline's results are written next to it
/// ([`baseline_path`]) and read back, checked, by [`RunResults::read`]: the
/// measure step between runs the pull request's code, which may rewrite both.
#[derive(Serialize, Deserialize)]
struct LookupFile {
    schema: String,
    /// The plan it was looked up for; the publish step refuses another.
    plan: String,
    history: bool,
    found: Option<FoundFile>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    trend: Vec<MetricHistory>,
}

#[derive(Serialize, Deserialize)]
struct FoundFile {
    key: BaselineKey,
    exact: bool,
}

/// Version 2 keeps the baseline's results in their own file.
const LOOKUP_SCHEMA: &str = "benchgate-lookup/2";

/// Largest lookup file read (the notes and trend points of one lookup).
const MAX_LOOKUP_BYTES: u64 = 16 << 20;

/// The limits of the lookup file's JSON: a trend point, `(String, f64)`,
/// takes 32 bytes twice (a growing `Vec`).
const LOOKUP_LIMITS: Limits = Limits {
    depth: 8,
    values: 1_000_000,
    key_bytes: 256,
    text_bytes: 4096,
    items: 100_000,
    item_bytes: 64,
    member_bytes: 0,
    extra_bytes: 64 << 20,
    rules: &[],
};

/// Where the lookup step leaves its result: next to the results file.
pub(crate) fn lookup_path(results: &std::path::Path) -> PathBuf {
    let stem = results
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("benchgate-results");
    results.with_file_name(format!("{stem}.lookup.json"))
}

/// Where the lookup step leaves the baseline's results it found.
fn baseline_path(results: &std::path::Path) -> PathBuf {
    let stem = results
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("benchgate-results");
    results.with_file_name(format!("{stem}.lookup-baseline.json"))
}

/// What [`Action::measured`] hands back.
pub(crate) enum Measured {
    /// Results to compare (steps `all` and `publish`).
    Results(Box<RunResults>),
    /// This process's part is done: exit with this code.
    Done(u8),
}

impl Action {
    /// The stored baseline for this flow: looked up now (`all`, `lookup`:
    /// which then writes it and ends the step, `Ok(None)`), or read back from
    /// the lookup step's file (`measure`, `publish`).
    pub(crate) fn looked_up(
        &self,
        plan: &str,
        lookup: impl FnOnce() -> anyhow::Result<Looked>,
    ) -> anyhow::Result<Option<Looked>> {
        let path = lookup_path(&self.results_path());
        let baseline = baseline_path(&self.results_path());
        match self.step {
            ActionStep::All => lookup().map(Some),
            ActionStep::Lookup => {
                let looked = lookup()?;
                let file = LookupFile {
                    schema: LOOKUP_SCHEMA.into(),
                    plan: plan.into(),
                    history: looked.history,
                    notes: looked.notes,
                    trend: looked.trend,
                    found: match looked.found {
                        Some(f) => {
                            f.results.write_atomic(&baseline)?;
                            Some(FoundFile {
                                key: f.key,
                                exact: f.exact,
                            })
                        }
                        None => None,
                    },
                };
                // Replaces a stale file of an earlier run of this job.
                std::fs::write(&path, serde_json::to_vec(&file)?)
                    .with_context(|| format!("writing {}", path.display()))?;
                Ok(None)
            }
            ActionStep::Measure | ActionStep::Publish => {
                let bytes = read_untrusted(&path, "lookup file", MAX_LOOKUP_BYTES).with_context(|| {
                    format!(
                        "reading {} (written by `benchgate action --step lookup`, which runs before this step)",
                        path.display()
                    )
                })?;
                let not_lookup = || format!("{} is not a lookup file", path.display());
                if let Err(breach) = json::scan(&bytes, &LOOKUP_LIMITS) {
                    return Err(anyhow::anyhow!("{breach}").context(not_lookup()));
                }
                let file: LookupFile = serde_json::from_slice(&bytes).with_context(not_lookup)?;
                anyhow::ensure!(
                    file.schema == LOOKUP_SCHEMA && file.plan == plan,
                    "{} was written for {:?} ({}), not for this step's plan {plan:?}: run the three steps with the same inputs",
                    path.display(),
                    file.plan,
                    file.schema
                );
                let found = match file.found {
                    Some(f) => Some(FoundBaseline {
                        key: f.key,
                        exact: f.exact,
                        results: RunResults::read(&baseline)?,
                    }),
                    None => None,
                };
                Ok(Some(Looked {
                    found,
                    history: file.history,
                    notes: file.notes,
                    trend: file.trend,
                }))
            }
        }
    }

    /// The results of this run: measured now (`all`; `measure`, which then
    /// ends the step), or read back from the measure step's results file
    /// (`publish`, which refuses a partial run). A cancelled run ends with its
    /// exit code (`Action::cancelled`). `lookup` measures nothing.
    pub(crate) fn measured(
        &self,
        suite: &Suite,
        plan: Option<&ComparisonPlan>,
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
                    let (results, signal) = self.run_suite(suite, plan)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lookup_file_sits_next_to_the_results() {
        assert_eq!(
            lookup_path(std::path::Path::new("/w/out/bench.json")),
            PathBuf::from("/w/out/bench.lookup.json")
        );
        assert_eq!(
            baseline_path(std::path::Path::new("/w/out/bench.json")),
            PathBuf::from("/w/out/bench.lookup-baseline.json")
        );
    }
}
