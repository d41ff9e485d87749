//! The comparison in the terminal: the gate's verdict with counts, what was
//! compared, then one row per metric that gates or says something (regressed,
//! improved, warned), most important first, and why each cell where every
//! trial failed fails the gate. With colour: failing and regressed rows red,
//! warnings yellow, improvements green; informative metrics uncoloured.

use std::fmt::Write as _;

use crate::compare::{Comparison, MetricComparison, Tier, Verdict};
use crate::files::{shortened, SHOWN_CHARS};
use crate::report::format::duration_words;
use crate::report::rows::{
    change_cell, change_header, disagree_note, failed_rows, is_headline_row, lacking_list,
    lacking_rows, mde, row_order, shows_tier, sides_disagree, value, verdict_words,
};
use crate::report::run_table::Width;
use crate::timer::clock::parse_rfc3339;

use super::fit::{Column, Give};

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// Control characters shown escaped, so a name cannot move the cursor.
fn safe(s: &str) -> String {
    s.escape_debug().to_string()
}

/// A row's colour; none for an informative metric (`rows::shows_tier`).
fn colour_of(m: &MetricComparison) -> Option<&'static str> {
    if !shows_tier(m) {
        return None;
    }
    match (m.tier, m.verdict) {
        (Tier::Fail, _) | (_, Verdict::Regressed) => Some(RED),
        (Tier::Warn, _) => Some(YELLOW),
        (_, Verdict::Improved) => Some(GREEN),
        _ => None,
    }
}

fn run_text(r: &crate::compare::RunRef) -> String {
    let mut s = match &r.git_sha {
        Some(sha) => safe(&sha.chars().take(12).collect::<String>()),
        None => format!("run {}", safe(&shortened(&r.run_id, SHOWN_CHARS))),
    };
    if let Some(g) = &r.git_ref {
        let _ = write!(s, " ({})", safe(&shortened(g, SHOWN_CHARS)));
    }
    s
}

fn headline(cmp: &Comparison, color: bool, out: &mut String) {
    let (word, c) = match cmp.outcome {
        crate::compare::GateOutcome::Pass => ("PASS", GREEN),
        crate::compare::GateOutcome::Fail => ("FAIL", RED),
        crate::compare::GateOutcome::Inconclusive => ("INCONCLUSIVE", YELLOW),
        crate::compare::GateOutcome::NoBaseline => ("NO BASELINE", ""),
        crate::compare::GateOutcome::NotComparable => ("NOT COMPARABLE", YELLOW),
    };
    let (on, off) = if color { (c, RESET) } else { ("", "") };
    let (b, _) = if color { (BOLD, RESET) } else { ("", "") };
    let failed = match failed_rows(cmp).len() {
        0 => String::new(),
        1 => "every trial failed in 1 comparison, ".to_string(),
        n => format!("every trial failed in {n} comparisons, "),
    };
    let _ = writeln!(
        out,
        "{b}{on}benchgate: {word}{off} ({failed}{} regressed, {} improved, {} warning{}, {} metrics)",
        cmp.regressions,
        cmp.improvements,
        cmp.warnings,
        if cmp.warnings == 1 { "" } else { "s" },
        cmp.metrics.len()
    );
    if cmp.optimistic {
        let _ = writeln!(out, "{}", crate::report::OPTIMISTIC_NOTE);
    }
    let undecided = crate::report::undecided::entries(cmp);
    if !undecided.is_empty() {
        let _ = writeln!(out, "{}", crate::report::undecided::summary(&undecided));
        for e in undecided.iter().take(crate::report::undecided::MAX_ENTRIES) {
            let _ = writeln!(
                out,
                "  {} / {} {}: {}",
                safe(&e.row.scenario),
                safe(&e.row.who()),
                safe(&e.row.metric),
                e.detail
            );
        }
        let more = undecided
            .len()
            .saturating_sub(crate::report::undecided::MAX_ENTRIES);
        if more > 0 {
            let _ = writeln!(out, "  ... and {more} more below");
        }
    }
    let cur = &cmp.current_run;
    if let Some(w) = cmp.mode.within_run() {
        let (name, run, more) = (w.name, run_text(cur), w.terminal);
        let _ = writeln!(out, "{name} in {run}{more}, paired by round");
    } else if let Some(base) = &cmp.baseline_run {
        let jmh = |r: &crate::compare::RunRef| crate::results::jmh::is_jmh_run(&r.run_id);
        let age = match (
            parse_rfc3339(&base.started_at),
            parse_rfc3339(&cur.started_at),
        ) {
            // A JMH file's time is when benchgate read it, not when it ran.
            _ if jmh(base) || jmh(cur) => {
                " (JMH result files: when they ran is not recorded)".to_string()
            }
            (Some(x), Some(y)) if y >= x => format!(", measured {} before", duration_words(y - x)),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "current {} vs baseline {}{age}",
            run_text(cur),
            run_text(base)
        );
    } else {
        let _ = writeln!(out, "no baseline: current {} only", run_text(cur));
    }
    if let Some(note) = &cmp.anchoring {
        let _ = writeln!(out, "{}", safe(note));
    }
    for d in &cmp.environment_differences {
        let _ = writeln!(out, "not comparable: {}", safe(d));
    }
    for d in &cmp.environment_changes {
        let _ = writeln!(out, "machine changed: {}", safe(d));
    }
}

/// Renders the comparison table; `color` adds ANSI colours; `width`: within
/// how many columns (`fit`: the MDE, then the medians give way, then long
/// names are cut), or every column whole.
pub fn render_comparison(cmp: &Comparison, color: bool, width: Width) -> String {
    let mut out = String::new();
    headline(cmp, color, &mut out);
    let sbs = cmp.mode.paired();
    let mut rows: Vec<&MetricComparison> =
        cmp.metrics.iter().filter(|m| is_headline_row(m)).collect();
    rows.sort_by(|a, b| row_order(a, b));
    let columns = [
        Column::new("scenario", false, Give::Cut(12)),
        Column::new(
            if sbs { "client vs baseline" } else { "client" },
            false,
            Give::Cut(12),
        ),
        Column::new("metric", false, Give::Cut(18)),
        Column {
            short: "baseline",
            ..Column::new("baseline median", true, Give::Drop(2))
        },
        Column {
            short: "current",
            ..Column::new("current median", true, Give::Drop(3))
        },
        Column::new(change_header(sbs), true, Give::Keep),
        Column::new("MDE", true, Give::Drop(1)),
        Column::new("verdict", false, Give::Keep),
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|m| {
            [
                safe(&m.scenario),
                if sbs {
                    format!("{} vs {}", safe(&m.who()), safe(&m.baseline_who()))
                } else {
                    safe(&m.who())
                },
                format!(
                    "{}{}",
                    safe(&m.metric),
                    if m.gating { "" } else { " (info)" }
                ),
                value(&m.metric, m.baseline_median),
                value(&m.metric, m.current_median),
                change_cell(m),
                mde(m),
                verdict_words(m),
            ]
            .to_vec()
        })
        .collect();
    let fitted = super::fit::fit(&columns, &cells, width);
    let line = |cells: &[String]| fitted.row(cells);
    out.push('\n');
    let head = fitted.header();
    if color {
        let _ = writeln!(out, "{BOLD}{head}{RESET}");
    } else {
        let _ = writeln!(out, "{head}");
    }
    for (m, c) in rows.iter().zip(&cells) {
        match colour_of(m).filter(|_| color) {
            Some(col) => {
                let _ = writeln!(out, "{col}{}{RESET}", line(c));
            }
            None => {
                let _ = writeln!(out, "{}", line(c));
            }
        }
    }
    if let (true, Width::Narrow(n)) = (fitted.gave, width) {
        let _ = writeln!(
            out,
            "(fitted to {n} columns: --wide shows every column, names whole)"
        );
    }
    if rows.iter().any(|m| sides_disagree(m)) {
        let _ = writeln!(out, "{}", disagree_note(sbs));
    }
    let (lacking, trials) = lacking_rows(cmp);
    if trials > 0 {
        let _ = writeln!(
            out,
            "\n{trials} trial{} without a gated figure, left out of its comparison:",
            if trials == 1 { "" } else { "s" }
        );
        for m in lacking {
            let _ = writeln!(
                out,
                "  {} / {} {}: {}",
                safe(&m.scenario),
                safe(&m.who()),
                safe(&m.metric),
                lacking_list(m)
            );
        }
    }
    let mut reasons: Vec<&str> = Vec::new();
    for m in failed_rows(cmp) {
        if !reasons.contains(&m.reason.as_str()) {
            reasons.push(&m.reason);
        }
    }
    if !reasons.is_empty() {
        out.push('\n');
    }
    for r in reasons {
        match color {
            true => {
                let _ = writeln!(out, "{RED}{}{RESET}", crate::report::untrusted::quoted(r));
            }
            false => {
                let _ = writeln!(out, "{}", crate::report::untrusted::quoted(r));
            }
        }
    }
    let others = cmp.metrics.len() - rows.len();
    if others > 0 {
        let _ = writeln!(
            out,
            "\n{others} informative metric{} not shown, none shown to regress or improve (see the JSON report)",
            if others == 1 { "" } else { "s" }
        );
    }
    if cmp.metrics.iter().any(|m| m.server.is_some()) {
        let _ = writeln!(out, "{}", super::SERVER_UNDER_TEST_NOTE);
    }
    let _ = writeln!(out, "method: {}", safe(&cmp.method));
    out
}
