//! One run, for both edges: the CLI's `benchgate run` ([`crate::commands`])
//! and the GitHub Action's flows ([`crate::action`]) call [`run`] and
//! [`plan`] and only present what they do their own way ([`Presenter`]).
//!
//! [`run`]: the suite cut to its shard, the comparison plan decided (the
//! edge's [`Asked`] through [`plan`]: resolved once, then under base vs head
//! the base commit's gate), the plan's reachability checked, the base commit
//! checked out beside the workspace (base vs head), the suite measured with
//! extra rounds while the plan's comparison is undecided
//! (`orchestrate::extend`), and the interrupt check.
//!
//! Also shared, below the edges:
//! - [`history`]: a branch's stored history, with the change points of each
//!   gating series (`benchgate history`, the action's nightly drift check);
//! - [`cloudwatch`]: publishing to CloudWatch, with what happened printed
//!   (`benchgate publish cloudwatch`, the action's push and schedule flows).

pub mod cloudwatch;
pub mod history;

use std::path::Path;

use crate::config::Suite;
use crate::interrupt::Signal;
use crate::orchestrate::base_tree::{self, BaseTree};
use crate::orchestrate::extend::Extend;
use crate::orchestrate::shard::{self, Shard};
use crate::orchestrate::RunOptions;
use crate::plan::{Asked, ComparisonPlan};
use crate::results::RunResults;

/// What `suite` is compared with, as an edge `asked`: decided once by
/// [`ComparisonPlan::resolve`] from the suite's own `[compare]` and gate;
/// under base vs head the gate is then the base commit's version of the
/// suite's file `config` (`orchestrate::base_gate`). The stored run, when
/// the plan wants one, is the caller's to hand over
/// ([`ComparisonPlan::with_stored`]).
pub fn plan(asked: Asked, suite: &Suite, config: Option<&Path>) -> anyhow::Result<ComparisonPlan> {
    let plan = ComparisonPlan::resolve(asked, suite, suite, &suite.source)?;
    crate::orchestrate::base_gate::from_base(plan, suite, config)
}

/// One run as an edge asks for it.
pub struct Run<'a> {
    /// The suite as loaded (and overridden).
    pub suite: Suite,
    /// Run only this shard of the suite; and where it was asked for
    /// (`--shard`, input `shard`), for errors.
    pub shard: Option<(Shard, &'a str)>,
    /// Where the repository is looked for when base vs head checks the base
    /// commit out (the config file's directory, the workspace).
    pub start: &'a Path,
    /// How to run; [`run`] sets `shard` and `extend`.
    pub opts: RunOptions,
}

/// How an edge shows a run: the CLI on stderr and stdout, the action as
/// annotations and a folded log group.
pub trait Presenter {
    /// The suite as it runs (cut to its shard), before the plan is decided.
    fn starting(&self, _suite: &Suite) {}
    /// The plan can never reach a verdict with the suite's rounds
    /// ([`ComparisonPlan::check_reachable`]).
    fn unreachable(&self, why: &str);
    /// Where the plan's gate came from when not from the suite in hand
    /// (base vs head: the base commit's), as markdown.
    fn gate_note(&self, _note: &str) {}
    /// Measures `suite` ([`crate::orchestrate::run`]) and shows what it
    /// measured.
    fn measure(&self, suite: &Suite, opts: &RunOptions) -> anyhow::Result<RunResults>;
}

/// What a run measured, under which plan.
pub struct Ran {
    /// The plan that drove the run (`None`: exactly `[run] rounds`).
    pub plan: Option<ComparisonPlan>,
    pub results: RunResults,
    /// SIGINT/SIGTERM received by the end of the run: `results` are partial
    /// (marked so when the signal came while measuring) and gate nothing.
    pub interrupted: Option<Signal>,
    /// Base vs head: the base commit's checkout, removed when this drops.
    pub base: Option<BaseTree>,
}

/// Runs `run`: cuts the suite to its shard, decides what it is compared with
/// (`plan`, given the suite as it runs: `None` runs exactly `[run] rounds`,
/// checks nothing and checks out no base commit), warns when that plan can
/// never reach a verdict (an error under `[gate] strict`), checks the base
/// commit out for base vs head, measures with extra rounds while the plan's
/// comparison is undecided, and notes a SIGINT/SIGTERM.
pub fn run(
    run: Run<'_>,
    plan: impl FnOnce(&Suite) -> anyhow::Result<Option<ComparisonPlan>>,
    p: &dyn Presenter,
) -> anyhow::Result<Ran> {
    let Run {
        suite,
        shard,
        start,
        mut opts,
    } = run;
    // A shard runs whole scenarios (base and head twins stay together), cut
    // from the suite as overridden (every job of a matrix agrees) before the
    // base variants join.
    let suite = match shard {
        Some((shard, input)) => {
            let (cut, info) = shard::select(suite, shard, input)?;
            opts.shard = Some(info);
            cut
        }
        None => suite,
    };
    p.starting(&suite);
    let plan = plan(&suite)?;
    let (suite, base) = match &plan {
        Some(plan) => {
            if let Some(why) = plan.check_reachable(&suite.run, &suite.source)? {
                p.unreachable(&why);
            }
            if let Some(note) = &plan.gate_note {
                p.gate_note(note);
            }
            base_tree::prepare(suite, plan, start)?
        }
        None => (suite, None),
    };
    // What the run is compared with decides, during it, whether a scenario
    // needs more rounds (`[run] max_rounds`).
    opts.extend = plan
        .as_ref()
        .filter(|plan| plan.against.is_some())
        .map(|plan| Extend { plan: plan.clone() });
    let results = p.measure(&suite, &opts)?;
    Ok(Ran {
        plan,
        results,
        interrupted: crate::interrupt::received(),
        base,
    })
}
