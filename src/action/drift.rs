//! The nightly run's drift check (`schedule`, `workflow_dispatch`, `mode:
//! schedule`): after the run and its comparison, the stored history of the
//! baseline branch is analysed as `benchgate history` does
//! ([`crate::pipeline::history::read`]); the job summary gets the drift report
//! with a trend chart per drifting series; with input `drift-issue` one
//! sticky issue is opened or updated while a series drifts and closed when
//! none does ([`crate::github::issue`]). Drift fails the step only with input
//! `fail-on-drift`; an unreadable history or a failed issue write is a
//! warning (an error with `fail-on-drift`, which could not be honoured).

use crate::compare::changepoint::Options;
use crate::github::issue::{IssueResult, IssueText};
use crate::pipeline::history::{nothing_stored, read, Analysed};
use crate::report::drift::History;
use crate::report::escape::md;
use crate::report::markdown::render_drift;

use super::inputs::StoreSpec;
use super::outputs::{annotation, command, Level};
use super::{github, Action, MAX_HISTORY};

/// Runs the check; the step's exit code for drift (0, or 1 with
/// `fail-on-drift` when a series drifts).
pub(super) fn nightly(a: &Action, branch: &str, suite_id: &str) -> anyhow::Result<u8> {
    let opts = Options::default();
    let source = match &a.inputs.baseline_store {
        StoreSpec::Local(dir) => format!("the local store {}", dir.display()),
        StoreSpec::Branch => format!("the data branch {:?}", a.inputs.data_branch),
    };
    let analysed = a.store().and_then(|store| {
        read(store.as_ref(), &source, branch, MAX_HISTORY, opts)?
            .ok_or_else(|| anyhow::anyhow!(nothing_stored(store.as_ref(), &source, branch)))
    });
    let analysed: Analysed = match analysed {
        Ok(found) => found,
        Err(e) if a.inputs.fail_on_drift => {
            return Err(e.context("input `fail-on-drift`: the stored history could not be analysed"))
        }
        Err(e) => {
            let why = format!("{e:#}");
            command(&annotation(
                Level::Warning,
                "benchgate: no drift check",
                &format!("{why}; the nightly verdict stands"),
            ));
            summary(
                a,
                &format!("## benchgate history\n\nNo drift check: {}.\n", md(&why)),
            )?;
            a.write_outputs(&[("drifting", "0".into())])?;
            return Ok(0);
        }
    };
    let view = analysed.view(branch, opts);
    let report = render_drift(&view);
    summary(a, &report)?;
    let drifting = view.drifting().count();
    let url = match a.inputs.drift_issue {
        true => issue(a, suite_id, &view, &report, drifting),
        false => None,
    };
    a.write_outputs(&[
        ("drifting", drifting.to_string()),
        ("drift-issue-url", url.unwrap_or_default()),
    ])?;
    let what =
        format!("{drifting} series of {branch} drift (the job summary has their trend charts)");
    Ok(match (drifting, a.inputs.fail_on_drift) {
        (0, _) => 0,
        (_, true) => {
            command(&annotation(Level::Error, "benchgate: drift", &what));
            1
        }
        (_, false) => {
            command(&annotation(
                Level::Warning,
                "benchgate: drift",
                &format!("{what}; the step passes because input `fail-on-drift` is false"),
            ));
            0
        }
    })
}

/// Appends `text` to the job summary, when there is one.
fn summary(a: &Action, text: &str) -> anyhow::Result<()> {
    match &a.ctx.summary_path {
        Some(p) => crate::files::append(p, &format!("\n{text}")),
        None => Ok(()),
    }
}

/// Opens, updates or closes the sticky drift issue; its URL. Failures are
/// warnings: the job summary has the report.
fn issue(
    a: &Action,
    suite_id: &str,
    view: &History<'_>,
    report: &str,
    drifting: usize,
) -> Option<String> {
    let Some(target) = a.github() else {
        command(&annotation(
            Level::Warning,
            "benchgate: no drift issue",
            "input `drift-issue` needs input `github-token` (or GITHUB_TOKEN) with `issues: write`; the report is in the job summary",
        ));
        return None;
    };
    let title = match drifting {
        0 => format!("benchgate: no drift on {}", view.branch),
        n => format!("benchgate: {n} drifting series on {}", view.branch),
    };
    let body = format!(
        "{report}\n---\nWritten by the nightly benchgate run {} (`drift-issue: true`); updated while a series drifts, closed when none does.\n",
        md(&a.ctx.run_id)
    );
    let newest = view.runs.last().map_or("", |k| k.sha.as_str());
    let text = IssueText {
        title: &title,
        body: &body,
    };
    match github::drift_issue(&target, suite_id, newest, drifting > 0, text) {
        Ok(IssueResult::Skipped(why)) => {
            let line = format!("benchgate: drift issue: {why}");
            crate::stderrln!("{}", crate::report::untrusted::for_log(&line));
            None
        }
        Ok(
            IssueResult::Opened { url }
            | IssueResult::Updated { url }
            | IssueResult::Unchanged { url }
            | IssueResult::Closed { url },
        ) => Some(url),
        Err(e) => {
            command(&annotation(
                Level::Warning,
                "benchgate: drift issue not written",
                &format!("{e:#}; the report is in the job summary"),
            ));
            None
        }
    }
}
