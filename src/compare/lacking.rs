//! Trials without a gated figure, counted (issue 52): a trial that measured
//! its other figures but not one its cell's other trials measured (a command
//! client's CPU gone at its window's close, `results::CpuSource::Gone`)
//! leaves its round out of that metric's comparison. It is never left out
//! silently: each gating row lists those trials of either side
//! (`MetricComparison::lacking`) and its reason counts them first.

use crate::results::{CellIndex, CellResult};

use super::model::MetricComparison;

/// Trials listed per row; the rest are counted.
const MAX_LISTED: usize = 8;

/// Lists and counts, on every gating row, the trials of its cell
/// (`current_index`) and of its baseline cell (`baseline_index`: the stored
/// run's, or the same run's side by side) that lack its metric.
pub fn count(
    rows: &mut [MetricComparison],
    current_index: &CellIndex<'_>,
    baseline_index: Option<&CellIndex<'_>>,
) {
    for row in rows.iter_mut().filter(|r| r.gating) {
        let cur = current_index.get(&row.scenario, &row.client, row.server.as_deref());
        let base = baseline_index.and_then(|b| {
            b.get(
                &row.scenario,
                &row.baseline_client,
                row.baseline_server.as_deref(),
            )
        });
        let mut lacking = cur.map(|c| rounds(c, &row.metric, "")).unwrap_or_default();
        if let Some(b) = base.filter(|b| !cur.is_some_and(|c| std::ptr::eq(*b, c))) {
            lacking.extend(rounds(b, &row.metric, "baseline "));
        }
        if lacking.is_empty() {
            continue;
        }
        let n = lacking.len();
        let mut listed = lacking.clone();
        if n > MAX_LISTED {
            listed.truncate(MAX_LISTED);
            listed.push(format!("and {} more", n - MAX_LISTED));
        }
        row.reason = format!(
            "{n} trial{} measured no {} ({}): left out of this comparison. {}",
            if n == 1 { "" } else { "s" },
            row.metric,
            listed.join(", "),
            row.reason
        );
        row.lacking = lacking;
    }
}

/// `round N` for each trial of `cell` lacking `metric`, prefixed with `side`.
fn rounds(cell: &CellResult, metric: &str, side: &str) -> Vec<String> {
    cell.lacking(metric)
        .into_iter()
        .map(|r| format!("{side}round {r}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::compare::{compare, compare_side_by_side};
    use crate::config::gate::default_gate;
    use crate::results::{synthetic, CpuSource, RunResults};

    const CPU: &str = "cpu_us_per_request";

    /// One scenario, its two clients (hyper, reqwest), 6 rounds; `gone`:
    /// the (client, round) trials whose CPU was gone at the window's close.
    fn run(gone: &[(&str, u32)]) -> RunResults {
        let mut suite = crate::config::Suite::default_suite();
        suite.scenarios.truncate(1);
        let mut r = synthetic::run(suite, 6, |_, _, round| {
            let k = 1.0 + 0.01 * f64::from(round % 3);
            Some(synthetic::metrics(10_000.0 / k, 2000.0 * k, 50.0 * k))
        });
        for c in &mut r.results {
            for t in &mut c.trials {
                if gone.contains(&(c.client.as_str(), t.round)) {
                    t.cpu_source = Some(CpuSource::Gone);
                    t.metrics.as_mut().unwrap().cpu_us_per_request = None;
                }
            }
        }
        r
    }

    #[test]
    fn a_trial_without_a_gated_figure_is_counted_not_left_out_silently() {
        let (base, cur) = (run(&[("hyper", 4)]), run(&[("hyper", 2)]));
        let cmp = compare(Some(&base), &cur, &default_gate());
        let row = cmp
            .metrics
            .iter()
            .find(|m| m.client == "hyper" && m.metric == CPU)
            .expect("a CPU row");
        assert!(row.gating, "{row:?}");
        assert_eq!(row.lacking, ["round 2", "baseline round 4"]);
        assert!(
            row.reason.starts_with(
                "2 trials measured no cpu_us_per_request (round 2, baseline round 4): left out of this comparison. "
            ),
            "{}",
            row.reason
        );
        assert_eq!((row.baseline.len(), row.current.len()), (5, 5));
        // A figure every trial has, and a cell that lost none: nothing listed.
        for m in cmp
            .metrics
            .iter()
            .filter(|m| m.metric != CPU || m.client != "hyper")
        {
            assert!(m.lacking.is_empty(), "{m:?}");
        }
    }

    #[test]
    fn side_by_side_each_cell_is_counted_once() {
        let r = run(&[("hyper", 1), ("reqwest", 3)]);
        let cmp = compare_side_by_side(&r, "hyper", &default_gate());
        let row = cmp.metrics.iter().find(|m| m.metric == CPU).unwrap();
        assert_eq!(row.lacking, ["round 3", "baseline round 1"]);
        assert_eq!(row.current.len(), 4, "rounds 1 and 3 left out of the pairs");
        assert!(
            row.reason.starts_with("2 trials measured no "),
            "{}",
            row.reason
        );
    }
}
