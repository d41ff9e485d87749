//! `[gate]` and `[compare]`: thresholds per metric (warn and fail tiers, relative
//! bound plus absolute floor), per-scenario / per-client overrides, and what a
//! missing or not comparable baseline does. Validated from the spanned tree with
//! located errors, like the rest of the config (`gate_parse`), into the settings
//! types here ([`GateConfig`] and its parts), which `compare` applies: config
//! owns them and imports nothing from `compare`.
//!
//! ## Defaults (when `[gate]` does not mention a metric)
//!
//! | metric                    | fail      | warn     | floor  | gates |
//! |---------------------------|-----------|----------|--------|-------|
//! | `throughput_rps`          | -5%       | -3%      |        | yes   |
//! | `latency_p99_us`          | +10%      | +5%      | 2 ms   | yes   |
//! | `cpu_us_per_request`      | +10%      | +5%      |        | yes   |
//! | `error_rate`              | +0.01     | +0.001   | (abs.) | yes   |
//! | `bytes_per_sec`           |           | -5%      |        | no    |
//! | `latency_mean/p50/p90_us` |           | +10%     | 100/100/200 us | no |
//! | `latency_stdev_us`        |           | +25%     | 100 us | no    |
//! | `latency_p999_us`         |           | +20%     | 5 ms   | no    |
//! | `latency_max_us`          |           | +50%     | 10 ms  | no    |
//! | `errors.*`                |           | +1       | (abs.) | no    |
//! | `peak_rss_bytes`          |           | +20%     | 1 MiB  | no    |
//! | `peak_threads`            |           | +25%     | 2      | no    |
//! | `connections_opened`      |           | +50%     | 2      | no    |
//! | `requests_per_connection` |           | -20%     |        | no    |
//! | `server_cpu_us_per_request` |         | +10%     |        | no    |
//! | `server_peak_rss_bytes`   |           | +20%     | 1 MiB  | no    |
//! | `server_peak_threads`     |           | +25%     | 2      | no    |
//!
//! Why: the four gating metrics are the (throughput, tail latency, CPU per
//! request, errors). Tails are noisier than centres (statistics.md), so the tail
//! floors are wide: on loopback a p99 of a few hundred µs moves by tens of µs with
//! the scheduler alone, and a 2 ms floor keeps those from gating while a real
//! stall still fails. The error rate and counts are compared as absolute
//! differences (they are usually 0, where a ratio is undefined), so their
//! thresholds are absolute: `+0.01` is one percentage point.

use serde::{Deserialize, Serialize};

use crate::results::metrics::{scale_of, Scale};

/// `[gate] alpha` when absent.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// `[compare]`: side-by-side mode settings: `base = "git"`, or a baseline
/// client and/or server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSettings {
    /// The client every other client of a scenario is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_client: Option<String>,
    /// The server under test (`[[server]]` name) every other server's cells are
    /// compared with, client by client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_server: Option<String>,
    /// `base = "git"`: every command client and server under test that lives
    /// in the repository measured at two commits in one run, head against
    /// base (`plan::Against::BaseVsHead`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<CompareBase>,
}

/// Where `[compare] base` takes the base side from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareBase {
    /// Another commit of the git repository the config lives in.
    Git,
}

/// A threshold: a change fails (or warns) only when it is worse than BOTH the
/// relative bound and the absolute floor (when set), in the metric's bad direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Threshold {
    /// Relative change, as a fraction: 0.10 = 10% worse.
    pub relative: f64,
    /// Absolute change in the metric's unit (e.g. 2000 µs for "2ms"), if any.
    pub absolute: Option<f64>,
}

/// How one metric is gated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricGate {
    /// Stable metric name (`results::METRICS`).
    pub metric: String,
    pub warn: Option<Threshold>,
    pub fail: Option<Threshold>,
    /// Whether a failing verdict fails the gate (false: informs only).
    pub gating: bool,
}

/// Metric gates for the cells an override applies to (scenario and/or client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateOverride {
    pub scenario: Option<String>,
    pub client: Option<String>,
    pub metrics: Vec<MetricGate>,
}

/// What a missing baseline does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingBaseline {
    /// Neutral "no baseline" verdict; the gate passes.
    Neutral,
    /// The gate fails.
    Fail,
}

/// What a not-comparable baseline does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotComparablePolicy {
    /// Report it as a warning; the gate passes.
    Warn,
    /// The gate fails.
    Fail,
}

/// The `[gate]` table, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Significance level per comparison (two-sided), default 0.05.
    pub alpha: f64,
    /// Gates for every cell (defaults plus `[gate]` entries).
    pub metrics: Vec<MetricGate>,
    /// Per-scenario / per-client overrides, applied in order (later wins).
    pub overrides: Vec<GateOverride>,
    pub missing_baseline: MissingBaseline,
    pub not_comparable: NotComparablePolicy,
}

impl Default for GateConfig {
    fn default() -> GateConfig {
        default_gate()
    }
}

/// The gate with every default (see the module docs).
pub fn default_gate() -> GateConfig {
    let rel = |r: f64, floor: Option<f64>| Threshold {
        relative: r,
        absolute: floor,
    };
    let abs = |a: f64| Threshold {
        relative: 0.0,
        absolute: Some(a),
    };
    let g = |metric: &str, fail: Option<Threshold>, warn: Option<Threshold>| MetricGate {
        metric: metric.into(),
        gating: fail.is_some(),
        fail,
        warn,
    };
    let info =
        |metric: &str, warn: f64, floor: Option<f64>| g(metric, None, Some(rel(warn, floor)));
    let mut metrics = vec![
        g(
            "throughput_rps",
            Some(rel(0.05, None)),
            Some(rel(0.03, None)),
        ),
        info("bytes_per_sec", 0.05, None),
        info("latency_mean_us", 0.10, Some(100.0)),
        info("latency_stdev_us", 0.25, Some(100.0)),
        info("latency_p50_us", 0.10, Some(100.0)),
        info("latency_p90_us", 0.10, Some(200.0)),
        g(
            "latency_p99_us",
            Some(rel(0.10, Some(2000.0))),
            Some(rel(0.05, Some(2000.0))),
        ),
        info("latency_p999_us", 0.20, Some(5000.0)),
        info("latency_max_us", 0.50, Some(10_000.0)),
        g("error_rate", Some(abs(0.01)), Some(abs(0.001))),
    ];
    for class in [
        "connect",
        "timeout",
        "read",
        "write",
        "status_4xx",
        "status_5xx",
    ] {
        metrics.push(g(&format!("errors.{class}"), None, Some(abs(1.0))));
    }
    metrics.extend([
        g(
            "cpu_us_per_request",
            Some(rel(0.10, None)),
            Some(rel(0.05, None)),
        ),
        info("peak_rss_bytes", 0.20, Some(1024.0 * 1024.0)),
        info("peak_threads", 0.25, Some(2.0)),
        info("connections_opened", 0.50, Some(2.0)),
        info("requests_per_connection", 0.20, None),
        info("server_cpu_us_per_request", 0.10, None),
        info("server_peak_rss_bytes", 0.20, Some(1024.0 * 1024.0)),
        info("server_peak_threads", 0.25, Some(2.0)),
    ]);
    debug_assert!(metrics.iter().all(|m| scale_of(&m.metric) == Scale::Log
        || m.fail.or(m.warn).is_some_and(|t| t.relative == 0.0)));
    GateConfig {
        alpha: DEFAULT_ALPHA,
        metrics,
        overrides: Vec::new(),
        missing_baseline: MissingBaseline::Neutral,
        not_comparable: NotComparablePolicy::Warn,
    }
}
