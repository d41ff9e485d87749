//! `benchgate calibrate`, the pure part: the noise of each gating metric from N
//! A/A runs (same build, same config, same machine), and thresholds the gate can
//! hold on this machine.
//!
//! For every (scenario, client, gating metric), on the comparison scale (`ln` for
//! ratio-scale metrics, raw for the error rate):
//!
//! - **within-run spread**: the pooled standard deviation of the trials of one run
//!   (the trial-to-trial noise the rank test sees);
//! - **between-run spread**: the standard deviation of the run means beyond what
//!   the within-run noise explains (`var(means) - within^2 / k`, floored at 0), the
//!   process/machine-state level of Kalibera and Jones ("Rigorous Benchmarking in
//!   Reasonable Time", ISMM 2013), which no number of trials inside one run removes;
//! - the **A/A shift** of every pair of runs (Hodges-Lehmann, `stats::two_sample`)
//!   and its `quantile` (default p95) of absolute values;
//! - the **minimum detectable effect** of each pair (`stats::Shift::mde`, from
//!   its interval) at the configured rounds and alpha, its median over pairs;
//! - the **false alarms** of the current gate: every ordered pair of runs compared
//!   with [`super::compare`], counting the pairs where the metric fails the gate.
//!
//! - the **A/A interval bound**: for every *ordered* pair of runs whose shift is
//!   significant, the end of its confidence interval nearest to "no change" in
//!   the metric's bad direction (`exp(low) - 1` for lower-is-better, `1 -
//!   exp(high)` for higher-is-better, raw for absolute metrics). The gate fails a
//!   cell only when the change is significant *and* that bound is beyond the fail
//!   threshold (`verdict`), so the largest such bound is exactly the smallest
//!   threshold at which none of the calibration's A/A comparisons would fail.
//!
//! Suggested fail threshold per metric: that largest A/A bound over the
//! calibrated cells, rounded up to a whole percent, at least `floor` and at most
//! [`MAX_RELATIVE`] (the config's limit; a metric that needs more cannot be gated
//! on this machine and the note says so); warn at half of it (rounded up). With
//! `n` runs there are `n(n-1)` ordered pairs, so the threshold sits at about the
//! `1 - 1/(n(n-1))` quantile of the A/A bounds: 5 runs give 20 pairs, the "at
//! most 1 false alarm in 20" of the gate-quality target. The MDE and the A/A
//! shift quantile are shown, not imposed: a comparison noisier than its
//! threshold is called *inconclusive* by the verdict, not failed. Absolute floors
//! of the current gate (e.g. p99's 2 ms) are kept. Absolute-scale metrics (the
//! error rate) keep their threshold unless the A/A bounds exceed it.

use std::fmt::Write as _;

use crate::compare::model::{Comparison, Tier};
use crate::config::gate::{GateConfig, Threshold};
use crate::config::gate_edit::{floor_text, set_gate_entries, threshold_text};
use crate::config::gate_edit::{EntryUpdate, GateEditError};
use crate::metric::{anchored_twin, metric_def, scale_of, Direction, Scale};
use crate::results::{client_label, RunResults};

use super::cells::cell_values;
use super::{gate_for, stats};

/// Largest relative threshold a config may hold (`"+1000%"`, see `gate_parse`).
pub const MAX_RELATIVE: f64 = 10.0;

/// Knobs of the analysis.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Quantile of the absolute A/A shifts a threshold must clear (0.95).
    pub quantile: f64,
    /// Smallest suggested relative threshold (0.02 = 2%).
    pub floor: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            quantile: 0.95,
            floor: 0.02,
        }
    }
}

/// The noise of one (scenario, client, gating metric).
#[derive(Debug, Clone, PartialEq)]
pub struct CellNoise {
    pub scenario: String,
    pub client: String,
    /// The gating metric (the `[gate]` key the suggestion is for).
    pub metric: String,
    /// The figure whose trials were analysed: `metric`, or its anchored
    /// figure when every run measured the anchor (`compare::anchor`).
    pub values_of: String,
    pub scale: Scale,
    /// Runs that measured the metric, and the fewest trials in one of them.
    pub runs: usize,
    pub trials: usize,
    /// Median of every trial's value, in the metric's unit.
    pub center: f64,
    /// Pooled within-run standard deviation (log scale: ~ relative).
    pub within_sd: f64,
    /// Between-run standard deviation beyond the within-run noise.
    pub between_sd: f64,
    /// A/A shifts of the unordered pairs of runs: relative (`exp(s) - 1`) on the
    /// log scale, in the metric's unit otherwise.
    pub shifts: Vec<f64>,
    /// `quantile` of `|shifts|`.
    pub shift_q: f64,
    /// Median MDE over the pairs (relative or absolute like `shifts`); `None`
    /// when the trial count cannot reach alpha.
    pub mde: Option<f64>,
    /// Largest worse-direction interval bound over the significant ordered A/A
    /// pairs (relative, or absolute like `shifts`); 0 when none is significant.
    pub aa_bound: f64,
    /// Ordered pairs of runs where this metric failed the current gate.
    pub false_alarms: usize,
    /// The threshold this cell alone asks for (relative, or absolute).
    pub needed: f64,
    /// Paired runs: the smallest threshold the rounds the budget buys can
    /// check, and those rounds ([`paired`]); `None` between separate runs.
    pub checkable: Option<(f64, u32)>,
}

/// `rows` (the first the header) in columns two spaces apart, a rule under
/// the header; the first `left` columns aligned left, the others right.
pub(crate) fn aligned(rows: &[Vec<String>], left: usize) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (k, r) in rows.iter().enumerate() {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (s, w))| match i < left {
                true => format!("{s:<w$}"),
                false => format!("{s:>w$}"),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
        if k == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * columns.saturating_sub(1)));
            out.push('\n');
        }
    }
    out
}

/// A suggested `[gate]` entry for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    pub metric: String,
    pub scale: Scale,
    pub fail: Threshold,
    pub warn: Threshold,
    /// The cell that asked for the largest threshold (`scenario/client`).
    pub driven_by: String,
    /// The current gate's fail threshold, for comparison.
    pub current: Option<Threshold>,
    /// The metric needs more than [`MAX_RELATIVE`]: the suggestion is capped and
    /// the metric cannot usefully gate on this machine.
    pub capped: bool,
}

/// The whole calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub runs: usize,
    pub alpha: f64,
    pub quantile: f64,
    pub cells: Vec<CellNoise>,
    pub suggestions: Vec<Suggestion>,
    /// Ordered pairs of runs compared with the current gate, and how many failed it.
    pub comparisons: usize,
    pub failed_comparisons: usize,
    /// The runs compare within themselves (side by side, base vs head): each
    /// is an A/A comparison, and the thresholds are the checkable ones.
    pub paired: bool,
    /// Paired runs whose forks ran the window loop: the variance components
    /// and the windows per fork they ask for ([`windows`]).
    pub windows: Vec<windows::Components>,
}

/// Analyses `runs` (A/A: same config) under `gate`. Needs at least 2 runs.
pub fn calibrate(runs: &[RunResults], gate: &GateConfig, opts: Options) -> Calibration {
    let (comparisons, failed, fails) = gate_false_alarms(runs, gate);
    let anchored = super::anchor::all_anchored(runs, gate);
    let mut cells = Vec::new();
    if let Some(first) = runs.first() {
        for cell in first.results.iter().filter(|c| !c.anchor) {
            let label = client_label(&cell.client, cell.server.as_deref());
            let cells_of = || {
                runs.iter()
                    .filter_map(|r| r.cell_at(&cell.scenario, &cell.client, cell.server.as_deref()))
            };
            for g in gate.metrics.iter().map(|g| g.metric.as_str()) {
                let Some(mg) = gate_for(gate, &cell.scenario, &cell.client, g) else {
                    continue;
                };
                if !mg.gating {
                    continue;
                }
                // Anchored runs: the anchored figure is what the gate judges
                // under this metric's thresholds (`compare::anchor`).
                let values_of = anchored_twin(g)
                    .filter(|t| anchored && cells_of().all(|c| !cell_values(c, t.name).is_empty()))
                    .map_or(g, |t| t.name);
                let per_run: Vec<Vec<f64>> = cells_of()
                    .map(|c| cell_values(c, values_of))
                    .filter(|v| !v.is_empty())
                    .collect();
                if per_run.len() < 2 {
                    continue;
                }
                let alarms = fails
                    .iter()
                    .filter(|(s, c, m)| s == &cell.scenario && c == &label && m == values_of)
                    .count();
                let mut noise = cell_noise(
                    (&cell.scenario, &label, g),
                    &per_run,
                    gate.alpha,
                    alarms,
                    opts,
                );
                noise.values_of = values_of.to_string();
                cells.push(noise);
            }
        }
    }
    let suggestions = suggest(&cells, gate, opts);
    Calibration {
        runs: runs.len(),
        alpha: gate.alpha,
        quantile: opts.quantile,
        cells,
        suggestions,
        comparisons,
        failed_comparisons: failed,
        paired: false,
        windows: Vec::new(),
    }
}

/// Analyses A/A runs of a config that compares within the run: `comparisons[i]`
/// is `runs[i]`'s own paired comparison under `gate` ([`paired`]).
pub fn calibrate_paired(
    runs: &[RunResults],
    comparisons: &[Comparison],
    gate: &GateConfig,
    opts: Options,
) -> Calibration {
    let cells = paired::cells(runs, comparisons, opts);
    let suggestions = suggest(&cells, gate, opts);
    Calibration {
        runs: runs.len(),
        alpha: gate.alpha,
        quantile: opts.quantile,
        cells,
        suggestions,
        comparisons: comparisons.len(),
        failed_comparisons: comparisons.iter().filter(|c| c.exit_code == 1).count(),
        paired: true,
        windows: windows::components(runs, comparisons),
    }
}

/// Every ordered pair `(i, j)`, `i != j`, compared with the gate: the number of
/// comparisons, how many failed, and the (scenario, client, metric) of each failure.
fn gate_false_alarms(
    runs: &[RunResults],
    gate: &GateConfig,
) -> (usize, usize, Vec<(String, String, String)>) {
    let (mut n, mut failed, mut cells) = (0, 0, Vec::new());
    for (i, a) in runs.iter().enumerate() {
        for (j, b) in runs.iter().enumerate() {
            if i == j {
                continue;
            }
            let c = super::compare(Some(a), b, gate);
            n += 1;
            failed += usize::from(c.exit_code == 1);
            for m in c.metrics.iter().filter(|m| m.tier == Tier::Fail) {
                cells.push((
                    m.scenario.clone(),
                    client_label(&m.client, m.server.as_deref()),
                    m.metric.clone(),
                ));
            }
        }
    }
    (n, failed, cells)
}

fn cell_noise(
    (scenario, client, metric): (&str, &str, &str),
    per_run: &[Vec<f64>],
    alpha: f64,
    false_alarms: usize,
    opts: Options,
) -> CellNoise {
    let positive = per_run.iter().flatten().all(|v| *v > 0.0);
    let scale = match scale_of(metric) {
        Scale::Log if positive => Scale::Log,
        _ => Scale::Absolute,
    };
    let tx: Vec<Vec<f64>> = per_run
        .iter()
        .map(|v| match scale {
            Scale::Log => v.iter().map(|x| x.ln()).collect(),
            Scale::Absolute => v.clone(),
        })
        .collect();
    let back = |s: f64| match scale {
        Scale::Log => s.exp() - 1.0,
        Scale::Absolute => s,
    };
    let (within_sd, between_sd) = spread(&tx);
    let higher_better = metric_def(metric).map(|d| d.direction) == Some(Direction::HigherIsBetter);
    // How far the interval of "current - baseline" lies beyond "no change" in
    // the bad direction, in the threshold's terms (relative or absolute).
    let worse_bound = |s: &stats::Shift| match (scale, higher_better) {
        (Scale::Log, false) => s.ci_low.exp() - 1.0,
        (Scale::Log, true) => 1.0 - s.ci_high.exp(),
        (Scale::Absolute, false) => s.ci_low,
        (Scale::Absolute, true) => -s.ci_high,
    };
    let (mut shifts, mut mdes, mut aa_bound) = (Vec::new(), Vec::new(), 0.0f64);
    for (i, a) in tx.iter().enumerate() {
        for (j, b) in tx.iter().enumerate() {
            if i == j {
                continue;
            }
            if let Some(s) = stats::two_sample(a, b, alpha).filter(|s| s.p_value <= alpha) {
                aa_bound = aa_bound.max(worse_bound(&s));
            }
        }
        for b in &tx[i + 1..] {
            if let Some(s) = stats::two_sample(a, b, alpha) {
                shifts.push(back(s.estimate));
                // None when the trial count cannot reach alpha.
                mdes.extend(s.mde.map(back));
            }
        }
    }
    let mut abs: Vec<f64> = shifts.iter().map(|s| s.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let shift_q = quantile_sorted(&abs, opts.quantile);
    let mde = stats::median(&mdes);
    let all: Vec<f64> = per_run.iter().flatten().copied().collect();
    CellNoise {
        scenario: scenario.to_string(),
        client: client.to_string(),
        metric: metric.to_string(),
        values_of: metric.to_string(),
        scale,
        runs: per_run.len(),
        trials: per_run.iter().map(Vec::len).min().unwrap_or(0),
        center: stats::median(&all).unwrap_or(0.0),
        within_sd,
        between_sd,
        shifts,
        shift_q,
        mde,
        aa_bound,
        false_alarms,
        needed: aa_bound,
        checkable: None,
    }
}

/// Pooled within-group standard deviation and the between-group component
/// (one-way random effects, method of moments).
pub fn spread(groups: &[Vec<f64>]) -> (f64, f64) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mut ss, mut df) = (0.0, 0usize);
    for g in groups.iter().filter(|g| !g.is_empty()) {
        let m = mean(g);
        ss += g.iter().map(|x| (x - m).powi(2)).sum::<f64>();
        df += g.len() - 1;
    }
    let within_var = if df > 0 { ss / df as f64 } else { 0.0 };
    let means: Vec<f64> = groups
        .iter()
        .filter(|g| !g.is_empty())
        .map(|g| mean(g))
        .collect();
    if means.len() < 2 {
        return (within_var.sqrt(), 0.0);
    }
    let k = groups
        .iter()
        .map(Vec::len)
        .filter(|n| *n > 0)
        .min()
        .unwrap_or(1) as f64;
    let grand = mean(&means);
    let var_means =
        means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (means.len() - 1) as f64;
    (
        within_var.sqrt(),
        (var_means - within_var / k).max(0.0).sqrt(),
    )
}

/// Linear-interpolation quantile of sorted values (0 when empty).
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    match v.len() {
        0 => 0.0,
        1 => v[0],
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let (lo, frac) = (pos.floor() as usize, pos.fract());
            let hi = (lo + 1).min(n - 1);
            v[lo] + (v[hi] - v[lo]) * frac
        }
    }
}

/// Rounds a relative threshold up to a whole percent (up to 1e-9 of slack, so
/// 0.05 stays 5%).
pub fn round_up_percent(r: f64) -> f64 {
    ((r * 100.0) - 1e-9).ceil().max(0.0) / 100.0
}

/// Rounds an absolute threshold up to one significant digit (0.0123 -> 0.02).
fn round_up_abs(a: f64) -> f64 {
    if a <= 0.0 || !a.is_finite() {
        return 0.0;
    }
    let mag = 10f64.powf(a.log10().floor());
    ((a / mag) - 1e-9).ceil() * mag
}

fn suggest(cells: &[CellNoise], gate: &GateConfig, opts: Options) -> Vec<Suggestion> {
    let mut out: Vec<Suggestion> = Vec::new();
    for g in gate.metrics.iter().filter(|g| g.gating) {
        let mine: Vec<&CellNoise> = cells.iter().filter(|c| c.metric == g.metric).collect();
        let Some(worst) = mine.iter().max_by(|a, b| a.needed.total_cmp(&b.needed)) else {
            continue;
        };
        // A log-scale metric measured as absolute somewhere (a 0 value) is left alone.
        if mine.iter().any(|c| c.scale != scale_of(&g.metric)) {
            continue;
        }
        let current = g.fail;
        let floor_abs = g.fail.and_then(|t| t.absolute);
        let (fail, warn) = match scale_of(&g.metric) {
            Scale::Log => {
                let f = round_up_percent(worst.needed.max(opts.floor)).min(MAX_RELATIVE);
                let w = round_up_percent((f / 2.0).max(0.01)).min(f);
                let t = |r: f64| Threshold {
                    relative: r,
                    absolute: floor_abs,
                };
                (t(f), t(w))
            }
            Scale::Absolute => {
                let configured = current.and_then(|t| t.absolute).unwrap_or(0.0);
                let f = round_up_abs(worst.needed).max(configured);
                let w = g.warn.and_then(|t| t.absolute).unwrap_or(f / 10.0).min(f);
                let t = |a: f64| Threshold {
                    relative: 0.0,
                    absolute: Some(a),
                };
                (t(f), t(w))
            }
        };
        out.push(Suggestion {
            metric: g.metric.clone(),
            scale: scale_of(&g.metric),
            fail,
            warn,
            driven_by: format!("{}/{}", worst.scenario, worst.client),
            current,
            capped: scale_of(&g.metric) == Scale::Log && worst.needed > MAX_RELATIVE,
        });
    }
    out
}

/// The keys of one suggestion's `[gate]` entry and their TOML value text:
/// `fail`, `warn` and, for a ratio-scale metric with an absolute floor, `floor`.
pub fn entry_values(s: &Suggestion) -> Vec<(String, String)> {
    let mut out = vec![
        ("fail".to_string(), threshold_text(&s.metric, &s.fail)),
        ("warn".to_string(), threshold_text(&s.metric, &s.warn)),
    ];
    if let (Scale::Log, Some(floor)) = (s.scale, s.fail.absolute) {
        out.push(("floor".to_string(), floor_text(&s.metric, floor)));
    }
    out
}

/// The `[gate]` entry of one suggestion: `name = { fail = .., warn = .., floor = .. }`.
pub fn gate_line(s: &Suggestion) -> String {
    let values: Vec<String> = entry_values(s)
        .into_iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    format!("{} = {{ {} }}", s.metric, values.join(", "))
}

/// The ready-to-paste `[gate]` snippet.
pub fn gate_snippet(c: &Calibration, about: &str) -> String {
    let rule = if c.paired {
        "fail = the smallest threshold the budget's rounds check at 93% power (or the largest A/A interval bound, if larger), rounded up"
    } else {
        "fail = largest A/A interval bound, rounded up"
    };
    let mut out = format!(
        "# benchgate calibrate: {} A/A runs{about}, alpha = {}; {rule}\n[gate]\n",
        c.runs, c.alpha
    );
    for s in &c.suggestions {
        if s.capped {
            let _ = writeln!(
                out,
                "# {}: A/A noise beyond {}% on this machine (capped); consider gating = false",
                s.metric,
                MAX_RELATIVE * 100.0
            );
        }
        out.push_str(&gate_line(s));
        out.push('\n');
    }
    out
}

/// The noise table (plain text, one row per cell).
pub fn render_table(c: &Calibration) -> String {
    let mut header = vec![
        "scenario",
        "client",
        "metric",
        "median",
        "within sd",
        "between sd",
        "A/A |shift| p95",
        "MDE",
        "false alarms",
        "needs",
    ];
    if c.paired {
        header.insert(9, "checkable");
    }
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for n in &c.cells {
        let v = |x: f64| match n.scale {
            Scale::Log => format!("{:.1}%", x * 100.0),
            Scale::Absolute => format!("{x:.4}"),
        };
        let mut row = vec![
            n.scenario.clone(),
            n.client.clone(),
            n.values_of.clone(),
            format!("{:.4}", n.center)
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string(),
            v(n.within_sd),
            v(n.between_sd),
            v(n.shift_q),
            n.mde.map_or("n/a".into(), v),
            format!("{}/{}", n.false_alarms, c.comparisons),
            v(n.needed),
        ];
        if c.paired {
            let shown = n
                .checkable
                .map_or("n/a".into(), |(t, rounds)| format!("{} @{rounds}", v(t)));
            row.insert(9, shown);
        }
        rows.push(row);
    }
    let mut out = aligned(&rows, 3);
    let compared = if c.paired {
        "A/A runs (each compared within itself)"
    } else {
        "ordered A/A comparisons of these runs"
    };
    let _ = writeln!(
        out,
        "\nThe current gate failed {} of {} {compared}.",
        c.failed_comparisons, c.comparisons
    );
    for s in &c.suggestions {
        let cur = s
            .current
            .map_or("none".into(), |t| threshold_text(&s.metric, &t));
        let _ = writeln!(
            out,
            "{}: fail {} (now {cur}), set by {}",
            s.metric,
            threshold_text(&s.metric, &s.fail),
            s.driven_by
        );
    }
    out
}

/// `text` with the suggestions set in its `[gate]` table, every other comment
/// and byte kept (`config::gate_edit`); `source_name` names the file in errors.
/// The caller re-parses the result before writing it.
pub fn rewrite_gate(
    text: &str,
    source_name: &str,
    suggestions: &[Suggestion],
) -> Result<String, GateEditError> {
    let updates: Vec<EntryUpdate> = suggestions
        .iter()
        .map(|s| EntryUpdate {
            metric: s.metric.clone(),
            set: entry_values(s),
        })
        .collect();
    set_gate_entries(text, source_name, &updates)
}

mod paired;
pub use paired::BETA;
pub mod windows;

#[cfg(test)]
mod paired_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod windows_tests;
