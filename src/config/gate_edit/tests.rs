//! `set_gate_entries` on small configs: what it changes, and that nothing else
//! moves.

use super::*;

fn upd(metric: &str, set: &[(&str, &str)]) -> EntryUpdate {
    EntryUpdate {
        metric: metric.to_string(),
        set: set
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn tp() -> EntryUpdate {
    upd(
        "throughput_rps",
        &[("fail", "\"-7%\""), ("warn", "\"-4%\"")],
    )
}

const HAND_WRITTEN: &str = r#"# benchgate config: thresholds tuned by hand
[run]
rounds = 4   # four rounds

[gate]   # the gate
# alpha first
alpha    = 0.05
latency_p99_us = { fail = "+10%", floor = "2ms", gating = true }  # tail latency
throughput_rps = "-5%" # tp

# cpu as a sub-table
[gate.cpu_us_per_request]
fail = "+10%"   # was 10
gating = true

[[gate.override]]
scenario = "x"
throughput_rps = "-9%"
"#;

#[test]
fn comments_order_and_spacing_survive_and_entries_are_set_in_their_own_form() {
    let updates = [
        tp(),
        upd(
            "latency_p99_us",
            &[
                ("fail", "\"+12%\""),
                ("warn", "\"+6%\""),
                ("floor", "\"2ms\""),
            ],
        ),
        upd(
            "cpu_us_per_request",
            &[("fail", "\"+15%\""), ("warn", "\"+8%\"")],
        ),
        upd(
            "error_rate",
            &[("fail", "\"+0.01\""), ("warn", "\"+0.001\"")],
        ),
    ];
    let out = set_gate_entries(HAND_WRITTEN, "benchgate.toml", &updates).unwrap();
    let expected = r#"# benchgate config: thresholds tuned by hand
[run]
rounds = 4   # four rounds

[gate]   # the gate
# alpha first
alpha    = 0.05
latency_p99_us = { fail = "+12%", floor = "2ms", gating = true, warn = "+6%" }  # tail latency
throughput_rps = { fail = "-7%", warn = "-4%" } # tp
error_rate = { fail = "+0.01", warn = "+0.001" }

# cpu as a sub-table
[gate.cpu_us_per_request]
fail = "+15%"   # was 10
gating = true
warn = "+8%"

[[gate.override]]
scenario = "x"
throughput_rps = "-9%"
"#;
    assert_eq!(out, expected);
    // Idempotent.
    assert_eq!(
        set_gate_entries(&out, "benchgate.toml", &updates).unwrap(),
        out
    );
}

#[test]
fn a_missing_gate_table_is_appended_and_dotted_metrics_stay_dotted() {
    let u = [
        tp(),
        upd("errors.connect", &[("fail", "\"+2\""), ("warn", "\"+1\"")]),
    ];
    let out = set_gate_entries("[run]\nrounds = 4 # r\n", "b.toml", &u).unwrap();
    assert_eq!(
        out,
        "[run]\nrounds = 4 # r\n\n[gate]\nthroughput_rps = { fail = \"-7%\", warn = \"-4%\" }\nerrors.connect = { fail = \"+2\", warn = \"+1\" }\n"
    );
    // `errors = { .. }` and a quoted key are set where they are.
    let text = "[gate]\nerrors = { connect = \"+1\", read = \"+1\" } # e\n";
    let out = set_gate_entries(text, "b.toml", &u[1..]).unwrap();
    assert_eq!(
        out,
        "[gate]\nerrors = { connect = { fail = \"+2\", warn = \"+1\" }, read = \"+1\" } # e\n"
    );
    let text = "[gate]\n\"errors.connect\" = \"+1\" # q\n";
    let out = set_gate_entries(text, "b.toml", &u[1..]).unwrap();
    assert_eq!(
        out,
        "[gate]\n\"errors.connect\" = { fail = \"+2\", warn = \"+1\" } # q\n"
    );
}

#[test]
fn an_inline_gate_table_stays_inline() {
    let text = "gate = { alpha = 0.05, throughput_rps = \"-5%\" } # inline\n\n[run]\nrounds = 4\n";
    let u = [tp(), upd("errors.connect", &[("fail", "\"+2\"")])];
    let out = set_gate_entries(text, "b.toml", &u).unwrap();
    assert_eq!(
        out,
        "gate = { alpha = 0.05, throughput_rps = { fail = \"-7%\", warn = \"-4%\" }, errors.connect = { fail = \"+2\" } } # inline\n\n[run]\nrounds = 4\n"
    );
}

#[test]
fn overrides_alone_get_a_gate_header_before_them() {
    let text =
        "[run]\nrounds = 4\n\n[[gate.override]]\nscenario = \"x\"\nthroughput_rps = \"-9%\"\n";
    let out = set_gate_entries(text, "b.toml", &[tp()]).unwrap();
    assert_eq!(
        out,
        "[run]\nrounds = 4\n\n[gate]\nthroughput_rps = { fail = \"-7%\", warn = \"-4%\" }\n\n[[gate.override]]\nscenario = \"x\"\nthroughput_rps = \"-9%\"\n"
    );
}

#[test]
fn crlf_files_stay_crlf() {
    let text = "[gate] # g\r\nthroughput_rps = \"-5%\" # tp\r\n";
    let out = set_gate_entries(text, "b.toml", &[tp()]).unwrap();
    assert_eq!(
        out,
        "[gate] # g\r\nthroughput_rps = { fail = \"-7%\", warn = \"-4%\" } # tp\r\n"
    );
}

#[test]
fn values_of_the_wrong_type_are_refused_naming_the_file_field_and_fix() {
    let refuse = |text: &str, u: &[EntryUpdate]| {
        set_gate_entries(text, "conf/benchgate.toml", u)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refuse("[gate]\nthroughput_rps = 5\n", &[tp()]),
        "conf/benchgate.toml: gate.throughput_rps: found an integer; the file is unchanged: write it as throughput_rps = \"<threshold>\" or throughput_rps = { fail = \"<threshold>\" } (or remove it), then run calibrate --write again"
    );
    let e = refuse("[[gate]]\nalpha = 0.05\n", &[tp()]);
    assert!(
        e.starts_with("conf/benchgate.toml: gate: expected a table, found an array of tables;"),
        "{e}"
    );
    assert!(e.contains("[gate] table"), "{e}");
    let e = refuse("gate = 3\n", &[tp()]);
    assert!(
        e.contains("gate: expected a table, found an integer"),
        "{e}"
    );
    let e = refuse("[gate]\nthroughput_rps = { fail = [\"-5%\"] }\n", &[tp()]);
    assert!(
        e.starts_with("conf/benchgate.toml: gate.throughput_rps.fail: found an array;"),
        "{e}"
    );
    assert!(e.contains("write fail = \"<threshold>\""), "{e}");
    let connect = upd("errors.connect", &[("fail", "\"+2\"")]);
    let e = refuse("[gate]\nerrors = 3\n", &[connect]);
    assert!(
        e.starts_with("conf/benchgate.toml: gate.errors: found an integer;"),
        "{e}"
    );
    let e = refuse("[gate\n", &[tp()]);
    assert!(
        e.starts_with("conf/benchgate.toml: (file): not valid TOML"),
        "{e}"
    );
}

#[test]
fn dotted_gate_keys_stay_dotted() {
    let text = "gate.alpha = 0.05\ngate.throughput_rps = \"-5%\" # d\n\n[run]\nrounds = 4\n";
    let u = [tp(), upd("error_rate", &[("fail", "\"+0.01\"")])];
    let out = set_gate_entries(text, "b.toml", &u).unwrap();
    assert_eq!(
        out,
        "gate.alpha = 0.05\ngate.throughput_rps = { fail = \"-7%\", warn = \"-4%\" } # d\ngate.error_rate = { fail = \"+0.01\" }\n\n[run]\nrounds = 4\n"
    );
}
