//! The CLI's report files: the flags `--markdown`, `--summary`, `--json` and
//! `--export-dir` as [`ReportFiles`] (written by [`crate::report::files`]),
//! and the terminal table of a comparison.

use std::io::IsTerminal as _;
use std::path::Path;

use crate::cli::ReportArgs;
use crate::compare::Comparison;
use crate::report::files::{Frame, ReportFiles, Sides, SummaryFile};
use crate::report::run_table::Width;
use crate::report::{self, markdown::MarkdownOptions};

/// Whether stdout wants colour (a terminal, and NO_COLOR unset): read here,
/// at the edge, and passed to the renderers.
pub fn color_stdout() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Whether a run draws a progress bar on stderr (a terminal, outside CI,
/// where a log keeps plain lines): read here, at the edge, into the run
/// options.
pub fn progress_bar() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// How wide the terminal's tables are: every column with `--wide`, else
/// 120 columns or stdout's terminal width when wider (read here, at the
/// edge).
pub fn table_width(wide: bool) -> Width {
    match wide {
        true => Width::Wide,
        false => Width::fit(terminal_columns()),
    }
}

/// The columns of the terminal stdout is, when it is one.
fn terminal_columns() -> Option<usize> {
    use std::os::fd::AsRawFd as _;
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which
    // points at a live one; the descriptor is stdout's, open for the call.
    let ok = unsafe { libc::ioctl(stdout.as_raw_fd(), libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// The CLI's report flags.
pub fn report_files(outputs: &ReportArgs, json: Option<&Path>) -> anyhow::Result<ReportFiles> {
    let summary = match &outputs.summary {
        Some(p) if p.as_os_str() == "-" => {
            let target = std::env::var_os("GITHUB_STEP_SUMMARY").ok_or_else(|| {
                anyhow::anyhow!("--summary -: GITHUB_STEP_SUMMARY is not set; name a file instead")
            })?;
            Some(SummaryFile::Append(target.into()))
        }
        Some(p) => Some(SummaryFile::Write(p.clone())),
        None => None,
    };
    Ok(ReportFiles {
        markdown: outputs.markdown.clone(),
        summary,
        json: json.map(Path::to_path_buf),
        export_dir: outputs.export_dir.clone(),
    })
}

/// Prints the comparison, writes the report files asked for, and returns the
/// gate's exit code.
pub(crate) fn finish_comparison(
    c: &Comparison,
    sides: Sides<'_>,
    json: Option<&Path>,
    outputs: &ReportArgs,
) -> anyhow::Result<u8> {
    report_files(outputs, json)?.write(c, sides, Frame::default(), &MarkdownOptions::default())?;
    let table = report::terminal::render_comparison(c, color_stdout(), table_width(outputs.wide));
    crate::stdout!("{}", report::escape::fence(&table));
    Ok(c.exit_code)
}
