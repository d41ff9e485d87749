//! Exports for other tools, from one run's results:
//!
//! - [github-action-benchmark](https://github.com/benchmark-action/github-action-benchmark)
//!   custom JSON: `customBiggerIsBetter` and `customSmallerIsBetter` are two
//!   files, each an array of `{name, unit, value, range?, extra?}`; metrics are
//!   split by direction (`metric::METRICS`), the value is the median across
//!   trials. The per-class `errors.*` counts (the registry's `error_class`)
//!   are left out (`error_rate` covers them; a zero previous value makes that
//!   tool's ratio meaningless).
//! - HdrHistogram percentile distributions (`.hgrm`) per (scenario, client), in
//!   the layout of HdrHistogram's Java `outputPercentileDistribution` (which
//!   HdrHistogram's online plotter reads): header, one row per percentile tick
//!   (5 ticks per half distance, the Java default), then `#[Mean...]`,
//!   `#[Max...]`, `#[Buckets...]`. Values are recorded in µs and written in
//!   **milliseconds** (value unit scaling ratio 1000), as is customary.

use std::fmt::Write as _;

use serde::Serialize;

use crate::files::{shortened, SHOWN_CHARS};
use crate::measure::LatencyHistogram;
use crate::metric::Direction;
use crate::metric::METRICS;
use crate::results::RunResults;

/// Scaling ratio from recorded µs to the `.hgrm` output unit (ms).
pub const HGRM_SCALE_US_TO_MS: f64 = 1000.0;

/// Percentile ticks per half distance to 100% (HdrHistogram Java's default).
pub const HGRM_TICKS_PER_HALF_DISTANCE: u32 = 5;

/// One entry of github-action-benchmark's custom JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchmarkEntry {
    /// `scenario / client / metric`.
    pub name: String,
    pub unit: String,
    pub value: f64,
    /// `± half the min-max range` across trials, when there are several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// Trial count, min and max, and the run (tooltip text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<String>,
}

/// Both github-action-benchmark inputs of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionBenchmark {
    /// For `tool: customBiggerIsBetter`.
    pub bigger_is_better: Vec<BenchmarkEntry>,
    /// For `tool: customSmallerIsBetter`.
    pub smaller_is_better: Vec<BenchmarkEntry>,
}

impl ActionBenchmark {
    /// The `customBiggerIsBetter` file.
    pub fn bigger_json(&self) -> String {
        to_json(&self.bigger_is_better)
    }

    /// The `customSmallerIsBetter` file.
    pub fn smaller_json(&self) -> String {
        to_json(&self.smaller_is_better)
    }
}

fn to_json(entries: &[BenchmarkEntry]) -> String {
    let mut s = serde_json::to_string_pretty(entries).expect("entries always serialize");
    s.push('\n');
    s
}

/// Names with control characters replaced by spaces (the tool shows them as text).
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Compact number for text fields.
fn num(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The medians of every (scenario, client, metric), split by direction.
pub fn github_action_benchmark(results: &RunResults) -> ActionBenchmark {
    let mut out = ActionBenchmark {
        bigger_is_better: Vec::new(),
        smaller_is_better: Vec::new(),
    };
    let run = match &results.git.sha {
        Some(sha) => format!(
            "run {} ({})",
            clean(&shortened(&results.run_id, SHOWN_CHARS)),
            clean(&shortened(sha, SHOWN_CHARS))
        ),
        None => format!("run {}", clean(&shortened(&results.run_id, SHOWN_CHARS))),
    };
    for cell in &results.results {
        for def in METRICS.iter().filter(|d| !d.error_class) {
            let Some(s) = cell.summary.get(def.name) else {
                continue;
            };
            if !s.median.is_finite() {
                continue;
            }
            let entry = BenchmarkEntry {
                name: format!(
                    "{} / {} / {}",
                    clean(&cell.scenario),
                    clean(&cell.label()),
                    def.name
                ),
                unit: def.unit.to_string(),
                value: s.median,
                range: (s.n > 1).then(|| format!("± {}", num((s.max - s.min) / 2.0))),
                extra: Some(format!(
                    "median of {} trials; min {}, max {}\n{run}",
                    s.n,
                    num(s.min),
                    num(s.max)
                )),
            };
            match def.direction {
                Direction::HigherIsBetter => out.bigger_is_better.push(entry),
                Direction::LowerIsBetter => out.smaller_is_better.push(entry),
            }
        }
    }
    out
}

/// A histogram's percentile distribution in HdrHistogram's `.hgrm` text
/// layout, values divided by `value_scale` (e.g. [`HGRM_SCALE_US_TO_MS`]).
pub fn hgrm(hist: &LatencyHistogram, value_scale: f64) -> String {
    let h = hist.inner();
    let digits = usize::from(h.sigfig());
    let mut out = format!(
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    if !h.is_empty() {
        let mut total = 0u64;
        for v in h.iter_quantiles(HGRM_TICKS_PER_HALF_DISTANCE) {
            total += v.count_since_last_iteration();
            let value = v.value_iterated_to() as f64 / value_scale;
            let q = v.quantile_iterated_to();
            if q < 1.0 {
                let _ = writeln!(
                    out,
                    "{value:>12.digits$} {q:>2.12} {total:>10} {:>14.2}",
                    1.0 / (1.0 - q)
                );
            } else {
                let _ = writeln!(out, "{value:>12.digits$} {q:>2.12} {total:>10}");
            }
        }
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:>12.digits$}, StdDeviation   = {:>12.digits$}]",
        h.mean() / value_scale,
        h.stdev() / value_scale
    );
    let _ = writeln!(
        out,
        "#[Max     = {:>12.digits$}, Total count    = {:>12}]",
        h.max() as f64 / value_scale,
        h.len()
    );
    // Sub-buckets: the smallest power of two holding 2 * 10^digits (HdrHistogram spec).
    let sub_buckets = (2 * 10u64.pow(digits as u32)).next_power_of_two();
    let _ = writeln!(
        out,
        "#[Buckets = {:>12}, SubBuckets     = {:>12}]",
        h.buckets(),
        sub_buckets
    );
    out
}

/// One `.hgrm` file.
#[derive(Debug, Clone, PartialEq)]
pub struct HgrmFile {
    pub scenario: String,
    pub client: String,
    /// Safe file name: `scenario--client.hgrm` (`scenario--client--server.hgrm`
    /// with a server under test), with anything outside
    /// `[A-Za-z0-9._-]` replaced by `_`, and a numeric suffix when two cells
    /// would collide.
    pub file_name: String,
    pub text: String,
}

fn file_part(s: &str) -> String {
    let p: String = s
        .chars()
        .take(60)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // No hidden files, no `..`.
    p.trim_start_matches('.').to_string()
}

/// A `.hgrm` file (ms) per (scenario, client) with a latency histogram.
/// Errors name the cell whose histogram does not decode.
pub fn hgrm_files(results: &RunResults) -> Result<Vec<HgrmFile>, String> {
    let mut files: Vec<HgrmFile> = Vec::new();
    for cell in &results.results {
        let Some(encoded) = &cell.histogram else {
            continue;
        };
        let hist = LatencyHistogram::decode(encoded)
            .map_err(|e| format!("{} / {}: {e}", cell.scenario, cell.label()))?;
        let mut stem = format!("{}--{}", file_part(&cell.scenario), file_part(&cell.client));
        if let Some(server) = &cell.server {
            stem = format!("{stem}--{}", file_part(server));
        }
        let mut file_name = format!("{stem}.hgrm");
        let mut n = 2;
        while files.iter().any(|f| f.file_name == file_name) {
            file_name = format!("{stem}-{n}.hgrm");
            n += 1;
        }
        files.push(HgrmFile {
            scenario: cell.scenario.clone(),
            client: cell.client.clone(),
            file_name,
            text: hgrm(&hist, HGRM_SCALE_US_TO_MS),
        });
    }
    Ok(files)
}
