//! The config's estimates of what reading a results file takes
//! (`config::limits`: a run's own records, a cell, a trial) against what
//! this reader counts for a cell and a trial of every field (issue 53): a
//! suite the config accepts writes a file that every reader reads.

use serde_json::{json, Value};

use super::LIMITS;
use crate::config::limits::{
    results_bytes, rounds_that_fit, trial_bytes, CELL_BYTES, MAX_RESULTS_EXTRA_BYTES, RUN_BYTES,
    TRIAL_BYTES,
};
use crate::files::json::{scan, Limits};
use crate::metric::METRICS;
use crate::results::validity::InvalidMark;
use crate::results::{synthetic, RunResults};

/// What the reader counts for `doc`: the least memory limit it passes.
fn counted(doc: &Value) -> u64 {
    let bytes = doc.to_string().into_bytes();
    let passes = |extra_bytes| {
        scan(
            &bytes,
            &Limits {
                extra_bytes,
                ..LIMITS
            },
        )
        .is_ok()
    };
    let (mut low, mut high) = (0, MAX_RESULTS_EXTRA_BYTES);
    assert!(passes(high));
    while low < high {
        let mid = (low + high) / 2;
        match passes(mid) {
            true => high = mid,
            false => low = mid + 1,
        }
    }
    low
}

/// A trial of every field: every metric, its start time and windows, the
/// reference server's counters with the service-time histogram of a 1 ms
/// spread, and two validity marks.
fn trial(round: u32) -> Value {
    let mut service = crate::measure::LatencyHistogram::new();
    (0..1000).for_each(|us| service.record_us(us));
    let marks = [
        InvalidMark::RateShortfall {
            target_rps: 1e4,
            achieved_rps: 9e3,
        },
        InvalidMark::Starved {
            reason: "no request completed in the window: run delay 812.5 ms of the 1000 ms window (81%), 4412 involuntary context switches".into(),
        },
    ];
    json!({
        "round": round,
        "started_at": "2026-11-30T01:02:03.123456Z",
        "window_planned_s": 3.0,
        "window_actual_s": 3.000184025,
        "reruns": 2,
        "failure": null,
        "metrics": crate::metric::every_field_measured(),
        "server": {
            "window_open": false, "window_secs": 3.0001, "requests": 1873, "bytes_in": 0,
            "bytes_out": 41206, "connections_accepted": 0, "peak_open_connections": 1,
            "connections_used": 1, "requests_per_connection": 1873.0, "status_4xx": 0,
            "status_5xx": 0, "requests_http1": 1873, "requests_http2": 0, "requests_tls": 0,
            "requests_alpn_h2": 0, "requests_alpn_http1": 0, "run_delay_ns": 182643542,
            "service_time": {"count": 1873, "mean": 0.26, "p50": 0, "p90": 0, "p99": 4, "p999": 15, "max": 20},
            "service_time_hist": service.encode(),
            "total_requests": 2309, "total_connections_accepted": 1, "open_connections": 1
        },
        "invalid": marks,
    })
}

/// A run of `cells` cells of `rounds` such trials, each cell with names of
/// 64 characters, a summary entry per metric and two latency histograms of
/// 4 KiB (the size the estimate allows).
fn run(cells: usize, rounds: u32) -> Value {
    let one = synthetic::run(crate::config::Suite::default_suite(), 1, |_, _, _| {
        Some(crate::metric::every_field_measured())
    });
    let mut doc = serde_json::to_value(one).unwrap();
    let spread = json!({"median": 1.0, "min": 0.5, "max": 2.0, "n": rounds});
    let summary: serde_json::Map<String, Value> = METRICS
        .iter()
        .map(|m| (m.name.to_string(), spread.clone()))
        .collect();
    let name = |i: usize| format!("{i:0>64}");
    let histogram = "HIST".repeat(1024);
    doc["results"] = (0..cells)
        .map(|i| {
            json!({
                "scenario": name(i), "client": name(i), "server": name(i),
                "trials": (1..=rounds).map(trial).collect::<Vec<_>>(),
                "summary": summary,
                "histogram": histogram, "histogram_uncorrected": histogram,
            })
        })
        .collect();
    doc
}

#[test]
fn a_cell_and_a_trial_of_every_field_take_what_the_config_allows_for() {
    // Read as a results file: every field in its place.
    let r = RunResults::parse_bytes(run(1, 1).to_string().as_bytes(), "r.json").unwrap();
    let (cell, trial) = (&r.results[0], &r.results[0].trials[0]);
    assert!(trial.server.is_some() && trial.invalid.len() == 2 && cell.server.is_some());
    assert_eq!(cell.summary.len(), METRICS.len());

    let one = counted(&run(1, 1));
    let per_trial = counted(&run(1, 2)) - one;
    let per_cell = counted(&run(2, 1)) - one - per_trial;
    assert!(per_trial <= TRIAL_BYTES, "a trial counts {per_trial} bytes");
    assert!(per_cell <= CELL_BYTES, "a cell counts {per_cell} bytes");
    assert!(one - per_cell - per_trial <= RUN_BYTES);
    // So a file of the most rounds the config lets 500 cells have is read.
    let fit = rounds_that_fit(500, 1);
    assert!(results_bytes(500, fit, 1) <= MAX_RESULTS_EXTRA_BYTES);
    assert!(results_bytes(500, fit + 1, 1) > MAX_RESULTS_EXTRA_BYTES);
    let run_counted = one + 499 * per_cell + (500 * u64::from(fit) - 1) * per_trial;
    assert!(run_counted <= MAX_RESULTS_EXTRA_BYTES);
}

/// A fork of `windows` windows (`[run] windows`): its trial also holds each
/// window's figures and a starved window's reason.
fn fork_trial(round: u32, windows: u32) -> Value {
    let mut t = trial(round);
    let values: Vec<Value> = (0..windows)
        .map(|_| json!({"requests": 187_312, "server_requests": 187_309, "throughput_rps": 187_311.25, "cpu_us_per_request": 12.345678, "opened_at": "2026-12-06T13:03:58.123456Z"}))
        .collect();
    t["windows"] = json!({
        "count": windows, "rerun": 1, "peer_cpu_us": 1_234,
        "starved": ["window 3: no request completed in the window: run delay 812.5 ms of the 1000 ms window (81%)"],
        "values": values,
    });
    t
}

#[test]
fn a_trial_of_many_windows_takes_what_the_config_allows_for() {
    for windows in [2, 8, 50] {
        let mut doc = run(1, 1);
        doc["results"][0]["trials"] = json!([fork_trial(1, windows)]);
        let one = counted(&doc);
        doc["results"][0]["trials"] = json!([fork_trial(1, windows), fork_trial(2, windows)]);
        let per_trial = counted(&doc) - one;
        assert!(
            per_trial <= trial_bytes(windows),
            "a trial of {windows} windows counts {per_trial} bytes, over {}",
            trial_bytes(windows)
        );
        // Read back as a results file.
        let r = RunResults::parse_bytes(doc.to_string().as_bytes(), "r.json").unwrap();
        assert_eq!(
            r.results[0].trials[0]
                .windows
                .as_ref()
                .unwrap()
                .values
                .len(),
            windows as usize
        );
    }
    assert!(rounds_that_fit(500, 50) < rounds_that_fit(500, 1));
}
