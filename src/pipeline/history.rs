//! A branch's stored history analysed: the newest stored runs of a branch
//! (a local store or the data branch, through the baseline stores) in the
//! order they were stored, and per gating metric and cell their change points
//! ([`crate::compare::drift`]). `benchgate history` (`commands::history`)
//! and the action's nightly drift check read it through [`read`].

use anyhow::Context as _;

use crate::baseline::{BaselineKey, BaselineStore, StoredRun};
use crate::compare::changepoint::Options;
use crate::compare::drift::{gating_series, histories, CellHistory};
use crate::config::GateConfig;
use crate::report::drift::History;
use crate::report::markdown::MetricHistory;
use crate::results::RunResults;

/// A branch's stored runs, oldest first, and the change points of each
/// gating metric's series per cell.
#[derive(Debug, Clone)]
pub struct Analysed {
    pub runs: Vec<BaselineKey>,
    pub cells: Vec<CellHistory>,
}

impl Analysed {
    /// The report's view.
    pub fn view<'a>(&'a self, branch: &'a str, opts: Options) -> History<'a> {
        History {
            branch,
            runs: &self.runs,
            cells: &self.cells,
            opts,
        }
    }
}

/// The newest `last` stored runs of `branch` in `store` (described by
/// `source` in errors), analysed with the `[gate]` of the newest (which
/// metrics gate); `None` when none is stored.
pub fn read(
    store: &dyn BaselineStore,
    source: &str,
    branch: &str,
    last: usize,
    opts: Options,
) -> anyhow::Result<Option<Analysed>> {
    let stored = store
        .load_history(branch, last)
        .with_context(|| format!("reading the stored baselines of {branch:?} in {source}"))?;
    let Some(newest) = stored.last() else {
        return Ok(None);
    };
    let gate = &newest.results.config.gate;
    let runs: Vec<_> = stored.iter().map(|s| &s.results).collect();
    let cells = histories(&runs, gate, opts);
    Ok(Some(Analysed {
        runs: stored.into_iter().map(|s| s.key).collect(),
        cells,
    }))
}

/// Why nothing was analysed: `source` holds nothing of `branch`, with what
/// the store said.
pub fn nothing_stored(store: &dyn BaselineStore, source: &str, branch: &str) -> String {
    let notes: String = store.notes().iter().map(|n| format!("; {n}")).collect();
    format!(
        "{source} holds no stored baselines of branch {branch:?}: runs on pushes to {branch:?} store them; if they store another branch, name that one{notes}"
    )
}

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
