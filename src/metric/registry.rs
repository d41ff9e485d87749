//! The metric registry: every metric benchgate measures per trial, in display
//! order, with every fact the later stages need about it (docs/how-it-measures.md,
//! "Metrics"): stable name, direction, unit, comparison scale, default gate,
//! CloudWatch unit and display format, and how to read it from a trial.
//!
//! Config, compare, report and publish read these entries and switch on no
//! metric name, so adding a metric is one entry here plus its measurement (the
//! [`TrialMetrics`] field the entry's `value` reads). The enums are matched
//! exhaustively by their consumers, and tests walk the entries through the
//! results file (`registry_tests.rs`) and every consumer
//! (`src/registry_coverage_tests.rs`), so an entry cannot be half-added.
//!
//! ## Default gates (when `[gate]` does not mention a metric)
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
//! | `startup_ms`              |           | +20%     | 50 ms  | no    |
//! | `startup_cpu_ms`          |           | +20%     | 50 ms  | no    |
//! | `memory_per_connection_bytes` |       | +20%     | 1 KiB  | no    |
//! | `run_delay_ms`            |           | +50%     | 10 ms  | no    |
//! | `run_delay_share`         |           | +50%     | 0.05   | no    |
//! | `involuntary_context_switches` |      | +50%     | 100    | no    |
//! | `server_run_delay_ms`     |           | +50%     | 10 ms  | no    |
//! | `host_steal_ms`           |           | +50%     | 10 ms  | no    |
//! | `*_anchored`              | (the gate of the metric it stands for) | | | in baseline mode with both runs anchored |
//!
//! Why: the four gating metrics are the (throughput, tail latency, CPU per
//! request, errors). Tails are noisier than centres (docs/measurements.md: p99's run-to-run spread is
//! 8.3% against 2.6-2.7% for CPU per request and throughput), so the tail
//! floors are wide: on loopback a p99 of a few hundred µs moves by tens of µs with
//! the scheduler alone, and a 2 ms floor keeps those from gating while a real
//! stall still fails. The error rate and counts are compared as absolute
//! differences (they are usually 0, where a ratio is undefined), so their
//! thresholds are absolute: `+0.01` is one percentage point. Start-up (spawn
//! to first response, CPU before the window) happens once per trial, so it is
//! read from one sample per round and moves with the machine's load: it
//! informs (a cold-start regression shows) and never gates unless `[gate]`
//! says so; the 50 ms floor keeps scheduler and clock-tick noise (CPU is read
//! for a program's reaped children in 10 ms ticks) from warning. Memory per
//! connection is a difference of two RSS readings over thousands of
//! connections, so it informs only; the 1 KiB floor keeps allocator
//! page-rounding at small connection counts (one page more or less over 16
//! connections is 256 B each) from warning. The starvation figures (run
//! delay, its share of the window, involuntary switches, steal;
//! `measure::schedstat`) say how much the machine withheld from a trial:
//! they move with the neighbours more than with the client, so they only
//! inform, with wide bounds; their floors are a scheduler tick (10 ms at
//! 100 Hz, a steal tick), a twentieth of the window, and 100 switches,
//! below which a quiet machine's jitter would warn.
//!
//! The anchored figures (`throughput_rps_anchored`, `cpu_us_per_request_anchored`;
//! `[run] anchor = true`, `results::anchor`) are ratios to the anchor's same
//! metric in the same round. They have no `[gate]` key of their own: compared
//! with a stored run that was anchored too, each gates in place of the metric
//! it is derived from, under that metric's thresholds (`compare::anchor`), and
//! the raw figure informs; anywhere else they inform.

use serde::{Deserialize, Serialize};

use super::trial::TrialMetrics;

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

impl Direction {
    /// The sign of a change for the worse: `+` when lower is better.
    pub fn worse_sign(self) -> char {
        match self {
            Direction::LowerIsBetter => '+',
            Direction::HigherIsBetter => '-',
        }
    }
}

/// How a metric's two sides are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// `ln(value)`: relative changes, symmetric up and down.
    Log,
    /// Raw differences in the metric's unit: for metrics that can be 0.
    Absolute,
}

/// Where a metric comes from: benchgate's own trials, or a JMH result file
/// read as a run (`results::jmh`). A trial measures the metrics of its
/// family only ([`TrialMetrics::get`]): a JMH fork recorded no errors, RSS or
/// threads, so none is ever shown as 0 for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Measured by benchgate (a built-in driver or a command client).
    Http,
    /// Read from a JMH result file: one fork's (or iteration's) figures.
    Jmh,
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

/// A metric's gate when `[gate]` does not mention it (the module docs say why
/// these values). A fail tier makes the metric gate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DefaultGate {
    pub fail: Option<Threshold>,
    pub warn: Option<Threshold>,
}

/// A CloudWatch `StandardUnit` a metric is published in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloudWatchUnit {
    CountPerSecond,
    BytesPerSecond,
    Microseconds,
    Milliseconds,
    Bytes,
    Count,
    Percent,
    None,
}

impl CloudWatchUnit {
    /// The `StandardUnit` string.
    pub fn as_str(self) -> &'static str {
        match self {
            CloudWatchUnit::CountPerSecond => "Count/Second",
            CloudWatchUnit::BytesPerSecond => "Bytes/Second",
            CloudWatchUnit::Microseconds => "Microseconds",
            CloudWatchUnit::Milliseconds => "Milliseconds",
            CloudWatchUnit::Bytes => "Bytes",
            CloudWatchUnit::Count => "Count",
            CloudWatchUnit::Percent => "Percent",
            CloudWatchUnit::None => "None",
        }
    }
}

/// How a metric is published to CloudWatch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CloudWatch {
    pub unit: CloudWatchUnit,
    /// From benchgate's unit to CloudWatch's (100: a ratio as a percentage).
    pub factor: f64,
    /// Published when `[publish.cloudwatch] metrics` is not set.
    pub by_default: bool,
}

/// How renderers show a value (report/format.rs has the texts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A latency in µs, from microseconds to seconds: `850us`, `1.20ms`.
    Duration,
    /// CPU time per request in µs, tens of µs: `12.5us`.
    CpuTime,
    /// A duration in ms (start-up), from microseconds to seconds: `45.2ms`.
    Millis,
    /// Requests per second: `12.3k req/s`.
    Rate,
    /// Bytes per second: `3.4MiB/s`.
    ByteRate,
    /// A size in bytes: `3.4MiB`.
    Bytes,
    /// A whole count: `17`.
    Count,
    /// A ratio shown as a percentage: `0.12%`.
    Percent,
    /// A plain ratio: `12.5`.
    Ratio,
    /// A figure relative to the anchor's in the same round: `1.023x`.
    Anchored,
    /// JMH operations per second: `12.3k ops/s`.
    OpsRate,
    /// JMH time per operation in ns, from ns to s: `85.2ns/op`, `1.20ms/op`.
    TimePerOp,
    /// JMH bytes allocated per operation: `824B/op`.
    BytesPerOp,
}

/// One metric: everything benchgate knows about it, under its stable name.
#[derive(Debug, Clone, Copy)]
pub struct MetricDef {
    pub name: &'static str,
    pub direction: Direction,
    /// benchgate's unit, as written in exports and messages: `us`, `req/s`, ...
    pub unit: &'static str,
    pub scale: Scale,
    pub gate: DefaultGate,
    pub cloudwatch: CloudWatch,
    pub format: Format,
    /// The largest valid value (a rate is at most 1), if bounded.
    pub max: Option<f64>,
    /// One error class's count (`errors.*`): `error_rate` already sums them.
    pub error_class: bool,
    /// A derived figure: the metric of this name divided by the anchor's same
    /// metric in the same round (`[run] anchor`, `results::anchor`). It has
    /// no gate of its own: where it stands in for that metric (baseline mode,
    /// both runs anchored) it is gated by that metric's `[gate]` entry.
    pub anchored_from: Option<&'static str>,
    /// Who measures it: benchgate, or a JMH result file.
    pub family: Family,
    /// The metric's value in a trial; `None` when not measured.
    pub value: fn(&TrialMetrics) -> Option<f64>,
}

/// An entry with the common defaults: log scale, no gate (set one with
/// [`MetricDef::warn`] or [`MetricDef::fail`]), factor 1, not published by
/// default, unbounded, not an error class.
const fn metric(
    name: &'static str,
    direction: Direction,
    unit: &'static str,
    format: Format,
    cloudwatch: CloudWatchUnit,
    value: fn(&TrialMetrics) -> Option<f64>,
) -> MetricDef {
    MetricDef {
        name,
        direction,
        unit,
        scale: Scale::Log,
        gate: DefaultGate {
            fail: None,
            warn: None,
        },
        cloudwatch: CloudWatch {
            unit: cloudwatch,
            factor: 1.0,
            by_default: false,
        },
        format,
        max: None,
        error_class: false,
        anchored_from: None,
        family: Family::Http,
        value,
    }
}

const fn rel(relative: f64, floor: Option<f64>) -> Threshold {
    Threshold {
        relative,
        absolute: floor,
    }
}

const fn abs(absolute: f64) -> Threshold {
    Threshold {
        relative: 0.0,
        absolute: Some(absolute),
    }
}

impl MetricDef {
    /// Gates by default: fails beyond `fail`, warns beyond `warn`.
    const fn fail(mut self, fail: Threshold, warn: Threshold) -> MetricDef {
        self.gate = DefaultGate {
            fail: Some(fail),
            warn: Some(warn),
        };
        self
    }

    /// Informs by default: warns beyond `warn`.
    const fn warn(mut self, warn: Threshold) -> MetricDef {
        self.gate.warn = Some(warn);
        self
    }

    /// Compared on absolute differences (commonly 0, where a ratio is undefined).
    const fn absolute(mut self) -> MetricDef {
        self.scale = Scale::Absolute;
        self
    }

    /// Published to CloudWatch by default.
    const fn published(mut self) -> MetricDef {
        self.cloudwatch.by_default = true;
        self
    }

    /// Published to CloudWatch by default, multiplied by `factor`.
    const fn published_times(mut self, factor: f64) -> MetricDef {
        self.cloudwatch.factor = factor;
        self.published()
    }

    /// Valid values are at most `max`.
    const fn at_most(mut self, max: f64) -> MetricDef {
        self.max = Some(max);
        self
    }
}

use CloudWatchUnit as Cw;
use Direction::{HigherIsBetter as Up, LowerIsBetter as Down};
use Format as F;

const MIB: f64 = 1024.0 * 1024.0;

/// `of` divided by the anchor's `of` in the same round: a ratio with the
/// direction of `of`, informative by default (its gate is `of`'s, applied
/// where it stands in for `of`; `compare::anchor`).
const fn anchored(
    name: &'static str,
    of: &'static str,
    direction: Direction,
    value: fn(&TrialMetrics) -> Option<f64>,
) -> MetricDef {
    let mut m = metric(name, direction, "ratio", F::Anchored, Cw::None, value);
    m.anchored_from = Some(of);
    m
}

/// One error class's count.
const fn error_class(name: &'static str, value: fn(&TrialMetrics) -> Option<f64>) -> MetricDef {
    let mut m = metric(name, Down, "count", F::Count, Cw::Count, value)
        .absolute()
        .warn(abs(1.0));
    m.error_class = true;
    m
}

/// A latency figure, informative by default with a warn bound and a floor (µs).
const fn latency(
    name: &'static str,
    warn: f64,
    floor: f64,
    value: fn(&TrialMetrics) -> Option<f64>,
) -> MetricDef {
    metric(name, Down, "us", F::Duration, Cw::Microseconds, value).warn(rel(warn, Some(floor)))
}

/// A figure of a JMH result file (`results::jmh`): compared on the log scale.
const fn jmh(
    name: &'static str,
    direction: Direction,
    unit: &'static str,
    format: Format,
    cloudwatch: CloudWatchUnit,
    value: fn(&TrialMetrics) -> Option<f64>,
) -> MetricDef {
    let mut m = metric(name, direction, unit, format, cloudwatch, value);
    m.family = Family::Jmh;
    m
}

/// A JMH time per operation (ns), lower is better, published in µs.
const fn jmh_time(name: &'static str, value: fn(&TrialMetrics) -> Option<f64>) -> MetricDef {
    let mut m = jmh(name, Down, "ns/op", F::TimePerOp, Cw::Microseconds, value);
    m.cloudwatch.factor = 1e-3;
    m
}

/// Every metric benchgate reports per trial, in display order.
pub const METRICS: &[MetricDef] = &[
    metric(
        "throughput_rps",
        Up,
        "req/s",
        F::Rate,
        Cw::CountPerSecond,
        |m| m.throughput_rps,
    )
    .fail(rel(0.05, None), rel(0.03, None))
    .published(),
    anchored("throughput_rps_anchored", "throughput_rps", Up, |m| {
        m.throughput_rps_anchored
    }),
    metric(
        "bytes_per_sec",
        Up,
        "B/s",
        F::ByteRate,
        Cw::BytesPerSecond,
        |m| m.bytes_per_sec,
    )
    .warn(rel(0.05, None)),
    latency("latency_mean_us", 0.10, 100.0, |m| m.latency_mean_us),
    latency("latency_stdev_us", 0.25, 100.0, |m| m.latency_stdev_us),
    latency("latency_p50_us", 0.10, 100.0, |m| m.latency_p50_us).published(),
    latency("latency_p90_us", 0.10, 200.0, |m| m.latency_p90_us),
    metric(
        "latency_p99_us",
        Down,
        "us",
        F::Duration,
        Cw::Microseconds,
        |m| m.latency_p99_us,
    )
    .fail(rel(0.10, Some(2000.0)), rel(0.05, Some(2000.0)))
    .published(),
    latency("latency_p999_us", 0.20, 5000.0, |m| m.latency_p999_us),
    latency("latency_max_us", 0.50, 10_000.0, |m| m.latency_max_us),
    metric("error_rate", Down, "ratio", F::Percent, Cw::Percent, |m| {
        Some(m.error_rate)
    })
    .absolute()
    .fail(abs(0.01), abs(0.001))
    .at_most(1.0)
    .published_times(100.0),
    error_class("errors.connect", |m| Some(m.errors.connect as f64)),
    error_class("errors.timeout", |m| Some(m.errors.timeout as f64)),
    error_class("errors.read", |m| Some(m.errors.read as f64)),
    error_class("errors.write", |m| Some(m.errors.write as f64)),
    error_class("errors.status_4xx", |m| Some(m.errors.status_4xx as f64)),
    error_class("errors.status_5xx", |m| Some(m.errors.status_5xx as f64)),
    metric(
        "cpu_us_per_request",
        Down,
        "us",
        F::CpuTime,
        Cw::Microseconds,
        |m| m.cpu_us_per_request,
    )
    .fail(rel(0.10, None), rel(0.05, None))
    .published(),
    anchored(
        "cpu_us_per_request_anchored",
        "cpu_us_per_request",
        Down,
        |m| m.cpu_us_per_request_anchored,
    ),
    metric("peak_rss_bytes", Down, "bytes", F::Bytes, Cw::Bytes, |m| {
        Some(m.peak_rss_bytes as f64)
    })
    .warn(rel(0.20, Some(MIB)))
    .published(),
    metric("peak_threads", Down, "count", F::Count, Cw::Count, |m| {
        Some(m.peak_threads as f64)
    })
    .warn(rel(0.25, Some(2.0))),
    metric(
        "connections_opened",
        Down,
        "count",
        F::Count,
        Cw::Count,
        |m| Some(m.connections_opened? as f64),
    )
    .warn(rel(0.50, Some(2.0))),
    metric(
        "requests_per_connection",
        Up,
        "ratio",
        F::Ratio,
        Cw::None,
        |m| m.requests_per_connection,
    )
    .warn(rel(0.20, None)),
    metric(
        "server_cpu_us_per_request",
        Down,
        "us",
        F::CpuTime,
        Cw::Microseconds,
        |m| m.server_cpu_us_per_request,
    )
    .warn(rel(0.10, None)),
    metric(
        "server_peak_rss_bytes",
        Down,
        "bytes",
        F::Bytes,
        Cw::Bytes,
        |m| Some(m.server_peak_rss_bytes? as f64),
    )
    .warn(rel(0.20, Some(MIB))),
    metric(
        "server_peak_threads",
        Down,
        "count",
        F::Count,
        Cw::Count,
        |m| Some(m.server_peak_threads? as f64),
    )
    .warn(rel(0.25, Some(2.0))),
    metric("startup_ms", Down, "ms", F::Millis, Cw::Milliseconds, |m| {
        m.startup_ms
    })
    .warn(rel(0.20, Some(50.0))),
    metric(
        "startup_cpu_ms",
        Down,
        "ms",
        F::Millis,
        Cw::Milliseconds,
        |m| m.startup_cpu_ms,
    )
    .warn(rel(0.20, Some(50.0))),
    metric(
        "memory_per_connection_bytes",
        Down,
        "bytes",
        F::Bytes,
        Cw::Bytes,
        |m| m.memory_per_connection_bytes,
    )
    .warn(rel(0.20, Some(1024.0))),
    metric(
        "run_delay_ms",
        Down,
        "ms",
        F::Millis,
        Cw::Milliseconds,
        |m| m.run_delay_ms,
    )
    .warn(rel(0.50, Some(10.0))),
    metric(
        "run_delay_share",
        Down,
        "ratio",
        F::Percent,
        Cw::None,
        |m| m.run_delay_share,
    )
    .warn(rel(0.50, Some(0.05))),
    metric(
        "involuntary_context_switches",
        Down,
        "count",
        F::Count,
        Cw::Count,
        |m| Some(m.involuntary_context_switches? as f64),
    )
    .warn(rel(0.50, Some(100.0))),
    metric(
        "server_run_delay_ms",
        Down,
        "ms",
        F::Millis,
        Cw::Milliseconds,
        |m| m.server_run_delay_ms,
    )
    .warn(rel(0.50, Some(10.0))),
    metric(
        "host_steal_ms",
        Down,
        "ms",
        F::Millis,
        Cw::Milliseconds,
        |m| m.host_steal_ms,
    )
    .warn(rel(0.50, Some(10.0))),
    // A JMH result file's figures (`results::jmh`), each in one unit whatever
    // the file's (`ops/ms` and `us/op` are converted), so a changed
    // `@OutputTimeUnit` never compares two scales.
    jmh(
        "jmh.ops_per_s",
        Up,
        "ops/s",
        F::OpsRate,
        Cw::CountPerSecond,
        |m| m.jmh.as_ref()?.ops_per_s,
    )
    .fail(rel(0.05, None), rel(0.03, None)),
    jmh_time("jmh.avgt_ns", |m| m.jmh.as_ref()?.avgt_ns).fail(rel(0.05, None), rel(0.03, None)),
    jmh_time("jmh.sample_mean_ns", |m| m.jmh.as_ref()?.sample_mean_ns)
        .fail(rel(0.05, None), rel(0.03, None)),
    jmh_time("jmh.sample_p50_ns", |m| m.jmh.as_ref()?.sample_p50_ns).warn(rel(0.10, None)),
    jmh_time("jmh.sample_p90_ns", |m| m.jmh.as_ref()?.sample_p90_ns).warn(rel(0.10, None)),
    jmh_time("jmh.sample_p99_ns", |m| m.jmh.as_ref()?.sample_p99_ns).warn(rel(0.20, None)),
    jmh_time("jmh.sample_p999_ns", |m| m.jmh.as_ref()?.sample_p999_ns).warn(rel(0.30, None)),
    jmh_time("jmh.ss_ns", |m| m.jmh.as_ref()?.ss_ns).fail(rel(0.10, None), rel(0.05, None)),
    jmh(
        "jmh.alloc_bytes_per_op",
        Down,
        "B/op",
        F::BytesPerOp,
        Cw::Bytes,
        |m| m.jmh.as_ref()?.alloc_bytes_per_op,
    )
    .warn(rel(0.10, Some(8.0))),
];

/// Looks up a metric by its stable name.
pub fn metric_def(name: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|m| m.name == name)
}

/// The anchored figure of `name` (`cpu_us_per_request` ->
/// `cpu_us_per_request_anchored`), when the registry has one.
pub fn anchored_twin(name: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|m| m.anchored_from == Some(name))
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
