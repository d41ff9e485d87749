//! Accuracy: the latency benchgate reports for a known server delay is that
//! delay plus the idle loopback round trip, within 2%.
//!
//! "Idle" matters: after 10 ms without work both cores have gone idle, and
//! waking them costs tens of microseconds that a back-to-back round trip never
//! pays. So the round trip is measured the same way, one request every 10 ms.

mod common;

use common::{cell, median, run_config};

/// One measurement: (p50 of /delay/10, idle round trip p50, the delay cell's trials).
fn measure() -> (f64, f64, benchgate::results::CellResult) {
    let run = run_config(
        r#"
[run]
rounds = 5
warmup = "200ms"
duration = "1s"

[[client]]
name = "hyper"
kind = "hyper"

# The idle loopback round trip: an empty response, one request every 10 ms, so
# both sides wake from idle as they do after a 10 ms delay.
[[scenario]]
name = "rtt"
path = "/bytes/0"
rate = 100
max_in_flight = 1

[[scenario]]
name = "delay-10ms"
path = "/delay/10"
concurrency = 1
"#,
        &[],
    );
    let r = run.results();
    let rtt = median(cell(&r, "rtt", "hyper"), "latency_p50_us");
    let delay = cell(&r, "delay-10ms", "hyper").clone();
    (median(&delay, "latency_p50_us"), rtt, delay)
}

#[test]
fn delay_10ms_at_concurrency_1_reports_10ms_plus_round_trip() {
    // A co-tenant on this shared 2-core machine can delay a wake-up by a
    // millisecond in one run; so the run is measured again once (a fresh run,
    // fresh processes) before the test fails. Every attempt is printed.
    let mut attempts = Vec::new();
    let mut passed = None;
    for _ in 0..2 {
        let (p50, rtt, delay) = measure();
        let expected = 10_000.0 + rtt;
        let error = (p50 - expected) / expected;
        attempts.push(format!(
            "p50 {p50} us vs expected {expected} us (10 ms + rtt {rtt} us): {:+.2}%",
            error * 100.0
        ));
        if error.abs() <= 0.02 {
            passed = Some(delay);
            break;
        }
    }
    eprintln!("{}", attempts.join("\n"));
    let Some(delay) = passed else {
        panic!("no attempt within 2%:\n{}", attempts.join("\n"))
    };
    // The server's own view agrees: it held each request for 10 ms, never
    // less (the precise timer is never early), and not much more.
    for t in &delay.trials {
        let s = t.server.as_ref().unwrap();
        assert!(s.service_time.p50 >= 10_000, "{:?}", s.service_time);
        assert!(
            (s.service_time.p50 as f64) < 10_000.0 * 1.05,
            "{:?}",
            s.service_time
        );
    }
}
