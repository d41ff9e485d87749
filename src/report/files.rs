//! The report files of a comparison: the comment's markdown, the job
//! summary, the comparison JSON and the exports; and of a run compared with
//! nothing ([`ReportFiles::write_run`]). The one writer of the CLI
//! (`--markdown`, `--summary`, `--json`, `--export-dir`:
//! `commands::output`) and of the action (`report-path`, the job summary).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::compare::Comparison;
use crate::report::{self, markdown, markdown::MarkdownOptions};
use crate::results::RunResults;

/// The two runs behind a comparison (side by side: only `current`).
#[derive(Clone, Copy)]
pub struct Sides<'a> {
    pub current: &'a RunResults,
    pub baseline: Option<&'a RunResults>,
}

/// Where a comparison's reports are written: the one writer of the CLI
/// (`--markdown`, `--summary`, `--json`, `--export-dir`) and the action
/// (`report-path`, the job summary).
#[derive(Debug, Clone, Default)]
pub struct ReportFiles {
    /// The pull-request comment's markdown.
    pub markdown: Option<PathBuf>,
    /// The job summary.
    pub summary: Option<SummaryFile>,
    /// The comparison as JSON.
    pub json: Option<PathBuf>,
    /// github-action-benchmark JSON and `.hgrm` histograms of the current run.
    pub export_dir: Option<PathBuf>,
}

/// Trusted markdown around a report: before it and after it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Frame<'a> {
    pub note: &'a str,
    pub appendix: &'a str,
}

/// Where the job summary goes.
#[derive(Debug, Clone)]
pub enum SummaryFile {
    /// A file of its own.
    Write(PathBuf),
    /// Appended (GitHub's `$GITHUB_STEP_SUMMARY`, which other steps share).
    Append(PathBuf),
}

impl ReportFiles {
    /// Writes every file asked for. `frame`: trusted markdown put before
    /// (how the action chose its baseline) and after (an informative
    /// comparison) the comment and the summary. Returns the comment's body,
    /// which fits `opts.max_chars` with the frame.
    pub fn write(
        &self,
        c: &Comparison,
        sides: Sides<'_>,
        frame: Frame<'_>,
        opts: &MarkdownOptions,
    ) -> anyhow::Result<String> {
        let Frame { note, appendix } = frame;
        if let Some(path) = &self.json {
            write_file(path, &report::json::render(c), "the comparison JSON")?;
        }
        let opts = MarkdownOptions {
            max_chars: opts
                .max_chars
                .saturating_sub(note.chars().count() + appendix.chars().count()),
            ..opts.clone()
        };
        let body = format!(
            "{note}{}{appendix}",
            markdown::render(c, sides.current, sides.baseline, &opts)
        );
        if let Some(path) = &self.markdown {
            write_file(path, &body, "the PR comment")?;
        }
        if let Some(summary) = &self.summary {
            let text = format!(
                "{note}{}{appendix}\n",
                markdown::render_job_summary(c, sides.current, sides.baseline, &opts)
            );
            match summary {
                SummaryFile::Write(path) => write_file(path, &text, "the job summary")?,
                SummaryFile::Append(path) => append_file(path, &text, "the job summary")?,
            }
        }
        if let Some(dir) = &self.export_dir {
            write_exports(sides.current, dir)?;
        }
        Ok(body)
    }
}

impl ReportFiles {
    /// Writes the files asked for after a run compared with nothing: the
    /// comment and the job summary hold the run's tables and say that
    /// nothing was compared and how to compare; the exports as usual. There
    /// is no comparison for `json`: a note on stderr says so.
    pub fn write_run(&self, run: &RunResults, opts: &MarkdownOptions) -> anyhow::Result<()> {
        if let Some(path) = &self.json {
            let line = format!(
                "benchgate: nothing was compared, so no comparison JSON was written to {} (the results file holds every figure)",
                path.display()
            );
            crate::stderrln!("{}", report::untrusted::for_log(&line));
        }
        if let Some(path) = &self.markdown {
            write_file(path, &markdown::render_run(run, opts), "the run's markdown")?;
        }
        if let Some(summary) = &self.summary {
            let text = format!("{}\n", markdown::render_run_job_summary(run, opts));
            match summary {
                SummaryFile::Write(path) => write_file(path, &text, "the job summary")?,
                SummaryFile::Append(path) => append_file(path, &text, "the job summary")?,
            }
        }
        if let Some(dir) = &self.export_dir {
            write_exports(run, dir)?;
        }
        Ok(())
    }
}

/// github-action-benchmark JSON and `.hgrm` files of `results` in `dir`.
pub fn write_exports(results: &RunResults, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let bench = report::export::github_action_benchmark(results);
    write_file(
        &dir.join("benchmark-bigger-is-better.json"),
        &bench.bigger_json(),
        "an export",
    )?;
    write_file(
        &dir.join("benchmark-smaller-is-better.json"),
        &bench.smaller_json(),
        "an export",
    )?;
    for f in report::export::hgrm_files(results).map_err(anyhow::Error::msg)? {
        write_file(&dir.join(&f.file_name), &f.text, "a histogram export")?;
    }
    Ok(())
}

fn write_file(path: &Path, text: &str, what: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {what} to {}", path.display()))
}

fn append_file(path: &Path, text: &str, what: &str) -> anyhow::Result<()> {
    crate::files::append(path, text).with_context(|| format!("appending {what}"))
}
