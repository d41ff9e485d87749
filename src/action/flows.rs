//! The modes that run the suite in this job: pull request, baseline refresh
//! (push), and compare-with-latest (schedule, dispatch, other pushes).

use crate::config::Suite;
use crate::pipeline::{self, Lookup, Where};
use crate::plan::{ComparisonPlan, GitBase};
use crate::report::escape::{md, sha};
use crate::results::RunResults;

use super::comment::{CommentSink, SummaryOnly};
use super::drift;
use super::event::PullRequest;
use super::github;
use super::history;
use super::inputs::CommentMode;
use super::outputs::{annotation, command, Level};
use super::report::{baseline_note, Report};
use super::steps::Measured;
use super::{Action, MAX_HISTORY};

/// What a flow measured, with what it was compared with.
pub(super) struct Measurement {
    pub lookup: Lookup,
    pub results: RunResults,
    /// How the baseline was chosen, for the report.
    pub note: String,
    /// The branch of the informative stored baseline (base vs head).
    pub branch: String,
}

impl Measurement {
    pub fn report(
        &self,
        comment: Option<(Box<dyn CommentSink>, String)>,
    ) -> anyhow::Result<Report<'_>> {
        let judged = pipeline::judge(&self.lookup, &self.results);
        let comparison = judged
            .comparison
            .ok_or_else(|| anyhow::anyhow!("the action's comparison plan compares nothing"))?;
        let appendix = match (&judged.informative, &self.lookup.informative) {
            (Some(cmp), Some(found)) => history::section(cmp, found, &self.branch),
            _ => String::new(),
        };
        Ok(Report {
            comparison,
            current: &self.results,
            baseline: self.lookup.found.as_ref(),
            note: self.note.clone(),
            appendix,
            comment,
            no_baseline_passes: false,
            trend: self.lookup.trend.clone(),
        })
    }
}

/// A flow's stages up to the comparison: the lookup in `w` for `flow`
/// (`lookup` ends there), the suite measured (`measure` ends there), as the
/// plan compares or not (`compared`: a baseline to store gets exactly its
/// rounds); `head` is named in a base-vs-head note. `Err(code)`: this step
/// is done.
fn measure(
    a: &Action,
    suite: &Suite,
    (stored, git_base): (bool, GitBase),
    (flow, head): (&str, Option<&str>),
    w: Where<'_>,
    compared: bool,
) -> anyhow::Result<Result<Measurement, u8>> {
    let (branch, sha, ancestors) = (w.branch, w.sha, w.ancestors);
    let Some(lookup) = a.looked_up(suite, stored, git_base, flow, w)? else {
        return Ok(Err(0));
    };
    let note = if lookup.plan.wants_stored() {
        let wanted = ancestors.then_some(sha);
        baseline_note(lookup.found.as_ref(), branch, wanted, lookup.history)
    } else {
        side_by_side_note(&lookup.plan, head)
    } + &store_notes(&lookup.notes);
    let results = match a.measured(suite, &lookup, compared)? {
        Measured::Results(r) => *r,
        Measured::Done(code) => return Ok(Err(code)),
    };
    Ok(Ok(Measurement {
        lookup,
        results,
        note,
        branch: branch.to_string(),
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
    let w = Where {
        store: &|| a.store(),
        branch: &pr.base_ref,
        sha: &pr.base_sha,
        ancestors: true,
        informative: true,
    };
    let asked = (false, GitBase::Commit(pr.base_sha.clone()));
    let m = match measure(
        a,
        &suite,
        asked,
        ("pull_request", Some(&pr.head_sha)),
        w,
        true,
    )? {
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
    let w = Where {
        store: &|| a.store(),
        branch,
        sha,
        ancestors: false,
        informative: false,
    };
    // A stored baseline gets the configured rounds, no more: the comparison
    // with the previous one is shown, never gated on.
    let m = match measure(a, &suite, (true, GitBase::Stored), ("push", None), w, false)? {
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
    let w = Where {
        store: &|| a.store(),
        branch,
        sha: sha.unwrap_or(""),
        ancestors: false,
        informative: false,
    };
    let m = match measure(
        a,
        &suite,
        (false, GitBase::Stored),
        ("schedule", None),
        w,
        true,
    )? {
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
    if let Some(base_ref) = plan.base_ref() {
        return format!(
            "> **Baseline:** base vs head: every command client and server under test of the repository was built and measured at the base commit {} (as `NAME@base`) and at the head{} in this same run, paired by round (`[compare] base = \"git\"`; no stored baseline is used).\n\n{}",
            sha(base_ref),
            head.map(|h| format!(" {}", sha(h))).unwrap_or_default(),
            plan.gate_note.as_deref().unwrap_or("")
        );
    }
    let what = match (
        plan.baseline_client.as_deref(),
        plan.baseline_server.as_deref(),
    ) {
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
