//! How many windows a fork should measure (issue 52, point 3): the variance
//! components of a paired cell whose forks ran the window loop, after
//! Kalibera and Jones ("Rigorous Benchmarking in Reasonable Time", ISMM 2013).
//!
//! In round `i` the two forks (head and base) measured `W` windows each;
//! `d_ij = ln(head_ij / base_ij)` is window pair `j`'s log-ratio and `D_i`
//! their mean. With `d_ij = f_i + e_ij` (a fork pair's own offset, then each
//! window pair's noise):
//! - `σ²_w`, the variance of one window pair around its round's mean, pooled
//!   over rounds and runs;
//! - `σ²_f = var(D_i) − σ²_w / W` (floored at 0), the fork pair's part, which
//!   no number of windows inside one fork removes (`var(D_i)` pooled around
//!   each run's own mean: every run is judged on its own);
//! - `c_f`, a fork pair's fixed time (two starts, warmups and exits: from a
//!   fork's start to the next trial's, less its windows), and `c_w`, a window
//!   pair's (two windows), medians over the rounds;
//! - `W* = √((c_f / c_w) · (σ²_w / σ²_f))`, the count that makes the paired
//!   estimate narrowest per second of run, within [2, 50] (`[run] windows`).
//!
//! Only forks that recorded each window's figures (`ForkWindows::values`)
//! count, and only rounds where both forks completed the same number of them.

use crate::compare::model::Comparison;
use crate::results::{CellResult, RunResults, Trial, WindowFigures};
use crate::timer::clock::parse_rfc3339_us;

/// The fewest and most windows a suggestion names (`[run] windows`'s most).
pub const WINDOWS: (u32, u32) = (2, crate::config::MAX_WINDOWS);

/// How to read one metric of a window.
type Read = fn(&WindowFigures) -> Option<f64>;

/// The metrics whose windows are recorded, with how to read one.
const METRICS: [(&str, Read); 2] = [
    ("throughput_rps", |w| Some(w.throughput_rps)),
    ("cpu_us_per_request", |w| w.cpu_us_per_request),
];

/// The variance components of one (scenario, client, metric).
#[derive(Debug, Clone, PartialEq)]
pub struct Components {
    pub scenario: String,
    pub client: String,
    pub metric: String,
    /// Windows per fork in the runs read, and the rounds that counted.
    pub windows: u32,
    pub rounds: usize,
    /// Standard deviations on the log scale (≈ relative).
    pub sigma_w: f64,
    pub sigma_f: f64,
    /// Seconds: a fork pair's fixed time, a window pair's.
    pub fork_cost_s: f64,
    pub window_cost_s: f64,
    /// `W*`, within [`WINDOWS`].
    pub best: u32,
}

impl Components {
    /// The paired estimate's variance per round, times a round's time: what
    /// `W` windows per fork cost for a given precision (smaller is better).
    fn cost(&self, w: u32) -> f64 {
        let w = f64::from(w);
        (self.sigma_f.powi(2) + self.sigma_w.powi(2) / w)
            * (self.fork_cost_s + w * self.window_cost_s)
    }
}

/// The components of every gating row of `comparisons` (one per A/A run,
/// `runs[i]` the run of `comparisons[i]`) whose forks ran the window loop.
pub fn components(runs: &[RunResults], comparisons: &[Comparison]) -> Vec<Components> {
    let mut out: Vec<Components> = Vec::new();
    let mut seen = Vec::new();
    let rows = comparisons
        .iter()
        .flat_map(|c| &c.metrics)
        .filter(|m| m.gating);
    for m in rows {
        let Some((_, value)) = METRICS.iter().find(|(name, _)| *name == m.metric) else {
            continue;
        };
        let key = super::paired::row_key(m);
        if seen.contains(&key) {
            continue;
        }
        let mut acc = Accumulator::default();
        for run in runs {
            let head = run.cell_at(&m.scenario, &m.client, m.server.as_deref());
            let base = run.cell_at(
                &m.scenario,
                &m.baseline_client,
                m.baseline_server.as_deref(),
            );
            if let (Some(head), Some(base)) = (head, base) {
                acc.add_run(run, (head, base), *value);
            }
        }
        out.extend(acc.finish(&key));
        seen.push(key);
    }
    out
}

/// The `[run] windows` that serves every cell best: the smallest sum of each
/// cell's cost relative to its own best; `None` without components.
pub fn suggested(cells: &[Components]) -> Option<u32> {
    let relative = |w: u32| -> f64 { cells.iter().map(|c| c.cost(w) / c.cost(c.best)).sum() };
    (!cells.is_empty()).then(|| {
        (WINDOWS.0..=WINDOWS.1)
            .min_by(|a, b| relative(*a).total_cmp(&relative(*b)))
            .expect("a non-empty range")
    })
}

/// The components as a table, and the `[run] windows` line they suggest.
pub fn render(cells: &[Components]) -> Option<String> {
    let best = suggested(cells)?;
    let header = [
        "scenario",
        "client",
        "metric",
        "windows",
        "rounds",
        "sigma_w",
        "sigma_f",
        "fork pair",
        "window pair",
        "W*",
    ];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    for c in cells {
        rows.push(vec![
            c.scenario.clone(),
            c.client.clone(),
            c.metric.clone(),
            c.windows.to_string(),
            c.rounds.to_string(),
            format!("{:.2}%", c.sigma_w * 100.0),
            format!("{:.2}%", c.sigma_f * 100.0),
            format!("{:.2} s", c.fork_cost_s),
            format!("{:.2} s", c.window_cost_s),
            c.best.to_string(),
        ]);
    }
    Some(format!(
        "Windows per fork: the variance components (Kalibera & Jones, ISMM 2013)\n\n{}\n\
         suggested: [run] windows = {best}, nearest to every row's W* for the time each needs to reach the same interval\n",
        super::aligned(&rows, 3)
    ))
}

#[derive(Default)]
struct Accumulator {
    windows: Option<u32>,
    /// Σ (d_ij − D_i)² and its degrees of freedom.
    within: (f64, usize),
    /// Σ (D_i − mean of the run)² and its degrees of freedom.
    between: (f64, usize),
    rounds: usize,
    /// Per round, seconds: the fork pair's time outside its windows, and a
    /// window pair's.
    fork_s: Vec<f64>,
    window_s: Vec<f64>,
}

impl Accumulator {
    fn add_run(&mut self, run: &RunResults, (head, base): (&CellResult, &CellResult), value: Read) {
        let start = |t: &Trial| t.started_at.as_deref().and_then(parse_rfc3339_us);
        let mut starts: Vec<i64> = run
            .results
            .iter()
            .flat_map(|c| &c.trials)
            .filter_map(start)
            .collect();
        starts.sort_unstable();
        // A trial's time outside its windows: to the next trial's start.
        let outside = |t: &Trial| {
            let s = start(t)?;
            let next = starts.iter().find(|n| **n > s)?;
            Some((next - s) as f64 / 1e6 - t.window_actual_s?)
        };
        let mut means = Vec::new();
        for h in head.trials.iter().filter(|t| t.failure.is_none()) {
            let Some(b) = base
                .trials
                .iter()
                .find(|b| b.round == h.round && b.failure.is_none())
            else {
                continue;
            };
            let (Some(hw), Some(bw)) = (&h.windows, &b.windows) else {
                continue;
            };
            let w = hw.values.len();
            if w < 2 || bw.values.len() != w || self.windows.is_some_and(|k| k as usize != w) {
                continue;
            }
            let d: Option<Vec<f64>> = hw
                .values
                .iter()
                .zip(&bw.values)
                .map(|(x, y)| {
                    let (x, y) = (value(x)?, value(y)?);
                    (x > 0.0 && y > 0.0).then(|| (x / y).ln())
                })
                .collect();
            let Some(d) = d else { continue };
            self.windows = Some(w as u32);
            let mean = d.iter().sum::<f64>() / w as f64;
            self.within.0 += d.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
            self.within.1 += w - 1;
            means.push(mean);
            if let (Some(x), Some(y)) = (h.window_actual_s, b.window_actual_s) {
                self.window_s.push((x + y) / w as f64);
            }
            if let (Some(x), Some(y)) = (outside(h), outside(b)) {
                self.fork_s.push((x + y).max(0.0));
            }
        }
        if means.len() >= 2 {
            let m = means.iter().sum::<f64>() / means.len() as f64;
            self.between.0 += means.iter().map(|x| (x - m).powi(2)).sum::<f64>();
            self.between.1 += means.len() - 1;
        }
        self.rounds += means.len();
    }

    fn finish(self, (scenario, client, metric): &(String, String, String)) -> Option<Components> {
        let windows = self.windows?;
        let (within, between) = (self.within, self.between);
        let fork_cost_s = crate::compare::stats::median(&self.fork_s)?;
        let window_cost_s = crate::compare::stats::median(&self.window_s)?;
        if within.1 == 0 || between.1 == 0 {
            return None;
        }
        let var_w = within.0 / within.1 as f64;
        let var_f = (between.0 / between.1 as f64 - var_w / f64::from(windows)).max(0.0);
        let best = match var_f > 0.0 && window_cost_s > 0.0 {
            true => ((fork_cost_s / window_cost_s) * (var_w / var_f)).sqrt(),
            // No fork-level part: every window is worth its time.
            false => f64::from(WINDOWS.1),
        };
        Some(Components {
            scenario: scenario.clone(),
            client: client.clone(),
            metric: metric.clone(),
            windows,
            rounds: self.rounds,
            sigma_w: var_w.sqrt(),
            sigma_f: var_f.sqrt(),
            fork_cost_s,
            window_cost_s,
            best: (best.round() as u32).clamp(WINDOWS.0, WINDOWS.1),
        })
    }
}
