//! What every comparison renderer shares: the order of rows (most important
//! first), verdict labels and marks, and the formatting of changes, intervals
//! and metric values. Renderers only display verdicts; `compare` decides them.

use std::cmp::Ordering;

use super::format::with_unit;
use crate::compare::{Comparison, GateOutcome, MetricComparison, Tier, Verdict};
use crate::metric::METRICS;

/// Importance of a row: 0 is shown first (and dropped last). A cell with no
/// successful trial ranks with the failing rows, and comes first among them
/// ([`row_order`]).
pub fn rank(m: &MetricComparison) -> u8 {
    match (shown_tier(m), m.verdict) {
        (_, Verdict::Failed) | (Tier::Fail, _) => 0,
        (_, Verdict::Missing) | (Tier::Warn, _) => 1,
        (_, Verdict::Regressed) => 2,
        (_, Verdict::Improved) => 3,
        (_, Verdict::NotComparable) => 4,
        (_, Verdict::Inconclusive) => 5,
        (_, Verdict::Unchanged) => 6,
        (_, Verdict::NoBaseline) => 7,
    }
}

/// Whether a row carries its tier (❌/⚠️/🟢, a colour, `(warn)`): gating
/// metrics, and cells where every trial failed or that are missing from the
/// run (their tier is the gate's whatever the metric). Informative metrics
/// say their verdict in plain words only.
pub fn shows_tier(m: &MetricComparison) -> bool {
    m.gating || matches!(m.verdict, Verdict::Failed | Verdict::Missing)
}

/// The tier a report shows: an informative metric's is always `Pass`.
pub fn shown_tier(m: &MetricComparison) -> Tier {
    if shows_tier(m) {
        m.tier
    } else {
        Tier::Pass
    }
}

/// Whether a row belongs in the main table: it gates, or it says something
/// (regressed, improved, or warned). Other rows are collapsed.
pub fn is_headline_row(m: &MetricComparison) -> bool {
    m.gating || m.tier != Tier::Pass || matches!(m.verdict, Verdict::Regressed | Verdict::Improved)
}

/// Position of a metric in `METRICS` (unknown names last).
pub fn metric_index(name: &str) -> usize {
    METRICS
        .iter()
        .position(|d| d.name == name)
        .unwrap_or(METRICS.len())
}

/// Row order: importance, then cells with no successful trial, then gating
/// before informative, then the metric's display order, then client name, then
/// server name. Stable, so input order breaks ties.
pub fn row_order(a: &MetricComparison, b: &MetricComparison) -> Ordering {
    let failed = |m: &MetricComparison| m.verdict == Verdict::Failed;
    rank(a)
        .cmp(&rank(b))
        .then(failed(b).cmp(&failed(a)))
        .then(b.gating.cmp(&a.gating))
        .then(metric_index(&a.metric).cmp(&metric_index(&b.metric)))
        .then(a.client.cmp(&b.client))
        .then(a.server.cmp(&b.server))
}

/// A verdict in words, with its tier: `regressed`, `regressed (warn)`,
/// `regressed (informative)`, `improved`, ...
pub fn verdict_text(m: &MetricComparison) -> &'static str {
    match (m.verdict, m.tier, m.gating) {
        (Verdict::Regressed, Tier::Fail, _) => "regressed",
        (Verdict::Regressed, Tier::Warn, _) => "regressed (warn)",
        (Verdict::Regressed, Tier::Pass, _) => "regressed (informative)",
        (Verdict::Improved, _, _) => "improved",
        (Verdict::Unchanged, _, true) => "within threshold",
        (Verdict::Unchanged, _, false) => "unchanged",
        (Verdict::Inconclusive, Tier::Warn, _) => "inconclusive (warn)",
        (Verdict::Inconclusive, _, _) => "inconclusive",
        (Verdict::NotComparable, Tier::Fail, _) => "not comparable (fail)",
        (Verdict::NotComparable, _, _) => "not comparable",
        (Verdict::NoBaseline, Tier::Fail, _) => "no baseline (fail)",
        (Verdict::NoBaseline, _, _) => "no baseline",
        (Verdict::Failed, _, _) => "every trial failed",
        (Verdict::Missing, Tier::Fail, _) => "missing from this run (fail)",
        (Verdict::Missing, _, _) => "missing from this run",
    }
}

/// [`verdict_text`], then `, invalid trials` when the validity guard marked
/// trials of either side (`compare::validity`): the mark every report shows.
/// An informative metric's verdict is plain words without a tier
/// ([`informative_text`]); a gating metric left undecided when its budgeted
/// scenario failed says so (`stopped at round 8: the scenario failed`).
pub fn verdict_words(m: &MetricComparison) -> String {
    let text = match m.stopped_at {
        // Under a budget, left undecided when another metric failed.
        Some(round) if m.verdict == Verdict::Inconclusive => {
            crate::compare::settled::stopped_by_failure(round)
        }
        _ if shows_tier(m) => verdict_text(m).to_string(),
        _ => informative_text(m).to_string(),
    };
    if m.invalid.is_empty() {
        text
    } else {
        format!("{text}, invalid trials")
    }
}

/// The verdict of an informative (non-gating) metric in plain words: what
/// it did, marked informative when it moved, never a tier.
pub fn informative_text(m: &MetricComparison) -> &'static str {
    match m.verdict {
        Verdict::Regressed => "regressed (informative)",
        Verdict::Improved => "improved (informative)",
        Verdict::Inconclusive => "inconclusive",
        Verdict::NotComparable => "not comparable",
        Verdict::NoBaseline => "no baseline",
        Verdict::Unchanged | Verdict::Failed | Verdict::Missing => verdict_text(m),
    }
}

/// The emoji mark of a verdict for markdown; none for an informative metric
/// ([`shows_tier`]), so only gating metrics carry ❌/⚠️/🟢.
pub fn verdict_mark(m: &MetricComparison) -> &'static str {
    if !shows_tier(m) {
        return "";
    }
    match (m.tier, m.verdict) {
        (_, Verdict::Failed) | (Tier::Fail, _) => "❌",
        (Tier::Warn, _) => "⚠️",
        (_, Verdict::Regressed) => "🔸",
        (_, Verdict::Improved) => "🟢",
        (_, Verdict::Unchanged) => "➖",
        (_, Verdict::Inconclusive) => "❔",
        (_, Verdict::NotComparable) => "⚠️",
        (_, Verdict::NoBaseline) => "⚪",
        (_, Verdict::Missing) => "⚠️",
    }
}

/// A verdict cell for markdown: the mark, when there is one, then the words.
pub fn verdict_cell(m: &MetricComparison) -> String {
    match verdict_mark(m) {
        "" => verdict_words(m),
        mark => format!("{mark} {}", verdict_words(m)),
    }
}

/// The headline of a gate outcome: mark and words.
pub fn outcome_text(o: GateOutcome) -> (&'static str, &'static str) {
    match o {
        GateOutcome::Pass => ("✅", "pass"),
        GateOutcome::Fail => ("❌", "fail"),
        GateOutcome::Inconclusive => ("⚠️", "inconclusive"),
        GateOutcome::NoBaseline => ("⚪", "no baseline"),
        GateOutcome::NotComparable => ("⚠️", "not comparable"),
    }
}

/// The rows of cells that measured nothing (every trial failed), in row order.
pub fn failed_rows(cmp: &Comparison) -> Vec<&MetricComparison> {
    let mut rows: Vec<_> = cmp
        .metrics
        .iter()
        .filter(|m| m.verdict == Verdict::Failed)
        .collect();
    rows.sort_by(|a, b| row_order(a, b));
    rows
}

/// Gating rows that left out trials without their figure
/// (`MetricComparison::lacking`), in row order, and the trials they left out.
pub fn lacking_rows(cmp: &Comparison) -> (Vec<&MetricComparison>, usize) {
    let mut rows: Vec<_> = cmp
        .metrics
        .iter()
        .filter(|m| !m.lacking.is_empty())
        .collect();
    rows.sort_by(|a, b| row_order(a, b));
    let trials = rows.iter().map(|m| m.lacking.len()).sum();
    (rows, trials)
}

/// A row's trials without its figure: `round 2, baseline round 4`, the
/// first eight, then how many more.
pub fn lacking_list(m: &MetricComparison) -> String {
    const LISTED: usize = 8;
    let mut list = m.lacking[..m.lacking.len().min(LISTED)].join(", ");
    if m.lacking.len() > LISTED {
        list.push_str(&format!(" and {} more", m.lacking.len() - LISTED));
    }
    list
}

/// A relative change as a signed percentage: `+12.3%`, `-0.4%`, `n/a`.
pub fn pct(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => {
            let p = v * 100.0;
            if p.abs() >= 1000.0 {
                format!("{p:+.0}%")
            } else {
                format!("{p:+.1}%")
            }
        }
        _ => "n/a".to_string(),
    }
}

/// The change with its interval: `+12.3% [+8.1%, +16.0%]`, or just the change.
pub fn change_with_ci(m: &MetricComparison) -> String {
    match (m.change, m.ci_low, m.ci_high) {
        (Some(_), Some(lo), Some(hi)) => {
            format!("{} [{}, {}]", pct(m.change), pct(Some(lo)), pct(Some(hi)))
        }
        _ => pct(m.change),
    }
}

/// The minimum detectable effect: `±3.0%`, or `n/a`.
pub fn mde(m: &MetricComparison) -> String {
    match m.mde {
        Some(v) if v.is_finite() => format!("±{:.1}%", v.abs() * 100.0),
        _ => "n/a".to_string(),
    }
}

/// A metric value in its unit: `1.20ms`, `12.3k req/s`, `3.4MiB`, `0.12%`.
pub fn value(metric: &str, v: Option<f64>) -> String {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return "n/a".to_string();
    };
    with_unit(metric, v)
}

/// `baseline -> current` values of a row: each side's median over its trials.
pub fn values(m: &MetricComparison) -> String {
    format!(
        "{} → {}",
        value(&m.metric, m.baseline_median),
        value(&m.metric, m.current_median)
    )
}

/// The mark of a row whose medians and change point in opposite directions
/// ([`sides_disagree`]), explained once below the table ([`disagree_note`]).
pub const DISAGREE_MARK: &str = "†";

/// Whether the two medians move one way and the change the other. The change
/// is the comparison's own estimate (paired: from the per-round ratios;
/// otherwise the Hodges-Lehmann shift over every pair of trials), not the
/// ratio of the medians, so on noisy data the two can disagree in sign.
pub fn sides_disagree(m: &MetricComparison) -> bool {
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
    match (
        finite(m.baseline_median),
        finite(m.current_median),
        finite(m.change),
    ) {
        (Some(b), Some(c), Some(change)) => {
            let moved = c - b;
            moved != 0.0 && change != 0.0 && (moved > 0.0) != (change > 0.0)
        }
        _ => false,
    }
}

/// [`change_with_ci`], marked with [`DISAGREE_MARK`] when the medians beside
/// it point the other way: the change column of the tables.
pub fn change_cell(m: &MetricComparison) -> String {
    if sides_disagree(m) {
        format!("{} {DISAGREE_MARK}", change_with_ci(m))
    } else {
        change_with_ci(m)
    }
}

/// The change column's header: `paired change [CI]` when the comparison
/// pairs by round, so it does not read as the ratio of the medians beside it.
pub fn change_header(paired: bool) -> &'static str {
    if paired {
        "paired change [CI]"
    } else {
        "change [CI]"
    }
}

/// What the change column is, for the legend under a table.
pub fn change_legend(paired: bool) -> &'static str {
    if paired {
        "Paired change: the estimate from the per-round differences of current vs baseline \
         (not the ratio of the medians)"
    } else {
        "Change: the Hodges-Lehmann estimate of current vs baseline over every pair of trials \
         (not the ratio of the medians)"
    }
}

/// The note under a table with [`DISAGREE_MARK`]ed rows (our own text).
pub fn disagree_note(paired: bool) -> String {
    let (change, why) = if paired {
        (
            "the paired change",
            "it compares the two sides round by round, while each median is taken over one \
             side's trials alone, so a few rounds with large swings can move the medians the \
             other way",
        )
    } else {
        (
            "the change",
            "it weighs every pair of a baseline and a current trial (Hodges-Lehmann), which \
             need not agree with the ratio of the two medians when the trials spread widely",
        )
    };
    format!(
        "{DISAGREE_MARK} The medians and {change} point in opposite directions: the gate decides on {change}; {why}."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_changes_and_values() {
        assert_eq!(pct(Some(0.123)), "+12.3%");
        assert_eq!(pct(Some(-0.004)), "-0.4%");
        assert_eq!(pct(Some(12.5)), "+1250%");
        assert_eq!(pct(Some(f64::NAN)), "n/a");
        assert_eq!(pct(None), "n/a");
        assert_eq!(value("latency_p99_us", Some(1200.0)), "1.20ms");
        assert_eq!(value("cpu_us_per_request", Some(12.5)), "12.5us");
        assert_eq!(value("throughput_rps", Some(12_345.0)), "12.3k req/s");
        assert_eq!(value("error_rate", Some(0.0012)), "0.12%");
        assert_eq!(value("peak_threads", Some(17.0)), "17");
        assert_eq!(value("peak_rss_bytes", None), "n/a");
    }

    #[test]
    fn a_metric_left_undecided_by_a_failure_says_so() {
        let run = crate::results::synthetic::run(
            crate::config::Suite::default_suite(),
            6,
            |_, client, round| {
                // reqwest's throughput 20% either way: undecided.
                let wobble = match client {
                    "reqwest" => 1.0 + 0.2 * (f64::from(round % 3) - 1.0),
                    _ => 1.0,
                };
                Some(crate::results::synthetic::metrics(
                    10_000.0 * wobble,
                    2000.0,
                    50.0,
                ))
            },
        );
        let gate = crate::config::gate::default_gate();
        let cmp = crate::compare::compare_side_by_side(&run, "hyper", &gate);
        let mut m = cmp
            .metrics
            .into_iter()
            .find(|m| m.gating && m.verdict == Verdict::Inconclusive)
            .expect("an undecided gating metric");
        assert_eq!(verdict_words(&m), "inconclusive (warn)");
        m.stopped_at = Some(6);
        assert_eq!(verdict_words(&m), "stopped at round 6: the scenario failed");
        assert_eq!(
            verdict_cell(&m),
            "⚠️ stopped at round 6: the scenario failed"
        );
    }
}
