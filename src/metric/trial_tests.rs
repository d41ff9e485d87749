//! What one trial measured, against its constructor and the results file:
//! the spread, the figures derived in [`TrialMetrics::of_window`], and older
//! results files that lack the newer fields.

use super::*;
use crate::metric::every_field_measured;
use crate::metric::registry::{Direction, METRICS};

#[test]
fn spread_median_odd_even() {
    let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
    assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
    let s = Spread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
    assert_eq!(s.median, 2.5);
    assert!(Spread::of(&[]).is_none());
    assert_eq!(
        Spread::of(&[90.0, 110.0]).unwrap().relative_half_range(),
        Some(0.1)
    );
}

#[test]
fn metric_names_are_unique_and_resolvable() {
    let mut names: Vec<_> = METRICS.iter().map(|m| m.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), METRICS.len());
    assert_eq!(
        metric_def("throughput_rps").unwrap().direction,
        Direction::HigherIsBetter
    );
    assert_eq!(
        metric_def("latency_p99_us").unwrap().direction,
        Direction::LowerIsBetter
    );
    assert!(metric_def("p99").is_none());
}

#[test]
fn memory_per_connection_is_the_growth_over_the_servers_count() {
    let c = ConnectionMemory {
        rss_before_bytes: 10_000_000,
        peak_rss_bytes: 50_000_000,
        connections: 20_000,
    };
    assert_eq!(c.per_connection(), Some(2000.0));
    let none = ConnectionMemory {
        connections: 0,
        ..c
    };
    assert_eq!(none.per_connection(), None);
    let shrunk = ConnectionMemory {
        peak_rss_bytes: 1,
        ..c
    };
    assert_eq!(shrunk.per_connection(), Some(0.0));
}

/// A trial's metrics from the figures of a driver that read `starvation`,
/// nothing else of note.
fn with_starvation(starvation: Option<Starvation>) -> TrialMetrics {
    let counts = Counts {
        ok: 10,
        ..Counts::default()
    };
    let cpu = CpuTimes::default();
    TrialMetrics::of_window(counts, 0.15, Throughput::Window, cpu, starvation.as_ref())
}

#[test]
fn starvation_is_what_was_read_and_its_share_of_the_span_read_over() {
    let read = Starvation {
        span_s: 0.25,
        run_delay_ns: Some(375_000_000),
        involuntary_switches: Some(42),
        steal_ms: Some(20.0),
    };
    let m = with_starvation(Some(read));
    assert_eq!(m.run_delay_ms, Some(375.0));
    // Three threads waiting half the window each: 1.5, not capped at 1.
    assert_eq!(m.run_delay_share, Some(1.5));
    assert_eq!(m.involuntary_context_switches, Some(42));
    assert_eq!(m.host_steal_ms, Some(20.0));
    // What was not read stays n/a; a share needs a span.
    let unread = Starvation {
        span_s: 0.0,
        steal_ms: None,
        involuntary_switches: None,
        ..read
    };
    let m = with_starvation(Some(unread));
    assert_eq!((m.run_delay_ms, m.run_delay_share), (Some(375.0), None));
    assert_eq!(
        (m.involuntary_context_switches, m.host_steal_ms),
        (None, None)
    );
    let m = with_starvation(None);
    assert_eq!((m.run_delay_ms, m.run_delay_share), (None, None));
}

/// Results files from before the starvation metrics still read, and a
/// trial without them writes none.
#[test]
fn results_without_the_starvation_metrics_still_read() {
    let mut json = serde_json::to_value(every_field_measured()).unwrap();
    let fields = json.as_object_mut().unwrap();
    for f in [
        "run_delay_ms",
        "run_delay_share",
        "involuntary_context_switches",
        "server_run_delay_ms",
        "host_steal_ms",
    ] {
        assert!(fields.remove(f).is_some(), "{f}");
    }
    let m: TrialMetrics = serde_json::from_value(json).unwrap();
    assert_eq!((m.run_delay_ms, m.host_steal_ms), (None, None));
    let written = serde_json::to_string(&m).unwrap();
    assert!(!written.contains("run_delay"), "{written}");
    assert!(!written.contains("steal"), "{written}");
}

/// Results files from before the start-up metrics still read, and a
/// trial without them writes none.
#[test]
fn results_without_the_startup_metrics_still_read() {
    let mut json = serde_json::to_value(every_field_measured()).unwrap();
    let fields = json.as_object_mut().unwrap();
    assert!(fields.remove("startup_ms").is_some());
    assert!(fields.remove("startup_cpu_ms").is_some());
    let m: TrialMetrics = serde_json::from_value(json).unwrap();
    assert_eq!((m.startup_ms, m.startup_cpu_ms), (None, None));
    let written = serde_json::to_string(&m).unwrap();
    assert!(!written.contains("startup"), "{written}");
}
