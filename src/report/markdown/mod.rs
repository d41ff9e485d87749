//! Markdown reports of a comparison: the pull-request comment and the job
//! summary (`$GITHUB_STEP_SUMMARY`); and of a run compared with nothing
//! ([`render_run`]). Pure functions returning strings; the GitHub layer adds
//! its hidden marker line and decides where the text goes.
//!
//! Layout: a headline verdict with counts; what was compared (commits, the
//! baseline's age, or the two clients in side-by-side mode); a table per
//! scenario (regressions first, improvements shown, gating metrics before
//! informative ones); then collapsible `<details>` sections: charts (mermaid
//! `xychart-beta`), the other metrics, full latency percentiles, error classes,
//! resources, the environment of both sides, and the reasons for each verdict.
//!
//! Safety: every name from the config or a results file goes through
//! [`escape`](super::escape); the only HTML is `<details>`/`<summary>`, written
//! here. Size: the comment fits `max_chars` *characters* (GitHub counts
//! characters): details are dropped first, then the least important table rows,
//! and a note says what was left out (see [`Doc::fit`]).

mod budget;
mod chart;
mod details;
mod drift;
mod run;
mod tables;
pub use tables::machine_changed;

use crate::compare::Comparison;
use crate::results::RunResults;

use budget::{Doc, Measure, Section};
pub use chart::MAX_HISTORY_POINTS;
pub use drift::render as render_drift;
pub use drift::{MAX_CHARTS as MAX_DRIFT_CHARTS, MAX_ROWS as MAX_DRIFT_ROWS};
pub use run::HOW_TO_COMPARE;

/// GitHub's limit on an issue or pull-request comment body, in characters.
pub const MAX_COMMENT_CHARS: usize = 65_536;

/// GitHub's limit on one step's job summary, in bytes (1 MiB).
pub const MAX_JOB_SUMMARY_BYTES: usize = 1024 * 1024;

/// Points of one metric's history (oldest first), for a line chart.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MetricHistory {
    pub scenario: String,
    pub client: String,
    pub metric: String,
    /// `(label, value)`: a label per stored run (a short sha or a date) and the
    /// metric's median then. The current run is appended by the renderer.
    pub points: Vec<(String, f64)>,
}

/// How to render.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkdownOptions {
    /// Largest body in characters, for the comment. Pass
    /// [`MAX_COMMENT_CHARS`] minus whatever the caller adds (its marker line).
    pub max_chars: usize,
    /// History per (scenario, client, metric), when the baseline store has it.
    pub history: Vec<MetricHistory>,
    /// Where the omitted parts can be found, appended to the omission note.
    /// Trusted markdown written by the caller (not escaped).
    pub omitted_hint: String,
}

impl Default for MarkdownOptions {
    fn default() -> Self {
        MarkdownOptions {
            max_chars: MAX_COMMENT_CHARS,
            history: Vec::new(),
            omitted_hint: "see the job summary or the results artifact".to_string(),
        }
    }
}

/// The pull-request comment: at most `opts.max_chars` characters, balanced
/// markdown. Handles every mode (`cmp.mode`, a [`crate::compare::ComparisonMode`]).
/// `current` is the run measured now; `baseline` the stored run compared with
/// (`None` when there is none, and in side-by-side mode, where both clients
/// come from `current`).
pub fn render(
    cmp: &Comparison,
    current: &RunResults,
    baseline: Option<&RunResults>,
    opts: &MarkdownOptions,
) -> String {
    build(cmp, current, baseline, opts).fit(Measure::Chars(opts.max_chars), &opts.omitted_hint)
}

/// The job summary: the same content, bounded only by GitHub's 1 MiB
/// per-step limit ([`MAX_JOB_SUMMARY_BYTES`]).
pub fn render_job_summary(
    cmp: &Comparison,
    current: &RunResults,
    baseline: Option<&RunResults>,
    opts: &MarkdownOptions,
) -> String {
    build(cmp, current, baseline, opts)
        .fit(Measure::Bytes(MAX_JOB_SUMMARY_BYTES), &opts.omitted_hint)
}

/// The comment's markdown of a run compared with nothing (`benchgate run
/// --markdown` without a baseline): the run's tables, that nothing was
/// compared and how to compare; at most `opts.max_chars` characters.
pub fn render_run(run: &RunResults, opts: &MarkdownOptions) -> String {
    run::build(run).fit(Measure::Chars(opts.max_chars), &opts.omitted_hint)
}

/// The job summary of a run compared with nothing: the same content, bounded
/// by [`MAX_JOB_SUMMARY_BYTES`].
pub fn render_run_job_summary(run: &RunResults, opts: &MarkdownOptions) -> String {
    run::build(run).fit(Measure::Bytes(MAX_JOB_SUMMARY_BYTES), &opts.omitted_hint)
}

/// Assembles every part; sizing happens in [`Doc::fit`].
fn build(
    cmp: &Comparison,
    current: &RunResults,
    baseline: Option<&RunResults>,
    opts: &MarkdownOptions,
) -> Doc {
    let sides = details::Sides::new(cmp, current, baseline);
    let (tables, total_rows) = tables::scenario_tables(cmp);
    // In display order; `drop` is the drop priority (lower drops first).
    let mut sections = Vec::new();
    let mut add = |drop: u8, name: &'static str, text: String| {
        if !text.is_empty() {
            sections.push(Section { drop, name, text });
        }
    };
    add(4, "charts", chart::section(cmp, &opts.history));
    add(0, "other metrics", tables::other_metrics(cmp));
    add(1, "percentiles", details::percentiles(&sides));
    add(3, "errors", details::errors(&sides));
    add(2, "resources", details::resources(&sides));
    add(6, "environment", details::environment(&sides));
    add(5, "budget", crate::report::spent::markdown(current));
    add(5, "reasons", details::reasons(cmp));
    Doc {
        head: tables::head(cmp),
        tables,
        total_rows,
        sections,
        footer: tables::footer(cmp),
    }
}
