//! Base vs head keeps the history in view: when the base branch has a stored
//! baseline, the pull request's comment also shows how head compares with it,
//! informative and never gated (the gate is the comparison within the run,
//! which a shared runner's drift between runs cannot fake); and the base
//! branch's last stored values of each gating metric as a trend chart beside
//! this run's value ([`trend`]).

use std::fmt::Write as _;

use crate::baseline::{FoundBaseline, StoredRun};
use crate::compare::drift::gating_series;
use crate::compare::{self, Comparison, Verdict};
use crate::config::base_variants::BASE_SUFFIX;
use crate::config::GateConfig;
use crate::report::escape::{md, md_who, sha};
use crate::report::markdown::MetricHistory;
use crate::report::rows::{change_with_ci, is_headline_row, row_order, verdict_text};
use crate::results::RunResults;

/// Most rows the section shows (it shares the comment's size limit).
const MAX_ROWS: usize = 30;

/// Stored runs of the base branch read for the comment's trend charts: the
/// newest, each a point beside this run's value (every one is a read of the
/// store; the chart draws at most
/// [`MAX_HISTORY_POINTS`](crate::report::markdown::MAX_HISTORY_POINTS)).
pub const TREND_RUNS: usize = 20;

/// The trend of each gating metric (by `gate`) per cell of the stored runs
/// `stored` (oldest first), labelled by short commit, for the comment's
/// history charts. Cells with a server under test are left out (a chart
/// names scenario and client only).
pub fn trend(stored: &[StoredRun], gate: &GateConfig) -> Vec<MetricHistory> {
    let runs: Vec<&RunResults> = stored.iter().map(|s| &s.results).collect();
    gating_series(&runs, gate)
        .into_iter()
        .filter(|c| c.server.is_none())
        .map(|c| MetricHistory {
            points: c
                .values
                .iter()
                .map(|(run, v)| (stored[*run].key.sha.chars().take(7).collect(), *v))
                .collect(),
            scenario: c.scenario,
            client: c.client,
            metric: c.metric,
        })
        .collect()
}

/// `current` without its base variants (`NAME@base`), compared with the
/// stored run `found` under `gate`.
pub fn compare_with_stored(
    found: &FoundBaseline,
    current: &RunResults,
    gate: &GateConfig,
) -> Comparison {
    let is_base = |c: &crate::results::CellResult| {
        c.client.ends_with(BASE_SUFFIX)
            || c.server
                .as_deref()
                .is_some_and(|s| s.ends_with(BASE_SUFFIX))
    };
    let head = RunResults {
        results: current
            .results
            .iter()
            .filter(|c| !is_base(c))
            .cloned()
            .collect(),
        ..current.clone()
    };
    compare::compare(Some(&found.results), &head, gate)
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::BaselineKey;
    use crate::config::Suite;
    use crate::results::synthetic;

    fn stored(i: u32, cpu: f64) -> StoredRun {
        let mut suite = Suite::default_suite();
        suite.scenarios.truncate(1);
        suite.scenarios[0].clients.truncate(1);
        StoredRun {
            key: BaselineKey {
                branch: "main".into(),
                sha: format!("{i:x}abcdef0123456789"),
                started_at: "2026-01-01T00:00:00Z".into(),
                run_id: i.to_string(),
            },
            results: synthetic::run(suite, 1, |_, _, _| {
                Some(synthetic::metrics(1000.0, 500.0, cpu))
            }),
        }
    }

    #[test]
    fn the_trend_has_a_point_per_stored_run_of_each_gating_metric() {
        let runs = [stored(1, 20.0), stored(2, 21.0), stored(3, 22.0)];
        let gate = GateConfig::default();
        let t = trend(&runs, &gate);
        let cpu = t.iter().find(|h| h.metric == "cpu_us_per_request").unwrap();
        let want: Vec<(String, f64)> = vec![
            ("1abcdef".into(), 20.0),
            ("2abcdef".into(), 21.0),
            ("3abcdef".into(), 22.0),
        ];
        assert_eq!(cpu.points, want);
        assert!(t.iter().all(|h| crate::compare::gate_for(
            &gate,
            &h.scenario,
            &h.client,
            &h.metric
        )
        .is_some_and(|g| g.gating)));
        assert!(t.iter().all(|h| h.metric != "peak_rss_bytes"), "not gating");
        // A server under test's cell is left out.
        let mut with_server = runs.clone();
        with_server
            .iter_mut()
            .for_each(|r| r.results.results[0].server = Some("srv".into()));
        assert!(trend(&with_server, &gate).is_empty());
    }
}
