//! `benchgate action`: what the GitHub Action runs. The composite action
//! (action.yml) installs the released binary and calls it once per step
//! (`--step lookup`, `measure`, `publish`); the container image runs the same
//! command as its default (`CMD ["action"]`), every step in one process.
//!
//! Pipeline: `INPUT_*` -> [`inputs::Inputs`]; `GITHUB_*` and the event payload
//! -> [`event::Context`]; both -> a [`mode::Plan`]; the plan runs
//! ([`flows`], [`split`]) and ends in [`report::Report::finish`]: job summary,
//! comment, annotations, `GITHUB_OUTPUT`, exit code (0 gate passed, 1 gate
//! failed, 2 error). A run that SIGINT/SIGTERM cut short (a cancelled job)
//! ends in `Action::cancelled` instead: summary and outputs only, exit 130/143.
//!
//! Pure pieces (inputs, event, mode, output formatting) are in their own files
//! with unit tests; `tests/ci/action.rs` runs the binary exactly as the container
//! does. The GitHub REST pieces are constructed only in [`github`].

mod cancel;
pub mod comment;
mod drift;
pub mod event;
mod flows;
pub mod github;
mod history;
pub mod inputs;
mod isolate;
pub mod mode;
pub mod outputs;
mod report;
mod shards;
mod split;
pub mod steps;

pub use split::{check_meta, Meta};

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context as _;

use crate::baseline::{BaselineStore, LocalStore};
use crate::cli::ActionStep;
use crate::config::{MockScript, Suite, SuiteChoice};
use crate::github::target::GithubTarget;
use crate::interrupt::Signal;
use crate::knobs::TestKnobs;
use crate::orchestrate::RunOptions;
use crate::pipeline::{self, Baseline, Lookup};
use crate::plan::{Asked, GitBase, Otherwise};
use crate::results::RunResults;

use event::Context;
use inputs::{Inputs, StoreSpec};
use mode::Plan;
use outputs::{annotation, command, Level};

/// Entries kept per branch in the baseline store.
pub const MAX_HISTORY: usize = 100;

/// Runs the action's `step` with the process environment; returns the exit
/// code. Errors are printed (token scrubbed) as an `::error::` annotation;
/// exit 2.
pub fn main(step: ActionStep) -> u8 {
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    // Never returns while a credential is in the environment (it re-executes
    // benchgate without them; exec resets the signal handler installed below).
    let scrubbed = match step {
        ActionStep::Measure => steps::scrub_secrets(),
        _ => Ok(()),
    };
    // SIGINT/SIGTERM are recorded, never fatal and never ignored, from here to
    // the exit: every phase polls the flag and ends with 130/143 ([`cancel`]).
    let signals = crate::interrupt::Handler::install();
    let result = match (scrubbed, &signals) {
        (Err(e), _) => Err(e),
        (_, Err(e)) => Err(anyhow::anyhow!("handling SIGINT and SIGTERM: {e}")),
        // The container's one step runs the three, measuring in a child
        // that cannot reach the token.
        (Ok(()), Ok(_)) if step == ActionStep::All => isolate::all_steps(&env),
        (Ok(()), Ok(_)) => run(&env, step),
    };
    match result {
        Ok(code) => code,
        // Cancelled before the inputs were read: nothing to report.
        Err(_) if crate::interrupt::received().is_some() => {
            crate::interrupt::received().map_or(2, |s| s.exit_code())
        }
        Err(e) => {
            let mut msg = format!("{e:#}");
            for key in ["INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN", "GITHUB_TOKEN"] {
                msg = outputs::scrub(&msg, env.get(key).map(String::as_str));
            }
            // The message may quote untrusted text (a fork's results file, a
            // setup log, a server's output): no line of it may be a command.
            crate::stderr!("{}", outputs::error_lines(&msg));
            command(&annotation(Level::Error, "benchgate", &msg));
            2
        }
    }
}

/// The action's `step` with an explicit environment.
pub fn run(env: &BTreeMap<String, String>, step: ActionStep) -> anyhow::Result<u8> {
    let inputs = inputs::from_env(env)?;
    anyhow::ensure!(
        step != ActionStep::Measure || inputs.token.is_none(),
        "the measure step must not hold a token: pass `github-token` to the lookup and publish steps only"
    );
    if let Some(t) = &inputs.token {
        command(&format!("::add-mask::{}", t.expose()));
    }
    let ctx = event::from_env(env)?;
    let workdir = working_dir(&inputs, &ctx)?;
    std::env::set_current_dir(&workdir).with_context(|| {
        format!(
            "input `working-directory`: cannot enter {}",
            workdir.display()
        )
    })?;
    let baseline_branch = mode::baseline_branch(&inputs, &ctx);
    let plan = mode::decide(inputs.mode, &ctx, &baseline_branch)?;
    crate::stderrln!(
        "benchgate: event {}, plan {}, step {}",
        ctx.event_name,
        plan_name(&plan),
        step_name(step)
    );
    let knobs = TestKnobs::read(|name| env.get(name).cloned())?;
    let action = Action {
        mock: test_mock(&knobs),
        knobs,
        inputs,
        ctx,
        workdir,
        step,
    };
    let (lookup, measure, publish) = (
        step == ActionStep::Lookup,
        step == ActionStep::Measure,
        step == ActionStep::Publish,
    );
    let result = match plan {
        Plan::PullRequest(pr) => flows::pull_request(&action, &pr),
        Plan::StoreBaseline { branch, sha } => flows::store_baseline(&action, &branch, &sha),
        Plan::CompareLatest { branch, sha, drift } => {
            flows::compare_latest(&action, &branch, sha.as_deref(), drift)
        }
        // The fork-safe halves: `measure` runs the suite (the measure step),
        // `report` reads downloaded results and runs nothing (the publish step).
        Plan::Measure(_) if lookup || publish => Ok(0),
        Plan::Measure(pr) => split::measure(&action, pr.as_ref()),
        Plan::Report(_) if lookup || measure => Ok(0),
        Plan::Report(run) => split::report(&action, &run),
        Plan::Skip(_) if lookup || measure => Ok(0),
        Plan::Skip(why) => {
            command(&annotation(Level::Notice, "benchgate", &why));
            action.write_outputs(&[("verdict", "skipped".into())])?;
            Ok(0)
        }
    };
    action.after_signal(result)
}

fn step_name(s: ActionStep) -> &'static str {
    match s {
        ActionStep::All => "all (lookup, measure, publish; measuring in a child without the token)",
        ActionStep::Lookup => "lookup (find the stored baseline)",
        ActionStep::Measure => "measure (run the suite; no token)",
        ActionStep::Publish => "publish (compare, comment, store, publish)",
    }
}

fn plan_name(p: &Plan) -> &'static str {
    match p {
        Plan::PullRequest(_) => "pull_request (compare with the base branch)",
        Plan::StoreBaseline { .. } => "push (store the baseline)",
        Plan::CompareLatest { .. } => "schedule (compare with the latest baseline)",
        Plan::Measure(_) => "measure (results for a later report)",
        Plan::Report(_) => "report (compare downloaded results)",
        Plan::Skip(_) => "skip",
    }
}

/// `working-directory`, relative to `GITHUB_WORKSPACE` (or the current directory).
fn working_dir(inputs: &Inputs, ctx: &Context) -> anyhow::Result<PathBuf> {
    let base = match &ctx.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    let dir = match &inputs.working_directory {
        Some(d) => base.join(d),
        None => base,
    };
    anyhow::ensure!(
        dir.is_dir(),
        "input `working-directory`: {} is not a directory; give a path relative to the repository root",
        dir.display()
    );
    Ok(dir)
}

/// The test knob [`crate::knobs::MOCK_LATENCIES_VAR`]: every client
/// replaced with the mock driver (none in a shipped build).
fn test_mock(knobs: &TestKnobs) -> Option<MockScript> {
    knobs
        .mock_latencies_us
        .clone()
        .map(|latencies_us| MockScript {
            latencies_us,
            error_every: 0,
            response_bytes: 22,
            fail: None,
        })
}

/// The validated run: inputs, context, working directory.
pub(crate) struct Action {
    pub inputs: Inputs,
    pub ctx: Context,
    pub workdir: PathBuf,
    mock: Option<MockScript>,
    /// The test suite's hooks, from the action's environment.
    knobs: TestKnobs,
    /// Which part of the action this process does ([`steps`]).
    pub step: ActionStep,
}

impl Action {
    /// The suite of input `config` (default `benchgate.toml`); `builtin`
    /// runs the built-in default suite. A missing file is an error: a suite
    /// that measures only benchgate's own clients would store baselines and
    /// gate pull requests that nothing in them can change.
    pub fn suite(&self) -> anyhow::Result<Suite> {
        let choice = SuiteChoice::for_action(self.inputs.config.as_deref());
        match choice.path() {
            None => Ok(choice.load()?),
            Some(p) if !p.exists() => anyhow::bail!(
                "input `config`: {} does not exist (looked for {}); add your suite there, set `config` to its path relative to `working-directory`, or `config: builtin` to run benchgate's built-in default suite (it measures benchgate's own clients, so a pull request cannot change it)",
                p.display(),
                self.workdir.join(p).display()
            ),
            Some(p) => choice.load().with_context(|| {
                format!(
                    "input `config`: {} (a path relative to the working directory)",
                    p.display()
                )
            }),
        }
    }

    /// What this flow's run is compared with ([`pipeline::lookup`]) and the
    /// stored run that takes in `baseline`: the stored baseline, unless the
    /// config's `[compare]` asks for side by side, or for base vs head
    /// (`git_base`: a pull request's base commit; other flows keep the
    /// stored history); `stored`: the stored baseline whatever `[compare]`
    /// says (a push shows the change from the previous baseline).
    pub fn lookup(
        &self,
        suite: &Suite,
        (stored, git_base): (bool, GitBase),
        baseline: Baseline<'_>,
    ) -> anyhow::Result<Lookup> {
        let asked = Asked {
            stored,
            git_base,
            otherwise: Otherwise::Stored,
            ..Asked::default()
        };
        // Base vs head gates with the base commit's `[gate]`.
        let config = SuiteChoice::for_action(self.inputs.config.as_deref())
            .path()
            .map(|p| self.workdir.join(p));
        pipeline::lookup(suite, asked, config.as_deref(), baseline)
    }

    /// The baseline store of `baseline-store`.
    pub fn store(&self) -> anyhow::Result<Box<dyn BaselineStore>> {
        match &self.inputs.baseline_store {
            StoreSpec::Local(dir) => Ok(Box::new(LocalStore::new(self.workdir.join(dir)))),
            StoreSpec::Branch => {
                let target = self.github().ok_or_else(|| {
                    anyhow::anyhow!(
                        "`baseline-store: branch` needs input `github-token` (or GITHUB_TOKEN) with `contents: write` on pushes"
                    )
                })?;
                crate::baseline::github_store::data_branch_store(&target, &self.inputs.data_branch)
            }
        }
    }

    /// The GitHub target, when there is a token.
    pub fn github(&self) -> Option<GithubTarget> {
        Some(GithubTarget {
            api_url: self.ctx.api_url.clone(),
            repository: self.ctx.repository.clone(),
            token: self.inputs.token.clone()?,
            run_id: self.ctx.run_id.clone(),
            timeout: self.inputs.github_timeout,
        })
    }

    /// `results-path`, default `benchgate-results.json` in the working directory.
    pub fn results_path(&self) -> PathBuf {
        self.workdir.join(
            self.inputs
                .results_path
                .clone()
                .unwrap_or_else(|| PathBuf::from("benchgate-results.json")),
        )
    }

    /// The markdown report, next to the results.
    pub fn report_path(&self) -> PathBuf {
        self.results_path().with_file_name("benchgate-report.md")
    }

    /// Runs the suite ([`pipeline::measure`]), its log folded in a group and
    /// fenced from commands. `compared`: scenarios the `lookup`'s comparison
    /// leaves undecided after `rounds` get more rounds, up to `[run]
    /// max_rounds`. With the results, the SIGINT/SIGTERM that stopped the
    /// run (see [`Action::cancelled`]).
    pub fn run_suite(
        &self,
        suite: &Suite,
        lookup: &Lookup,
        compared: bool,
    ) -> anyhow::Result<(RunResults, Option<Signal>)> {
        suite.check_runnable("the action's measure")?;
        let out = self.results_path();
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("input `results-path`: creating {}", dir.display()))?;
        }
        let opts = pipeline::Options {
            shard: self.inputs.shard.map(|shard| (shard, "input `shard`")),
            start: &self.workdir,
            compared,
            run: RunOptions {
                out,
                mock: self.mock.clone(),
                exe: std::env::current_exe().context("finding the benchgate executable")?,
                quiet: false,
                // A log: plain lines.
                progress_bar: false,
                extend: None,
                shard: None,
                knobs: self.knobs.clone(),
                // The commit the runner checked out, as the context read it.
                ci_commit: crate::results::GitInfo {
                    sha: self.ctx.sha.clone(),
                    ref_name: self.ctx.ref_name.clone(),
                },
                runner_image: self.ctx.runner_image.clone(),
            },
        };
        let measured = pipeline::measure(suite.clone(), lookup, opts, &LogGroup::default())?;
        // Base vs head: the base commit's checkout goes as the run ends.
        drop(measured.base);
        Ok((measured.results, measured.interrupted))
    }

    /// After a run: when SIGINT/SIGTERM stopped it (the job is being
    /// cancelled), writes the job summary and the outputs for the partial
    /// results and returns the exit code (130/143); the caller then compares,
    /// stores and comments nothing. `None`: carry on.
    pub fn cancelled(
        &self,
        results: &RunResults,
        signal: Option<Signal>,
    ) -> anyhow::Result<Option<u8>> {
        let Some(signal) = signal else {
            return Ok(None);
        };
        let path = self.results_path().display().to_string();
        let summary = report::cancelled_summary(signal.name(), results, &path);
        command(&annotation(
            Level::Warning,
            "benchgate cancelled",
            &format!(
                "stopped by {}: partial results in {path}; nothing gated, stored or commented",
                signal.name()
            ),
        ));
        match &self.ctx.summary_path {
            Some(p) => crate::files::append(p, &summary)?,
            None => crate::stderrln!(
                "benchgate: GITHUB_STEP_SUMMARY is not set; no job summary written"
            ),
        }
        self.write_outputs(&[("verdict", "cancelled".into()), ("results-path", path)])?;
        Ok(Some(signal.exit_code()))
    }

    /// Appends `outputs` to `GITHUB_OUTPUT` (when set).
    pub fn write_outputs(&self, outputs: &[(&str, String)]) -> anyhow::Result<()> {
        match &self.ctx.output_path {
            Some(p) => outputs::write_outputs(p, outputs),
            None => {
                crate::stderrln!("benchgate: GITHUB_OUTPUT is not set; no step outputs written");
                Ok(())
            }
        }
    }
}

/// The action's run: warnings as annotations, the run's log folded in a
/// group and fenced from commands (by the token it holds while open).
#[derive(Default)]
struct LogGroup(std::cell::RefCell<String>);

impl pipeline::Events for LogGroup {
    fn unreachable(&self, why: &str) {
        command(&annotation(
            Level::Warning,
            "benchgate: no verdict possible",
            why,
        ));
    }

    fn rounds(&self, suite: &Suite) {
        command(&format!(
            "::group::benchgate run ({} scenarios, {})",
            suite.scenarios.len(),
            crate::orchestrate::progress::rounds_title(&suite.run)
        ));
        let token = outputs::random_token("benchgate-");
        command(&format!("::stop-commands::{token}"));
        *self.0.borrow_mut() = token;
    }

    fn measured(&self, results: Option<&RunResults>) {
        if let Some(r) = results {
            let table = crate::report::terminal::render(
                r,
                false,
                crate::report::run_table::Width::narrow(),
            );
            crate::stdout!("{}", crate::report::escape::disarm(&table));
        }
        command(&format!("::{}::", self.0.borrow()));
        command("::endgroup::");
    }
}
