//! Per-trial metrics under their stable names (docs/how-it-measures.md,
//! "Metrics") and the across-rounds spread. The table of names, with everything else known about
//! each metric, is the registry (`registry.rs`).

use serde::{Deserialize, Serialize};

use super::registry::{metric_def, Family, Scale};

/// The comparison scale of a metric (the registry's): absolute for
/// `error_rate` and `errors.*` (commonly 0, where a ratio is undefined),
/// logarithmic for everything else.
pub fn scale_of(metric: &str) -> Scale {
    metric_def(metric).map_or(Scale::Log, |d| d.scale)
}

use crate::measure::resources::CpuTimes;
use crate::measure::schedstat::Starvation;
use crate::measure::{Counts, ErrorCounts, LatencyHistogram, LatencySummary};

/// What one trial measured. Latency fields are `None` when nothing was
/// recorded (no successful request); resource fields are measured by the parent
/// process from the outside. The default: nothing measured (every count 0,
/// every optional figure absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialMetrics {
    /// Successful responses per second of the measurement window, or the
    /// rate a client's tool reported ([`Throughput::Reported`]); `None` when
    /// not measured (a JMH module without a Throughput-mode result).
    pub throughput_rps: Option<f64>,
    /// Request plus response body bytes per second of the window; `None`
    /// when the window's figures are unavailable (JMH clients).
    pub bytes_per_sec: Option<f64>,
    pub latency_mean_us: Option<f64>,
    pub latency_stdev_us: Option<f64>,
    pub latency_p50_us: Option<f64>,
    pub latency_p90_us: Option<f64>,
    pub latency_p99_us: Option<f64>,
    pub latency_p999_us: Option<f64>,
    pub latency_max_us: Option<f64>,
    /// errors / (successes + errors) in the window.
    pub error_rate: f64,
    pub errors: ErrorCounts,
    /// Client user+sys CPU during the window / requests completed in it.
    pub cpu_us_per_request: Option<f64>,
    /// `throughput_rps` / the anchor's `throughput_rps` in the same round
    /// (`[run] anchor`, [`super::anchor`]); absent when the run has no anchor,
    /// for the anchor's own trials, and in results from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_rps_anchored: Option<f64>,
    /// `cpu_us_per_request` / the anchor's in the same round; absent like
    /// `throughput_rps_anchored`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_request_anchored: Option<f64>,
    /// Peak resident set size of the client process (kernel's maxrss).
    pub peak_rss_bytes: u64,
    /// Peak thread count of the client process, sampled from /proc.
    pub peak_threads: u64,
    /// Connections the reference server accepted during the whole trial
    /// (warmup included: pools usually connect then).
    pub connections_opened: Option<u64>,
    /// Requests the server served in the window / connections that served them.
    pub requests_per_connection: Option<f64>,
    /// The server's process tree (reference server or server under test):
    /// user+sys CPU in the window / requests completed in it. Absent for a
    /// `url` server (no process known) and in results from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_request: Option<f64>,
    /// Peak resident set size of the server's process tree during the trial
    /// (sum over its processes, sampled from /proc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_peak_rss_bytes: Option<u64>,
    /// Peak thread count of the server's process tree during the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_peak_threads: Option<u64>,
    /// Start-up: milliseconds from the client's spawn to its first response
    /// (docs/external-clients.md, "Start-up"). Absent when not measured and
    /// in results from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_ms: Option<f64>,
    /// Start-up: the client's user+sys CPU, milliseconds, from its spawn until
    /// the window opened (warmup included); never in `cpu_us_per_request`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_cpu_ms: Option<f64>,
    /// What one connection costs the client in memory: (the driver's peak
    /// RSS until its window closed − its RSS before its first connection) /
    /// the connections the reference server saw open at once in the window
    /// ([`ConnectionMemory`]). Absent for command clients, against a server
    /// under test, and in results from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_per_connection_bytes: Option<f64>,
    /// Starvation in the window (`measure::schedstat`), informative: how
    /// long the client's threads were runnable but waiting for a CPU, summed
    /// over its threads (a process group's, for a command client), ms.
    /// Absent on a kernel without schedstat, for JMH clients, for a program
    /// that exited before its window closed, and in results from before it
    /// existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_delay_ms: Option<f64>,
    /// `run_delay_ms` / the window it was read over: the share of the window
    /// the client's threads spent waiting for a CPU. Summed over threads, so
    /// a multi-threaded client can exceed 1 (four threads waiting throughout
    /// read 4). Absent like `run_delay_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_delay_share: Option<f64>,
    /// Involuntary context switches of the client's threads in the window
    /// (`nonvoluntary_ctxt_switches`, summed over threads): how often the
    /// scheduler took a CPU from a thread that still wanted it. Absent like
    /// `run_delay_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub involuntary_context_switches: Option<u64>,
    /// The reference server's threads' run delay in the same window, ms.
    /// Absent against a server under test, for JMH clients, on a kernel
    /// without schedstat, and in results from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_run_delay_ms: Option<f64>,
    /// The host's steal time in the window, summed over all its CPUs, ms
    /// (`/proc/stat`; 0 on bare metal). Absent like `run_delay_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_steal_ms: Option<f64>,

    /// Requests completed in the window, successes and errors.
    pub requests: u64,
    /// Successful (2xx/3xx) responses in the window.
    pub ok: u64,
    /// Length of the measurement window, seconds.
    pub elapsed_s: f64,
    /// Requests still in flight when a duration-bounded window closed; not in
    /// any other figure.
    pub in_flight_at_deadline: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub cpu_user_us: u64,
    pub cpu_sys_us: u64,
    /// Open loop: latency from the actual send, not corrected for coordinated
    /// omission. `None` for closed loop (where the two are the same).
    pub latency_uncorrected: Option<LatencySummary>,
    /// A JMH result file's figures for one fork (or one iteration, with
    /// `[jmh] iterations_as_trials`), `results::jmh`: present, the trial is
    /// a JMH one and measured only these ([`TrialMetrics::get`]). Absent for
    /// benchgate's own trials and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jmh: Option<Box<JmhFigures>>,
}

/// One JMH fork's figures, each in one unit whatever the file's: the mean
/// of the fork's measurement iterations (`rawData`) for the primary score of
/// its mode, SampleTime's mean and percentiles from the fork's raw histogram
/// (`rawDataHistogram`), and the `gc.alloc.rate.norm` secondary metric.
/// `None`: the file has no such figure for this benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JmhFigures {
    /// Throughput mode (`thrpt`): operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_s: Option<f64>,
    /// AverageTime mode (`avgt`): ns per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avgt_ns: Option<f64>,
    /// SampleTime mode (`sample`): the mean sample, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_mean_ns: Option<f64>,
    /// SampleTime percentiles of the fork's samples, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_p50_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_p90_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_p99_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_p999_ns: Option<f64>,
    /// SingleShotTime mode (`ss`): ns per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ss_ns: Option<f64>,
    /// `gc.alloc.rate.norm` (JMH's `-prof gc`): bytes allocated per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_bytes_per_op: Option<f64>,
}

/// The driver's memory around its connections, as it measured it, and how
/// many connections the reference server counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionMemory {
    /// The driver's RSS just before it opened its first connection.
    pub rss_before_bytes: u64,
    /// The driver's peak RSS from its start until its window closed.
    pub peak_rss_bytes: u64,
    /// The most connections open at once in the window, by the reference
    /// server's count (not the driver's claim).
    pub connections: u64,
}

impl ConnectionMemory {
    /// Bytes per connection; `None` with no connection counted.
    pub fn per_connection(&self) -> Option<f64> {
        (self.connections > 0).then(|| {
            self.peak_rss_bytes.saturating_sub(self.rss_before_bytes) as f64
                / self.connections as f64
        })
    }
}

/// Where a trial's throughput comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Throughput {
    /// Successes over the measurement window: `ok / elapsed_s`.
    Window,
    /// The rate the client's own tool reported (JMH's Throughput mode), or
    /// `None` when it reported none: then n/a, never derived from other figures.
    Reported(Option<f64>),
    /// Successes over the window at benchgate's edges of it: the reference
    /// server's count there (`served`), at the client's share of successes,
    /// `served * ok / requests / elapsed_s`. A window loop's program counts
    /// from its reading of OPEN to that of CLOSE, which a loaded machine
    /// delays by milliseconds to tens of them; the server's count, the
    /// window's time and the group's CPU share benchgate's edges.
    ServerEdges { served: u64 },
}

impl Throughput {
    /// The rate of `counts` over `elapsed_s` seconds, as this source reads it.
    pub fn rate(self, counts: &Counts, elapsed_s: f64) -> Option<f64> {
        let elapsed = elapsed_s.max(f64::MIN_POSITIVE);
        match self {
            Throughput::Window => Some(counts.ok as f64 / elapsed),
            Throughput::Reported(rps) => rps,
            Throughput::ServerEdges { served } => Some(match counts.requests() {
                0 => 0.0,
                n => served as f64 * (counts.ok as f64 / n as f64) / elapsed,
            }),
        }
    }
}

impl TrialMetrics {
    /// The figures of a trial's measurement window as the client counted
    /// them: throughput (`throughput`), bytes per second and CPU per request
    /// over the window, the error rate, and the starvation counters read at
    /// its edges. What only the parent sees from the outside (peaks,
    /// connections, the server's cost, start-up) is absent (0 for the
    /// peaks): the runner sets it over this base
    /// (`TrialMetrics { peak_threads, .., ..TrialMetrics::of_window(..) }`),
    /// and the latency with [`TrialMetrics::with_latency`].
    pub fn of_window(
        counts: Counts,
        elapsed_s: f64,
        throughput: Throughput,
        cpu: CpuTimes,
        starvation: Option<&Starvation>,
    ) -> TrialMetrics {
        let c = counts;
        let requests = c.requests();
        let elapsed = elapsed_s.max(f64::MIN_POSITIVE);
        TrialMetrics {
            throughput_rps: throughput.rate(&c, elapsed_s),
            bytes_per_sec: Some((c.bytes_received + c.bytes_sent) as f64 / elapsed),
            error_rate: if requests == 0 {
                0.0
            } else {
                c.errors.total() as f64 / requests as f64
            },
            errors: c.errors,
            cpu_us_per_request: (requests > 0).then(|| cpu.total_us() as f64 / requests as f64),
            run_delay_ms: starvation
                .and_then(|s| s.run_delay_ns)
                .map(|ns| ns as f64 / 1e6),
            run_delay_share: starvation.and_then(|s| {
                let ns = s.run_delay_ns?;
                (s.span_s > 0.0).then(|| ns as f64 / 1e9 / s.span_s)
            }),
            involuntary_context_switches: starvation.and_then(|s| s.involuntary_switches),
            host_steal_ms: starvation.and_then(|s| s.steal_ms),
            requests,
            ok: c.ok,
            elapsed_s,
            in_flight_at_deadline: c.in_flight_at_deadline,
            bytes_received: c.bytes_received,
            bytes_sent: c.bytes_sent,
            cpu_user_us: cpu.user_us,
            cpu_sys_us: cpu.sys_us,
            jmh: None,
            ..TrialMetrics::default()
        }
    }

    /// These metrics with the latency figures of `histogram` (`None`, or
    /// empty: nothing recorded, every latency figure absent).
    pub fn with_latency(mut self, histogram: Option<&LatencyHistogram>) -> TrialMetrics {
        self.set_latency(histogram.and_then(|h| h.summary()).as_ref());
        self
    }

    /// Value of a metric by stable name; `None` when not measured, and for
    /// a metric of the other [`Family`] (a JMH fork has no error rate).
    pub fn get(&self, name: &str) -> Option<f64> {
        let def = metric_def(name)?;
        (def.family == self.family()).then(|| (def.value)(self))?
    }

    /// Whose figures these are: a JMH result file's, or benchgate's own.
    pub fn family(&self) -> Family {
        match self.jmh {
            Some(_) => Family::Jmh,
            None => Family::Http,
        }
    }

    /// A JMH trial: `figures` and nothing else measured (every count 0,
    /// every optional figure absent), so [`TrialMetrics::get`] reads only them.
    pub fn jmh(figures: JmhFigures) -> TrialMetrics {
        TrialMetrics {
            jmh: Some(Box::new(figures)),
            ..TrialMetrics::default()
        }
    }

    /// Fills the latency fields from a histogram summary.
    pub fn set_latency(&mut self, s: Option<&LatencySummary>) {
        self.latency_mean_us = s.map(|s| s.mean_us);
        self.latency_stdev_us = s.map(|s| s.stdev_us);
        self.latency_p50_us = s.map(|s| s.p50_us as f64);
        self.latency_p90_us = s.map(|s| s.p90_us as f64);
        self.latency_p99_us = s.map(|s| s.p99_us as f64);
        self.latency_p999_us = s.map(|s| s.p999_us as f64);
        self.latency_max_us = s.map(|s| s.max_us as f64);
    }
}

/// A metric across the rounds of one (scenario, client).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Trials that measured this metric.
    pub n: u32,
}

impl Spread {
    /// Median (mean of the middle two for even n), min and max; `None` if empty.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
            n: n as u32,
        })
    }

    /// Half the range relative to the median, e.g. 0.03 for ±3%.
    pub fn relative_half_range(&self) -> Option<f64> {
        (self.median != 0.0).then(|| (self.max - self.min) / 2.0 / self.median.abs())
    }
}

#[cfg(test)]
#[path = "trial_tests.rs"]
mod tests;
