//! Recorder memory does not grow with run length: the driver's peak RSS over a
//! 60 s open-loop trial is at most 1.1x that of a 5 s one (HDR histograms have a
//! fixed footprint; no per-request samples are kept).

use crate::common;

use common::{cell, run_config};

#[test]
fn peak_rss_of_a_60s_trial_is_within_10_percent_of_a_5s_trial() {
    let run = run_config(
        r#"
[run]
rounds = 1
warmup = "0s"

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "open-5s"
path = "/bytes/64"
rate = 2000
max_in_flight = 32
duration = "5s"

[[scenario]]
name = "open-60s"
path = "/bytes/64"
rate = 2000
max_in_flight = 32
duration = "60s"
"#,
        &[],
    );
    let r = run.results();
    let m = |s: &str| cell(&r, s, "hyper").trials[0].metrics.clone().unwrap();
    let (short, long) = (m("open-5s"), m("open-60s"));
    assert!(
        long.ok > 10 * short.ok,
        "the long trial ran ~12x the requests"
    );
    let ratio = long.peak_rss_bytes as f64 / short.peak_rss_bytes as f64;
    eprintln!(
        "peak RSS: 5 s {} B ({} requests), 60 s {} B ({} requests), ratio {ratio:.3}",
        short.peak_rss_bytes, short.ok, long.peak_rss_bytes, long.ok
    );
    assert!(ratio <= 1.1, "peak RSS grew {ratio:.3}x from 5 s to 60 s");
}
