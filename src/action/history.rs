//! Base vs head keeps the history in view: when the base branch has a stored
//! baseline, the pull request's comment also shows how head compares with it
//! (`pipeline::judge`'s informative comparison), informative and never gated
//! (the gate is the comparison within the run, which a shared runner's drift
//! between runs cannot fake).

use std::fmt::Write as _;

use crate::baseline::FoundBaseline;
use crate::compare::{Comparison, Verdict};
use crate::report::escape::{md, md_who, sha};
use crate::report::rows::{change_with_ci, is_headline_row, row_order, verdict_text};

/// Most rows the section shows (it shares the comment's size limit).
const MAX_ROWS: usize = 30;

/// The comment's section for `cmp` against the stored baseline `found` of
/// `branch`: a closed `<details>` block of its notable rows.
pub fn section(cmp: &Comparison, found: &FoundBaseline, branch: &str) -> String {
    let mut rows: Vec<_> = cmp
        .metrics
        .iter()
        .filter(|m| is_headline_row(m) && m.verdict != Verdict::NoBaseline)
        .collect();
    rows.sort_by(|a, b| row_order(a, b));
    let mut out = format!(
        "<details><summary>Against the stored baseline of {} (commit {}; informative, not gated)</summary>\n\n",
        md(branch),
        sha(&found.key.sha)
    );
    if rows.is_empty() {
        out.push_str("No metric of this run has a stored counterpart to compare with.\n");
    } else {
        out.push_str(
            "Across runs, a shared runner's speed moves: these changes include that drift; the verdict above does not.\n\n",
        );
        out.push_str("| scenario | client | metric | change [CI] | across runs |\n");
        out.push_str("|:--|:--|:--|--:|:--|\n");
        for m in rows.iter().take(MAX_ROWS) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                md(&m.scenario),
                md_who(&m.client, m.server.as_deref()),
                md(&m.metric),
                change_with_ci(m),
                verdict_text(m)
            );
        }
        if rows.len() > MAX_ROWS {
            let _ = writeln!(out, "\n… and {} more rows", rows.len() - MAX_ROWS);
        }
    }
    out.push_str("\n</details>\n\n");
    out
}
