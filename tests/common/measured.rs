//! Trial metrics where every field has a value of its own, so that code
//! reading the wrong field is caught. A test fixture, not shipped: the
//! integration tests hold it as `common::measured`, the library's unit tests
//! as `crate::metric::measured` (src/metric/mod.rs includes this file under
//! `#[cfg(test)]`), so it names the library as `benchgate` only.

use benchgate::measure::ErrorCounts;
use benchgate::metric::{JmhFigures, TrialMetrics};

/// A trial where every field is measured and has a value of its own (1, 2,
/// 3, ...), so an entry reading the wrong field is caught.
pub fn every_field_measured() -> TrialMetrics {
    TrialMetrics {
        throughput_rps: Some(1.0),
        bytes_per_sec: Some(2.0),
        latency_mean_us: Some(3.0),
        latency_stdev_us: Some(4.0),
        latency_p50_us: Some(5.0),
        latency_p90_us: Some(6.0),
        latency_p99_us: Some(7.0),
        latency_p999_us: Some(8.0),
        latency_max_us: Some(9.0),
        error_rate: 0.5,
        errors: ErrorCounts {
            connect: 11,
            timeout: 12,
            read: 13,
            write: 14,
            status_4xx: 15,
            status_5xx: 16,
        },
        cpu_us_per_request: Some(17.0),
        throughput_rps_anchored: Some(31.0),
        cpu_us_per_request_anchored: Some(32.0),
        peak_rss_bytes: 18,
        peak_threads: 19,
        connections_opened: Some(20),
        requests_per_connection: Some(21.0),
        server_cpu_us_per_request: Some(22.0),
        server_peak_rss_bytes: Some(23),
        server_peak_threads: Some(24),
        startup_ms: Some(29.0),
        startup_cpu_ms: Some(30.0),
        memory_per_connection_bytes: Some(31.0),
        run_delay_ms: Some(33.0),
        run_delay_share: Some(34.0),
        involuntary_context_switches: Some(35),
        server_run_delay_ms: Some(36.0),
        host_steal_ms: Some(37.0),
        requests: 100,
        ok: 90,
        elapsed_s: 1.0,
        in_flight_at_deadline: 0,
        bytes_received: 25,
        bytes_sent: 26,
        cpu_user_us: 27,
        cpu_sys_us: 28,
        latency_uncorrected: None,
        jmh: None,
    }
}

/// A JMH trial where every JMH figure has a value of its own (41, 42, ...),
/// the JMH family's [`every_field_measured`].
pub fn every_jmh_field_measured() -> TrialMetrics {
    TrialMetrics::jmh(JmhFigures {
        ops_per_s: Some(41.0),
        avgt_ns: Some(42.0),
        sample_mean_ns: Some(43.0),
        sample_p50_ns: Some(44.0),
        sample_p90_ns: Some(45.0),
        sample_p99_ns: Some(46.0),
        sample_p999_ns: Some(47.0),
        ss_ns: Some(48.0),
        alloc_bytes_per_op: Some(49.0),
    })
}
