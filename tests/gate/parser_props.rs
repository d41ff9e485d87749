//! Property tests of the parsers that read outside input (issue 17, point 9):
//! config TOML, results files, command-client result files and event payloads,
//! fed valid documents with random parts replaced or removed, and random text.
//! None may panic; every refusal names the input (or, where the caller names
//! the file, the field). Bounded case counts: the binary runs in seconds.

use benchgate::action::event::{parse_event, Event};
use benchgate::config::Suite;
use benchgate::orchestrate::external;
use benchgate::results::RunResults;

use crate::common::{self, synthetic};
use proptest::prelude::*;
use serde_json::{json, Value};

const MINIMAL: &str = "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\n[[scenario]]\nname = \"s\"\npath = \"/bytes/22\"\n";

/// TOML lines that a config could plausibly hold, edges and wrong types included.
fn toml_line() -> impl Strategy<Value = String> {
    let header = prop::sample::select(vec![
        "[run]",
        "[gate]",
        "[[client]]",
        "[[scenario]]",
        "[[server]]",
        "[compare]",
        "[publish]",
        "[gate.override]",
        "[[gate.override]]",
        "[scenario]",
        "[client.x]",
    ])
    .prop_map(str::to_string);
    let key = prop::sample::select(vec![
        "rounds",
        "max_rounds",
        "pin",
        "name",
        "kind",
        "path",
        "rate",
        "concurrency",
        "requests",
        "warmup",
        "duration",
        "timeout",
        "alpha",
        "body",
        "method",
        "pool",
        "http",
        "inject_cpu_us",
        "url",
        "command",
        "env",
        "cwd",
        "setup",
        "clients",
        "throughput_rps",
        "latency_p99_us",
        "missing_baseline",
        "base",
        "max_in_flight",
        "ready",
        "tls",
        "storage_resolution",
        "namespace",
        "x",
    ]);
    let value = prop::sample::select(vec![
        "0",
        "-1",
        "1",
        "100",
        "9223372036854775807",
        "-9223372036854775808",
        "1e308",
        "nan",
        "-inf",
        "+inf",
        "-0.0",
        "true",
        "\"\"",
        "\"x\"",
        "\"hyper\"",
        "\"5%\"",
        "\"-NaN%\"",
        "\"+inf%\"",
        "\"1e400ms\"",
        "\"99999999999GiB\"",
        "\"-3s\"",
        "[]",
        "[1, \"a\"]",
        "[\"hyper\"]",
        "{}",
        "{ fail = \"+10%\", floor = nan }",
        "{ fail = \"-5%\", warn = \"-900%\" }",
        "\"\\u0000\"",
        "\"/bytes/99999999999999999999\"",
        "\"http://127.0.0.1:0/\"",
        "\"git\"",
        "1979-05-27",
        "'''\n'''",
    ]);
    prop_oneof![header, (key, value).prop_map(|(k, v)| format!("{k} = {v}")),]
}

/// A JSON value that is wrong somewhere: edges of every type.
fn json_value() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        Value::Null,
        json!(-1),
        json!(0),
        json!(1.5e308),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(""),
        json!("x"),
        json!("x".repeat(300)),
        json!([]),
        json!({}),
        json!(true),
        json!([[[[[]]]]]),
        json!({"x": {"y": [1, "2"]}}),
        json!("HISTv2 not base64 !!"),
        json!("HBKJcwAAAAAAAAA="),
        json!(1e-300),
        json!(-0.0),
    ])
}

/// Replaces (or, with `remove`, deletes) the part of `doc` that `choices` lead to.
fn mutate(doc: &mut Value, choices: &[usize], new: Value, remove: bool) {
    let Some((c, rest)) = choices.split_first() else {
        *doc = new;
        return;
    };
    match doc {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(c % map.len()).unwrap().clone();
            if rest.is_empty() && remove {
                map.remove(&key);
            } else {
                mutate(map.get_mut(&key).unwrap(), rest, new, remove);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let i = c % items.len();
            if rest.is_empty() && remove {
                items.remove(i);
            } else {
                mutate(&mut items[i], rest, new, remove);
            }
        }
        _ => *doc = new,
    }
}

fn mutation() -> impl Strategy<Value = (Vec<usize>, Value, bool)> {
    (
        prop::collection::vec(any::<usize>(), 1..7),
        json_value(),
        any::<bool>(),
    )
}

fn results_doc() -> Value {
    let suite = Suite::from_toml(MINIMAL, "bench.toml").unwrap();
    let r = synthetic::run(suite, 2, |_, _, _| {
        Some(common::measured::every_field_measured())
    });
    serde_json::to_value(&r).unwrap()
}

fn chars(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..max).prop_map(|v| v.into_iter().collect())
}

#[track_caller]
fn config_outcome(text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = Suite::from_toml(text, "bench.toml") {
        let shown = e.to_string();
        prop_assert!(shown.starts_with("bench.toml:"), "{}", shown);
        prop_assert!(common::config_errors::location(&e).is_some(), "{}", shown);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn configs_with_random_lines_never_panic_and_errors_name_the_file(
        lines in prop::collection::vec(toml_line(), 0..12), keep_minimal in any::<bool>()
    ) {
        let base = if keep_minimal { MINIMAL } else { "" };
        config_outcome(&format!("{base}{}\n", lines.join("\n")))?;
    }

    #[test]
    fn random_text_as_config_never_panics(text in chars(200)) {
        config_outcome(&text)?;
        config_outcome(&format!("{MINIMAL}{text}"))?;
    }

    #[test]
    fn mutated_results_files_are_refused_with_the_source_or_round_trip(
        (choices, new, remove) in mutation()
    ) {
        let mut doc = results_doc();
        mutate(&mut doc, &choices, new, remove);
        match RunResults::parse_bytes(doc.to_string().as_bytes(), "results.json") {
            Err(e) => {
                let shown = format!("{e:#}");
                prop_assert!(shown.contains("results.json"), "{}", shown);
            }
            // What is accepted is what benchgate itself would write and read back.
            Ok(r) => {
                let again = serde_json::to_string(&r).unwrap();
                prop_assert!(RunResults::parse_bytes(again.as_bytes(), "again.json").is_ok());
            }
        }
    }

    #[test]
    fn random_text_as_results_never_panics(text in chars(200)) {
        let shown = format!("{:#}", RunResults::parse_bytes(text.as_bytes(), "results.json").unwrap_err());
        prop_assert!(shown.contains("results.json"), "{}", shown);
    }

    #[test]
    fn mutated_client_result_files_are_refused_or_consistent(
        (choices, new, remove) in mutation(), bytes in prop::collection::vec(any::<u8>(), 0..64)
    ) {
        let mut doc = json!({"benchgate_result": 1, "requests": 10, "ok": 9,
            "errors": {"read": 1}, "elapsed_s": 1.5, "latency_us": [1, 2, 3]});
        mutate(&mut doc, &choices, new, remove);
        for input in [doc.to_string().into_bytes(), bytes.clone()] {
            match external::parse(&input) {
                Err(e) => prop_assert!(!e.is_empty()),
                Ok(r) => {
                    prop_assert_eq!(r.requests, r.ok + r.errors.total());
                    prop_assert!(r.elapsed_s.is_finite() && r.elapsed_s > 0.0);
                }
            }
        }
    }

    #[test]
    fn mutated_event_payloads_name_the_field_or_parse_to_valid_shas(
        (choices, new, remove) in mutation(),
        which in 0usize..3,
        name in prop::sample::select(vec!["pull_request", "pull_request_target", "push", "workflow_run", "schedule", "other"]),
    ) {
        let fixture = ["pull_request.json", "push_main.json", "workflow_run.json"][which];
        let path = format!("{}/fixtures/events/{fixture}", env!("CARGO_MANIFEST_DIR"));
        let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        mutate(&mut doc, &choices, new, remove);
        match parse_event(name, &doc) {
            Err(e) => {
                let shown = format!("{e:#}");
                prop_assert!(shown.contains('`') || shown.contains("not a JSON object"), "{}", shown);
            }
            Ok((Event::PullRequest(pr) | Event::PullRequestTarget(pr), _)) => {
                for sha in [&pr.base_sha, &pr.head_sha] {
                    prop_assert!(sha.len() >= 7 && sha.bytes().all(|b| b.is_ascii_hexdigit()), "{}", sha);
                }
            }
            Ok(_) => {}
        }
    }
}
