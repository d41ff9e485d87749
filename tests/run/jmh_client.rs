//! JMH benchmarks as command clients end to end (`result = "jmh"`): the
//! options benchgate passes in place of `{jmh_args}`, checked one by one by a
//! stand-in for a JMH jar (fixtures/jmh/fake-jmh.py, real requests to the
//! reference server) that writes a JMH-shaped result; the results cell holds
//! the values read from it, n/a for what JMH did not measure and for the
//! server's window figures. Then the config's and the trial's refusals.

use crate::common;

use benchgate::config::{ClientKind, ResultFormat, Suite};
use benchgate::orchestrate::jmh;
use common::{cell, run_config};
use serde_json::Value;

const FAKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/jmh/fake-jmh.py");

fn jmh_client(name: &str, method: &str, modes: &str, copy: &std::path::Path) -> String {
    format!(
        "[[client]]\nname = {name:?}\nkind = \"command\"\nresult = \"jmh\"\nbenchmark = \"org.example.HttpBench.{method}\"\ncommand = [\"python3\", {FAKE:?}, {modes:?}, \"{{jmh_args}}\"]\nenv = {{ FAKE_JMH_COPY = {:?} }}\n",
        copy.display().to_string()
    )
}

#[test]
fn a_jmh_client_gets_its_rate_and_latency_from_jmhs_result_and_no_window_figures() {
    let dir = tempfile::tempdir().unwrap();
    let copy = |n: &str| dir.path().join(format!("{n}.json"));
    let clients = [
        jmh_client("jmh-get", "get", "thrpt,sample", &copy("get")),
        jmh_client("jmh-sample", "getAll", "sample", &copy("sample")),
        jmh_client("jmh-avgt", "get", "avgt", &copy("avgt")),
    ]
    .concat();
    let toml = format!(
        "[run]\nrounds = 2\nwarmup = \"300ms\"\nduration = \"1000ms\"\n{clients}\n[[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\nconcurrency = 2\n"
    );
    let run = run_config(&toml, &[]);
    let r = run.results();

    // Rate and latency, from the last trial's own file.
    let c = cell(&r, "get", "jmh-get");
    let last = c.trials.last().unwrap();
    assert_eq!(last.failure, None);
    let m = last.metrics.as_ref().unwrap();
    let bytes = std::fs::read(copy("get")).unwrap();
    let file: Value = serde_json::from_slice(&bytes).unwrap();
    let file = file.as_array().unwrap();
    assert_eq!(file.len(), 2, "only the anchored method ran, in two modes");
    let score = file[0]["primaryMetric"]["score"].as_f64().unwrap();
    assert_eq!(file[0]["primaryMetric"]["scoreUnit"], "ops/ms");
    let rps = m.throughput_rps.unwrap();
    assert!(
        (rps - score * 1000.0).abs() < 1e-6 * rps,
        "{rps} vs {score} ops/ms"
    );
    let read = jmh::parse(&bytes, "org.example.HttpBench.get").unwrap();
    let s = read.latency.unwrap().summary().unwrap();
    assert_eq!(m.latency_p99_us, Some(s.p99_us as f64));
    assert_eq!(m.latency_p50_us, Some(s.p50_us as f64));
    assert!(c.histogram.is_some());

    for name in ["jmh-get", "jmh-sample", "jmh-avgt"] {
        for t in &cell(&r, "get", name).trials {
            assert_eq!(t.failure, None, "{name}");
            let m = t.metrics.as_ref().unwrap();
            // JMH takes no part in the window handshake: no window figures.
            assert_eq!(m.bytes_per_sec, None, "{name}");
            assert_eq!(m.cpu_us_per_request, None, "{name}");
            assert_eq!(m.requests_per_connection, None, "{name}");
            assert_eq!(m.server_cpu_us_per_request, None, "{name}");
            // What is measured outside the window stays.
            assert!(m.startup_ms.unwrap() > 0.0, "{name}");
            assert!(m.peak_rss_bytes > 1 << 20 && m.peak_threads >= 1, "{name}");
            assert!(m.connections_opened.unwrap() > 0, "{name}");
        }
    }
    let sample = cell(&r, "get", "jmh-sample");
    let m = sample.trials[0].metrics.as_ref().unwrap();
    assert_eq!(m.throughput_rps, None, "SampleTime only: the rate is n/a");
    assert!(m.latency_p99_us.unwrap() > 0.0);
    assert!(!sample.summary.contains_key("throughput_rps"));
    let avgt = cell(&r, "get", "jmh-avgt");
    let m = avgt.trials[0].metrics.as_ref().unwrap();
    assert_eq!((m.throughput_rps, m.latency_p99_us), (None, None));

    let table = String::from_utf8_lossy(&run.output.stdout);
    let row = table.lines().find(|l| l.contains("jmh-avgt")).unwrap();
    assert!(row.contains("n/a"), "{row}");
}

#[test]
fn a_jmh_trial_fails_with_the_reason_when_the_workload_or_the_file_is_wrong() {
    // Sends one request, then exits without writing JMH's file.
    let silent = r#"import sys, time, urllib.request
url = sys.argv[sys.argv.index("-p") + 1][len("url="):]
urllib.request.urlopen(url).read()
time.sleep(1.5)"#;
    let toml = format!(
        r#"[run]
rounds = 1
warmup = "300ms"

[[client]]
name = "silent"
kind = "command"
result = "jmh"
benchmark = "org.example.HttpBench.get"
command = ["python3", "-c", {silent:?}, "{{jmh_args}}"]

[[scenario]]
name = "timed"
path = "/bytes/22"
duration = "800ms"

[[scenario]]
name = "counted"
path = "/bytes/22"
requests = 100
"#
    );
    let run = run_config(&toml, &[]);
    let r = run.results_with_failed_cells(&["timed / silent", "counted / silent"]);
    let timed = cell(&r, "timed", "silent").trials[0]
        .failure
        .clone()
        .unwrap();
    assert!(timed.contains("JMH wrote no result file"), "{timed}");
    assert!(timed.contains("{jmh_args}"), "{timed}");
    let counted = cell(&r, "counted", "silent").trials[0]
        .failure
        .clone()
        .unwrap();
    assert!(counted.contains("stops after a request count"), "{counted}");
    assert!(counted.contains("give it a duration"), "{counted}");
}

const FILE: &str = "benchgate.toml";

fn client(fields: &str) -> String {
    format!("[[client]]\nname = \"j\"\nkind = \"command\"\n{fields}\n[[scenario]]\nname = \"s\"\npath = \"/\"\n")
}

#[test]
fn the_config_takes_one_benchmark_method_per_client_and_a_jmh_args_argument() {
    let ok = client(
        "result = \"jmh\"\nbenchmark = \"org.example.HttpBench.get\"\ncommand = [\"java\", \"-jar\", \"b.jar\", \"{jmh_args}\"]",
    );
    let suite = Suite::from_toml(&ok, FILE).unwrap();
    let ClientKind::Command(cmd) = &suite.clients[0].kind else {
        panic!("a command client")
    };
    assert_eq!(
        cmd.result,
        ResultFormat::Jmh {
            benchmark: "org.example.HttpBench.get".into()
        }
    );

    let invalid = |fields: &str, line: usize, field: &str, what: &str, fix: &str| {
        common::config_errors::invalid(
            Suite::from_toml(&client(fields), FILE),
            FILE,
            line,
            field,
            what,
            fix,
        )
    };
    invalid(
        "result = \"jmh\"\ncommand = [\"java\", \"{jmh_args}\"]",
        1,
        "client \"j\".benchmark",
        "missing required field `benchmark`",
        "benchmark = \"org.example.HttpBench.get\"",
    );
    invalid(
        "result = \"jmh\"\nbenchmark = \"get\"\ncommand = [\"java\", \"{jmh_args}\"]",
        5,
        "client \"j\".benchmark",
        "not a benchmark method's full name",
        "java -jar benchmarks.jar -l",
    );
    invalid(
        "result = \"jmh\"\nbenchmark = \"a.B.get\"\ncommand = [\"java\", \"-jar\", \"b.jar\"]",
        6,
        "client \"j\".command",
        "needs a {jmh_args} argument",
        "\"{jmh_args}\"]",
    );
    invalid(
        "result = \"jmh\"\nbenchmark = \"a.B.get\"\ncommand = [\"sh\", \"-c\", \"java -jar b.jar {jmh_args}\"]",
        6,
        "client \"j\".command[2]",
        "only as a whole argument",
        "an argument of its own",
    );
    invalid(
        "result = \"xml\"\ncommand = [\"java\"]",
        4,
        "client \"j\".result",
        "\"xml\" is not a result format",
        "result = \"jmh\"",
    );
    invalid(
        "benchmark = \"a.B.get\"\ncommand = [\"java\"]",
        4,
        "client \"j\".benchmark",
        "does not say it writes JMH's result",
        "add result = \"jmh\"",
    );
    invalid(
        "command = [\"java\", \"{jmh_args}\"]",
        4,
        "client \"j\".command[1]",
        "only replaced for JMH clients",
        "add result = \"jmh\"",
    );
}

#[test]
fn the_example_config_names_two_methods_as_two_clients() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/configs/jmh-client.toml"
    );
    let suite = Suite::from_file(std::path::Path::new(path)).unwrap();
    let methods: Vec<_> = suite
        .clients
        .iter()
        .map(|c| match &c.kind {
            ClientKind::Command(cmd) => cmd.result.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        methods,
        ["get", "getAll"].map(|m| ResultFormat::Jmh {
            benchmark: format!("org.example.HttpBench.{m}")
        })
    );
}
