//! The modes that run the suite in this job: pull request, baseline refresh
//! (push), and compare-with-latest (schedule, dispatch, other pushes).

use std::process::{Command, Stdio};

use crate::cli::CloudWatchArgs;
use crate::compare;

use super::comment::{CommentSink, SummaryOnly};
use super::event::PullRequest;
use super::github;
use super::inputs::CommentMode;
use super::outputs::{annotation, command, Level};
use super::report::{baseline_note, Report};
use super::steps::{Looked, Measured};
use super::{Action, MAX_HISTORY};
use crate::baseline::FoundBaseline;
use crate::report::escape::md;
use crate::runner::extend::Against;

/// Extra rounds against a stored baseline while a gating metric is undecided.
fn baseline_of(f: &FoundBaseline) -> Against {
    Against::Baseline(Box::new(f.results.clone()))
}

/// Most ancestors of the base commit looked up for the nearest older baseline.
const MAX_ANCESTORS: usize = 200;

/// `pull_request`: run, compare with the base commit's baseline (or the
/// nearest older one), comment, gate. Never writes the baseline.
pub(super) fn pull_request(a: &Action, pr: &PullRequest) -> anyhow::Result<u8> {
    let suite = a.suite()?;
    if suite.compare.is_some() {
        return side_by_side(a, &suite, Some(pr));
    }
    // Look the baseline up before spending minutes on the run.
    let Some(looked) = a.looked_up("pull_request", || {
        let store = a.store()?;
        let ancestors = ancestors(&pr.base_sha);
        Ok(Looked {
            found: store.lookup(&pr.base_ref, &pr.base_sha, &ancestors)?,
            history: !ancestors.is_empty(),
        })
    })?
    else {
        return Ok(0);
    };
    let found = looked.found;
    let results = match a.measured(&suite, found.as_ref().map(baseline_of))? {
        Measured::Results(r) => *r,
        Measured::Done(code) => return Ok(code),
    };
    let note = baseline_note(
        found.as_ref(),
        &pr.base_ref,
        Some(&pr.base_sha),
        looked.history,
    );
    let comparison = compare::compare(found.as_ref().map(|f| &f.results), &results, &suite.gate);
    let sink = comment_sink(a, pr.number, &suite.source);
    Report {
        comparison,
        current: &results,
        baseline: found.as_ref(),
        note,
        comment: Some((sink, pr.head_sha.clone())),
        no_baseline_passes: false,
    }
    .finish(a)
}

/// `push` to the baseline branch: run, store the baseline, and show the change
/// from the previous one. A missing previous baseline never fails; a run the
/// job's cancellation cut short is never stored. Publishes to
/// CloudWatch when asked (a failure there is a warning).
pub(super) fn store_baseline(a: &Action, branch: &str, sha: &str) -> anyhow::Result<u8> {
    let suite = a.suite()?;
    let Some(looked) = a.looked_up("push", || {
        Ok(Looked {
            found: a.store()?.lookup(branch, sha, &[])?,
            history: false,
        })
    })?
    else {
        return Ok(0);
    };
    let previous = looked.found;
    let results = match a.measured(&suite, None)? {
        Measured::Results(r) => *r,
        Measured::Done(code) => return Ok(code),
    };
    let store = a.store()?;
    let key = store.store(branch, sha, &results, MAX_HISTORY)?;
    eprintln!(
        "benchgate: stored the baseline of {branch} at {sha} (run {}); keeping at most {MAX_HISTORY} per branch",
        key.run_id
    );
    let note = baseline_note(previous.as_ref(), branch, None, false);
    let comparison = compare::compare(previous.as_ref().map(|f| &f.results), &results, &suite.gate);
    let code = Report {
        comparison,
        current: &results,
        baseline: previous.as_ref(),
        note,
        comment: None,
        no_baseline_passes: true,
    }
    .finish(a)?;
    if a.inputs.cloudwatch {
        publish_cloudwatch(a, branch);
    }
    Ok(code)
}

/// `schedule`/`workflow_dispatch`: run, compare with the newest baseline of
/// `branch`, publish to CloudWatch when asked (a failure there is a warning).
pub(super) fn compare_latest(a: &Action, branch: &str, sha: Option<&str>) -> anyhow::Result<u8> {
    let suite = a.suite()?;
    if suite.compare.is_some() {
        let code = side_by_side(a, &suite, None)?;
        if a.inputs.cloudwatch && a.publishes() {
            publish_cloudwatch(a, branch);
        }
        return Ok(code);
    }
    let Some(looked) = a.looked_up("schedule", || {
        Ok(Looked {
            found: a.store()?.lookup(branch, sha.unwrap_or(""), &[])?,
            history: false,
        })
    })?
    else {
        return Ok(0);
    };
    let found = looked.found;
    let results = match a.measured(&suite, found.as_ref().map(baseline_of))? {
        Measured::Results(r) => *r,
        Measured::Done(code) => return Ok(code),
    };
    let note = baseline_note(found.as_ref(), branch, None, false);
    let comparison = compare::compare(found.as_ref().map(|f| &f.results), &results, &suite.gate);
    let code = Report {
        comparison,
        current: &results,
        baseline: found.as_ref(),
        note,
        comment: None,
        no_baseline_passes: false,
    }
    .finish(a)?;
    if a.inputs.cloudwatch {
        publish_cloudwatch(a, branch);
    }
    Ok(code)
}

/// `[compare]` in the config (pull request, schedule): side-by-side mode. The
/// run itself holds both sides (e.g. `base` and `head` builds of a client, or
/// two servers), compared round by round; no stored baseline is read, and more
/// rounds run while a gating metric is undecided (`[run] max_rounds`). The
/// sturdiest gate on a noisy shared runner (README, "Gate quality, measured").
fn side_by_side(
    a: &Action,
    suite: &crate::config::Suite,
    pr: Option<&PullRequest>,
) -> anyhow::Result<u8> {
    let settings = suite.compare.clone().unwrap_or_default();
    let against = crate::runner::extend::Against::SideBySide {
        client: settings.baseline_client.clone(),
        server: settings.baseline_server.clone(),
    };
    // The lookup step measures nothing (`Done(0)`): no stored baseline here.
    let results = match a.measured(suite, Some(against.clone()))? {
        Measured::Results(r) => *r,
        Measured::Done(code) => return Ok(code),
    };
    // The same comparison that decided the extra rounds during the run.
    let comparison = against.compare(&results, &suite.gate);
    let what = match (&settings.baseline_client, &settings.baseline_server) {
        (Some(c), Some(s)) => format!("client {} on server {}", md(c), md(s)),
        (Some(c), None) => format!("client {}", md(c)),
        (None, Some(s)) => format!("server {}", md(s)),
        (None, None) => "nothing".to_string(),
    };
    let note = format!(
        "> **Baseline:** side by side: every cell against {what} measured in this same run, paired by round (`[compare]` in the config; no stored baseline is used).\n\n"
    );
    Report {
        comparison,
        current: &results,
        baseline: None,
        note,
        comment: pr.map(|pr| {
            (
                comment_sink(a, pr.number, &suite.source),
                pr.head_sha.clone(),
            )
        }),
        no_baseline_passes: false,
    }
    .finish(a)
}

/// Publishes the results to CloudWatch; never changes the exit code.
fn publish_cloudwatch(a: &Action, branch: &str) {
    let config = a.config_path();
    let args = CloudWatchArgs {
        results: a.results_path(),
        config,
        namespace: None,
        region: None,
        branch: Some(branch.to_string()),
        max_attempts: 8,
        retry_deadline: "60s".into(),
        retry_base_ms: 200,
    };
    command("::group::benchgate publish cloudwatch");
    let result = crate::commands::publish_cloudwatch(args);
    command("::endgroup::");
    match result {
        Ok(0) => {}
        // `publish_cloudwatch` has printed its own warning.
        Ok(_) => eprintln!("benchgate: CloudWatch publishing failed; the verdict stands"),
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
