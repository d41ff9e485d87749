//! The second stage: the suite measured as a [`Lookup`]'s plan wants it
//! ([`measure`] -> [`Measured`]), its progress reported to the edge
//! ([`Events`]).

use std::path::Path;

use crate::config::Suite;
use crate::interrupt::Signal;
use crate::orchestrate::base_tree::{self, BaseTree};
use crate::orchestrate::extend::Extend;
use crate::orchestrate::shard::{self, Shard};
use crate::orchestrate::RunOptions;
use crate::results::RunResults;

use super::Lookup;

/// How an edge shows a run as it goes: the CLI on stderr and stdout, the
/// action as annotations and a folded log group. It only reports.
pub trait Events {
    /// The suite as it runs (cut to its shard).
    fn starting(&self, _suite: &Suite) {}
    /// The plan can never reach a verdict with the suite's rounds
    /// (`ComparisonPlan::check_reachable`).
    fn unreachable(&self, why: &str);
    /// Where the plan's gate came from when not from the suite in hand
    /// (base vs head: the base commit's), as markdown.
    fn gate_note(&self, _note: &str) {}
    /// The rounds start.
    fn rounds(&self, _suite: &Suite) {}
    /// The rounds ended, with what they measured (`None`: an error).
    fn measured(&self, _results: Option<&RunResults>) {}
}

/// Nothing shown (calibration's A/A runs say their own).
impl Events for () {
    fn unreachable(&self, _why: &str) {}
}

/// How to measure, beyond the plan.
pub struct Options<'a> {
    /// This shard of the suite, and where it was asked for (for errors).
    pub shard: Option<(Shard, &'a str)>,
    /// Where the repository is looked for when base vs head checks the base
    /// commit out (the config file's directory, the workspace).
    pub start: &'a Path,
    /// How to run; [`measure`] sets `shard` and `extend`.
    pub run: RunOptions,
    /// Measure for the plan's comparison (reachability, base tree, extra
    /// rounds); `false`: exactly `[run] rounds` (a baseline to store).
    pub compared: bool,
}

/// The second stage's record: what a run measured.
pub struct Measured {
    pub results: RunResults,
    /// SIGINT/SIGTERM by the end of the run: `results` gate nothing.
    pub interrupted: Option<Signal>,
    /// Base vs head: the base commit's checkout, removed when this drops.
    pub base: Option<BaseTree>,
}

/// Measures `suite` as `lookup`'s plan wants: cut to its shard (before the
/// base variants join), a warning when the plan can never reach a verdict
/// (an error under `[gate] strict`), the base commit checked out for base vs
/// head, extra rounds while the plan's comparison is undecided.
pub fn measure(
    suite: Suite,
    lookup: &Lookup,
    opts: Options<'_>,
    events: &dyn Events,
) -> anyhow::Result<Measured> {
    let Options {
        shard,
        start,
        run: mut opts,
        compared,
    } = opts;
    let suite = match shard {
        Some((shard, input)) => {
            let (cut, info) = shard::select(suite, shard, input)?;
            opts.shard = Some(info);
            cut
        }
        None => suite,
    };
    events.starting(&suite);
    let plan = &lookup.plan;
    let (suite, base) = match compared {
        true => {
            if let Some(why) = plan.check_reachable(&suite.run, &suite.source)? {
                events.unreachable(&why);
            }
            if let Some(note) = &plan.gate_note {
                events.gate_note(note);
            }
            base_tree::prepare(suite, plan, start)?
        }
        false => (suite, None),
    };
    // What the run is compared with decides, during it, whether a scenario
    // needs more rounds (`[run] max_rounds`).
    opts.extend = (compared && plan.mode.is_some()).then(|| Extend { plan: plan.clone() });
    events.rounds(&suite);
    let results = crate::orchestrate::run(&suite, &opts);
    events.measured(results.as_ref().ok());
    Ok(Measured {
        results: results?,
        interrupted: crate::interrupt::received(),
        base,
    })
}
