//! The collapsible details: full latency percentiles (from the merged HDR
//! histograms), error classes and failed trials, resources, the environment of
//! both sides, and the reason for each notable verdict. Built from the
//! `RunResults` of both sides, since the comparison holds only medians.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::compare::Comparison;
use crate::measure::{ErrorCounts, LatencyHistogram, LatencySummary};
use crate::report::escape::{code_block, md, md_n, md_who, split_first_line};
use crate::report::format::{compact, micros};
use crate::report::rows::{rank, verdict_cell};
use crate::report::run_table::STARVATION_METRICS;
use crate::results::{CellIndex, CellResult, Environment, RunResults};

/// Most failed trials listed.
const MAX_FAILURES: usize = 50;
/// Most failed trials whose output tail is shown (in a code block each).
const MAX_OUTPUT_BLOCKS: usize = 8;

/// Where a failure's output tail is shown, for the places that quote only
/// its first line (our own text).
pub const SEE_OUTPUT: &str = " (its output is under “Failed trials” below)";

/// A reason that may quote a program's output, in one line of markdown: its
/// first line escaped and at most `max` characters, then [`SEE_OUTPUT`] when
/// there was more.
pub fn first_line(reason: &str, max: usize) -> String {
    match split_first_line(reason) {
        (first, None) => md_n(first, max),
        (first, Some(_)) => format!("{}{SEE_OUTPUT}", md_n(first, max)),
    }
}

/// Wraps a body in a closed `<details>` block (the summary is our own text).
fn details(summary: &str, body: &str) -> String {
    format!("<details><summary>{summary}</summary>\n\n{body}\n</details>\n\n")
}

/// A client on a server (`None`: the reference server).
type Side<'a> = (&'a str, Option<&'a str>);
/// A scenario and the two sides compared in it.
type Pair<'a> = (&'a str, Side<'a>, Side<'a>);

/// The runs each side's cells come from.
pub struct Sides<'a> {
    current: &'a RunResults,
    baseline: Option<&'a RunResults>,
    /// Both runs' cells, indexed once (a scan per pair is quadratic in cells).
    current_cells: CellIndex<'a>,
    baseline_cells: Option<CellIndex<'a>>,
    side_by_side: bool,
    /// A run compared with nothing ([`Sides::run`]): one side, "this run".
    run_only: bool,
    /// Distinct (scenario, current side, baseline side), in comparison order.
    pairs: Vec<Pair<'a>>,
}

impl<'a> Sides<'a> {
    /// In side-by-side mode both sides come from `current`.
    pub fn new(
        cmp: &'a Comparison,
        current: &'a RunResults,
        baseline: Option<&'a RunResults>,
    ) -> Self {
        let side_by_side = cmp.mode.paired();
        let mut seen = HashSet::new();
        let pairs = cmp
            .metrics
            .iter()
            .map(|m| {
                (
                    m.scenario.as_str(),
                    (m.client.as_str(), m.server.as_deref()),
                    (m.baseline_client.as_str(), m.baseline_server.as_deref()),
                )
            })
            .filter(|p| seen.insert(*p))
            .collect();
        let baseline = if side_by_side {
            Some(current)
        } else {
            baseline
        };
        Sides {
            current,
            baseline,
            current_cells: current.index(),
            baseline_cells: baseline.map(RunResults::index),
            side_by_side,
            run_only: false,
            pairs,
        }
    }

    /// A run compared with nothing: each cell once, in the run's order.
    pub fn run(current: &'a RunResults) -> Self {
        let pairs = current
            .results
            .iter()
            .map(|c| {
                let side = (c.client.as_str(), c.server.as_deref());
                (c.scenario.as_str(), side, side)
            })
            .collect();
        Sides {
            current,
            baseline: None,
            current_cells: current.index(),
            baseline_cells: None,
            side_by_side: false,
            run_only: true,
            pairs,
        }
    }

    /// Calls `f` with the row prefix (`| scenario | client | side |`) and the
    /// cell, for each pair: baseline side first.
    fn each(&self, mut f: impl FnMut(String, Option<&CellResult>)) {
        for (sc, (client, server), (base_client, base_server)) in &self.pairs {
            let who = md_who(client, *server);
            let (bl, cl) = if self.side_by_side {
                (md_who(base_client, *base_server), who.clone())
            } else if self.run_only {
                (String::new(), "this run".to_string())
            } else {
                ("baseline".to_string(), "current".to_string())
            };
            let prefix = format!("| {} | {who} ", md(sc));
            if let Some(b) = &self.baseline_cells {
                f(
                    format!("{prefix}| {bl} |"),
                    b.get(sc, base_client, *base_server),
                );
            }
            f(
                format!("{prefix}| {cl} |"),
                self.current_cells.get(sc, client, *server),
            );
        }
    }
}

/// A metric's median in a cell, as a table column shows it; `n/a`: not measured.
fn median(c: Option<&CellResult>, metric: &str) -> String {
    c.and_then(|c| c.summary.get(metric))
        .map(|s| compact(metric, s.median))
        .unwrap_or_else(|| "n/a".to_string())
}

/// Full percentiles of the merged histograms.
pub fn percentiles(sides: &Sides) -> String {
    let mut body = String::from(
        "| scenario | client | side | p50 | p90 | p99 | p99.9 | max | samples |\n|:--|:--|:--|--:|--:|--:|--:|--:|--:|\n",
    );
    // Identical encodings (common in tests, rare in runs) decode once.
    let mut decoded: HashMap<String, Result<Option<LatencySummary>, String>> = HashMap::new();
    sides.each(|prefix, cell| {
        let summary = cell.and_then(|c| c.histogram.as_deref()).map(|h| {
            decoded
                .entry(h.to_string())
                .or_insert_with(|| LatencyHistogram::decode(h).map(|h| h.summary()))
                .clone()
        });
        let cols = match summary {
            Some(Ok(Some(s))) => [
                micros(s.p50_us as f64),
                micros(s.p90_us as f64),
                micros(s.p99_us as f64),
                micros(s.p999_us as f64),
                micros(s.max_us as f64),
                s.count.to_string(),
            ]
            .join(" | "),
            Some(Err(_)) => "invalid histogram | | | | | ".to_string(),
            _ => "n/a | n/a | n/a | n/a | n/a | 0".to_string(),
        };
        let _ = writeln!(body, "{prefix} {cols} |");
    });
    body.push_str(if sides.run_only {
        "\nEvery request of every trial in one histogram. The tables above show the median of each trial's own percentiles, so a p99 here can differ from the p99 there.\n"
    } else {
        "\nEvery request of every trial in one histogram. The verdict tables compare each trial's own percentiles (their median; paired by round side by side), so a p99 here can differ from the p99 there.\n"
    });
    details(
        "Latency percentiles (merged HDR histograms of all trials)",
        &body,
    )
}

/// Errors by class (summed over trials), error rate, and failed trials.
pub fn errors(sides: &Sides) -> String {
    let mut body = String::from(
        "| scenario | client | side | connect | timeout | read | write | 4xx | 5xx | error rate | failed trials |\n|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    let mut failures = Vec::new();
    sides.each(|prefix, cell| {
        let mut sum = ErrorCounts::default();
        let mut failed = 0;
        for t in cell.map(|c| c.trials.as_slice()).unwrap_or_default() {
            if let Some(m) = &t.metrics {
                sum.merge(&m.errors);
            }
            if let Some(f) = &t.failure {
                failed += 1;
                if let Some(c) = cell {
                    let (first, output) = split_first_line(f);
                    failures.push((
                        format!(
                            "- {} / {} round {}: {}",
                            md(&c.scenario),
                            md_who(&c.client, c.server.as_deref()),
                            t.round,
                            md_n(first, 300)
                        ),
                        output.map(str::to_string),
                    ));
                }
            }
        }
        let rate = median(cell, "error_rate");
        let _ = writeln!(
            body,
            "{prefix} {} | {} | {} | {} | {} | {} | {rate} | {failed} |",
            sum.connect, sum.timeout, sum.read, sum.write, sum.status_4xx, sum.status_5xx
        );
    });
    // Side by side, a baseline cell is visited once per client compared with it.
    let mut seen = HashSet::new();
    failures.retain(|f| seen.insert(f.clone()));
    if !failures.is_empty() {
        body.push_str("\nFailed trials:\n\n");
        let more = failures.len().saturating_sub(MAX_FAILURES);
        failures.truncate(MAX_FAILURES);
        // A trial that quotes a program's output: its line, then the output
        // in a code block of its own (outside the list, at the line's start).
        let mut blocks = 0;
        for (line, output) in failures {
            body.push_str(&line);
            match output {
                Some(text) if blocks < MAX_OUTPUT_BLOCKS => {
                    blocks += 1;
                    let _ = write!(body, "\n\n{}\n", code_block(&text));
                }
                Some(_) => body.push_str(" (output left out: see the results file)\n"),
                None => body.push('\n'),
            }
        }
        if more > 0 {
            let _ = writeln!(body, "- … and {more} more");
        }
    }
    details("Errors by class and failed trials", &body)
}

/// The client's own cost (its start-up, the server's cost, and the
/// starvation in the window, when any cell measured them): medians across
/// trials.
pub fn resources(sides: &Sides) -> String {
    let (mut server_cost, mut startup, mut starvation) = (false, false, false);
    let any = |cell: Option<&CellResult>, metrics: &[&str]| {
        cell.is_some_and(|c| metrics.iter().any(|m| c.summary.contains_key(*m)))
    };
    sides.each(|_, cell| {
        server_cost |= any(cell, &["server_cpu_us_per_request"]);
        startup |= any(cell, &STARTUP);
        starvation |= any(cell, &STARVATION_METRICS);
    });
    let mut body = String::from(
        "| scenario | client | side | CPU/request | peak RSS | peak threads | connections | requests/connection |",
    );
    if server_cost {
        body.push_str(" server CPU/request | server peak RSS | server peak threads |");
    }
    if startup {
        body.push_str(" start-up | start-up CPU |");
    }
    if starvation {
        body.push_str(
            " run delay | run-delay share | involuntary switches | server run delay | steal |",
        );
    }
    body.push_str("\n|:--|:--|:--|--:|--:|--:|--:|--:|");
    if server_cost {
        body.push_str("--:|--:|--:|");
    }
    if startup {
        body.push_str("--:|--:|");
    }
    if starvation {
        body.push_str("--:|--:|--:|--:|--:|");
    }
    body.push('\n');
    sides.each(|prefix, cell| {
        let _ = write!(
            body,
            "{prefix} {} | {} | {} | {} | {} |",
            median(cell, "cpu_us_per_request"),
            median(cell, "peak_rss_bytes"),
            median(cell, "peak_threads"),
            median(cell, "connections_opened"),
            median(cell, "requests_per_connection"),
        );
        if server_cost {
            let _ = write!(
                body,
                " {} | {} | {} |",
                median(cell, "server_cpu_us_per_request"),
                median(cell, "server_peak_rss_bytes"),
                median(cell, "server_peak_threads"),
            );
        }
        if startup {
            for m in STARTUP {
                let _ = write!(body, " {} |", median(cell, m));
            }
        }
        if starvation {
            for m in STARVATION_METRICS {
                let _ = write!(body, " {} |", median(cell, m));
            }
        }
        body.push('\n');
    });
    details("Resources (medians across trials)", &body)
}

/// The start-up metrics, shown when any cell measured them.
const STARTUP: [&str; 2] = ["startup_ms", "startup_cpu_ms"];

fn env_rows(e: &Environment, r: &RunResults) -> Vec<String> {
    let pin = if e.pinning.enabled {
        format!(
            "server {:?}, clients {:?}",
            e.pinning.server_cpus, e.pinning.client_cpus
        )
    } else {
        "off".to_string()
    };
    vec![
        md(&r.run_id),
        md(&r.started_at),
        r.git.sha.as_deref().map(md).unwrap_or_default(),
        r.git.ref_name.as_deref().map(md).unwrap_or_default(),
        md(&e.cpu_model),
        e.cores.to_string(),
        md(&e.kernel),
        md(&e.os),
        md(&e.arch),
        md(&e.benchgate_version),
        md(&e.rustc_version),
        md(&pin),
    ]
}

/// Environment and run identity of both sides.
pub fn environment(sides: &Sides) -> String {
    const FIELDS: [&str; 12] = [
        "run id",
        "started",
        "git sha",
        "git ref",
        "CPU",
        "cores",
        "kernel",
        "OS",
        "arch",
        "benchgate",
        "rustc",
        "pinning",
    ];
    let cur = env_rows(&sides.current.environment, sides.current);
    let base = match sides.baseline {
        Some(b) if !sides.side_by_side => Some(env_rows(&b.environment, b)),
        _ => None,
    };
    let mut body = match &base {
        Some(_) => String::from("| | baseline | current |\n|:--|:--|:--|\n"),
        None => String::from("| | this run |\n|:--|:--|\n"),
    };
    for (i, f) in FIELDS.iter().enumerate() {
        match &base {
            Some(b) => {
                let mark = if b[i] != cur[i] { " ≠" } else { "" };
                let _ = writeln!(body, "| {f}{mark} | {} | {} |", b[i], cur[i]);
            }
            None => {
                let _ = writeln!(body, "| {f} | {} |", cur[i]);
            }
        }
    }
    details("Environment", &body)
}

/// Why each notable verdict was reached, in the comparison's own words.
pub fn reasons(cmp: &Comparison) -> String {
    let mut rows: Vec<_> = cmp.metrics.iter().filter(|m| rank(m) <= 5).collect();
    if rows.is_empty() {
        return String::new();
    }
    rows.sort_by_key(|m| rank(m));
    let mut body =
        String::from("| scenario | client | metric | verdict | reason |\n|:--|:--|:--|:--|:--|\n");
    for m in rows {
        let _ = writeln!(
            body,
            "| {} | {} | {} | {} | {} |",
            md(&m.scenario),
            md_who(&m.client, m.server.as_deref()),
            md(&m.metric),
            verdict_cell(m),
            first_line(&m.reason, 300)
        );
    }
    details("Why: the reason for each notable verdict", &body)
}

#[cfg(test)]
mod tests {
    use crate::compare::compare;
    use crate::config::gate::default_gate;
    use crate::metric::TrialMetrics;
    use crate::report::markdown::{self, MarkdownOptions};
    use crate::results::synthetic;

    /// The resources table shows start-up columns only for cells that measured
    /// start-up (results from before it existed render as they did).
    fn render(edit: impl Fn(&mut TrialMetrics)) -> String {
        let mut m = crate::metric::every_field_measured();
        edit(&mut m);
        let r = synthetic::one_cell_run(m);
        let cmp = compare(None, &r, &default_gate());
        markdown::render(&cmp, &r, None, &MarkdownOptions::default())
    }

    #[test]
    fn start_up_columns_only_when_measured() {
        let with = render(|_| {});
        assert!(with.contains(" start-up | start-up CPU |"), "{with}");
        assert!(with.contains(" 29.0ms | 30.0ms |"), "{with}");
        let without = render(|m| (m.startup_ms, m.startup_cpu_ms) = (None, None));
        assert!(!without.contains("start-up"), "{without}");
    }

    /// The starvation columns likewise; within them, a figure not measured
    /// reads n/a.
    #[test]
    fn starvation_columns_only_when_measured() {
        let with = render(|m| m.host_steal_ms = None);
        assert!(
            with.contains(
                " run delay | run-delay share | involuntary switches | server run delay | steal |\n"
            ),
            "{with}"
        );
        assert!(
            with.contains(" 33.0ms | 3400.00% | 35 | 36.0ms | n/a |\n"),
            "{with}"
        );
        let without = render(|m| {
            m.run_delay_ms = None;
            m.run_delay_share = None;
            m.involuntary_context_switches = None;
            m.server_run_delay_ms = None;
            m.host_steal_ms = None;
        });
        assert!(!without.contains("run delay"), "{without}");
    }
}
