//! Every consumer of the metric registry (`metric/registry.rs`) covers every
//! entry: a metric added to the registry is accepted by `[gate]` and
//! `[publish.cloudwatch]`, gated by default, compared, rendered, exported and
//! published with its CloudWatch unit, or a test here names it.

use crate::compare::{compare, gate_for};
use crate::config::gate::default_gate;
use crate::config::publish::default_metrics;
use crate::config::{CloudWatchSettings, Suite};
use crate::metric::Direction;
use crate::metric::METRICS;
use crate::metric::{every_field_measured, every_jmh_field_measured, Family};
use crate::metric::{scale_of, Scale};
use crate::publish::cloudwatch_layout::{layout, unit_of};
use crate::report::escape::md;
use crate::report::export::github_action_benchmark;
use crate::report::markdown::{self, MarkdownOptions};
use crate::report::rows::values;
use crate::results::synthetic;
use crate::results::RunResults;

/// Two scenarios of one client, three trials each with every metric
/// measured: benchgate's own in the first, a JMH file's in the second.
fn run() -> RunResults {
    let mut suite = Suite::default_suite();
    suite.scenarios.truncate(2);
    for s in &mut suite.scenarios {
        s.clients.truncate(1);
    }
    let jmh = suite.scenarios[1].name.clone();
    synthetic::run(suite, 3, move |s, _, _| {
        Some(match s == jmh {
            true => every_jmh_field_measured(),
            false => every_field_measured(),
        })
    })
}

/// The trial that measures `family`'s metrics.
fn measured(family: Family) -> crate::metric::TrialMetrics {
    match family {
        Family::Http => every_field_measured(),
        Family::Jmh => every_jmh_field_measured(),
    }
}

/// A `[gate]` line setting the metric's fail threshold, signed its bad way.
fn gate_line(name: &str) -> String {
    let def = crate::metric::metric_def(name).unwrap();
    let sign = def.direction.worse_sign();
    match def.scale {
        Scale::Log => format!("{name:?} = \"{sign}10%\""),
        Scale::Absolute => format!("{name:?} = \"{sign}1\""),
    }
}

#[test]
fn every_entry_is_accepted_by_the_config() {
    let base = "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/\"\n";
    for def in METRICS {
        if let Some(of) = def.anchored_from {
            // No gate of its own: `[gate]` refuses it and names the one to set.
            let toml = format!("{base}[gate]\n{}\n", gate_line(def.name));
            let err = Suite::from_toml(&toml, "bench.toml")
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("set the thresholds on {of} instead")),
                "{err}"
            );
            let toml = format!("{base}[publish.cloudwatch]\nmetrics = [{:?}]\n", def.name);
            let suite = Suite::from_toml(&toml, "bench.toml").unwrap();
            assert_eq!(
                suite.publish.unwrap().cloudwatch.unwrap().metrics,
                [def.name]
            );
            continue;
        }
        let toml = format!(
            "{base}[gate]\n{}\n[publish.cloudwatch]\nmetrics = [{:?}]\n",
            gate_line(def.name),
            def.name
        );
        let suite =
            Suite::from_toml(&toml, "bench.toml").unwrap_or_else(|e| panic!("{}: {e}", def.name));
        let g = gate_for(&suite.gate, "s", "hyper", def.name).unwrap();
        assert!(g.gating && g.fail.is_some(), "{}", def.name);
        let cw = suite.publish.unwrap().cloudwatch.unwrap();
        assert_eq!(cw.metrics, [def.name]);
    }
}

#[test]
fn every_entry_has_its_default_gate() {
    let gate = default_gate();
    let names: Vec<&str> = gate.metrics.iter().map(|g| g.metric.as_str()).collect();
    let all: Vec<&str> = METRICS
        .iter()
        .filter(|d| d.anchored_from.is_none())
        .map(|d| d.name)
        .collect();
    assert_eq!(
        names, all,
        "one default gate per metric (an anchored figure has its metric's), in registry order"
    );
    for def in METRICS.iter().filter(|d| d.anchored_from.is_none()) {
        let g = gate_for(&gate, "s", "c", def.name).unwrap();
        assert_eq!(
            (g.fail, g.warn),
            (def.gate.fail, def.gate.warn),
            "{}",
            def.name
        );
        assert_eq!(g.gating, def.gate.fail.is_some(), "{}", def.name);
        assert_eq!(scale_of(def.name), def.scale, "{}", def.name);
    }
}

#[test]
fn every_entry_is_compared_and_rendered() {
    let r = run();
    let cmp = compare(Some(&r), &r, &default_gate());
    let out = markdown::render(&cmp, &r, Some(&r), &MarkdownOptions::default());
    for def in METRICS {
        let m = cmp
            .metrics
            .iter()
            .find(|m| m.metric == def.name)
            .unwrap_or_else(|| panic!("{} is not compared", def.name));
        assert_eq!(m.direction, def.direction, "{}", def.name);
        let name = if m.gating {
            format!("**{}**", md(def.name))
        } else {
            md(def.name)
        };
        let row = format!("| {name} | {} |", values(m));
        assert!(!values(m).contains("n/a"), "{}: {}", def.name, values(m));
        assert!(out.contains(&row), "{}: no row {row:?} in\n{out}", def.name);
    }
}

#[test]
fn every_entry_is_published_with_its_unit() {
    let r = run();
    let settings = CloudWatchSettings {
        metrics: METRICS.iter().map(|d| d.name.to_string()).collect(),
        ..CloudWatchSettings::default()
    };
    let now = crate::timer::clock::parse_rfc3339(&r.started_at).unwrap();
    let data = layout(&r, &settings, "main", now).unwrap().data;
    for def in METRICS {
        let unit = (def.cloudwatch.unit, def.cloudwatch.factor);
        assert_eq!(unit_of(def.name), Some(unit), "{}", def.name);
        let datum = data.iter().find(|d| d.metric_name == def.name);
        let datum = datum.unwrap_or_else(|| panic!("{} is not published", def.name));
        assert_eq!(datum.unit, def.cloudwatch.unit, "{}", def.name);
        let value = (def.value)(&measured(def.family)).unwrap();
        assert_eq!(
            datum.values,
            [value * def.cloudwatch.factor],
            "{}",
            def.name
        );
    }
    let by_default: Vec<&str> = METRICS
        .iter()
        .filter(|d| d.cloudwatch.by_default)
        .map(|d| d.name)
        .collect();
    assert_eq!(default_metrics(), by_default);
}

#[test]
fn every_entry_but_error_classes_is_exported() {
    let out = github_action_benchmark(&run());
    for def in METRICS {
        let list = match def.direction {
            Direction::HigherIsBetter => &out.bigger_is_better,
            Direction::LowerIsBetter => &out.smaller_is_better,
        };
        let entry = list
            .iter()
            .find(|e| e.name.ends_with(&format!(" / {}", def.name)));
        if def.error_class {
            assert!(entry.is_none(), "{} is exported", def.name);
        } else {
            let entry = entry.unwrap_or_else(|| panic!("{} is not exported", def.name));
            assert_eq!(entry.unit, def.unit, "{}", def.name);
        }
    }
}
