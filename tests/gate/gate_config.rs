//! `[gate]` and `[compare]` in benchgate.toml: defaults, shorthand and table
//! forms, overrides, and every error naming the line, the field and the fix.

use crate::common;

use benchgate::compare::gate_for;
use benchgate::config::gate::{
    InvalidPolicy, MetricGate, MissingBaseline, NotComparablePolicy, Threshold,
};
use benchgate::config::{ConfigError, Suite};

const FILE: &str = "bench.toml";
const BASE: &str = "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n[[client]]\nname = \"reqwest\"\nkind = \"reqwest\"\n[[scenario]]\nname = \"sha1-8k\"\npath = \"/sha1?size=8192\"\n";
/// Line of the first line after BASE.
const L: usize = 10;

fn load(extra: &str) -> Result<Suite, ConfigError> {
    Suite::from_toml(&format!("{BASE}{extra}"), FILE)
}

#[track_caller]
fn invalid(extra: &str, line: usize, field: &str, what: &str, fix: &str) {
    common::config_errors::invalid(load(extra), FILE, line, field, what, fix);
}

fn gate_of<'a>(s: &'a Suite, metric: &str) -> &'a MetricGate {
    s.gate.metrics.iter().find(|m| m.metric == metric).unwrap()
}

#[test]
fn defaults_gate_the_four_metrics_and_the_jmh_scores() {
    let s = load("").unwrap();
    let gating: Vec<&str> = s
        .gate
        .metrics
        .iter()
        .filter(|m| m.gating)
        .map(|m| m.metric.as_str())
        .collect();
    assert_eq!(
        gating,
        [
            "throughput_rps",
            "latency_p99_us",
            "error_rate",
            "cpu_us_per_request",
            // A JMH result file's primary score, one per mode (only JMH
            // trials carry them: src/results/jmh.rs).
            "jmh.ops_per_s",
            "jmh.avgt_ns",
            "jmh.sample_mean_ns",
            "jmh.ss_ns"
        ]
    );
    assert_eq!(s.gate.alpha, 0.05);
    assert_eq!(s.gate.missing_baseline, MissingBaseline::Neutral);
    assert_eq!(s.gate.not_comparable, NotComparablePolicy::Warn);
    assert_eq!(s.gate.invalid, InvalidPolicy::Warn);
    assert_eq!(s.compare, None);
    // Every metric but the anchored figures, which have their metric's gate.
    let own = benchgate::metric::METRICS
        .iter()
        .filter(|d| d.anchored_from.is_none())
        .count();
    assert_eq!(s.gate.metrics.len(), own);
}

/// `[gate] anchored`: anchored runs compared with a stored run gate on the
/// anchored figures unless it is false; an anchored figure has no `[gate]`
/// entry of its own, and the error names the one to set.
#[test]
fn anchored_key_and_the_anchored_figures() {
    assert!(load("").unwrap().gate.anchored);
    assert!(!load("[gate]\nanchored = false\n").unwrap().gate.anchored);
    invalid(
        "[gate]\nanchored = 1\n",
        L + 1,
        "gate.anchored",
        "a boolean",
        "anchored = false",
    );
    invalid(
        "[gate]\ncpu_us_per_request_anchored = \"+3%\"\n",
        L + 1,
        "gate.cpu_us_per_request_anchored",
        "gates in place of cpu_us_per_request, under cpu_us_per_request's thresholds",
        "set the thresholds on cpu_us_per_request instead",
    );
    invalid(
        "[[gate.override]]\nscenario = \"sha1-8k\"\nthroughput_rps_anchored = \"-3%\"\n",
        L + 2,
        "gate.override[0].throughput_rps_anchored",
        "has no gate of its own",
        "set the thresholds on throughput_rps instead",
    );
}

#[test]
fn the_issue_example_parses() {
    let s = load(
        r#"
[gate]
alpha = 0.01
missing_baseline = "fail"
not_comparable = "fail"
invalid = "fail"
throughput_rps = "-5%"
latency_p99_us = { fail = "+10%", floor = "2ms", warn = "+5%" }
peak_rss_bytes = { fail = "+20%", floor = "1MiB", gating = false }
error_rate = "+0.02"
errors.timeout = { warn = "+3" }
"errors.connect" = "+1"

[[gate.override]]
scenario = "sha1-8k"
latency_p99_us = { fail = "+25%", floor = "5ms" }

[[gate.override]]
client = "reqwest"
throughput_rps = "-8%"

[compare]
baseline_client = "hyper"
"#,
    )
    .unwrap();
    let g = &s.gate;
    assert_eq!(
        (g.alpha, g.missing_baseline, g.not_comparable),
        (0.01, MissingBaseline::Fail, NotComparablePolicy::Fail)
    );
    assert_eq!(g.invalid, InvalidPolicy::Fail);
    let rps = gate_of(&s, "throughput_rps");
    assert_eq!(
        rps.fail,
        Some(Threshold {
            relative: 0.05,
            absolute: None
        })
    );
    assert_eq!((rps.warn, rps.gating), (None, true));
    let p99 = gate_of(&s, "latency_p99_us");
    assert_eq!(
        p99.fail,
        Some(Threshold {
            relative: 0.10,
            absolute: Some(2000.0)
        })
    );
    assert_eq!(
        p99.warn,
        Some(Threshold {
            relative: 0.05,
            absolute: Some(2000.0)
        })
    );
    let rss = gate_of(&s, "peak_rss_bytes");
    assert_eq!(rss.fail.unwrap().absolute, Some(1048576.0));
    assert!(!rss.gating);
    assert_eq!(
        gate_of(&s, "error_rate").fail,
        Some(Threshold {
            relative: 0.0,
            absolute: Some(0.02)
        })
    );
    assert_eq!(
        gate_of(&s, "errors.timeout").warn.unwrap().absolute,
        Some(3.0)
    );
    assert_eq!(
        gate_of(&s, "errors.connect").fail.unwrap().absolute,
        Some(1.0)
    );
    assert_eq!(g.overrides.len(), 2);
    let p99 = gate_for(g, "sha1-8k", "hyper", "latency_p99_us").unwrap();
    assert_eq!(
        p99.fail,
        Some(Threshold {
            relative: 0.25,
            absolute: Some(5000.0)
        })
    );
    assert_eq!(
        gate_for(g, "sha1-8k", "reqwest", "throughput_rps")
            .unwrap()
            .fail
            .unwrap()
            .relative,
        0.08
    );
    assert_eq!(
        gate_for(g, "sha1-8k", "hyper", "throughput_rps")
            .unwrap()
            .fail
            .unwrap()
            .relative,
        0.05
    );
    assert_eq!(s.compare.unwrap().baseline_client.as_deref(), Some("hyper"));
}

#[test]
fn gate_errors_name_the_line_field_and_fix() {
    invalid(
        "[gate]\nthroughput_rps = \"+5%\"\n",
        L + 1,
        "gate.throughput_rps",
        "gets worse as it falls",
        "write \"-5%\"",
    );
    invalid(
        "[gate]\nlatency_p99_us = { fail = \"-10%\" }\n",
        L + 1,
        "gate.latency_p99_us.fail",
        "points the wrong way",
        "\"+10%\"",
    );
    invalid(
        "[gate]\nlatency_p99_us = \"10%\"\n",
        L + 1,
        "gate.latency_p99_us",
        "has no sign",
        "write \"+10%\"",
    );
    invalid(
        "[gate]\nlatency_p99_us = \"+2ms\"\n",
        L + 1,
        "gate.latency_p99_us",
        "not a threshold",
        "floor",
    );
    invalid(
        "[gate]\nlatency_p99_us = \"+lots%\"\n",
        L + 1,
        "gate.latency_p99_us",
        "not a number",
        "+10%",
    );
    invalid(
        "[gate]\nerror_rate = \"+1%\"\n",
        L + 1,
        "gate.error_rate",
        "not a threshold",
        "absolute difference",
    );
    invalid(
        "[gate]\nerror_rate = { fail = \"+0.01\", floor = 2 }\n",
        L + 1,
        "gate.error_rate.floor",
        "takes no floor",
        "remove floor",
    );
    invalid(
        "[gate]\nlatency_p99_us = { fail = \"+10%\", floor = 2 }\n",
        L + 1,
        "gate.latency_p99_us.floor",
        "expected a duration",
        "\"2ms\"",
    );
    invalid(
        "[gate]\nlatency_p99_us = { fail = \"+10%\", floor = \"2 parsecs\" }\n",
        L + 1,
        "gate.latency_p99_us.floor",
        "unknown unit",
        "",
    );
    invalid(
        "[gate]\npeak_rss_bytes = { fail = \"+10%\", floor = \"1XB\" }\n",
        L + 1,
        "gate.peak_rss_bytes.floor",
        "unknown size unit",
        "",
    );
    invalid(
        "[gate]\nlatency_p99_us = { floor = \"2ms\" }\n",
        L + 1,
        "gate.latency_p99_us",
        "sets no threshold",
        "fail = \"+10%\"",
    );
    invalid(
        "[gate]\nlatency_p99_us = { fail = \"+5%\", warn = \"+10%\" }\n",
        L + 1,
        "gate.latency_p99_us.warn",
        "beyond the fail threshold",
        "closer to 0",
    );
    invalid(
        "[gate]\npeak_threads = { warn = \"+10%\", gating = true }\n",
        L + 1,
        "gate.peak_threads.gating",
        "needs a fail threshold",
        "add fail",
    );
    invalid(
        "[gate]\npeak_threads = { fail = \"+10%\", gating = \"no\" }\n",
        L + 1,
        "gate.peak_threads.gating",
        "expected a boolean",
        "gating = false",
    );
    invalid(
        "[gate]\npeak_threads = { fail = \"+10%\", tier = 2 }\n",
        L + 1,
        "gate.peak_threads.tier",
        "unknown field",
        "fail, warn, floor, gating",
    );
    invalid(
        "[gate]\nlatency_p99 = \"+10%\"\n",
        L + 1,
        "gate.latency_p99",
        "unknown field",
        "did you mean `latency_p99_us`?",
    );
    invalid(
        "[gate]\nerrors.teapot = \"+1\"\n",
        L + 1,
        "gate.errors.teapot",
        "unknown field",
        "errors.timeout",
    );
    invalid(
        "[gate]\nthroughput_rps = 5\n",
        L + 1,
        "gate.throughput_rps",
        "expected a threshold string",
        "throughput_rps = \"-5%\"",
    );
    invalid(
        "[gate]\nalpha = 0.9\n",
        L + 1,
        "gate.alpha",
        "at most 0.5",
        "alpha = 0.05",
    );
    invalid(
        "[gate]\nalpha = \"5%\"\n",
        L + 1,
        "gate.alpha",
        "expected a number",
        "alpha = 0.05",
    );
    invalid(
        "[gate]\nmissing_baseline = \"ignore\"\n",
        L + 1,
        "gate.missing_baseline",
        "unknown value",
        "\"neutral\", \"fail\"",
    );
    invalid(
        "[gate]\nnot_comparable = \"pass\"\n",
        L + 1,
        "gate.not_comparable",
        "unknown value",
        "\"warn\", \"fail\"",
    );
    invalid(
        "[gate]\ninvalid = \"ignore\"\n",
        L + 1,
        "gate.invalid",
        "unknown value",
        "\"warn\", \"fail\"",
    );
}

#[test]
fn override_errors() {
    let err = Suite::from_toml(&format!("gate = 3\n{BASE}"), FILE).unwrap_err();
    assert_eq!(common::config_errors::field(&err), Some("gate"), "{err}");
    assert!(err.to_string().contains("expected a table"), "{err}");
    invalid(
        "[[gate.override]]\nscenario = \"sha1-16k\"\n",
        L + 1,
        "gate.override[0].scenario",
        "no scenario is named \"sha1-16k\"",
        "add a [[scenario]]",
    );
    invalid(
        "[[gate.override]]\nclient = \"curl\"\n",
        L + 1,
        "gate.override[0].client",
        "no client is named \"curl\"",
        "use one of the defined names",
    );
    invalid(
        "[[gate.override]]\nthroughput_rps = \"-5%\"\n",
        L,
        "gate.override[0].scenario",
        "needs a scenario, a client or both",
        "scenario = ",
    );
    invalid(
        "[[gate.override]]\nclient = \"hyper\"\nalpha = 0.1\n",
        L + 2,
        "gate.override[0].alpha",
        "unknown field",
        "allowed",
    );
    invalid(
        "[[gate.override]]\nclient = \"hyper\"\nthroughput_rps = \"+5%\"\n",
        L + 2,
        "gate.override[0].throughput_rps",
        "wrong way",
        "\"-5%\"",
    );
    invalid(
        "[gate]\noverride = 1\n",
        L + 1,
        "gate.override",
        "expected an array of tables",
        "[[gate.override]]",
    );
}

#[test]
fn compare_errors() {
    invalid(
        "[compare]\nbaseline_client = \"apache4\"\n",
        L + 1,
        "compare.baseline_client",
        "no client is named \"apache4\"",
        "add a [[client]]",
    );
    invalid(
        "[compare]\nbaseline_clients = \"hyper\"\n",
        L + 1,
        "compare.baseline_clients",
        "unknown field",
        "did you mean `baseline_client`?",
    );
    invalid(
        "[compare]\n",
        L,
        "compare.baseline_client",
        "missing required field",
        "baseline_client = ",
    );
    invalid(
        "[compare]\nbaseline_client = 1\n",
        L + 1,
        "compare.baseline_client",
        "expected a string",
        "baseline_client = \"hyper\"",
    );
}

#[test]
fn inject_cpu_us_knob() {
    let s = Suite::from_toml("[[client]]\nname = \"h\"\nkind = \"hyper\"\ninject_cpu_us = 50\n[[scenario]]\nname = \"s\"\npath = \"/\"\n", FILE).unwrap();
    assert_eq!(s.clients[0].inject_cpu_ns, 50_000);
    let err = Suite::from_toml("[[client]]\nname = \"h\"\nkind = \"hyper\"\ninject_cpu_us = -1\n[[scenario]]\nname = \"s\"\npath = \"/\"\n", FILE).unwrap_err();
    assert_eq!(
        common::config_errors::field(&err),
        Some("client \"h\".inject_cpu_us"),
        "{err}"
    );
    assert_eq!(common::config_errors::location(&err).unwrap().0, 4);
}

#[test]
fn paired_test_key() {
    use benchgate::config::gate::PairedTest;
    assert_eq!(load("").unwrap().gate.paired_test, PairedTest::SignedRank);
    for (value, test) in [
        ("signed-rank", PairedTest::SignedRank),
        ("sign", PairedTest::Sign),
    ] {
        let s = load(&format!("[gate]\npaired_test = \"{value}\"\n")).unwrap();
        assert_eq!(s.gate.paired_test, test, "{value}");
    }
    // The error names both choices.
    for bad in ["\"wilcoxon\"", "\"Sign\""] {
        invalid(
            &format!("[gate]\npaired_test = {bad}\n"),
            L + 1,
            "gate.paired_test",
            "unknown value",
            "use one of \"signed-rank\", \"sign\"",
        );
    }
    invalid(
        "[gate]\npaired_test = 1\n",
        L + 1,
        "gate.paired_test",
        "expected a string",
        "use one of \"signed-rank\", \"sign\"",
    );
}

#[test]
fn strict_key() {
    assert!(!load("").unwrap().gate.strict);
    assert!(load("[gate]\nstrict = true\n").unwrap().gate.strict);
    assert!(!load("[gate]\nstrict = false\n").unwrap().gate.strict);
    invalid(
        "[gate]\nstrict = \"yes\"\n",
        L + 1,
        "gate.strict",
        "expected a boolean",
        "strict = true",
    );
}

/// A side-by-side config of 4 rounds can never reach p <= 0.05: `run` warns
/// and measures; under `[gate] strict = true` it stops before measuring,
/// exit 2, with the same reason and the fix.
#[test]
fn strict_turns_an_unreachable_alpha_into_an_error_before_measuring() {
    let config = |strict: &str| {
        format!(
            "[run]\nrounds = 4\nmax_rounds = 4\nwarmup = \"20ms\"\nduration = \"60ms\"\n{BASE}[compare]\nbaseline_client = \"hyper\"\n[gate]\n{strict}"
        )
    };
    let why = "a comparison paired by round (side by side, base vs head) of 4 rounds can reach p = 0.125 at best, never p <= 0.05 ([gate] alpha)";
    let warned = common::run_config(&config(""), &[]);
    let stderr = String::from_utf8_lossy(&warned.output.stderr);
    assert!(stderr.contains("benchgate: warning: "), "{stderr}");
    assert!(stderr.contains(why), "{stderr}");
    assert!(
        warned.out.exists(),
        "the run without strict measures: {stderr}"
    );

    let refused = common::run_config(&config("strict = true\n"), &[]);
    let stderr = String::from_utf8_lossy(&refused.output.stderr);
    assert_eq!(refused.output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(why), "{stderr}");
    assert!(
        stderr.contains("set [run] rounds (or max_rounds) to 6 or more")
            && stderr.contains("[gate] strict = true makes this an error"),
        "{stderr}"
    );
    assert!(!refused.out.exists(), "strict stops before measuring");
}
