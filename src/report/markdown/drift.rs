//! `benchgate history` in markdown (the nightly job summary and the drift
//! issue): the change points in a table, then a trend chart per drifting
//! cell: the cell's history as one line and the segment means before and
//! after each change point as a second (mermaid's xychart has no
//! annotations). Bounded to fit an issue body ([`super::MAX_COMMENT_CHARS`]).

use std::fmt::Write as _;

use super::chart::line_chart;
use crate::report::drift::{headline, percent, shift_words, short, who, History};
use crate::report::escape::{md, md_n, mermaid, sha};
use crate::report::format::with_unit;

/// Most change-point rows in the table.
pub const MAX_ROWS: usize = 50;
/// Most trend charts (drifting cells, in order).
pub const MAX_CHARTS: usize = 12;

/// The report, starting with a `##` heading.
pub fn render(h: &History<'_>) -> String {
    let drifting = h.drifting().count();
    let mut out = match drifting {
        0 => "## ✅ benchgate history: no drift\n\n".to_string(),
        n => format!("## 📈 benchgate history: {n} drifting series\n\n"),
    };
    let _ = writeln!(
        out,
        "{}. A series drifts when its newest change point makes it worse by more than the metric's warn threshold on the same machine; a change point where the environment fingerprint moved is marked *environment*, with what moved.\n",
        md_n(&headline(h), 400)
    );
    let rows: Vec<_> = h
        .cells
        .iter()
        .flat_map(|c| c.shifts.iter().map(move |s| (c, s)))
        .collect();
    if rows.is_empty() {
        out.push_str("No change points: every series is flat at this significance.\n\n");
        return out;
    }
    out.push_str("| cell | metric | starts at | change | before → after | p-value | |\n");
    out.push_str("|:--|:--|:--|--:|--:|--:|:--|\n");
    for (c, s) in rows.iter().take(MAX_ROWS) {
        let mark = match shift_words(c, s) {
            w @ "worse, drifting" => format!("🔴 {w}"),
            w if s.environment_moved() => {
                format!("🖥️ {w} ({})", md_n(&s.environment.join("; "), 300))
            }
            w => w.to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} → {} | {:.3} | {mark} |",
            md_n(&who(c), 80),
            md(&c.metric),
            sha(&h.runs[s.run].sha),
            percent(s.point.relative_change()),
            with_unit(&c.metric, s.point.mean_before),
            with_unit(&c.metric, s.point.mean_after),
            s.point.p_value
        );
    }
    if rows.len() > MAX_ROWS {
        let _ = writeln!(out, "\n… and {} more change points", rows.len() - MAX_ROWS);
    }
    out.push('\n');
    for c in h.drifting().take(MAX_CHARTS) {
        let labels: Vec<String> = c
            .values
            .iter()
            .map(|(run, _)| short(&h.runs[*run].sha).chars().take(7).collect())
            .collect();
        let values: Vec<f64> = c.values.iter().map(|(_, v)| *v).collect();
        let means = c.segment_means();
        let title = format!(
            "{}: {} (line 2: segment means)",
            mermaid(&who(c)),
            mermaid(&c.metric)
        );
        line_chart(&title, &c.metric, &labels, &[&values, &means], &mut out);
    }
    if drifting > MAX_CHARTS {
        let _ = writeln!(
            out,
            "Charts show the first {MAX_CHARTS} drifting series; {} more are in the table.\n",
            drifting - MAX_CHARTS
        );
    }
    out
}
