//! The terminal report: the run's table ([`run_table`], a row per (scenario,
//! client[, server]), each figure the median across rounds with its spread),
//! its legend, then failed trials and the environment; and the comparison
//! table ([`render_comparison`]).

mod compare;

pub use crate::report::run_table::SERVER_UNDER_TEST_NOTE;
pub use compare::render_comparison;

use std::fmt::Write as _;
use std::io::IsTerminal as _;

use crate::report::run_table;
use crate::results::RunResults;

/// Whether stdout wants colour (a terminal, and NO_COLOR unset).
pub fn color_stdout() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Untrusted text that may quote a program's output (a failure reason: a
/// first line, then `stdout tail:` and its lines), for the terminal: the
/// first line as it is, each further line indented behind `    | ` so that
/// none starts a line of its own (a workflow command such as `::add-mask::`
/// is recognised only at a line's start) and the runner's legacy `##[`
/// broken up, as the progress lines do; carriage returns end lines, and
/// other control characters (and bidi overrides) are shown escaped, so the
/// text cannot move the cursor.
pub fn output_text(s: &str) -> String {
    let text = s.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.trim_end().split('\n').enumerate() {
        if i > 0 {
            out.push_str("\n    | ");
        }
        for c in line.chars() {
            if c != '\t' && crate::report::escape::is_hidden(c) {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            } else {
                out.push(c);
            }
        }
    }
    out.replace("##[", "## [")
}

/// Renders the results table. Names from the config are printed with control
/// characters escaped, so a name cannot move the cursor or forge lines.
pub fn render(results: &RunResults, color: bool) -> String {
    let table = run_table::table(results);
    let headers = &table.headers;
    let rows: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|(c, cells)| {
            let mut r: Vec<String> = cells.iter().map(|s| s.escape_debug().to_string()).collect();
            if c.trials.iter().any(|t| !t.invalid.is_empty()) {
                r[1].push_str(" (invalid)");
            }
            r
        })
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, v) in widths.iter_mut().zip(r) {
            *w = (*w).max(v.chars().count());
        }
    }
    let (bold, reset) = if color {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("", "")
    };
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        for (i, (v, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - v.chars().count();
            if i < 2 {
                let _ = write!(out, "{v}{}", " ".repeat(pad));
            } else {
                let _ = write!(out, "{}{v}", " ".repeat(pad));
            }
            out.push_str(if i + 1 < cells.len() { "  " } else { "\n" });
        }
    };
    out.push_str(bold);
    let header_cells: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    line(&header_cells, &mut out);
    out.push_str(reset);
    for r in &rows {
        line(r, &mut out);
    }
    out.push('\n');
    for l in &table.legend {
        let _ = writeln!(out, "{l}");
    }
    for c in &results.results {
        for t in &c.trials {
            if let Some(f) = &t.failure {
                let _ = writeln!(
                    out,
                    "failed: {} / {} round {}: {}",
                    c.scenario.escape_debug(),
                    c.label().escape_debug(),
                    t.round,
                    output_text(f)
                );
            }
            for mark in &t.invalid {
                let _ = writeln!(
                    out,
                    "invalid: {} / {} round {}: {}",
                    c.scenario.escape_debug(),
                    c.label().escape_debug(),
                    t.round,
                    mark.describe()
                );
            }
        }
    }
    out.push_str(&crate::report::spent::terminal(results));
    let e = &results.environment;
    let _ = writeln!(
        out,
        "{} ({} cores), {}, kernel {}, benchgate {}, pinning {}",
        e.cpu_model,
        e.cores,
        e.os,
        e.kernel,
        e.benchgate_version,
        if e.pinning.enabled {
            format!(
                "server cpu {:?} / clients {:?}",
                e.pinning.server_cpus, e.pinning.client_cpus
            )
        } else {
            "off".into()
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use crate::results::synthetic;

    fn render(edit: impl Fn(&mut crate::metric::TrialMetrics)) -> String {
        super::render(&synthetic::one_cell_run(edit), false)
    }

    /// Start-up gets its columns only when some cell measured it (results
    /// from before it existed render as they did).
    #[test]
    fn start_up_columns_only_when_measured() {
        let with = render(|_| {});
        let header = with.lines().next().unwrap();
        assert!(header.contains("  startup  startup cpu  "), "{with}");
        let row = with.lines().nth(1).unwrap();
        assert!(row.contains("  29.0ms       30.0ms  "), "{with}");
        let without = render(|m| (m.startup_ms, m.startup_cpu_ms) = (None, None));
        assert!(!without.contains("startup"), "{without}");
    }

    /// The starvation columns likewise (two of them: the client's run-delay
    /// share and the server's run delay), with their legend; within them, a
    /// figure not measured reads n/a.
    #[test]
    fn starvation_columns_only_when_measured() {
        let with = render(|m| m.server_run_delay_ms = None);
        let header = with.lines().next().unwrap();
        assert!(header.ends_with("cpu wait  srv cpu wait"), "{with}");
        let row = with.lines().nth(1).unwrap();
        assert!(row.ends_with("3400.00%           n/a"), "{with}");
        assert!(
            with.contains("\ncpu wait = the client's run delay"),
            "{with}"
        );
        let without = render(|m| {
            m.run_delay_ms = None;
            m.run_delay_share = None;
            m.involuntary_context_switches = None;
            m.server_run_delay_ms = None;
            m.host_steal_ms = None;
        });
        assert!(!without.contains("cpu wait"), "{without}");
    }
}
