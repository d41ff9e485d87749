//! benchgate's JMH reader on real JMH result files from public repositories
//! (fixtures/jmh/README.md names each source): the p99 it reads from a
//! SampleTime result's raw histogram data equals the file's own reported
//! p0.99 within the histogram's precision; Throughput scores become requests
//! per second; other modes give n/a; ambiguous or unknown selections are
//! refused with the fix.

use benchgate::orchestrate::jmh;
use serde_json::Value;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/fixtures/jmh/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn entries(name: &str) -> Vec<Value> {
    serde_json::from_slice::<Value>(&fixture(name))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// Microseconds per unit of a `<unit>/op` score unit.
fn us_per_unit(score_unit: &str) -> f64 {
    match score_unit {
        "ns/op" => 1e-3,
        "us/op" => 1.0,
        "ms/op" => 1e3,
        "s/op" => 1e6,
        other => panic!("unit {other} not in the fixtures"),
    }
}

/// The histogram's precision at `us`: 3 significant digits (a bucket is at
/// most 1/1024 of its value wide) and whole microseconds.
fn precision_us(us: f64) -> f64 {
    us / 1000.0 + 1.0
}

/// Checks every SampleTime entry of a file, each read on its own (a file may
/// hold one method under several params, which one trial never produces).
/// Returns how many entries were checked.
fn check_sample_p99(name: &str) -> usize {
    let mut checked = 0;
    for e in entries(name) {
        if e["mode"] != "sample" {
            continue;
        }
        let benchmark = e["benchmark"].as_str().unwrap();
        let metric = &e["primaryMetric"];
        let reported = metric["scorePercentiles"]["99.0"].as_f64().unwrap()
            * us_per_unit(metric["scoreUnit"].as_str().unwrap());
        let samples: u64 = metric["rawDataHistogram"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|fork| fork.as_array().unwrap())
            .flat_map(|it| it.as_array().unwrap())
            .map(|pair| pair[1].as_u64().unwrap())
            .sum();
        let one = serde_json::to_vec(&Value::Array(vec![e.clone()])).unwrap();
        let r = jmh::parse(&one, benchmark).unwrap();
        let h = r.latency.expect("a SampleTime result has latency");
        assert_eq!(h.len(), samples, "{name} {benchmark}: every sample");
        let p99 = h.summary().unwrap().p99_us as f64;
        assert!(
            (p99 - reported).abs() <= precision_us(reported),
            "{name} {benchmark} {}: p99 read {p99} us, the file reports {reported} us",
            e["params"]
        );
        assert_eq!(r.throughput_rps, None, "a SampleTime result has no rate");
        checked += 1;
    }
    checked
}

#[test]
fn sample_time_p99_equals_the_files_own_p99_for_every_real_file() {
    // Two methods x five params, two forks of five iterations, s/op.
    assert_eq!(check_sample_p99("pg-client-sample-params.json"), 10);
    // 1.27 million samples in 8,597 buckets at 32 threads, ms/op.
    assert_eq!(check_sample_p99("raiser-rpc-createUser-3-modes.json"), 1);
}

#[test]
fn one_method_in_three_modes_gives_the_throughput_rate_and_the_sample_latency() {
    let r = jmh::parse(
        &fixture("raiser-rpc-createUser-3-modes.json"),
        "com.raiser.benchmark.client.ClientBenchmark.createUser",
    )
    .unwrap();
    // score 41.56812903616781 ops/ms in the file.
    let rps = r.throughput_rps.unwrap();
    assert!((rps - 41_568.129_036_167_81).abs() < 1e-6, "{rps}");
    let s = r.latency.unwrap().summary().unwrap();
    assert_eq!(s.count, 1_266_775);
    // The file's own p0.99 is 1.959936 ms.
    assert!((s.p99_us as f64 - 1959.936).abs() <= precision_us(1959.936));
}

#[test]
fn a_module_in_another_mode_is_accepted_with_nothing_derived() {
    for method in ["executeWithSingleThread", "executeWithMultipleThreads"] {
        let r = jmh::parse(
            &fixture("nebula-client-avgt.json"),
            &format!("org.example.NebulaClient5.{method}"),
        )
        .unwrap();
        assert_eq!(r.throughput_rps, None, "no rate from AverageTime");
        assert!(r.latency.is_none(), "no latency from AverageTime's mean");
    }
}

#[test]
fn several_params_of_one_method_or_an_unknown_method_are_refused_with_the_fix() {
    let err = jmh::parse(
        &fixture("pg-client-sample-params.json"),
        "com.julienviet.benchmark.ClientBenchmark.jdbcBurstQuery",
    )
    .unwrap_err();
    assert!(err.contains("[0] and [1] are both sample results"), "{err}");
    assert!(
        err.contains("(params \"pipelining\" \"1\" vs \"2\")"),
        "{err}"
    );
    assert!(err.contains("-p name=value"), "{err}");

    let err = jmh::parse(
        &fixture("nebula-client-avgt.json"),
        "org.example.NebulaClient5.execute",
    )
    .unwrap_err();
    assert!(
        err.contains("no result for org.example.NebulaClient5.execute, only for org.example.NebulaClient5.executeWithMultipleThreads, org.example.NebulaClient5.executeWithSingleThread"),
        "{err}"
    );
}
