//! The table of a run that every run renderer shares (the terminal's
//! [`render`](super::terminal::render) and the markdown run report): a row
//! per (scenario, client[, server]), each figure the median across rounds
//! with its spread (half the interquartile range, [`spread`]).
//!
//! [`Width::Narrow`], the terminal's default: request rate, p50, p99,
//! errors, CPU per request, peak RSS and connections, in 120 columns or the
//! terminal's width when wider (the terminal renderer fits it:
//! `report::terminal`). [`Width::Wide`] (`--wide`, and the markdown run report) adds
//! p99.9, max and threads, and, when any cell measured them, the server's own
//! cost, the client's start-up and the starvation figures (the client's and
//! the server's run delay). An anchored run's anchored figures, which gate
//! against a stored run, show at either width. Every
//! figure is in the results file whatever the width. Cells are plain,
//! unescaped text: each renderer escapes them for its medium.

use crate::metric::Spread;
use crate::report::format::{compact, spread_pct};
use crate::results::{CellResult, RunResults};

/// The width a terminal table fits when the terminal is not wider.
pub const COLUMNS: usize = 120;

/// How much of a table the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// The core figures in at most this many columns (at least
    /// [`COLUMNS`]): past it, the least needed columns give way, then long
    /// names are cut.
    Narrow(usize),
    /// Every column the run measured, every name whole (`--wide`).
    Wide,
}

impl Width {
    /// [`COLUMNS`] wide: a log, a file, a terminal of unknown width.
    pub fn narrow() -> Width {
        Width::Narrow(COLUMNS)
    }

    /// The narrow width for a terminal `columns` wide (`None`: not a
    /// terminal): [`COLUMNS`], or the terminal's width when wider.
    pub fn fit(columns: Option<usize>) -> Width {
        Width::Narrow(columns.map_or(COLUMNS, |c| c.max(COLUMNS)))
    }
}

const HEADERS: [&str; 12] = [
    "scenario", "client", "req/s", "p50", "p99", "p99.9", "max", "errors", "cpu/req", "peak rss",
    "threads", "conns",
];
/// The columns of [`HEADERS`] a narrow table keeps.
const NARROW: [bool; 12] = [
    true, true, true, true, true, false, false, true, true, true, false, true,
];

/// Extra columns when any cell measured the server's cost.
const SERVER_HEADERS: [&str; 3] = ["srv cpu/req", "srv rss", "srv threads"];
/// The metrics of the server columns ([`SERVER_HEADERS`]).
const SERVER_METRICS: [&str; 3] = [
    "server_cpu_us_per_request",
    "server_peak_rss_bytes",
    "server_peak_threads",
];
/// Whether each server column shows its spread.
const SERVER_SPREAD: [bool; 3] = [true, false, false];

/// Extra columns when the run measured the anchor (`[run] anchor`).
const ANCHORED_HEADERS: [&str; 2] = ["req/s ÷ anchor", "cpu ÷ anchor"];
/// The metrics of the anchored columns.
const ANCHORED_METRICS: [&str; 2] = ["throughput_rps_anchored", "cpu_us_per_request_anchored"];

/// Extra columns when any cell measured the client's start-up.
const STARTUP_HEADERS: [&str; 2] = ["startup", "startup cpu"];
/// The metrics of the start-up columns.
const STARTUP_METRICS: [&str; 2] = ["startup_ms", "startup_cpu_ms"];

/// The starvation figures (run delay, involuntary switches, steal), in the
/// order the resources section of a comparison shows them all.
pub const STARVATION_METRICS: [&str; 5] = [
    "run_delay_ms",
    "run_delay_share",
    "involuntary_context_switches",
    "server_run_delay_ms",
    "host_steal_ms",
];
/// Of those, the run table's two columns (the table is wide already): the
/// client's run-delay share and the server's run delay. The others are in
/// the results file and the comparison's resources section.
const STARVATION_HEADERS: [&str; 2] = ["cpu wait", "srv cpu wait"];
const STARVATION_COLUMNS: [&str; 2] = ["run_delay_share", "server_run_delay_ms"];

/// The note shown once when cells ran against a server under test.
pub const SERVER_UNDER_TEST_NOTE: &str =
    "server under test: reference-server counters not available (connections opened, requests per connection, the server's window)";

/// A run's table: headers, a row per cell (its first two columns are the
/// scenario and the client), and the legend lines that explain it.
pub struct RunTable<'a> {
    pub headers: Vec<&'static str>,
    /// `(cell, its columns)`, in the run's order.
    pub rows: Vec<(&'a CellResult, Vec<String>)>,
    /// The legend: how the figures were taken, and what the optional
    /// columns mean (our own text).
    pub legend: Vec<String>,
}

/// The optional column groups a run's table shows.
struct Columns {
    server: bool,
    startup: bool,
    starvation: bool,
    anchored: bool,
}

/// The table of `results` at `width`.
pub fn table(results: &RunResults, width: Width) -> RunTable<'_> {
    let wide = width == Width::Wide;
    let columns = Columns {
        server: wide && has_any(results, &SERVER_METRICS),
        startup: wide && has_any(results, &STARTUP_METRICS),
        starvation: wide && has_any(results, &STARVATION_METRICS),
        // An anchored run's gating figures: shown at either width.
        anchored: results.config.run.anchor.is_some(),
    };
    let keep = |i: usize| wide || NARROW[i];
    let mut headers: Vec<&'static str> = HEADERS
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(_, h)| *h)
        .collect();
    if columns.server {
        headers.extend(SERVER_HEADERS);
    }
    if columns.startup {
        headers.extend(STARTUP_HEADERS);
    }
    if columns.starvation {
        headers.extend(STARVATION_HEADERS);
    }
    if columns.anchored {
        headers.extend(ANCHORED_HEADERS);
    }
    let rows = results
        .results
        .iter()
        .map(|c| {
            let all = row(c, &columns);
            let cells = all
                .into_iter()
                .enumerate()
                .filter(|(i, _)| *i >= HEADERS.len() || keep(*i))
                .map(|(_, v)| v)
                .collect();
            (c, cells)
        })
        .collect();
    let mut legend = vec![format!(
        "median of {} (± half the interquartile range, half the min-max range below 4 rounds); latency from intended start; conns = connections the server accepted per trial{}",
        rounds_measured(results),
        if wide { "" } else { "; --wide: every column" }
    )];
    legend.extend(windows_used(results));
    if columns.server {
        legend.push(
            "srv = the server's own process (tree): CPU in the window per request, peak RSS and threads".into(),
        );
    }
    if columns.anchored {
        legend.push(
            "÷ anchor = each trial's figure over the anchor's in its round ([run] anchor: hyper, GET /bytes/22 at 16 workers, in every round; the anchor's own row has none)".into(),
        );
    }
    if columns.startup {
        legend.push(
            "startup = from the client's spawn to its first response, and its CPU until the window opened (never in cpu/req)".into(),
        );
    }
    if columns.starvation {
        legend.push(
            "cpu wait = the client's run delay (time its threads were runnable but waited for a CPU) over the window, summed over threads (over 100%: several threads waiting); srv cpu wait = the server's run delay in the window (informative; all starvation figures: the results file)".into(),
        );
    }
    if results.has_servers() {
        legend.push(SERVER_UNDER_TEST_NOTE.into());
    }
    RunTable {
        headers,
        rows,
        legend,
    }
}

/// A metric's median in a cell as its column shows it, with the spread when
/// `with_spread` (and there are several trials).
fn cell_value(c: &CellResult, metric: &str, with_spread: bool) -> String {
    match c.summary.get(metric) {
        None => "n/a".to_string(),
        Some(s) => {
            let spread = if with_spread {
                spread_pct(spread(c, metric, s), s.n)
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

/// The spread shown beside a median, relative to it: half the interquartile
/// range of the counted trials (one stray round does not blow it up, as it
/// does a min-max range), or half the min-max range below 4 trials.
fn spread(c: &CellResult, metric: &str, s: &Spread) -> Option<f64> {
    let mut v: Vec<f64> = c.values(metric).into_iter().map(|(_, v)| v).collect();
    if v.len() < 4 || s.median <= 0.0 {
        return s.relative_half_range();
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let at = p * (v.len() - 1) as f64;
        let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
    };
    Some((q(0.75) - q(0.25)) / 2.0 / s.median)
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
    if columns.starvation {
        row.extend(STARVATION_COLUMNS.iter().map(|m| cell_value(c, m, false)));
    }
    if columns.anchored {
        row.extend(ANCHORED_METRICS.iter().map(|m| cell_value(c, m, true)));
    }
    row
}

/// Whether any cell measured any of `metrics`.
fn has_any(results: &RunResults, metrics: &[&str]) -> bool {
    results
        .results
        .iter()
        .any(|c| metrics.iter().any(|m| c.summary.contains_key(*m)))
}

/// The rounds the cells were measured in, which extra rounds
/// (`[run] max_rounds`) can raise above `[run] rounds`: "10 rounds", or
/// "10-30 rounds" when cells differ.
pub fn rounds_measured(results: &RunResults) -> String {
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

/// `[run] windows` above 1: what each side's figure is over, and how much of
/// the run's time was in windows: "each side: 3 forks × 4 windows (the fork
/// is the unit); 7.2s in windows of 60.0s used (12%)". `None` with one window
/// per fork (and in files from before windows).
pub fn windows_used(results: &RunResults) -> Option<String> {
    let w = results.config.run.windows;
    let schedule = results.config.run.schedule;
    if w <= 1 && schedule.is_sequential() {
        return None;
    }
    let forks = results
        .results
        .iter()
        .map(|c| c.trials.iter().filter(|t| t.windows.is_some()).count());
    let (low, high) = (forks.clone().min()?, forks.max()?);
    let forks = match low == high {
        true => low.to_string(),
        false => format!("{low}-{high}"),
    };
    let in_windows: f64 = (results.results.iter().flat_map(|c| &c.trials))
        .filter(|t| t.windows.is_some())
        .filter_map(|t| t.window_actual_s)
        .sum();
    let seconds = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let used = match (seconds(&results.started_at), results.finished_at.as_deref()) {
        (Some(a), Some(b)) => seconds(b).map(|b| (b - a).num_milliseconds() as f64 / 1e3),
        _ => None,
    };
    // A duet's two sides measure at once: half the sum is on the clock.
    let (open, at_once) = match schedule.on_lanes() {
        true => (in_windows / 2.0, " (both sides at once)"),
        false => (in_windows, ""),
    };
    let time = match used.filter(|u| *u > 0.0) {
        Some(u) => format!(
            "{open:.1}s in windows{at_once} of {u:.1}s used ({:.0}%)",
            100.0 * open / u
        ),
        None => format!("{open:.1}s in windows{at_once}"),
    };
    Some(format!(
        "each side: {forks} forks × {w} windows (the fork is the unit); {time}"
    ))
}
