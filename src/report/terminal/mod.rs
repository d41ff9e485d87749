//! The terminal report: one table, a row per (scenario, client[, server]), each
//! figure the median across rounds with its spread (half the min-max range),
//! then failed trials and the environment; and the comparison table
//! ([`render_comparison`]). The server's own cost and the client's start-up
//! get columns when any cell measured them, and so do the anchored figures of
//! an anchored run; with servers under test a note says the reference server's
//! counters are absent.

mod compare;

pub use compare::render_comparison;

use std::fmt::Write as _;
use std::io::IsTerminal as _;

use crate::metric::Spread;
use crate::report::format::{compact, spread_pct};
use crate::results::{CellResult, RunResults};

/// Whether stdout wants colour (a terminal, and NO_COLOR unset).
pub fn color_stdout() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

const HEADERS: [&str; 12] = [
    "scenario", "client", "req/s", "p50", "p99", "p99.9", "max", "errors", "cpu/req", "peak rss",
    "threads", "conns",
];

/// Extra columns when any cell measured the server's cost.
const SERVER_HEADERS: [&str; 3] = ["srv cpu/req", "srv rss", "srv threads"];

/// Extra columns when the run measured the anchor (`[run] anchor`).
const ANCHORED_HEADERS: [&str; 2] = ["req/s ÷ anchor", "cpu ÷ anchor"];
/// The metrics of the anchored columns.
const ANCHORED_METRICS: [&str; 2] = ["throughput_rps_anchored", "cpu_us_per_request_anchored"];

/// Extra columns when any cell measured the client's start-up.
const STARTUP_HEADERS: [&str; 2] = ["startup", "startup cpu"];
/// The metrics of the start-up columns.
const STARTUP_METRICS: [&str; 2] = ["startup_ms", "startup_cpu_ms"];

/// The note shown once when cells ran against a server under test.
pub const SERVER_UNDER_TEST_NOTE: &str =
    "server under test: reference-server counters not available (connections opened, requests per connection, the server's window)";

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

/// A metric's median in a cell as its column shows it, with the spread when
/// `with_spread` (and there are several trials).
fn cell_value(c: &CellResult, metric: &str, with_spread: bool) -> String {
    match c.summary.get(metric) {
        None => "n/a".to_string(),
        Some(s) => {
            let spread = if with_spread {
                spread_pct(s.relative_half_range(), s.n)
            } else {
                String::new()
            };
            if spread.is_empty() {
                compact(metric, s.median)
            } else {
                format!("{} {spread}", compact(metric, s.median))
            }
        }
    }
}

fn errors_value(c: &CellResult) -> String {
    let total: u64 = c
        .trials
        .iter()
        .filter_map(|t| t.metrics.as_ref())
        .map(|m| m.errors.total())
        .sum();
    let rate = c
        .summary
        .get("error_rate")
        .map(|s: &Spread| s.median)
        .unwrap_or(0.0);
    if total == 0 {
        "0".into()
    } else {
        format!("{total} ({})", compact("error_rate", rate))
    }
}

/// The optional column groups a run's table shows.
struct Columns {
    server: bool,
    startup: bool,
    anchored: bool,
}

fn row(c: &CellResult, columns: &Columns) -> Vec<String> {
    let failed = c.trials.iter().filter(|t| t.failure.is_some()).count();
    let mut client = c.label();
    if failed > 0 {
        client.push_str(&format!(" ({failed} failed)"));
    }
    let mut row = vec![
        c.scenario.clone(),
        client,
        cell_value(c, "throughput_rps", true),
        cell_value(c, "latency_p50_us", true),
        cell_value(c, "latency_p99_us", true),
        cell_value(c, "latency_p999_us", false),
        cell_value(c, "latency_max_us", false),
        errors_value(c),
        cell_value(c, "cpu_us_per_request", true),
        cell_value(c, "peak_rss_bytes", false),
        cell_value(c, "peak_threads", false),
        cell_value(c, "connections_opened", false),
    ];
    if columns.server {
        row.extend(
            SERVER_METRICS
                .iter()
                .zip(SERVER_SPREAD)
                .map(|(m, spread)| cell_value(c, m, spread)),
        );
    }
    if columns.startup {
        row.extend(STARTUP_METRICS.iter().map(|m| cell_value(c, m, false)));
    }
    if columns.anchored {
        row.extend(ANCHORED_METRICS.iter().map(|m| cell_value(c, m, true)));
    }
    row
}

/// Whether any cell measured the server's own cost.
fn has_server_cost(results: &RunResults) -> bool {
    results
        .results
        .iter()
        .any(|c| SERVER_METRICS.iter().any(|m| c.summary.contains_key(*m)))
}

/// Whether any cell measured the client's start-up.
fn has_startup(results: &RunResults) -> bool {
    results
        .results
        .iter()
        .any(|c| STARTUP_METRICS.iter().any(|m| c.summary.contains_key(*m)))
}

/// The metrics of the server columns ([`SERVER_HEADERS`]).
const SERVER_METRICS: [&str; 3] = [
    "server_cpu_us_per_request",
    "server_peak_rss_bytes",
    "server_peak_threads",
];
/// Whether each server column shows its spread.
const SERVER_SPREAD: [bool; 3] = [true, false, false];

/// Renders the results table. Names from the config are printed with control
/// characters escaped, so a name cannot move the cursor or forge lines.
pub fn render(results: &RunResults, color: bool) -> String {
    let columns = Columns {
        server: has_server_cost(results),
        startup: has_startup(results),
        anchored: results.config.run.anchor.is_some(),
    };
    let mut headers: Vec<&str> = HEADERS.to_vec();
    if columns.server {
        headers.extend(SERVER_HEADERS);
    }
    if columns.startup {
        headers.extend(STARTUP_HEADERS);
    }
    if columns.anchored {
        headers.extend(ANCHORED_HEADERS);
    }
    let rows: Vec<Vec<String>> = results
        .results
        .iter()
        .map(|c| {
            let mut r: Vec<String> = row(c, &columns)
                .into_iter()
                .map(|s| s.escape_debug().to_string())
                .collect();
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
    let _ = writeln!(
        out,
        "\nmedian of {} (± half the min-max range); latency from intended start; conns = connections the server accepted per trial",
        rounds_measured(results)
    );
    if columns.server {
        let _ = writeln!(
            out,
            "srv = the server's own process (tree): CPU in the window per request, peak RSS and threads"
        );
    }
    if columns.anchored {
        let _ = writeln!(
            out,
            "÷ anchor = each trial's figure over the anchor's in its round ([run] anchor: hyper, GET /bytes/22 at 16 workers, in every round; the anchor's own row has none)"
        );
    }
    if columns.startup {
        let _ = writeln!(
            out,
            "startup = from the client's spawn to its first response, and its CPU until the window opened (never in cpu/req)"
        );
    }
    if results.has_servers() {
        let _ = writeln!(out, "{SERVER_UNDER_TEST_NOTE}");
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

/// The rounds the cells were measured in, which extra rounds
/// (`[run] max_rounds`) can raise above `[run] rounds`: "10 rounds", or
/// "10-30 rounds" when cells differ.
fn rounds_measured(results: &RunResults) -> String {
    let counts = results.results.iter().map(|c| c.trials.len());
    let (low, high) = match (counts.clone().min(), counts.max()) {
        (Some(low), Some(high)) => (low, high),
        _ => (0, 0),
    };
    match low == high {
        true => format!("{low} rounds"),
        false => format!("{low}-{high} rounds"),
    }
}

#[cfg(test)]
mod tests {
    use crate::results::synthetic;

    /// Start-up gets its columns only when some cell measured it (results
    /// from before it existed render as they did).
    #[test]
    fn start_up_columns_only_when_measured() {
        let render = |startup: bool| {
            let r = synthetic::one_cell_run(startup);
            super::render(&r, false)
        };
        let with = render(true);
        let header = with.lines().next().unwrap();
        assert!(header.ends_with("startup  startup cpu"), "{with}");
        assert!(
            with.lines()
                .nth(1)
                .unwrap()
                .ends_with("29.0ms       30.0ms"),
            "{with}"
        );
        let without = render(false);
        assert!(!without.contains("startup"), "{without}");
    }
}
