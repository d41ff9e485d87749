//! The `inject_cpu_us` knob end to end: a real hyper client that burns 1 ms of
//! CPU per request shows about 1 ms more CPU per request and latency than the
//! same client without it.

mod common;

use common::{cell, median, run_config};

const CONFIG: &str = r#"
[run]
rounds = 1
warmup = "100ms"
duration = "300ms"
pin = false

[[client]]
name = "plain"
kind = "hyper"

[[client]]
name = "slowed"
kind = "hyper"
inject_cpu_us = 1000

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 1
"#;

#[test]
fn injected_cpu_shows_in_cpu_per_request_and_latency() {
    let r = run_config(CONFIG, &["--quiet"]).results();
    let (plain, slowed) = (cell(&r, "get", "plain"), cell(&r, "get", "slowed"));
    let cpu = median(slowed, "cpu_us_per_request") - median(plain, "cpu_us_per_request");
    let lat = median(slowed, "latency_mean_us") - median(plain, "latency_mean_us");
    assert!((700.0..2000.0).contains(&cpu), "cpu per request +{cpu} us");
    assert!((900.0..2000.0).contains(&lat), "mean latency +{lat} us");
    assert_eq!(r.config.client("slowed").unwrap().inject_cpu_us, 1000);
}
