//! Round trips through moto's CloudWatch: publish a real results file with the
//! binary (endpoint from AWS_ENDPOINT_URL), read it back with the SDK.

use std::collections::BTreeSet;

use aws_sdk_cloudwatch::primitives::DateTime;
use aws_sdk_cloudwatch::types::{Dimension, Metric, MetricDataQuery, MetricStat, Statistic};
use benchgate::publish::cloudwatch_layout::unit_of;
use benchgate::results::RunResults;
use benchgate::timer::clock::parse_rfc3339;

use super::support::*;

type Series = (String, Vec<(String, String)>);

fn series(m: &Metric) -> Series {
    let mut dims: Vec<(String, String)> = m
        .dimensions()
        .iter()
        .map(|d| {
            (
                d.name().unwrap_or_default().to_string(),
                d.value().unwrap_or_default().to_string(),
            )
        })
        .collect();
    dims.sort();
    (m.metric_name().unwrap_or_default().to_string(), dims)
}

/// Every distinct (metric, dimensions) in a namespace (moto lists a metric once
/// per stored value; CloudWatch once).
async fn list(client: &aws_sdk_cloudwatch::Client, namespace: &str) -> BTreeSet<Series> {
    let mut out = BTreeSet::new();
    let mut pages = client
        .list_metrics()
        .namespace(namespace)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        for m in page.expect("ListMetrics").metrics() {
            out.insert(series(m));
        }
    }
    out
}

#[test]
fn published_metrics_read_back_with_names_dimensions_units_values_and_counts() {
    let moto = moto_url();
    let dir = tempfile::tempdir().unwrap();
    let ns = namespace("roundtrip");
    let metrics = [
        "throughput_rps",
        "latency_p99_us",
        "error_rate",
        "errors.status_5xx",
        "peak_rss_bytes",
    ];
    let path = mock_results(
        dir.path(),
        &format!(
            "[publish.cloudwatch]\nnamespace = \"{ns}\"\nmetrics = {metrics:?}\ndimensions = {{ Team = \"sdk\" }}\n"
        ),
    );
    let results = RunResults::read(&path).unwrap();
    // The resolved [publish.cloudwatch] is part of the results file's schema.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/schema/results.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(doc["config"]["publish"]["cloudwatch"]["namespace"] == ns.as_str());
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");

    let (out, took) = publish(&path, &moto, &["--branch", "feature/cw"]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("cloudwatch: published 10 of 10 metric data in 1 of 1 requests"),
        "{stdout}"
    );
    assert!(took.as_secs() < 20, "{took:?}");

    let client = client(&moto);
    let rt = runtime();
    let listed = rt.block_on(list(&client, &ns));
    let mut expected = BTreeSet::new();
    for cell in &results.results {
        for m in metrics {
            let mut dims = vec![
                ("Branch".to_string(), "feature/cw".to_string()),
                ("Client".to_string(), cell.client.clone()),
                ("RunId".to_string(), results.run_id.clone()),
                ("Scenario".to_string(), cell.scenario.clone()),
                ("Team".to_string(), "sdk".to_string()),
            ];
            dims.sort();
            expected.insert((m.to_string(), dims));
        }
    }
    assert_eq!(listed, expected);

    let start = parse_rfc3339(&results.started_at).unwrap();
    for cell in &results.results {
        let dims: Vec<Dimension> = [
            ("Scenario", cell.scenario.as_str()),
            ("Client", cell.client.as_str()),
            ("Branch", "feature/cw"),
            ("RunId", results.run_id.as_str()),
            ("Team", "sdk"),
        ]
        .iter()
        .map(|(n, v)| Dimension::builder().name(*n).value(*v).build())
        .collect();
        for m in metrics {
            let (unit, scale) = unit_of(m).unwrap();
            let values: Vec<f64> = cell
                .trials
                .iter()
                .filter_map(|t| t.metrics.as_ref()?.get(m))
                .map(|v| v * scale)
                .collect();
            assert_eq!(values.len(), 3, "{m}: one value per trial");
            let stats = rt
                .block_on(
                    client
                        .get_metric_statistics()
                        .namespace(&ns)
                        .metric_name(m)
                        .set_dimensions(Some(dims.clone()))
                        .start_time(DateTime::from_secs(start - 300))
                        .end_time(DateTime::from_secs(start + 300))
                        .period(60)
                        .statistics(Statistic::SampleCount)
                        .statistics(Statistic::Sum)
                        .statistics(Statistic::Minimum)
                        .statistics(Statistic::Maximum)
                        .send(),
                )
                .expect("GetMetricStatistics");
            let points = stats.datapoints();
            assert_eq!(points.len(), 1, "{m}: {points:?}");
            let p = &points[0];
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert_eq!(p.sample_count(), Some(3.0), "{m}");
            assert!(close(p.sum().unwrap(), values.iter().sum()), "{m}: {p:?}");
            let min = values.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(close(p.minimum().unwrap(), min), "{m}: {p:?}");
            assert!(close(p.maximum().unwrap(), max), "{m}: {p:?}");
            assert_eq!(p.unit().map(|u| u.as_str()), Some(unit.as_str()), "{m}");
            assert_eq!(p.timestamp().map(|t| t.secs()), Some(start), "{m}");
        }
        // error_rate travels as a percentage: the mock fails every 10th request.
        let rate = cell.summary["error_rate"].median * 100.0;
        assert!((5.0..=15.0).contains(&rate), "{rate}");
    }

    // GetMetricData agrees: the average over the trials.
    let cell = &results.results[0];
    let p99: Vec<f64> = cell
        .trials
        .iter()
        .filter_map(|t| t.metrics.as_ref()?.latency_p99_us)
        .collect();
    let metric = Metric::builder()
        .namespace(&ns)
        .metric_name("latency_p99_us")
        .dimensions(
            Dimension::builder()
                .name("Scenario")
                .value(&cell.scenario)
                .build(),
        )
        .dimensions(
            Dimension::builder()
                .name("Client")
                .value(&cell.client)
                .build(),
        )
        .dimensions(
            Dimension::builder()
                .name("Branch")
                .value("feature/cw")
                .build(),
        )
        .dimensions(
            Dimension::builder()
                .name("RunId")
                .value(&results.run_id)
                .build(),
        )
        .dimensions(Dimension::builder().name("Team").value("sdk").build())
        .build();
    let data = rt
        .block_on(
            client
                .get_metric_data()
                .metric_data_queries(
                    MetricDataQuery::builder()
                        .id("p99")
                        .metric_stat(
                            MetricStat::builder()
                                .metric(metric)
                                .period(60)
                                .stat("Average")
                                .build(),
                        )
                        .build(),
                )
                .start_time(DateTime::from_secs(start - 300))
                .end_time(DateTime::from_secs(start + 300))
                .send(),
        )
        .expect("GetMetricData");
    let got = data.metric_data_results()[0].values();
    let mean = p99.iter().sum::<f64>() / p99.len() as f64;
    assert_eq!(got.len(), 1, "{got:?}");
    assert!((got[0] - mean).abs() < 1e-6 * mean, "{got:?} vs {mean}");
}

#[test]
fn a_results_file_with_more_than_1000_data_is_sent_in_batches() {
    let moto = moto_url();
    let dir = tempfile::tempdir().unwrap();
    let ns = namespace("batching");
    let path = mock_results(
        dir.path(),
        &format!("[publish.cloudwatch]\nnamespace = \"{ns}\"\nrun_id_dimension = false\n"),
    );
    // 170 cells x the 6 default metrics = 1,020 data: two requests.
    let wide = widen(&RunResults::read(&path).unwrap(), 170);
    let wide_path = dir.path().join("wide.json");
    wide.write_atomic(&wide_path).unwrap();

    let (out, _) = publish(&wide_path, &moto, &["--branch", "main"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        stdout.contains("published 1020 of 1020 metric data in 2 of 2 requests"),
        "{stdout}"
    );
    let listed = runtime().block_on(list(&client(&moto), &ns));
    assert_eq!(listed.len(), 1020);
    assert!(listed
        .iter()
        .all(|(_, dims)| dims.iter().all(|(n, _)| n != "RunId")));
}
