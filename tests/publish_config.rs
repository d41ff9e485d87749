//! `[publish.cloudwatch]` in benchgate.toml: defaults, and every error located at
//! file:line:column with the field and the fix.

mod common;

use benchgate::config::{CloudWatchSettings, ConfigError, Suite};

const FILE: &str = "bench.toml";
const BASE: &str = "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/bytes/22\"\n";

fn load(extra: &str) -> Result<Suite, ConfigError> {
    Suite::from_toml(&format!("{BASE}{extra}"), FILE)
}

/// Asserts an `Invalid` error on `line` (1-based, of the whole text) at `field`.
#[track_caller]
fn invalid(extra: &str, line: usize, field: &str, what: &str, fix: &str) {
    common::config_errors::invalid(load(extra), FILE, line, field, what, fix);
}

#[test]
fn no_publish_table_means_none() {
    assert_eq!(load("").unwrap().publish, None);
    assert_eq!(load("[publish]\n").unwrap().publish, None);
}

#[test]
fn defaults_are_the_gating_metrics_at_standard_resolution() {
    let s = load("[publish.cloudwatch]\n").unwrap();
    let cw = s.publish.unwrap().cloudwatch.unwrap();
    assert_eq!(cw, CloudWatchSettings::default());
    assert_eq!(cw.namespace, "Benchgate");
    assert_eq!(
        cw.metrics,
        vec![
            "throughput_rps",
            "latency_p50_us",
            "latency_p99_us",
            "error_rate",
            "cpu_us_per_request",
            "peak_rss_bytes"
        ]
    );
    assert_eq!(cw.storage_resolution, 60);
    assert!(cw.run_id_dimension);
}

#[test]
fn every_field_is_read() {
    let s = load(
        "[publish.cloudwatch]\nnamespace = \"Team/Bench\"\nregion = \"eu-west-1\"\nmetrics = [\"throughput_rps\", \"errors.timeout\"]\nstorage_resolution = 1\nrun_id_dimension = false\ndimensions = { Team = \"sdk\", Runner = \"ubuntu-24.04\" }\n",
    )
    .unwrap();
    let cw = s.publish.unwrap().cloudwatch.unwrap();
    assert_eq!(cw.namespace, "Team/Bench");
    assert_eq!(cw.region.as_deref(), Some("eu-west-1"));
    assert_eq!(cw.metrics, vec!["throughput_rps", "errors.timeout"]);
    assert_eq!(cw.storage_resolution, 1);
    assert!(!cw.run_id_dimension);
    assert_eq!(cw.dimensions.get("Team").map(String::as_str), Some("sdk"));
    assert_eq!(cw.dimensions.len(), 2);
}

#[test]
fn unknown_metric_is_located_with_the_list_of_names() {
    invalid(
        "[publish.cloudwatch]\nmetrics = [\"throughput_rps\",\n  \"p99\"]\n",
        9,
        "publish.cloudwatch.metrics[1]",
        "unknown metric \"p99\"",
        "latency_p99_us",
    );
    invalid(
        "[publish.cloudwatch]\nmetrics = []\n",
        8,
        "publish.cloudwatch.metrics",
        "empty",
        "throughput_rps",
    );
    invalid(
        "[publish.cloudwatch]\nmetrics = [\"error_rate\", \"error_rate\"]\n",
        8,
        "publish.cloudwatch.metrics[1]",
        "twice",
        "once",
    );
    invalid(
        "[publish.cloudwatch]\nmetrics = [3]\n",
        8,
        "publish.cloudwatch.metrics[0]",
        "expected a metric name (a string)",
        "metrics = [",
    );
}

#[test]
fn bad_values_are_located() {
    invalid(
        "[publish.cloudwatch]\nstorage_resolution = 5\n",
        8,
        "publish.cloudwatch.storage_resolution",
        "5",
        "60",
    );
    invalid(
        "[publish.cloudwatch]\nnamespace = \"AWS/EC2\"\n",
        8,
        "publish.cloudwatch.namespace",
        "reserved",
        "Benchgate",
    );
    invalid(
        "[publish.cloudwatch]\nregion = \"EU West\"\n",
        8,
        "publish.cloudwatch.region",
        "not an AWS region",
        "us-east-1",
    );
    invalid(
        "[publish.cloudwatch]\ndimensions = { Branch = \"x\" }\n",
        8,
        "publish.cloudwatch.dimensions.Branch",
        "set by benchgate",
        "reserved",
    );
    invalid(
        "[publish.cloudwatch]\ndimensions = { Team = \"é\" }\n",
        8,
        "publish.cloudwatch.dimensions.Team",
        "ASCII",
        "ASCII",
    );
    invalid(
        "[publish.cloudwatch]\ndimensions = { Team = 3 }\n",
        8,
        "publish.cloudwatch.dimensions.Team",
        "expected a string",
        "dimensions = {",
    );
}

#[test]
fn unknown_fields_suggest_the_closest() {
    invalid(
        "[publish.cloudwatch]\nnamespce = \"x\"\n",
        8,
        "publish.cloudwatch.namespce",
        "unknown field",
        "did you mean `namespace`?",
    );
    invalid(
        "[publish.cloudwach]\n",
        7,
        "publish.cloudwach",
        "unknown field",
        "did you mean `cloudwatch`?",
    );
}
