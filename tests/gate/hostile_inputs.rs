//! Hostile inputs found by fuzzing the parsers that read outside input (issue 17,
//! point 9; the property tests are in tests/gate/parser_props.rs), kept as regular
//! tests: each says what happens, a clear error that names the input and the
//! fix, or a defined acceptance.

use benchgate::action::event::parse_event;
use benchgate::config::{Suite, MAX_CONFIG_BYTES};
use benchgate::measure::histogram::MAX_TOTAL_COUNT;
use benchgate::measure::LatencyHistogram;
use benchgate::orchestrate::external;
use benchgate::results::check::{MAX_CELLS, MAX_NAME_BYTES};
use benchgate::results::{RunResults, MAX_RESULTS_BYTES};

use crate::common::synthetic;
use serde_json::{json, Value};

const FILE: &str = "bench.toml";
const MINIMAL: &str = "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\n[[scenario]]\nname = \"s\"\npath = \"/bytes/22\"\n";

/// The error text of a config that must be rejected.
#[track_caller]
fn config_err(text: &str) -> String {
    Suite::from_toml(text, FILE)
        .expect_err("config should be rejected")
        .to_string()
}

/// Asserts that `shown` contains every part.
#[track_caller]
fn says(shown: &str, parts: &[&str]) {
    for p in parts {
        assert!(shown.contains(p), "{p:?} missing from: {shown}");
    }
}

#[test]
fn a_config_that_is_not_utf8_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.toml");
    std::fs::write(&path, b"[[client]]\nname = \"h\xe9\"\nkind = \"hyper\"\n").unwrap();
    let shown = Suite::from_file(&path).unwrap_err().to_string();
    says(
        &shown,
        &[
            &path.display().to_string(),
            "not UTF-8",
            "byte 20",
            "save the file as UTF-8",
        ],
    );
}

#[test]
fn a_config_with_a_utf8_bom_loads_like_one_without() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom.toml");
    std::fs::write(&path, format!("\u{feff}{MINIMAL}")).unwrap();
    let with_bom = Suite::from_file(&path).expect("a BOM is allowed");
    let shown = path.display().to_string();
    assert_eq!(with_bom, Suite::from_toml(MINIMAL, &shown).unwrap());
    // A BOM anywhere else is a syntax error at its position.
    let shown = config_err(&format!("{MINIMAL}\u{feff}"));
    says(&shown, &["bench.toml:8:", "TOML syntax error"]);
}

#[test]
fn a_directory_as_config_path_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let shown = Suite::from_file(dir.path()).unwrap_err().to_string();
    says(
        &shown,
        &[
            &dir.path().display().to_string(),
            "is a directory",
            "pass the path of the TOML config file",
        ],
    );
}

#[test]
fn an_endless_or_oversized_config_file_is_refused_unread() {
    // A pull request may commit bench.toml as a symlink to /dev/zero: a
    // device, refused before reading.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.toml");
    std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
    let shown = Suite::from_file(&path).unwrap_err().to_string();
    says(
        &shown,
        &[
            &path.display().to_string(),
            "is a character device, not a file",
            "pass the path of the TOML config file",
        ],
    );
    let path = dir.path().join("big.toml");
    std::fs::write(&path, vec![b'#'; MAX_CONFIG_BYTES as usize + 1]).unwrap();
    let shown = Suite::from_file(&path).unwrap_err().to_string();
    says(
        &shown,
        &[
            &path.display().to_string(),
            &format!("over the {MAX_CONFIG_BYTES} byte limit"),
        ],
    );
}

/// A config refused as it is read says why once, shown as the command line
/// shows an error (with its chain of causes).
#[test]
fn a_config_refused_unread_says_its_reason_once() {
    let dir = tempfile::tempdir().unwrap();
    let (big, latin1) = (dir.path().join("big.toml"), dir.path().join("l.toml"));
    std::fs::write(&big, vec![b'#'; MAX_CONFIG_BYTES as usize + 1]).unwrap();
    std::fs::write(&latin1, b"# caf\xe9\n").unwrap();
    let cases = [
        (dir.path().join("missing.toml"), "No such file or directory"),
        (dir.path().to_path_buf(), "is a directory"),
        (big, "byte limit"),
    ];
    for (path, why) in cases {
        let shown = format!(
            "{:#}",
            anyhow::Error::new(Suite::from_file(&path).unwrap_err())
        );
        assert_eq!(shown.matches(why).count(), 1, "{shown}");
    }
    let shown = format!(
        "{:#}",
        anyhow::Error::new(Suite::from_file(&latin1).unwrap_err())
    );
    assert_eq!(shown.matches("not UTF-8").count(), 1, "{shown}");
}

#[test]
fn integers_beyond_i64_and_at_its_edges_name_the_field_and_the_range() {
    let shown = config_err(&format!("[run]\nrounds = 9223372036854775808\n{MINIMAL}"));
    says(
        &shown,
        &["bench.toml:2:10: TOML syntax error", "number too large"],
    );
    for edge in ["9223372036854775807", "-9223372036854775808"] {
        let shown = config_err(&format!("[run]\nrounds = {edge}\n{MINIMAL}"));
        says(
            &shown,
            &[
                "bench.toml:2:10: run.rounds: must be from 1 to 100",
                edge,
                "like rounds = 5",
            ],
        );
    }
    let shown = config_err(&format!("{MINIMAL}concurrency = 9223372036854775807\n"));
    says(
        &shown,
        &[
            "bench.toml:8:15: scenario \"s\".concurrency",
            &format!("set at most {}", benchgate::config::validate::MAX_WORKERS),
        ],
    );
    let shown = config_err(&format!("{MINIMAL}rate = 9223372036854775807\n"));
    says(
        &shown,
        &[
            "scenario \"s\".rate",
            "at most 1000000",
            "set a rate like rate = 2000",
        ],
    );
}

#[test]
fn nan_and_infinite_thresholds_are_refused() {
    let gate = |line: &str| config_err(&format!("{MINIMAL}[gate]\n{line}\n"));
    says(
        &gate("alpha = nan"),
        &["bench.toml:9:9: gate.alpha", "got NaN", "set alpha = 0.05"],
    );
    says(&gate("alpha = inf"), &["gate.alpha", "got inf"]);
    says(
        &gate("throughput_rps = { fail = \"-NaN%\" }"),
        &[
            "gate.throughput_rps.fail",
            "\"-NaN%\" is not a number",
            "write it like \"-5%\"",
        ],
    );
    says(
        &gate("throughput_rps = { fail = nan }"),
        &[
            "gate.throughput_rps.fail",
            "expected a string, found a float NaN",
        ],
    );
    says(
        &gate("latency_p99_us = { fail = \"+inf%\" }"),
        &["gate.latency_p99_us.fail", "\"+inf%\" is not a number"],
    );
    says(
        &gate("throughput_rps = { fail = \"-5%\", floor = nan }"),
        &["gate.throughput_rps.floor", "must be 0 or more, got NaN"],
    );
    says(
        &gate("latency_p99_us = { fail = \"+10%\", floor = \"1e400ms\" }"),
        &[
            "gate.latency_p99_us.floor",
            "unknown unit",
            "like floor = \"2ms\"",
        ],
    );
    says(
        &config_err(&format!("{MINIMAL}rate = nan\n")),
        &["scenario \"s\".rate", "got NaN"],
    );
}

/// A valid results document (one cell, one trial) as JSON.
fn results_doc() -> Value {
    let suite = Suite::from_toml(MINIMAL, FILE).unwrap();
    let r = synthetic::run(suite, 1, |_, _, _| {
        Some(synthetic::metrics(1e3, 100.0, 10.0))
    });
    serde_json::to_value(&r).unwrap()
}

#[track_caller]
fn results_err(doc: &Value) -> String {
    let e = RunResults::parse_bytes(doc.to_string().as_bytes(), "results.json")
        .expect_err("should be rejected");
    format!("{e:#}")
}

#[test]
fn a_results_file_with_a_repeated_cell_is_refused() {
    let mut doc = results_doc();
    RunResults::parse_bytes(doc.to_string().as_bytes(), "results.json")
        .expect("the original is valid");
    let cell = doc["results"][0].clone();
    doc["results"].as_array_mut().unwrap().push(cell);
    says(
        &results_err(&doc),
        &[
            "results.json: results[1] (scenario \"s\", client \"hyper\") repeats an earlier cell",
            "re-run the benchmark",
        ],
    );
}

#[test]
fn a_results_file_with_100_000_cells_is_refused_before_it_is_deserialized() {
    let mut doc = results_doc();
    doc["results"] = Value::Array(vec![json!({}); 100_000]);
    let started = std::time::Instant::now();
    says(
        &results_err(&doc),
        &[
            "results.json: results has 100000 cells",
            &format!("over the limit of {MAX_CELLS}"),
        ],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn megabyte_names_and_keys_in_a_results_file_are_refused() {
    let big = "x".repeat(1 << 20);
    for name in ["scenario", "client", "server"] {
        let mut doc = results_doc();
        doc["results"][0][name] = json!(big);
        says(
            &results_err(&doc),
            &[
                &format!("results[0].{name} has 1048576 bytes"),
                &format!("limit of {MAX_NAME_BYTES}"),
            ],
        );
    }
    let mut doc = results_doc();
    doc["results"][0]["summary"][big.as_str()] = json!({});
    says(
        &results_err(&doc),
        &["the key starting \"xxxx", "has 1048576 bytes"],
    );
}

#[test]
fn an_endless_or_oversized_results_file_is_refused_unread() {
    // A fork's artifact may hold its results file as a symlink to /dev/zero
    // (its size reads 0): a device, refused before reading.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("benchgate-results.json");
    std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
    let started = std::time::Instant::now();
    let shown = format!("{:#}", RunResults::read(&path).unwrap_err());
    says(
        &shown,
        &[
            &format!("results file {}", path.display()),
            "is a character device, not a file",
        ],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // A sparse file over the limit: refused by its size.
    let path = dir.path().join("big.json");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(MAX_RESULTS_BYTES + 1).unwrap();
    let shown = format!("{:#}", RunResults::read(&path).unwrap_err());
    says(
        &shown,
        &[
            &format!("results file {}", path.display()),
            &format!("over the {MAX_RESULTS_BYTES} byte limit"),
            "is it really a benchgate results file?",
        ],
    );
}

#[test]
fn events_with_wrong_types_name_the_field() {
    let pr = |number: Value, sha: Value| {
        json!({"pull_request": {"number": number,
            "base": {"ref": "main", "sha": sha},
            "head": {"ref": "x", "sha": "2222222"}}})
    };
    let err = |name: &str, p: &Value| format!("{:#}", parse_event(name, p).unwrap_err());
    let fix = "pass the runner's own event file (GITHUB_EVENT_PATH)";
    for number in [json!("42"), json!(-1), json!(4.2), json!(null), json!([42])] {
        says(
            &err("pull_request", &pr(number, json!("1111111"))),
            &["has no number `number`", fix],
        );
    }
    says(
        &err("pull_request_target", &pr(json!(1), json!(1111111))),
        &["has no string `pull_request.base.sha`", fix],
    );
    says(
        &err("pull_request", &pr(json!(1), json!("zz; rm -rf"))),
        &["`pull_request.base.sha` is not a commit sha"],
    );
    says(
        &err("push", &json!({"ref": 5, "after": "abc"})),
        &["has no string `ref`", fix],
    );
    says(
        &err("workflow_run", &json!({"workflow_run": {"id": 1.5}})),
        &["has no number `workflow_run.id`"],
    );
    for not_object in [json!([]), json!("push"), json!(null), json!(1)] {
        says(&err("push", &not_object), &["is not a JSON object"]);
    }
    // `deleted` of the wrong type reads as not deleted; an unknown event is passed on by name.
    let (e, _) = parse_event("push", &json!({"ref": "r", "after": "a", "deleted": "yes"})).unwrap();
    assert!(format!("{e:?}").contains("deleted: false"), "{e:?}");
    assert!(format!("{:?}", parse_event("\u{0}\n::x", &json!({})).unwrap().0).contains("Other"));
}

#[test]
fn client_result_files_with_wrong_types_and_overflow_name_the_field() {
    let err = |b: &str| external::parse(b.as_bytes()).map(|_| ()).unwrap_err();
    let head = r#""benchgate_result":1,"elapsed_s":1"#;
    says(
        &err(&format!("{{{head},\"requests\":1e30,\"ok\":1}}")),
        &["`requests` must be a non-negative integer, found 1e+30"],
    );
    says(
        &err(&format!("{{{head},\"requests\":18446744073709551615,\"ok\":18446744073709551615,\"errors\":{{\"read\":1}}}}")),
        &["must equal `ok` (18446744073709551615) plus the errors (1)"],
    );
    says(
        &err(&format!(
            "{{{head},\"requests\":1,\"ok\":1,\"latency_us\":[-1]}}"
        )),
        &["`latency_us[0]` must be an integer"],
    );
    says(
        &err(&format!(
            "{{{head},\"requests\":1,\"ok\":1,\"benchgate_result\":1}}"
        )),
        &["duplicate field `benchgate_result`"],
    );
    says(
        &err(&format!(
            "{{{head},\"requests\":1,\"ok\":1,\"errors\":{{\"read\":\"1\"}}}}"
        )),
        &["`errors.read` must be a non-negative integer"],
    );
    says(&err("\u{feff}{}"), &["is not a benchgate result"]);
    says(
        &err(&"[".repeat(100_000)),
        &["is not a benchgate result", "recursion limit"],
    );
}

/// fixtures/results seed the results fuzz target (scripts/fuzz.sh): they must
/// stay files this benchgate reads, histograms included, or the fuzzer starts
/// from inputs it refuses at the first check.
#[test]
fn the_results_fixtures_parse_and_their_histograms_decode() {
    let dir = format!("{}/fixtures/results", env!("CARGO_MANIFEST_DIR"));
    let mut histograms = 0;
    for name in ["two-clients.json", "every-field.json"] {
        let path = format!("{dir}/{name}");
        let text = std::fs::read_to_string(&path).unwrap();
        let r = RunResults::parse_bytes(text.as_bytes(), &path).unwrap_or_else(|e| panic!("{e:#}"));
        for cell in &r.results {
            for h in [&cell.histogram, &cell.histogram_uncorrected]
                .into_iter()
                .flatten()
            {
                assert!(!LatencyHistogram::decode(h).unwrap().is_empty(), "{path}");
                histograms += 1;
            }
        }
    }
    assert_eq!(
        histograms, 7,
        "two-clients.json: 4 cells, 2 of them open loop; every-field.json: 1 cell"
    );
}

/// base64 of a compressed V2 histogram (benchgate's bounds) with `count` at
/// each of `values`, as a crafted file would carry it.
fn histogram_with_counts(values: &[u64], count: u64) -> String {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for &v in values {
        h.record_n(v, count).unwrap();
    }
    let mut blob = Vec::new();
    V2DeflateSerializer::new().serialize(&h, &mut blob).unwrap();
    base64::engine::general_purpose::STANDARD.encode(blob)
}

/// Found by fuzzing (fuzz target `histogram`): counts that add up past 2^64
/// decoded, then overflowed in hdrhistogram's percentile sum.
#[test]
fn histogram_counts_adding_up_past_u64_are_refused() {
    let text = histogram_with_counts(&[100, 200, 300, 400], 1 << 62);
    let e = LatencyHistogram::decode(&text).expect_err("2^64 values");
    says(
        &e,
        &[
            "not a benchgate histogram",
            "its counts add up to more than 2^64 values",
            &format!("the limit is {MAX_TOTAL_COUNT}"),
        ],
    );
    let e = LatencyHistogram::decode(&histogram_with_counts(&[100, 200], 1 << 48)).unwrap_err();
    says(&e, &["add up to 562949953421312 values, over the limit"]);
    // In a fork's results file, the report says which cell's histogram.
    let mut doc = results_doc();
    doc["results"][0]["histogram"] = json!(text);
    let run = RunResults::parse_bytes(doc.to_string().as_bytes(), "results.json").unwrap();
    let cmp = benchgate::compare::compare(Some(&run), &run, &run.config.gate);
    let md = benchgate::report::markdown::render(&cmp, &run, None, &Default::default());
    assert!(md.contains("invalid histogram"), "{md}");
    let at_limit = histogram_with_counts(&[100], MAX_TOTAL_COUNT);
    let h = LatencyHistogram::decode(&at_limit).unwrap();
    assert_eq!(h.summary().unwrap().count, MAX_TOTAL_COUNT);
}

/// The `histogram` finding, through a JMH file's SampleTime counts: each
/// [value, count] pair is in range, their sum is not.
#[test]
fn jmh_sample_counts_adding_up_past_the_limit_are_refused() {
    use benchgate::orchestrate::jmh;
    let name = "org.example.HttpBench.get";
    let file = |pairs: &str| {
        format!(
            r#"[{{"benchmark":"{name}","mode":"sample","params":{{}},"primaryMetric":{{"score":1,"scoreUnit":"us/op","rawDataHistogram":[[{pairs}]]}}}}]"#
        )
    };
    let big = 1u64 << 63;
    let e = jmh::parse(file(&format!("[[100,{big}],[200,{big}]]")).as_bytes(), name)
        .map(|_| ())
        .unwrap_err();
    says(
        &e,
        &[
            "[0].primaryMetric.rawDataHistogram",
            "counts add up to more than 2^64 values",
        ],
    );
    let e = jmh::parse(
        file(&format!("[[100,{MAX_TOTAL_COUNT}],[200,1]]")).as_bytes(),
        name,
    )
    .map(|_| ())
    .unwrap_err();
    says(&e, &["add up to 281474976710657 values, over the limit"]);
    let r = jmh::parse(file(&format!("[[100,{MAX_TOTAL_COUNT}]]")).as_bytes(), name).unwrap();
    assert_eq!(r.latency.unwrap().summary().unwrap().count, MAX_TOTAL_COUNT);
}

/// Found by the `json_scan` fuzz target (issue 30, point 8): the pre-scan
/// took `\u+0e9` for an escape (`u32::from_str_radix` accepts a sign), so it
/// passed JSON that serde_json refuses. Its escapes are four hex digits, as
/// serde_json's, and the file is refused as not JSON by the scan itself.
#[test]
fn a_unicode_escape_with_a_sign_is_not_json_to_the_pre_scan() {
    use benchgate::files::json::{scan, Breach};
    use benchgate::results::check::LIMITS;
    for text in [r#"["\u+0e9"]"#, r#"{"k\u+041":1}"#, r#"["\u-0e9"]"#] {
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        let scanned = scan(text.as_bytes(), &LIMITS);
        assert!(
            matches!(scanned, Err(Breach::Syntax(_))),
            "{text}: {scanned:?}"
        );
    }
    // A real escape of each kind still passes.
    for text in [r#"["\u00e9\ud83d\ude00\u0041"]"#, r#"{"\u006b":"\u00E9"}"#] {
        assert_eq!(scan(text.as_bytes(), &LIMITS), Ok(()), "{text}");
    }
}
