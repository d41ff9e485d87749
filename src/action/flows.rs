//! The modes that run the suite in this job: pull request, baseline refresh
//! (push), and compare-with-latest (schedule, dispatch, other pushes).

use std::process::{Command, Stdio};

use crate::baseline::FoundBaseline;
use crate::config::Suite;
use crate::plan::{Against, ComparisonPlan, GitBase};
use crate::report::escape::{md, sha};
use crate::report::markdown::MetricHistory;
use crate::results::RunResults;

use super::comment::{CommentSink, SummaryOnly};
use super::drift;
use super::event::PullRequest;
use super::github;
use super::history;
use super::inputs::CommentMode;
use super::outputs::{annotation, command, Level};
use super::report::{baseline_note, Report};
use super::steps::{Looked, Measured};
use super::{Action, MAX_HISTORY};

/// Most ancestors of the base commit looked up for the nearest older baseline.
const MAX_ANCESTORS: usize = 200;

/// Where a flow looks its stored baseline up, when its plan compares with
/// one.
struct Lookup<'a> {
    /// The flow's name in the lookup file (the publish step refuses another).
    flow: &'static str,
    branch: &'a str,
    /// The commit whose baseline is wanted ("" for the newest).
    sha: &'a str,
    /// Walk `sha`'s ancestors for the nearest older baseline (pull requests).
    ancestors: bool,
    /// The pull request's head, named in a base-vs-head note.
    head: Option<&'a str>,
    /// Also look the stored baseline up when the plan compares base vs head,
    /// to show it beside the verdict (informative; pull requests).
    informative: bool,
    /// Also read the branch's last stored runs for the comment's trend
    /// charts (informative; pull requests).
    trend: bool,
}

/// What a flow measured, compared as planned.
struct Measurement {
    plan: ComparisonPlan,
    found: Option<FoundBaseline>,
    results: RunResults,
    /// How the baseline was chosen, for the report.
    note: String,
    /// Base vs head: the stored baseline of the base branch, shown beside
    /// the verdict, never gated; with the branch's name.
    history: Option<(FoundBaseline, String)>,
    /// The base branch's last stored values, for the trend charts.
    trend: Vec<MetricHistory>,
}

impl Measurement {
    fn report(
        &self,
        comment: Option<(Box<dyn CommentSink>, String)>,
    ) -> anyhow::Result<Report<'_>> {
        let comparison = self
            .plan
            .compare(&self.results)
            .ok_or_else(|| anyhow::anyhow!("the action's comparison plan compares nothing"))?;
        let appendix = match &self.history {
            Some((found, branch)) => {
                let cmp = history::compare_with_stored(found, &self.results, &self.plan.gate);
                history::section(&cmp, found, branch)
            }
            None => String::new(),
        };
        Ok(Report {
            comparison,
            current: &self.results,
            baseline: self.found.as_ref(),
            note: self.note.clone(),
            appendix,
            comment,
            no_baseline_passes: false,
            trend: self.trend.clone(),
        })
    }
}

/// A flow's steps up to the comparison: the stored baseline looked up when
/// the plan compares with one (`lookup` ends there), the suite measured
/// (`measure` ends there) with extra rounds while the plan's comparison is
/// undecided (`extend`). `Err(code)`: this step is done.
fn measure(
    a: &Action,
    suite: &Suite,
    plan: ComparisonPlan,
    lookup: &Lookup<'_>,
    extend: bool,
) -> anyhow::Result<Result<Measurement, u8>> {
    let base_vs_head = matches!(plan.against, Some(Against::BaseVsHead { .. }));
    let look = |informative: bool| {
        a.looked_up(lookup.flow, || {
            let read = || -> anyhow::Result<Looked> {
                let store = a.store()?;
                let ancestors = match lookup.ancestors {
                    true => ancestors(lookup.sha),
                    false => Vec::new(),
                };
                let found = store.lookup(lookup.branch, lookup.sha, &ancestors)?;
                let mut notes = store.notes();
                let trend = match lookup.trend {
                    true => store
                        .load_history(lookup.branch, history::TREND_RUNS)
                        .map(|runs| history::trend(&runs, &plan.gate))
                        .unwrap_or_else(|e| {
                            // Informative only: the charts, never the gate.
                            notes.push(format!("the trend charts are left out: {e:#}"));
                            Vec::new()
                        }),
                    false => Vec::new(),
                };
                Ok(Looked {
                    found,
                    history: !ancestors.is_empty(),
                    notes,
                    trend,
                })
            };
            match (read(), informative) {
                // Informative only: a store that cannot be read costs the
                // section, never the gate.
                (Err(e), true) => Ok(Looked {
                    found: None,
                    history: false,
                    notes: vec![format!("the stored baseline could not be read: {e:#}")],
                    trend: Vec::new(),
                }),
                (r, _) => r,
            }
        })
    };
    let mut trend = Vec::new();
    let (plan, found, note, history) = if plan.wants_stored() {
        let Some(looked) = look(false)? else {
            return Ok(Err(0));
        };
        let wanted = lookup.ancestors.then_some(lookup.sha);
        let note = baseline_note(looked.found.as_ref(), lookup.branch, wanted, looked.history)
            + &store_notes(&looked.notes);
        let stored = looked.found.as_ref().map(|f| f.results.clone());
        trend = looked.trend;
        (plan.with_stored(stored), looked.found, note, None)
    } else if base_vs_head && lookup.informative {
        let Some(looked) = look(true)? else {
            return Ok(Err(0));
        };
        let note = side_by_side_note(&plan, lookup.head) + &store_notes(&looked.notes);
        let history = looked.found.map(|f| (f, lookup.branch.to_string()));
        trend = looked.trend;
        (plan, None, note, history)
    } else {
        // The lookup step has nothing to look up; it measures nothing either.
        let note = side_by_side_note(&plan, lookup.head);
        (plan, None, note, None)
    };
    let results = match a.measured(suite, extend.then_some(&plan))? {
        Measured::Results(r) => *r,
        Measured::Done(code) => return Ok(Err(code)),
    };
    Ok(Ok(Measurement {
        plan,
        found,
        results,
        note,
        history,
        trend,
    }))
}

/// What the store said about a lookup, as markdown paragraphs (escaped).
fn store_notes(notes: &[String]) -> String {
    notes
        .iter()
        .map(|n| format!("> **Note:** {}\n\n", md(n)))
        .collect()
}

/// `pull_request`: run, compare as planned (the base commit's baseline or
/// the nearest older one; side by side with `[compare]`), comment, gate.
/// Never writes the baseline.
pub(super) fn pull_request(a: &Action, pr: &PullRequest) -> anyhow::Result<u8> {
    let suite = a.suite()?;
    let plan = a.plan(&suite, false, GitBase::Commit(pr.base_sha.clone()))?;
    let lookup = Lookup {
        flow: "pull_request",
        branch: &pr.base_ref,
        sha: &pr.base_sha,
        ancestors: true,
        head: Some(&pr.head_sha),
        informative: true,
        trend: true,
    };
    let m = match measure(a, &suite, plan, &lookup, true)? {
        Ok(m) => m,
        Err(code) => return Ok(code),
    };
    let sink = comment_sink(a, pr.number, &suite.source);
    m.report(Some((sink, pr.head_sha.clone())))?.finish(a)
}

/// `push` to the baseline branch: run, store the baseline, and show the change
/// from the previous one (whatever `[compare]` says: the stored history is
/// what a push adds to). A missing previous baseline never fails; a run the
/// job's cancellation cut short is never stored. Publishes to CloudWatch when
/// asked (a failure there is a warning).
pub(super) fn store_baseline(a: &Action, branch: &str, sha: &str) -> anyhow::Result<u8> {
    let suite = a.suite()?;
    let plan = a.plan(&suite, true, GitBase::Stored)?;
    let lookup = Lookup {
        flow: "push",
        branch,
        sha,
        ancestors: false,
        head: None,
        informative: false,
        trend: false,
    };
    // A stored baseline gets the configured rounds, no more: the comparison
    // with the previous one is shown, never gated on.
    let m = match measure(a, &suite, plan, &lookup, false)? {
        Ok(m) => m,
        Err(code) => return Ok(code),
    };
    let store = a.store()?;
    let key = store.store(branch, sha, &m.results, MAX_HISTORY)?;
    let line = format!(
        "benchgate: stored the baseline of {branch} at {sha} (run {}); keeping at most {MAX_HISTORY} per branch",
        key.run_id
    );
    crate::stderrln!("{}", crate::report::untrusted::for_log(&line));
    let code = Report {
        no_baseline_passes: true,
        ..m.report(None)?
    }
    .finish(a)?;
    if a.inputs.cloudwatch {
        publish_cloudwatch(&suite, &m.results, branch);
    }
    Ok(code)
}

/// `schedule`/`workflow_dispatch`: run, compare as planned (the newest
/// baseline of `branch`; side by side with `[compare]`), publish to
/// CloudWatch when asked (a failure there is a warning); with `drift`, then
/// the drift in the stored history of `branch` (`drift::nightly`).
pub(super) fn compare_latest(
    a: &Action,
    branch: &str,
    sha: Option<&str>,
    drift: bool,
) -> anyhow::Result<u8> {
    let suite = a.suite()?;
    let plan = a.plan(&suite, false, GitBase::Stored)?;
    let lookup = Lookup {
        flow: "schedule",
        branch,
        sha: sha.unwrap_or(""),
        ancestors: false,
        head: None,
        informative: false,
        trend: false,
    };
    let m = match measure(a, &suite, plan, &lookup, true)? {
        Ok(m) => m,
        Err(code) => return Ok(code),
    };
    let code = m.report(None)?.finish(a)?;
    if a.inputs.cloudwatch {
        publish_cloudwatch(&suite, &m.results, branch);
    }
    if !drift {
        return Ok(code);
    }
    Ok(code.max(drift::nightly(a, branch, &suite.source)?))
}

/// The report's note for a plan that compares within the run: side by side
/// (`[compare] baseline_client`/`baseline_server`: the run holds both sides,
/// e.g. two builds as two clients, or two servers), or base vs head
/// (`[compare] base = "git"`: the repository's clients and servers built and
/// measured at the base commit too), compared round by round; no stored
/// baseline is read. The sturdiest gate on a noisy shared runner (docs/measurements.md,
/// "Gate quality, measured").
pub(super) fn side_by_side_note(plan: &ComparisonPlan, head: Option<&str>) -> String {
    let (client, server) = match &plan.against {
        Some(Against::BaseVsHead { base_ref }) => {
            return format!(
                "> **Baseline:** base vs head: every command client and server under test of the repository was built and measured at the base commit {} (as `NAME@base`) and at the head{} in this same run, paired by round (`[compare] base = \"git\"`; no stored baseline is used).\n\n{}",
                sha(base_ref),
                head.map(|h| format!(" {}", sha(h))).unwrap_or_default(),
                plan.gate_note.as_deref().unwrap_or("")
            );
        }
        Some(Against::SideBySide { client, server }) => (client.as_deref(), server.as_deref()),
        // Every arm named: a new comparison mode does not compile until it
        // says here what the comment's baseline line is.
        Some(Against::Stored(_)) | None => (None, None),
    };
    let what = match (client, server) {
        (Some(c), Some(s)) => format!("client {} on server {}", md(c), md(s)),
        (Some(c), None) => format!("client {}", md(c)),
        (None, Some(s)) => format!("server {}", md(s)),
        (None, None) => "nothing".to_string(),
    };
    format!(
        "> **Baseline:** side by side: every cell against {what} measured in this same run, paired by round (`[compare]` in the config; no stored baseline is used).\n\n"
    )
}

/// Publishes the results to CloudWatch (the config's `[publish.cloudwatch]`,
/// the default retry policy); never changes the exit code.
fn publish_cloudwatch(suite: &Suite, results: &RunResults, branch: &str) {
    let settings = suite
        .publish
        .clone()
        .and_then(|p| p.cloudwatch)
        .unwrap_or_default();
    command("::group::benchgate publish cloudwatch");
    let result = crate::pipeline::cloudwatch::publish(
        results,
        settings,
        branch.to_string(),
        crate::retry::RetryPolicy::default(),
    );
    command("::endgroup::");
    match result {
        Ok(0) => {}
        // `publish` has printed its own warning.
        Ok(_) => crate::stderrln!("benchgate: CloudWatch publishing failed; the verdict stands"),
        Err(e) => command(&annotation(
            Level::Warning,
            "benchgate CloudWatch publish failed",
            &format!("{e:#}; the verdict stands"),
        )),
    }
}

/// The comment sink for a pull request: GitHub's when there is a token and a
/// comment to write, else [`SummaryOnly`] (with a warning if GitHub's could
/// not be built).
pub(super) fn comment_sink(a: &Action, pr: u64, suite_id: &str) -> Box<dyn CommentSink> {
    if a.inputs.comment == CommentMode::Never {
        return summary_only("input `comment` is never");
    }
    let Some(target) = a.github() else {
        return summary_only("no github-token (the report is in the job summary)");
    };
    match github::comment_sink(&target, pr, suite_id) {
        Ok(s) => s,
        Err(e) => {
            command(&annotation(
                Level::Warning,
                "benchgate cannot comment",
                &format!("{e:#}; the report is in the job summary"),
            ));
            summary_only("the GitHub comment sink is unavailable")
        }
    }
}

fn summary_only(reason: &str) -> Box<dyn CommentSink> {
    Box::new(SummaryOnly {
        reason: reason.to_string(),
    })
}

/// The base commit's ancestors, newest first, from `git` in the working
/// directory when its history is there (best effort: a shallow checkout, no
/// git, or an unknown commit give none). Not used in report mode, which runs
/// nothing in the workspace.
fn ancestors(base_sha: &str) -> Vec<String> {
    let out = Command::new("git")
        .args(["rev-list", "--first-parent"])
        .arg(format!("--max-count={}", MAX_ANCESTORS + 1))
        .arg(base_sha)
        .arg("--")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}
