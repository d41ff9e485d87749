//! The markdown of a run compared with nothing (`benchgate run --markdown`,
//! `--summary` without `--baseline`, `--side-by-side`, `--compare-base` or a
//! `[compare]` section): what the terminal shows for a run, a table per
//! scenario with the measured figures of each client ([`run_table`]), a
//! plain statement that nothing was compared and how to compare, then the
//! percentiles, the errors and failed trials (their output in code blocks)
//! and the environment, collapsed.

use std::fmt::Write as _;

use super::budget::{Doc, Section, Table};
use super::details::{self, first_line, Sides};
use crate::report::escape::{md, md_n, md_who, sha};
use crate::report::run_table;
use crate::results::RunResults;

/// Most cells listed in the head as having failed every trial.
const MAX_FAILED_CELLS: usize = 20;

/// What to do to compare (our own text).
pub const HOW_TO_COMPARE: &str = "To compare, give `benchgate run` a baseline: \
`--baseline FILE` (the results file of an earlier run), `--side-by-side CLIENT`, or \
`--compare-base REF`; or set `[compare]` in the config (`baseline_client`, \
`baseline_server`, or `base = \"git\"`). `benchgate compare --baseline OLD --current NEW` \
compares two results files afterwards.";

/// Assembles the report of `run`; sizing happens in [`Doc::fit`].
pub fn build(run: &RunResults) -> Doc {
    let table = run_table::table(run, run_table::Width::Wide);
    // One table per scenario, in the run's order, without the scenario column.
    let header = format!(
        "| {} |\n|:--|{}\n",
        table.headers[1..].join(" | "),
        "--:|".repeat(table.headers.len() - 2)
    );
    let mut tables: Vec<Table> = Vec::new();
    for (importance, (cell, cells)) in table.rows.iter().enumerate() {
        // The client column is built here, with its server and marks.
        if tables
            .last()
            .is_none_or(|t| t.heading != heading(&cell.scenario))
        {
            tables.push(Table {
                heading: heading(&cell.scenario),
                header: header.clone(),
                rows: Vec::new(),
            });
        }
        let mut client = md_who(&cell.client, cell.server.as_deref());
        let failed = cell.trials.iter().filter(|t| t.failure.is_some()).count();
        if failed > 0 {
            let _ = write!(client, " ({failed} failed)");
        }
        if cell.trials.iter().any(|t| !t.invalid.is_empty()) {
            client.push_str(" (invalid)");
        }
        let gone = cell.trials.iter().filter(|t| t.cpu_gone()).count();
        if gone > 0 {
            let _ = write!(client, " ({gone} without cpu/req)");
        }
        let rest: Vec<String> = cells[2..].iter().map(|v| md(v)).collect();
        let row = format!("| {client} | {} |\n", rest.join(" | "));
        tables
            .last_mut()
            .expect("pushed above")
            .rows
            .push((importance, row));
    }
    let sides = Sides::run(run);
    let mut sections = Vec::new();
    let mut add = |drop: u8, name: &'static str, text: String| {
        if !text.is_empty() {
            sections.push(Section { drop, name, text });
        }
    };
    add(1, "percentiles", details::percentiles(&sides));
    add(3, "errors", details::errors(&sides));
    add(5, "budget", crate::report::spent::markdown(run));
    add(6, "environment", details::environment(&sides));
    let legend: Vec<String> = table.legend.iter().map(|l| md_n(l, 400)).collect();
    let footer = format!("---\nFigures: {}.\n", legend.join(". "));
    Doc {
        head: head(run),
        total_rows: table.rows.len(),
        tables,
        sections,
        footer,
    }
}

fn heading(scenario: &str) -> String {
    format!("### {}\n\n", md(scenario))
}

/// The headline, what was run, that nothing was compared and how to, and
/// the cells where every trial failed.
fn head(run: &RunResults) -> String {
    let mut out = String::from("## benchgate: measured, nothing compared\n\n");
    let label = match (&run.git.sha, &run.git.ref_name) {
        (Some(s), Some(r)) => format!("{} ({})", sha(s), md(r)),
        (Some(s), None) => sha(s),
        _ => format!("run {}", md(&run.run_id)),
    };
    let scenarios = {
        let mut v: Vec<&str> = run.results.iter().map(|c| c.scenario.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let _ = writeln!(
        out,
        "Run {label}: {} in {scenarios} scenario{}, {}.\n",
        match run.results.len() {
            1 => "1 cell".to_string(),
            n => format!("{n} cells"),
        },
        if scenarios == 1 { "" } else { "s" },
        run_table::rounds_measured(run)
    );
    let _ = writeln!(
        out,
        "> ℹ️ **Nothing to compare**: this run was not compared with anything, so there is no verdict and no gate; the figures below are this run's alone. {HOW_TO_COMPARE}\n"
    );
    let failed: Vec<_> = run
        .results
        .iter()
        .filter(|c| !c.trials.is_empty() && c.trials.iter().all(|t| t.metrics.is_none()))
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(
            out,
            "> ❌ **Every trial failed** in {}: nothing was measured there.",
            match failed.len() {
                1 => "1 cell".to_string(),
                n => format!("{n} cells"),
            }
        );
        for c in failed.iter().take(MAX_FAILED_CELLS) {
            let first = c
                .trials
                .iter()
                .find_map(|t| t.failure.as_deref())
                .unwrap_or("the trial recorded no metrics");
            let _ = writeln!(
                out,
                "> - {} / {}: {}",
                md(&c.scenario),
                md_who(&c.client, c.server.as_deref()),
                first_line(first, 400)
            );
        }
        if failed.len() > MAX_FAILED_CELLS {
            let _ = writeln!(out, "> - … and {} more", failed.len() - MAX_FAILED_CELLS);
        }
        out.push('\n');
    }
    out
}
