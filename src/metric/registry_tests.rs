//! The registry against the results file: every entry reads its own measured
//! field, the schema describes it, and its default gate is well formed. The
//! consumers' side (config, compare, report, publish) is walked in
//! `src/registry_coverage_tests.rs`.

use super::*;
use crate::metric::{every_field_measured, every_jmh_field_measured};

#[test]
fn every_entry_reads_the_field_of_its_name() {
    for def in METRICS {
        let m = match def.family {
            Family::Http => every_field_measured(),
            Family::Jmh => every_jmh_field_measured(),
        };
        let json = serde_json::to_value(&m).unwrap();
        let pointer = format!("/{}", def.name.replace('.', "/"));
        let field = json.pointer(&pointer).and_then(|v| v.as_f64());
        assert!(
            field.is_some(),
            "{}: no such field in TrialMetrics",
            def.name
        );
        assert_eq!((def.value)(&m), field, "{}", def.name);
        assert_eq!(m.get(def.name), field, "{}", def.name);
        // A trial of the other family does not measure it.
        let other = match def.family {
            Family::Http => every_jmh_field_measured(),
            Family::Jmh => every_field_measured(),
        };
        assert_eq!(other.get(def.name), None, "{}", def.name);
    }
    assert_eq!(every_field_measured().get("requests"), None, "not a metric");
}

#[test]
fn the_results_schema_describes_every_entry() {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/results.schema.json")).unwrap();
    let defs = &schema["$defs"];
    for def in METRICS {
        let property = match def.name.split_once('.') {
            Some((group, field)) => &defs[group]["properties"][field],
            None => &defs["trial_metrics"]["properties"][def.name],
        };
        assert!(property.is_object(), "{}: not in the schema", def.name);
    }
}

#[test]
fn every_entry_has_a_well_formed_default_gate() {
    for def in METRICS {
        let DefaultGate { fail, warn } = def.gate;
        if let Some(of) = def.anchored_from {
            // Gated by the metric it is derived from, never by its own entry.
            assert_eq!(
                (fail, warn),
                (None, None),
                "{}: a gate of its own",
                def.name
            );
            let raw = metric_def(of).unwrap_or_else(|| panic!("{}: no metric {of}", def.name));
            assert_eq!(raw.direction, def.direction, "{}", def.name);
            assert_eq!(anchored_twin(of).map(|t| t.name), Some(def.name));
            continue;
        }
        assert!(warn.is_some(), "{}: no default warn threshold", def.name);
        for t in [fail, warn].into_iter().flatten() {
            match def.scale {
                Scale::Log => assert!(t.relative > 0.0, "{}", def.name),
                Scale::Absolute => {
                    assert_eq!(t.relative, 0.0, "{}: absolute thresholds only", def.name);
                    assert!(t.absolute.is_some_and(|a| a > 0.0), "{}", def.name);
                }
            }
        }
        if let (Some(f), Some(w)) = (fail, warn) {
            assert!(w.relative <= f.relative, "{}: warn beyond fail", def.name);
            assert!(
                w.absolute.unwrap_or(0.0) <= f.absolute.unwrap_or(0.0),
                "{}: warn floor beyond fail",
                def.name
            );
        }
    }
}

#[test]
fn the_gating_and_published_defaults() {
    let gating: Vec<_> = METRICS
        .iter()
        .filter(|d| d.gate.fail.is_some())
        .map(|d| d.name)
        .collect();
    assert_eq!(
        gating,
        [
            "throughput_rps",
            "latency_p99_us",
            "error_rate",
            "cpu_us_per_request",
            "jmh.ops_per_s",
            "jmh.avgt_ns",
            "jmh.sample_mean_ns",
            "jmh.ss_ns"
        ]
    );
    for def in METRICS.iter().filter(|d| d.cloudwatch.factor != 1.0) {
        match def.family {
            // JMH's times are in ns; CloudWatch's finest unit is the µs.
            Family::Jmh => assert_eq!((def.unit, def.cloudwatch.factor), ("ns/op", 1e-3)),
            Family::Http => assert_eq!((def.name, def.cloudwatch.factor), ("error_rate", 100.0)),
        }
    }
    let absolute: Vec<_> = METRICS
        .iter()
        .filter(|d| d.scale == Scale::Absolute)
        .map(|d| d.name)
        .collect();
    let error_metrics: Vec<_> = METRICS
        .iter()
        .filter(|d| d.name == "error_rate" || d.error_class)
        .map(|d| d.name)
        .collect();
    assert_eq!(absolute, error_metrics);
    let anchored: Vec<_> = METRICS
        .iter()
        .filter_map(|d| Some((d.name, d.anchored_from?)))
        .collect();
    assert_eq!(
        anchored,
        [
            ("throughput_rps_anchored", "throughput_rps"),
            ("cpu_us_per_request_anchored", "cpu_us_per_request")
        ]
    );
}
