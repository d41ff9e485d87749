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
    out.push_str(&crate::report::markdown::machine_changed(
        &cmp.environment_changes,
    ));
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::{BaselineKey, FoundBaseline};
    use crate::config::Suite;
    use crate::pipeline::{judge, Lookup};
    use crate::plan::{Asked, ComparisonPlan};
    use crate::results::{synthetic, RunResults};

    fn run(cpu: f64) -> RunResults {
        let mut suite = Suite::default_suite();
        suite.scenarios.truncate(1);
        suite.scenarios[0].clients.truncate(1);
        synthetic::run(suite, 1, |_, _, _| {
            Some(synthetic::metrics(1000.0, 500.0, cpu))
        })
    }

    /// The informative comparison of `head` with the stored `found`, as the
    /// action judges it.
    fn informative(found: &FoundBaseline, head: &RunResults) -> Comparison {
        let suite = head.config.clone();
        let plan = ComparisonPlan::resolve(Asked::default(), &suite, &suite, "test").unwrap();
        let mut lookup = Lookup::new(plan, None);
        lookup.informative = Some(found.clone());
        judge(&lookup, head).informative.unwrap()
    }

    #[test]
    fn the_section_says_when_the_machine_changed_since_the_stored_run() {
        let mut base = run(20.0);
        base.environment.runner_image = Some("ubuntu24 20250105.1.0".into());
        let mut head = base.clone();
        let found = FoundBaseline {
            key: BaselineKey {
                branch: "main".into(),
                sha: "1abcdef0123456789".into(),
                started_at: "2026-01-01T00:00:00Z".into(),
                run_id: "1".into(),
            },
            exact: true,
            results: base,
        };
        let same = informative(&found, &head);
        assert!(!section(&same, &found, "main").contains("machine changed"));
        head.environment.runner_image = Some("ubuntu24 20250112.1.0".into());
        head.environment.kernel = "6.8.0-1017-azure".into();
        let moved = informative(&found, &head);
        let text = section(&moved, &found, "main");
        assert!(text.contains("**The machine changed**"), "{text}");
        assert!(text.contains("> - kernel differs"), "{text}");
        assert!(text.contains("> - runner\\_image differs"), "{text}");
    }
}
