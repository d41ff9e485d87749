use super::*;
use crate::config::Suite;
use crate::metric::TrialMetrics;
use crate::results::environment::Pinning;
use crate::results::{CellResult, Environment, GitInfo, Trial};

const START: &str = "2026-11-30T01:02:03Z";
const START_SECS: i64 = 1_796_000_523;

fn metrics(rps: f64, p99: Option<f64>) -> TrialMetrics {
    TrialMetrics {
        throughput_rps: Some(rps),
        bytes_per_sec: Some(rps * 22.0),
        latency_mean_us: p99.map(|v| v / 2.0),
        latency_stdev_us: p99.map(|_| 1.0),
        latency_p50_us: p99.map(|v| v / 2.0),
        latency_p90_us: p99,
        latency_p99_us: p99,
        latency_p999_us: p99,
        latency_max_us: p99,
        error_rate: 0.0125,
        cpu_us_per_request: Some(12.5),
        peak_rss_bytes: 10 << 20,
        peak_threads: 4,
        connections_opened: Some(2),
        requests_per_connection: Some(100.0),
        requests: 1000,
        ok: 1000,
        elapsed_s: 1.0,
        ..TrialMetrics::default()
    }
}

fn trial(round: u32, m: Option<TrialMetrics>) -> Trial {
    Trial {
        round,
        failure: m.is_none().then(|| "driver crashed".to_string()),
        metrics: m,
        server: None,
        invalid: vec![],
        ..Default::default()
    }
}

fn cell(scenario: &str, client: &str, trials: Vec<Trial>) -> CellResult {
    CellResult {
        scenario: scenario.into(),
        client: client.into(),
        server: None,
        anchor: false,
        trials,
        summary: Default::default(),
        histogram: None,
        histogram_uncorrected: None,
    }
}

fn results(cells: Vec<CellResult>) -> RunResults {
    RunResults {
        schema_version: crate::results::SCHEMA_VERSION,
        run_id: "20261130T010203Z-abc".into(),
        started_at: START.into(),
        finished_at: None,
        git: GitInfo::default(),
        environment: Environment {
            cpu_model: "test".into(),
            cores: 2,
            kernel: "6".into(),
            os: "linux".into(),
            arch: "x86_64".into(),
            benchgate_version: "0".into(),
            rustc_version: "rustc".into(),
            pinning: Pinning {
                enabled: false,
                server_cpus: vec![],
                client_cpus: vec![],
            },
            runner_image: None,
            governor: None,
        },
        config: Suite::default_suite(),
        results: cells,
        interrupted: None,
        budget: Vec::new(),
        shard: None,
        jmh: None,
    }
}

fn settings(metrics: &[&str]) -> CloudWatchSettings {
    CloudWatchSettings {
        metrics: metrics.iter().map(|m| m.to_string()).collect(),
        ..CloudWatchSettings::default()
    }
}

#[test]
fn one_datum_per_cell_and_metric_with_one_value_per_successful_trial() {
    let r = results(vec![
        cell(
            "get-22b",
            "hyper",
            vec![
                trial(1, Some(metrics(1000.0, Some(250.0)))),
                trial(2, None),
                trial(3, Some(metrics(1100.0, None))),
                trial(4, Some(metrics(1000.0, Some(260.0)))),
            ],
        ),
        cell("get-22b", "reqwest", vec![trial(1, None)]),
    ]);
    let mut s = settings(&["throughput_rps", "latency_p99_us", "error_rate"]);
    s.dimensions.insert("Team".into(), "sdk".into());
    let l = layout(&r, &s, "main", START_SECS).unwrap();
    assert_eq!(l.skipped, vec!["get-22b/reqwest: no successful trial"]);
    assert_eq!(l.data.len(), 3);

    let rps = &l.data[0];
    assert_eq!(rps.metric_name, "throughput_rps");
    assert_eq!(rps.unit, Unit::CountPerSecond);
    // Identical values are listed once, with their count; the failed trial adds none.
    assert_eq!(rps.values, vec![1000.0, 1100.0]);
    assert_eq!(rps.counts, vec![2.0, 1.0]);
    assert_eq!(rps.timestamp, START_SECS);
    assert_eq!(rps.storage_resolution, 60);
    let dims: Vec<(&str, &str)> = rps
        .dimensions
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        dims,
        vec![
            ("Scenario", "get-22b"),
            ("Client", "hyper"),
            ("Branch", "main"),
            ("RunId", "20261130T010203Z-abc"),
            ("Team", "sdk"),
        ]
    );

    // A trial that did not measure a metric adds no value: never an invented one.
    let p99 = &l.data[1];
    assert_eq!(p99.unit, Unit::Microseconds);
    assert_eq!(p99.values, vec![250.0, 260.0]);
    assert_eq!(p99.samples(), 2.0);

    let errors = &l.data[2];
    assert_eq!(errors.unit, Unit::Percent);
    assert_eq!(errors.values, vec![1.25]);
    assert_eq!(errors.counts, vec![3.0]);
}

#[test]
fn run_id_dimension_can_be_left_out() {
    let r = results(vec![cell(
        "s",
        "c",
        vec![trial(1, Some(metrics(1.0, None)))],
    )]);
    let mut s = settings(&["throughput_rps"]);
    s.run_id_dimension = false;
    let l = layout(&r, &s, "main", START_SECS).unwrap();
    assert!(l.data[0].dimensions.iter().all(|(n, _)| n != "RunId"));
}

#[test]
fn more_than_150_distinct_values_split_into_several_data() {
    let trials = (1..=301)
        .map(|i| trial(i, Some(metrics(i as f64, None))))
        .collect();
    let r = results(vec![cell("s", "c", trials)]);
    let l = layout(&r, &settings(&["throughput_rps"]), "main", START_SECS).unwrap();
    let sizes: Vec<usize> = l.data.iter().map(|d| d.values.len()).collect();
    assert_eq!(sizes, vec![150, 150, 1]);
    assert_eq!(l.data.iter().map(Datum::samples).sum::<f64>(), 301.0);
}

#[test]
fn non_finite_values_and_bad_names_are_refused_before_sending() {
    let r = results(vec![cell(
        "s",
        "c",
        vec![trial(1, Some(metrics(f64::NAN, None)))],
    )]);
    let err = layout(&r, &settings(&["throughput_rps"]), "main", START_SECS).unwrap_err();
    assert!(err.contains("s/c throughput_rps round 1"), "{err}");
    assert!(err.contains("not a finite number"), "{err}");

    let r = results(vec![cell(
        "get-é",
        "c",
        vec![trial(1, Some(metrics(1.0, None)))],
    )]);
    let err = layout(&r, &settings(&["throughput_rps"]), "main", START_SECS).unwrap_err();
    assert!(
        err.contains("dimension Scenario") && err.contains("ASCII"),
        "{err}"
    );

    let r = results(vec![]);
    let err = layout(&r, &settings(&["throughput_rps"]), " ", START_SECS).unwrap_err();
    assert!(err.contains("dimension Branch"), "{err}");
}

#[test]
fn timestamps_outside_cloudwatchs_window_are_refused() {
    let r = results(vec![]);
    let s = settings(&["throughput_rps"]);
    assert!(layout(&r, &s, "m", START_SECS + MAX_AGE_SECS).is_ok());
    let err = layout(&r, &s, "m", START_SECS + MAX_AGE_SECS + 1).unwrap_err();
    assert!(err.contains("two weeks"), "{err}");
    assert!(layout(&r, &s, "m", START_SECS - MAX_AHEAD_SECS - 1).is_err());
}

#[test]
fn every_metric_has_a_unit() {
    for m in crate::metric::METRICS {
        assert!(unit_of(m.name).is_some(), "{}", m.name);
    }
    assert_eq!(unit_of("throughput_rps"), Some((Unit::CountPerSecond, 1.0)));
    assert_eq!(unit_of("peak_rss_bytes"), Some((Unit::Bytes, 1.0)));
    assert_eq!(unit_of("errors.timeout"), Some((Unit::Count, 1.0)));
    assert_eq!(unit_of("requests_per_connection"), Some((Unit::None, 1.0)));
    assert_eq!(unit_of("nope"), None);
}

fn datum(values: usize) -> Datum {
    Datum {
        metric_name: "latency_p99_us".into(),
        dimensions: vec![("Scenario".into(), "x".repeat(200))],
        unit: Unit::Microseconds,
        timestamp: START_SECS,
        storage_resolution: 60,
        values: vec![1.5; values],
        counts: vec![1.0; values],
    }
}

#[test]
fn batches_hold_at_most_1000_data() {
    let data: Vec<Datum> = (0..2_345).map(|_| datum(1)).collect();
    let b = batches(&data, "Benchgate");
    let sizes: Vec<usize> = b.iter().map(|b| b.len()).collect();
    assert_eq!(sizes, vec![1000, 1000, 345]);
    assert!(batches(&[], "Benchgate").is_empty());
}

#[test]
fn batches_stay_under_one_megabyte() {
    let data: Vec<Datum> = (0..200).map(|_| datum(150)).collect();
    let b = batches(&data, "Benchgate");
    assert!(b.len() > 1, "200 data of 150 values do not fit one request");
    let overhead = limits::request_overhead("Benchgate");
    for batch in &b {
        let bytes: usize = batch.iter().map(Datum::encoded_bytes).sum::<usize>() + overhead;
        assert!(bytes <= limits::MAX_REQUEST_BYTES, "{bytes}");
    }
    assert_eq!(b.iter().map(|b| b.len()).sum::<usize>(), 200);
}

#[test]
fn the_default_metrics_have_cloudwatch_units() {
    for m in crate::config::publish::default_metrics() {
        assert!(unit_of(m).is_some(), "{m}");
    }
}
