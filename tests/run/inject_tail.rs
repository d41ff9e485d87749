//! The `inject_tail` knob end to end: a hyper and a reqwest-blocking client
//! delaying 5% of their requests by 20 ms show it in p99 and not in the
//! median, the client without it does not, the results file records the knob
//! (schema-valid), and a knob that is half written is a config error naming
//! the field and the fix.

use crate::common;

use benchgate::config::Suite;
use benchgate::results::RunResults;
use common::{cell, median, run_config};

/// 20 ms: far beyond a loopback p99 (a few hundred µs, a few ms on a busy
/// machine), so the assertions hold on a loaded runner. With 5% delayed, p99
/// falls inside the delayed share; p50 does not.
const SUITE: &str = r#"
[run]
rounds = 2
warmup = "100ms"
duration = "400ms"

[[client]]
name = "plain"
kind = "hyper"

[[client]]
name = "tail"
kind = "hyper"
inject_tail = { share = "5%", delay = "20ms" }

[[client]]
name = "tail-blocking"
kind = "reqwest-blocking"
inject_tail = { share = "5%", delay = "20ms" }

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 4
"#;

const DELAY_US: f64 = 20_000.0;

#[test]
fn a_delayed_share_lifts_p99_and_not_the_median() {
    let run = run_config(SUITE, &["--quiet"]);
    assert!(
        run.output.status.success(),
        "{}",
        String::from_utf8_lossy(&run.output.stderr)
    );
    let r = run.results();
    for client in ["tail", "tail-blocking"] {
        let c = cell(&r, "get", client);
        let (p50, p99) = (median(c, "latency_p50_us"), median(c, "latency_p99_us"));
        eprintln!("{client}: p50 {p50} µs, p99 {p99} µs");
        assert!(
            p99 >= DELAY_US,
            "{client}: p99 {p99} µs under the 20 ms delay"
        );
        assert!(
            p50 < DELAY_US / 2.0,
            "{client}: p50 {p50} µs carries the delay"
        );
    }
    let plain = cell(&r, "get", "plain");
    let p99 = median(plain, "latency_p99_us");
    assert!(p99 < DELAY_US, "plain: p99 {p99} µs");

    // Recorded as set, absent where not set, and schema-valid.
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&run.out).unwrap()).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let clients = doc["config"]["clients"].as_array().unwrap();
    let knob =
        |name: &str| clients.iter().find(|c| c["name"] == name).unwrap()["inject_tail"].clone();
    assert_eq!(
        knob("tail"),
        serde_json::json!({"share_ppm": 50_000, "delay_ns": 20_000_000})
    );
    assert!(knob("plain").is_null());
    let read = RunResults::read(&run.out).unwrap();
    let spec = read.config.client("tail-blocking").unwrap();
    assert_eq!(
        spec.inject_tail.map(|t| (t.share_ppm, t.delay_ns)),
        Some((50_000, 20_000_000))
    );
}

fn load(client: &str) -> Result<Suite, benchgate::config::ConfigError> {
    let text = format!(
        "[[client]]\nname = \"c\"\n{client}\n\n[[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\n"
    );
    Suite::from_toml(&text, "tail.toml")
}

#[test]
fn a_half_written_or_misplaced_knob_is_a_config_error() {
    // The knob is the client table's last line: line 4 (5 for the command).
    let invalid = |client: &str, field: &str, what: &str, fix: &str| {
        let line = 2 + client.lines().count();
        common::config_errors::invalid(load(client), "tail.toml", line, field, what, fix)
    };
    invalid(
        "kind = \"hyper\"\ninject_tail = { share = \"2%\" }",
        "client \"c\".inject_tail",
        "needs both share and delay, got no delay",
        "inject_tail = { share = \"2%\", delay = \"1ms\" }",
    );
    invalid(
        "kind = \"hyper\"\ninject_tail = { share = \"2\", delay = \"1ms\" }",
        "client \"c\".inject_tail.share",
        "not a percentage",
        "share = \"2%\"",
    );
    invalid(
        "kind = \"hyper\"\ninject_tail = { share = \"2%\", delay = \"0ms\" }",
        "client \"c\".inject_tail.delay",
        "must be more than 0",
        "delay = \"1ms\"",
    );
    invalid(
        "kind = \"hyper\"\ninject_tail = { share = \"2%\", delay = \"1ms\", every = \"3\" }",
        "client \"c\".inject_tail.every",
        "unknown key \"every\"",
        "inject_tail = {",
    );
    invalid(
        "kind = \"h1-lean\"\ninject_tail = { share = \"2%\", delay = \"1ms\" }",
        "client \"c\".inject_tail",
        "not available with kind = \"h1-lean\"",
        "kind = \"hyper\"",
    );
    invalid(
        "kind = \"command\"\ncommand = [\"true\"]\ninject_tail = { share = \"2%\", delay = \"1ms\" }",
        "client \"c\".inject_tail",
        "built-in clients only",
        "inside your program",
    );
}
