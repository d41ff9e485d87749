//! JSON comparison output (validated against its schema) and the exports for
//! other tools: github-action-benchmark JSON and `.hgrm` distributions.

use benchgate::measure::LatencyHistogram;
use benchgate::report::{export, json};

use super::cases;
use crate::common;

fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/comparison.schema.json");
    common::errors_against(std::path::Path::new(path), doc)
}

#[test]
fn json_matches_the_schema_in_every_mode() {
    for c in [
        cases::mixed(),
        cases::hostile(),
        cases::side_by_side(),
        cases::no_baseline(),
        cases::not_comparable(),
        cases::every_trial_failed(),
        cases::every_baseline_trial_failed_side_by_side(),
    ] {
        let doc: serde_json::Value = serde_json::from_str(&json::render(&c.cmp)).unwrap();
        let errors = schema_errors(&doc);
        assert!(errors.is_empty(), "{}", errors.join("\n"));
    }
}

#[test]
fn schema_is_strict() {
    let mut doc: serde_json::Value =
        serde_json::from_str(&json::render(&cases::mixed().cmp)).unwrap();
    doc["metrics"][0]["surprise"] = 1.into();
    doc["outcome"] = "maybe".into();
    assert_eq!(schema_errors(&doc).len(), 2);
}

#[test]
fn json_snapshot() {
    insta::assert_snapshot!(json::render(&cases::side_by_side().cmp));
}

#[test]
fn github_action_benchmark_split_by_direction() {
    let b = export::github_action_benchmark(&cases::side_by_side().current);
    assert!(b
        .bigger_is_better
        .iter()
        .all(|e| e.name.ends_with("throughput_rps")
            || e.name.ends_with("bytes_per_sec")
            || e.name.ends_with("requests_per_connection")));
    assert!(b
        .smaller_is_better
        .iter()
        .any(|e| e.name.ends_with("latency_p99_us")));
    assert!(!b
        .smaller_is_better
        .iter()
        .any(|e| e.name.contains("errors.")));
    insta::assert_snapshot!("bigger", b.bigger_json());
    insta::assert_snapshot!("smaller", b.smaller_json());
}

#[test]
fn hgrm_matches_the_java_layout() {
    let mut h = LatencyHistogram::new();
    for us in 1..=10_000u64 {
        h.record_us(us);
    }
    let text = export::hgrm(&h, export::HGRM_SCALE_US_TO_MS);
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "       Value     Percentile TotalCount 1/(1-Percentile)"
    );
    assert!(text.contains("#[Max     =       10.007, Total count    =        10000]"));
    assert!(text.ends_with("#[Buckets =           22, SubBuckets     =         2048]\n"));
    insta::assert_snapshot!(text);
}

#[test]
fn hgrm_files_have_safe_unique_names() {
    let files = export::hgrm_files(&cases::hostile().current).unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.file_name.as_str()).collect();
    insta::assert_debug_snapshot!(names);
    let mut bad = cases::mixed().current;
    bad.results[0].histogram = Some("not base64!".into());
    let err = export::hgrm_files(&bad).unwrap_err();
    assert!(err.starts_with("get-22b / hyper: "), "{err}");
}
