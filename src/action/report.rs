//! The end of every comparing mode: the log, annotations, the markdown report,
//! the job summary, the comment, the step outputs and the exit code.

use std::fmt::Write as _;

use crate::baseline::FoundBaseline;
use crate::compare::{Comparison, GateOutcome, Tier, Verdict};
use crate::config::gate::InconclusivePolicy;
use crate::report::escape::{md, sha};
use crate::report::files::{Frame, ReportFiles, Sides, SummaryFile};
use crate::report::format::duration_words;
use crate::report::{markdown, rows, terminal};
use crate::results::RunResults;
use crate::timer::clock::parse_rfc3339;

use super::comment::{CommentResult, CommentSink, MAX_BODY_CHARS};
use super::inputs::CommentMode;
use super::outputs::{annotation, command, untrusted_block, Level};
use super::Action;

/// Most regression annotations per run (GitHub shows 10 per step).
const MAX_ANNOTATIONS: usize = 10;

/// A finished comparison and where it goes.
pub(crate) struct Report<'a> {
    pub comparison: Comparison,
    pub current: &'a RunResults,
    pub baseline: Option<&'a FoundBaseline>,
    /// Trusted markdown: which baseline was used (from [`baseline_note`]).
    pub note: String,
    /// Trusted markdown after the report: an informative comparison (base
    /// vs head: the stored baseline of the base branch, not gated).
    pub appendix: String,
    /// The pull request's sink and head sha; `None`: no comment (not a PR).
    pub comment: Option<(Box<dyn CommentSink>, String)>,
    /// A missing baseline never fails the step (baseline refresh runs).
    pub no_baseline_passes: bool,
    /// The base branch's last stored values, charted beside this run's.
    pub trend: Vec<markdown::MetricHistory>,
}

impl Report<'_> {
    pub fn finish(self, a: &Action) -> anyhow::Result<u8> {
        let cmp = &self.comparison;
        crate::stdout!(
            "{}",
            untrusted_block(&terminal::render_comparison(
                cmp,
                false,
                crate::report::run_table::Width::narrow(),
            ))
        );
        annotate(cmp);
        let sides = Sides {
            current: self.current,
            baseline: self.baseline.map(|f| &f.results),
        };
        let report_path = a.report_path();
        let files = ReportFiles {
            markdown: Some(report_path.clone()),
            summary: a.ctx.summary_path.clone().map(SummaryFile::Append),
            ..ReportFiles::default()
        };
        if files.summary.is_none() {
            crate::stderrln!("benchgate: GITHUB_STEP_SUMMARY is not set; no job summary written");
        }
        let opts = markdown::MarkdownOptions {
            max_chars: MAX_BODY_CHARS,
            history: self.trend.clone(),
            ..Default::default()
        };
        let frame = Frame {
            note: &self.note,
            appendix: &self.appendix,
        };
        let body = files.write(cmp, sides, frame, &opts)?;
        let url = match &self.comment {
            Some((sink, head)) => comment(a.inputs.comment, sink.as_ref(), &body, head, cmp),
            None => None,
        };
        // A comment abandoned by SIGINT/SIGTERM: the step ends as cancelled
        // (`Action::after_signal`), not with this verdict.
        if let Some(signal) = crate::interrupt::received() {
            anyhow::bail!("{} received while writing the report", signal.name());
        }
        let verdict = serde_json::to_value(cmp.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        a.write_outputs(&[
            ("verdict", verdict),
            ("regressions", cmp.regressions.to_string()),
            ("improvements", cmp.improvements.to_string()),
            ("results-path", a.results_path().display().to_string()),
            ("report-path", report_path.display().to_string()),
            ("comment-url", url.unwrap_or_default()),
        ])?;
        Ok(self.exit_code(a.inputs.fail_on_regression))
    }

    fn exit_code(&self, fail_on_regression: bool) -> u8 {
        let cmp = &self.comparison;
        if cmp.outcome == GateOutcome::NoBaseline && self.no_baseline_passes {
            return 0;
        }
        if cmp.exit_code != 0 && !fail_on_regression {
            command(&annotation(
                Level::Notice,
                "benchgate",
                "the gate failed; the step passes because input `fail-on-regression` is false",
            ));
            return 0;
        }
        cmp.exit_code
    }
}

/// Writes (or skips) the comment by the `comment` input; returns its URL.
/// Failures are warnings: the job summary has the report, the exit code is the gate's.
fn comment(
    mode: CommentMode,
    sink: &dyn CommentSink,
    body: &str,
    head: &str,
    cmp: &Comparison,
) -> Option<String> {
    let changed = !cmp.clean_pass();
    let result = match mode {
        CommentMode::Never => Ok(CommentResult::Skipped("input `comment` is never".into())),
        CommentMode::Always => sink.upsert(body, head),
        CommentMode::OnChange if changed => sink.upsert(body, head),
        CommentMode::OnChange => sink.update_existing(body, head),
    };
    match result {
        Ok(CommentResult::Forbidden(_)) => {
            command(&annotation(
                Level::Warning,
                "benchgate could not comment",
                "the token may not comment on this pull request (HTTP 403; a fork's token is read-only). The report is in the job summary; for forks use the measure/report split (docs/action.md).",
            ));
            None
        }
        Ok(CommentResult::Skipped(why)) => {
            crate::stderrln!("benchgate: no comment written: {why}");
            None
        }
        Ok(r) => r.url().map(str::to_string),
        Err(e) => {
            command(&annotation(
                Level::Warning,
                "benchgate could not comment",
                &format!("{e:#}; the report is in the job summary"),
            ));
            None
        }
    }
}

/// `::error::`/`::warning::` per regressed metric and per cell whose every
/// trial failed (names escaped by the annotation format), at most
/// [`MAX_ANNOTATIONS`]; and a warning that the run is inconclusive, unless
/// `[gate] inconclusive = "pass"` accepts such runs.
fn annotate(cmp: &Comparison) {
    if cmp.outcome == GateOutcome::Inconclusive
        && cmp.inconclusive_policy != InconclusivePolicy::Pass
    {
        let entries = crate::report::undecided::entries(cmp);
        let mut msg = crate::report::undecided::summary(&entries);
        for e in entries.iter().take(3) {
            let _ = write!(
                msg,
                " {} / {} {}: {}.",
                e.row.scenario,
                e.row.who(),
                e.row.metric,
                e.detail
            );
        }
        command(&annotation(Level::Warning, "benchgate: inconclusive", &msg));
    }
    let flagged: Vec<_> = cmp
        .metrics
        .iter()
        .filter(|m| {
            m.verdict == Verdict::Failed
                || (m.verdict == Verdict::Regressed && m.tier != Tier::Pass && m.gating)
        })
        .collect();
    for m in flagged.iter().take(MAX_ANNOTATIONS) {
        let level = if m.tier == Tier::Fail {
            Level::Error
        } else {
            Level::Warning
        };
        let (title, msg) = if m.verdict == Verdict::Failed {
            (
                format!("benchgate: {} / {} failed", m.scenario, m.client),
                m.reason.clone(),
            )
        } else {
            (
                format!(
                    "benchgate: {} / {} {} regressed",
                    m.scenario, m.client, m.metric
                ),
                format!("{}: {} ({})", m.metric, rows::change_with_ci(m), m.reason),
            )
        };
        command(&annotation(level, &title, &msg));
    }
    if flagged.len() > MAX_ANNOTATIONS {
        command(&annotation(
            Level::Warning,
            "benchgate",
            &format!(
                "{} more failed or regressed metrics: see the job summary",
                flagged.len() - MAX_ANNOTATIONS
            ),
        ));
    }
}

/// The job summary of a run a signal stopped (the job is being cancelled):
/// what was measured and that nothing was compared, stored or commented.
pub(crate) fn cancelled_summary(signal: &str, results: &RunResults, path: &str) -> String {
    let planned: usize = results
        .config
        .scenarios
        .iter()
        .map(|s| s.clients.len() * results.config.run.rounds as usize)
        .sum();
    let finished = results
        .results
        .iter()
        .flat_map(|c| &c.trials)
        .filter(|t| t.failure.is_none())
        .count();
    format!(
        "## ⏹️ benchgate: cancelled\n\nThe run was stopped by {signal} (the job was cancelled) after {finished} of {planned} trials: the results are partial, so nothing was compared or gated, no baseline was stored and no comment was written. What was measured is in {}.\n",
        md(path)
    )
}

/// How the baseline was chosen, as a markdown paragraph (names escaped).
/// `wanted`: the commit whose baseline was asked for; `ancestors_known`:
/// whether its history was available to pick the nearest older entry.
pub(crate) fn baseline_note(
    found: Option<&FoundBaseline>,
    branch: &str,
    wanted: Option<&str>,
    ancestors_known: bool,
) -> String {
    let mut out = String::from("> **Baseline:** ");
    let Some(f) = found else {
        let _ = write!(
            out,
            "none stored for {} yet, so nothing is compared (a neutral result). Runs on pushes to {} store one.\n\n",
            md(branch),
            md(branch)
        );
        return out;
    };
    let age = age_words(&f.key.started_at);
    let which = format!(
        "commit {} of {}, measured {age}",
        sha(&f.key.sha),
        md(branch)
    );
    let _ = match (f.exact, wanted) {
        (true, _) => write!(out, "the stored run of {which}."),
        (false, Some(w)) if ancestors_known => write!(
            out,
            "{} has no stored run; using the nearest older one, {which}.",
            sha(w)
        ),
        (false, Some(w)) => write!(
            out,
            "{} has no stored run and its history is not available here; using the newest stored run, {which}.",
            sha(w)
        ),
        (false, None) => write!(out, "the newest stored run, {which}."),
    };
    out.push_str("\n\n");
    out
}

fn age_words(started_at: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    match parse_rfc3339(started_at) {
        Some(t) if now >= t => format!("{} ago", duration_words(now - t)),
        _ => format!("at {}", md(started_at)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::BaselineKey;
    use crate::config::Suite;
    use crate::results::synthetic;

    fn found(exact: bool) -> FoundBaseline {
        let results = synthetic::run(Suite::default_suite(), 1, |_, _, _| None);
        FoundBaseline {
            key: BaselineKey {
                branch: "main".into(),
                sha: "abcdef0123456789abcdef".into(),
                started_at: "2020-01-01T00:00:00Z".into(),
                run_id: "r".into(),
            },
            exact,
            results,
        }
    }

    #[test]
    fn the_note_says_which_baseline_and_how_old() {
        let n = baseline_note(Some(&found(true)), "main", Some("abc"), false);
        assert!(
            n.contains("the stored run of commit `abcdef012345` of main, measured"),
            "{n}"
        );
        assert!(n.contains(" d ") && n.contains("ago"), "{n}");
        let n = baseline_note(Some(&found(false)), "main", Some("1234567"), true);
        assert!(
            n.contains("`1234567` has no stored run; using the nearest older one"),
            "{n}"
        );
        let n = baseline_note(Some(&found(false)), "main", Some("1234567"), false);
        assert!(n.contains("newest stored run"), "{n}");
        let n = baseline_note(None, "feat/[x](y)", None, false);
        assert!(
            n.contains("feat/\\[x\\]\\(y\\)") && n.contains("neutral"),
            "{n}"
        );
    }
}
