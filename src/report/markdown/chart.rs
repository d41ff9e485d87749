//! Mermaid charts (GitHub renders `xychart-beta`): per gating metric, a bar
//! chart of the relative change per (scenario, client) (comparable cells
//! that measured something only); and, when the baseline
//! store provides a history (the pull request's base branch), a line chart
//! per (scenario, client, metric): its last stored values, then this run's.
//! Labels pass through [`escape::mermaid`](crate::report::escape::mermaid), so a
//! name cannot close the quoted label, the fence or inject a `%%{init}%%` directive.

use std::fmt::Write as _;

use super::MetricHistory;
use crate::compare::{Comparison, MetricComparison, Verdict};
use crate::metric::metric_def;
use crate::report::escape::mermaid;
use crate::report::rows::{metric_index, row_order};

/// Most bars per chart (the most important cells, in table order).
pub const MAX_BARS: usize = 20;
/// Most points per history chart (the newest).
pub const MAX_HISTORY_POINTS: usize = 30;
/// Most history charts.
pub const MAX_HISTORY_CHARTS: usize = 12;

fn label(m: &MetricComparison, sbs: bool) -> String {
    if sbs {
        mermaid(&format!(
            "{} / {} vs {}",
            m.scenario,
            m.who(),
            m.baseline_who()
        ))
    } else {
        mermaid(&format!("{} / {}", m.scenario, m.who()))
    }
}

/// A number for mermaid: finite, compact.
fn num(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn bar_chart(metric: &str, rows: &[&MetricComparison], sbs: bool, out: &mut String) {
    let values: Vec<f64> = rows
        .iter()
        .map(|m| m.change.unwrap_or(0.0) * 100.0)
        .collect();
    let top = values.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let bound = ((top / 5.0).ceil() * 5.0).max(5.0);
    let labels: Vec<String> = rows
        .iter()
        .map(|m| format!("\"{}\"", label(m, sbs)))
        .collect();
    let bars: Vec<String> = values.iter().map(|v| num(*v)).collect();
    let _ = write!(
        out,
        "```mermaid\nxychart-beta\n    title \"{}: change vs baseline (%)\"\n    x-axis [{}]\n    y-axis \"change (%)\" {} --> {}\n    bar [{}]\n```\n\n",
        mermaid(metric),
        labels.join(", "),
        num(-bound),
        num(bound),
        bars.join(", ")
    );
}

fn history_chart(h: &MetricHistory, cmp: &Comparison, out: &mut String) {
    let mut points: Vec<(String, f64)> = h
        .points
        .iter()
        .filter(|(_, v)| v.is_finite())
        .cloned()
        .collect();
    let current = cmp
        .metrics
        .iter()
        .find(|m| m.scenario == h.scenario && m.client == h.client && m.metric == h.metric)
        .and_then(|m| m.current_median)
        .filter(|v| v.is_finite());
    if let Some(v) = current {
        points.push(("this run".to_string(), v));
    }
    let skip = points.len().saturating_sub(MAX_HISTORY_POINTS);
    let points = &points[skip..];
    if points.len() < 2 {
        return;
    }
    let labels: Vec<String> = points.iter().map(|(l, _)| l.clone()).collect();
    let values: Vec<f64> = points.iter().map(|(_, v)| *v).collect();
    let title = format!(
        "{} / {}: {} history",
        mermaid(&h.scenario),
        mermaid(&h.client),
        mermaid(&h.metric)
    );
    line_chart(&title, &h.metric, &labels, &[&values], out);
}

/// A mermaid line chart titled `title` (escaped by the caller, with
/// [`mermaid`] on each untrusted part) of `metric` (its unit on the y axis):
/// one line per entry of `lines`, each aligned with `labels` (escaped here).
/// Non-finite values are drawn as 0.
pub(super) fn line_chart(
    title: &str,
    metric: &str,
    labels: &[String],
    lines: &[&[f64]],
    out: &mut String,
) {
    let unit = metric_def(metric).map(|d| d.unit).unwrap_or("");
    let labels: Vec<String> = labels
        .iter()
        .map(|l| format!("\"{}\"", mermaid(l)))
        .collect();
    let _ = write!(
        out,
        "```mermaid\nxychart-beta\n    title \"{title}\"\n    x-axis [{}]\n    y-axis \"{}\"\n",
        labels.join(", "),
        mermaid(unit),
    );
    for line in lines {
        let values: Vec<String> = line
            .iter()
            .map(|v| num(if v.is_finite() { *v } else { 0.0 }))
            .collect();
        let _ = writeln!(out, "    line [{}]", values.join(", "));
    }
    out.push_str("```\n\n");
}

/// The charts section (a closed `<details>` block), or empty when there is
/// nothing to chart.
pub fn section(cmp: &Comparison, history: &[MetricHistory]) -> String {
    let sbs = cmp.mode.paired();
    let mut metrics: Vec<&str> = cmp
        .metrics
        .iter()
        .filter(|m| m.gating)
        .map(|m| m.metric.as_str())
        .collect();
    metrics.sort_by_key(|m| (metric_index(m), *m));
    metrics.dedup();
    let mut body = String::new();
    let mut cut = 0;
    for metric in metrics {
        let mut rows: Vec<&MetricComparison> = cmp
            .metrics
            .iter()
            .filter(|m| m.gating && m.metric == metric)
            .filter(|m| m.change.is_some_and(f64::is_finite))
            .filter(|m| {
                !matches!(
                    m.verdict,
                    Verdict::NotComparable | Verdict::NoBaseline | Verdict::Failed
                )
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        rows.sort_by(|a, b| row_order(a, b));
        cut += rows.len().saturating_sub(MAX_BARS);
        rows.truncate(MAX_BARS);
        bar_chart(metric, &rows, sbs, &mut body);
    }
    let bars = body.len();
    for h in history.iter().take(MAX_HISTORY_CHARTS) {
        history_chart(h, cmp, &mut body);
    }
    if body.is_empty() {
        return String::new();
    }
    let summary = match (bars > 0, body.len() > bars) {
        (true, true) => "relative change of the gating metrics, and their stored history",
        (false, true) => "the gating metrics' stored history and this run",
        _ => "relative change of the gating metrics",
    };
    if cut > 0 {
        let _ = writeln!(
            body,
            "Charts show the {MAX_BARS} most important cells per metric; {cut} more are in the tables.\n"
        );
    }
    format!("<details><summary>Charts: {summary}</summary>\n\n{body}</details>\n\n")
}
