//! The head (verdict, counts, what was compared), the per-scenario tables, the
//! collapsed table of the other metrics, and the footer.

use std::fmt::Write as _;

use super::budget::Table;
use crate::compare::{Comparison, MetricComparison};
use crate::report::escape::{md, md_n, md_who, sha};
use crate::report::format::duration_words;
use crate::report::rows::{
    change_cell, change_header, change_legend, disagree_note, failed_rows, is_headline_row,
    lacking_list, lacking_rows, mde, outcome_text, rank, row_order, sides_disagree, values,
    verdict_cell,
};
use crate::timer::clock::parse_rfc3339;

/// Most environment differences (and failed cells) listed in the head.
const MAX_DIFFERENCES: usize = 20;

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A run reference: `` `sha` (ref) `` or the run id.
fn run_label(r: &crate::compare::RunRef) -> String {
    let mut s = match &r.git_sha {
        Some(x) => sha(x),
        None => format!("run {}", md(&r.run_id)),
    };
    if let Some(g) = &r.git_ref {
        let _ = write!(s, " ({})", md(g));
    }
    s
}

/// The reasons of the cells that measured nothing, each once (side by side,
/// several clients can share a failed baseline cell).
pub fn failed_reasons(cmp: &Comparison) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for m in failed_rows(cmp) {
        if !out.contains(&m.reason.as_str()) {
            out.push(&m.reason);
        }
    }
    out
}

/// Headline, counts, cells where every trial failed, what was compared, and
/// why it is not comparable.
pub fn head(cmp: &Comparison) -> String {
    let (mark, word) = outcome_text(cmp.outcome);
    let mut out = format!("## {mark} benchgate: {word}\n\n");
    if cmp.optimistic {
        let _ = writeln!(out, "> ⚠️ **{}**\n", crate::report::OPTIMISTIC_NOTE);
    }
    let scenarios = distinct(cmp.metrics.iter().map(|m| m.scenario.as_str()));
    let clients = distinct(cmp.metrics.iter().map(|m| m.client.as_str()));
    let _ = writeln!(
        out,
        "**{}**, {}, {} in {} ({} × {}).\n",
        plural(cmp.regressions, "regression", "regressions"),
        plural(cmp.improvements, "improvement", "improvements"),
        plural(cmp.warnings, "warning", "warnings"),
        plural(cmp.metrics.len() as u32, "metric", "metrics"),
        plural(scenarios, "scenario", "scenarios"),
        plural(clients, "client", "clients"),
    );
    let undecided = crate::report::undecided::entries(cmp);
    if !undecided.is_empty() {
        let _ = writeln!(
            out,
            "> ⚠️ **{}**",
            crate::report::undecided::summary(&undecided)
        );
        for e in undecided.iter().take(crate::report::undecided::MAX_ENTRIES) {
            let _ = writeln!(
                out,
                "> - {} / {} **{}**: {}",
                md(&e.row.scenario),
                md_who(&e.row.client, e.row.server.as_deref()),
                md(&e.row.metric),
                e.detail
            );
        }
        let more = undecided
            .len()
            .saturating_sub(crate::report::undecided::MAX_ENTRIES);
        if more > 0 {
            let _ = writeln!(out, "> - … and {more} more in the table below");
        }
        out.push('\n');
    }
    let failed = failed_reasons(cmp);
    if !failed.is_empty() {
        let _ = writeln!(
            out,
            "> ❌ **Every trial failed** in {}: nothing was measured there, so the gate fails.",
            plural(failed_rows(cmp).len() as u32, "comparison", "comparisons")
        );
        for r in failed.iter().take(MAX_DIFFERENCES) {
            let _ = writeln!(out, "> - {}", super::details::first_line(r, 400));
        }
        let more = failed.len().saturating_sub(MAX_DIFFERENCES);
        if more > 0 {
            let _ = writeln!(out, "> - … and {more} more");
        }
        out.push('\n');
    }
    let (lacking, trials) = lacking_rows(cmp);
    if trials > 0 {
        let _ = writeln!(
            out,
            "> ⚠️ **{} without a gated figure**, left out of its comparison:",
            plural(trials as u32, "trial", "trials")
        );
        for m in lacking.iter().take(MAX_DIFFERENCES) {
            let _ = writeln!(
                out,
                "> - {} / {} **{}**: {}",
                md(&m.scenario),
                md_who(&m.client, m.server.as_deref()),
                md(&m.metric),
                lacking_list(m)
            );
        }
        let more = lacking.len().saturating_sub(MAX_DIFFERENCES);
        if more > 0 {
            let _ = writeln!(out, "> - … and {more} more");
        }
        out.push('\n');
    }
    let cur = &cmp.current_run;
    if let Some(w) = cmp.mode.within_run() {
        let (what, run) = (w.markdown, run_label(cur));
        let _ = writeln!(out, "{what} in the same run, {run}, paired by round.\n");
    } else if let Some(base) = &cmp.baseline_run {
        let age = match (
            parse_rfc3339(&base.started_at),
            parse_rfc3339(&cur.started_at),
        ) {
            (Some(b), Some(c)) if c >= b => {
                format!("measured {} before this run", duration_words(c - b))
            }
            (Some(b), Some(c)) => format!("measured {} *after* this run", duration_words(b - c)),
            _ => format!("measured at {}", md(&base.started_at)),
        };
        let _ = writeln!(
            out,
            "Current {} compared with baseline {}, {age}.\n",
            run_label(cur),
            run_label(base)
        );
        if let Some(note) = &cmp.anchoring {
            let _ = writeln!(out, "> ℹ️ {}\n", md_n(note, 600));
        }
        out.push_str(&machine_changed(&cmp.environment_changes));
    } else {
        let _ = writeln!(
            out,
            "No baseline to compare with: the figures below are from the current run, {}, only.\n",
            run_label(cur)
        );
    }
    if cmp.metrics.iter().any(|m| m.server.is_some()) {
        // Our own text: no escaping needed.
        let _ = writeln!(
            out,
            "> ℹ️ {}\n",
            crate::report::terminal::SERVER_UNDER_TEST_NOTE
        );
    }
    if !cmp.environment_differences.is_empty() {
        out.push_str("> ⚠️ **Not comparable**: the two sides differ in\n");
        for d in cmp.environment_differences.iter().take(MAX_DIFFERENCES) {
            let _ = writeln!(out, "> - {}", md_n(d, 300));
        }
        let more = cmp
            .environment_differences
            .len()
            .saturating_sub(MAX_DIFFERENCES);
        if more > 0 {
            let _ = writeln!(out, "> - … and {more} more");
        }
        out.push('\n');
    }
    out
}

/// The head's note that the machine changed between the stored run and
/// this one (`environment_changes`), so that a change across them is not
/// read as the code's alone; empty when nothing changed.
pub fn machine_changed(changes: &[String]) -> String {
    if changes.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "> ⚠️ **The machine changed** since the baseline run, so its changes are in the figures too:\n",
    );
    for d in changes.iter().take(MAX_DIFFERENCES) {
        let _ = writeln!(out, "> - {}", md_n(d, 300));
    }
    out.push('\n');
    out
}

fn distinct<'a>(it: impl Iterator<Item = &'a str>) -> u32 {
    let mut v: Vec<&str> = it.collect();
    v.sort_unstable();
    v.dedup();
    v.len() as u32
}

/// Table header for the mode, with or without a scenario column. The values
/// are medians; side by side the change is the paired one ([`change_header`]).
fn header(side_by_side: bool, with_scenario: bool) -> String {
    let (who, vals) = if side_by_side {
        (
            "client vs baseline client",
            "baseline client → client (medians)",
        )
    } else {
        ("client", "baseline → current (medians)")
    };
    let change = change_header(side_by_side);
    let (sc, sc_delim) = if with_scenario {
        ("| scenario ", "|:--")
    } else {
        ("", "")
    };
    format!(
        "{sc}| {who} | metric | {vals} | {change} | MDE | verdict |\n{sc_delim}|:--|:--|--:|--:|--:|:--|\n"
    )
}

/// One table row; gating metrics in bold.
fn row(m: &MetricComparison, side_by_side: bool, with_scenario: bool) -> String {
    let who = if side_by_side {
        format!(
            "{} vs {}",
            md_who(&m.client, m.server.as_deref()),
            md_who(&m.baseline_client, m.baseline_server.as_deref())
        )
    } else {
        md_who(&m.client, m.server.as_deref())
    };
    let metric = if m.gating {
        format!("**{}**", md(&m.metric))
    } else {
        md(&m.metric)
    };
    let sc = if with_scenario {
        format!("| {} ", md(&m.scenario))
    } else {
        String::new()
    };
    format!(
        "{sc}| {who} | {metric} | {} | {} | {} | {} |\n",
        values(m),
        change_cell(m),
        mde(m),
        verdict_cell(m)
    )
}

/// One table per scenario with the rows that gate or say something, most
/// important scenarios and rows first; returns the tables and the row count.
pub fn scenario_tables(cmp: &Comparison) -> (Vec<Table>, usize) {
    let sbs = cmp.mode.paired();
    // Scenario positions in first-appearance order (thousands of names: hash).
    let mut positions: std::collections::HashMap<&str, usize> = Default::default();
    for m in &cmp.metrics {
        let n = positions.len();
        positions.entry(m.scenario.as_str()).or_insert(n);
    }
    let mut rows: Vec<(usize, &MetricComparison)> = cmp
        .metrics
        .iter()
        .filter(|m| is_headline_row(m))
        .map(|m| (positions[m.scenario.as_str()], m))
        .collect();
    rows.sort_by(|a, b| row_order(a.1, b.1).then(a.0.cmp(&b.0)));
    let total = rows.len();
    let mut tables: Vec<(u8, usize, Table)> = Vec::new();
    let mut slot: std::collections::HashMap<usize, usize> = Default::default();
    for (importance, (sc, m)) in rows.into_iter().enumerate() {
        let t = *slot.entry(sc).or_insert_with(|| {
            tables.push((
                rank(m),
                sc,
                Table {
                    heading: format!("### {}\n\n", md(&m.scenario)),
                    header: header(sbs, false),
                    rows: Vec::new(),
                },
            ));
            tables.len() - 1
        });
        tables[t].2.rows.push((importance, row(m, sbs, false)));
    }
    tables.sort_by_key(|(r, sc, _)| (*r, *sc));
    (tables.into_iter().map(|(_, _, t)| t).collect(), total)
}

/// The informative metrics without a notable verdict, collapsed.
pub fn other_metrics(cmp: &Comparison) -> String {
    let sbs = cmp.mode.paired();
    let rest: Vec<&MetricComparison> = cmp.metrics.iter().filter(|m| !is_headline_row(m)).collect();
    if rest.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<details><summary>Other metrics: {} informative, none shown to regress or improve</summary>\n\n",
        rest.len()
    );
    out.push_str(&header(sbs, true));
    for m in rest {
        out.push_str(&row(m, sbs, true));
    }
    out.push_str("\n</details>\n\n");
    out
}

/// Method, interval level and legend; under tables with rows whose medians
/// and change disagree in direction, what that means.
pub fn footer(cmp: &Comparison) -> String {
    let paired = cmp.mode.paired();
    let mut levels: Vec<u32> = cmp
        .metrics
        .iter()
        .filter_map(|m| m.confidence)
        .filter(|c| c.is_finite())
        .map(|c| (c * 1000.0).round() as u32)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let level = |l: u32| format!("{}%", l as f64 / 10.0);
    let ci = match (levels.first(), levels.last()) {
        (Some(a), Some(b)) if a == b => format!(" at {} confidence", level(*a)),
        (Some(a), Some(b)) => format!(" at {}–{} confidence", level(*a), level(*b)),
        _ => String::new(),
    };
    let disagree = match cmp.metrics.iter().any(sides_disagree) {
        true => format!("\n{}\n", disagree_note(paired)),
        false => String::new(),
    };
    format!(
        "---\nMethod: {}. Values: each side's median over its trials. {}, with its interval [CI]{ci}. \
         MDE: smallest change detectable at the observed noise. **Bold** metrics gate; the others inform.\n{disagree}",
        md_n(&cmp.method, 400),
        change_legend(paired)
    )
}
