//! Synthetic runs for tests of the comparison and the renderers: a run of a
//! suite where every trial's metrics come from a closure, on a fixed fictional
//! machine. A test fixture, not shipped: the integration tests hold it as
//! `common::synthetic`, the library's unit tests as `crate::results::synthetic`
//! (src/results/mod.rs includes this file under `#[cfg(test)]`), so it names
//! the library as `benchgate` only.

use benchgate::config::Suite;
use benchgate::metric::TrialMetrics;
use benchgate::results::environment::{Environment, GitInfo, Pinning};
use benchgate::results::{anchor, summarize, CellResult, RunResults, Trial, SCHEMA_VERSION};

/// A run of `suite` with `rounds` trials per (scenario, client); each trial's
/// metrics are `metrics(scenario, client, round)` (`None`: the trial failed).
/// With `[run] anchor`, each scenario also has the anchor's cell (client
/// `anchor`, its trials from the same closure) after its own, and the other
/// cells' trials carry their anchored figures, as a real run writes them.
pub fn run(
    suite: Suite,
    rounds: u32,
    metrics: impl Fn(&str, &str, u32) -> Option<TrialMetrics>,
) -> RunResults {
    let mut results = Vec::new();
    let anchor = suite
        .run
        .anchor
        .as_ref()
        .map(|_| benchgate::config::anchor::NAME.to_string());
    for s in &suite.scenarios {
        let first = results.len();
        for c in s.clients.iter().chain(&anchor) {
            let trials: Vec<Trial> = (1..=rounds)
                .map(|round| {
                    let m = metrics(&s.name, c, round);
                    Trial {
                        round,
                        failure: m.is_none().then(|| "synthetic failure".to_string()),
                        metrics: m,
                        server: None,
                        invalid: vec![],
                        ..Default::default()
                    }
                })
                .collect();
            let summary = summarize(&trials);
            results.push(CellResult {
                scenario: s.name.clone(),
                client: c.clone(),
                server: None,
                anchor: anchor.as_ref() == Some(c),
                trials,
                summary,
                histogram: None,
                histogram_uncorrected: None,
            });
        }
        if anchor.is_some() {
            let (cells, anchor_cell) = results[first..].split_at_mut(s.clients.len());
            for cell in cells {
                anchor::normalize_trials(&mut cell.trials, &anchor_cell[0].trials);
                cell.summary = summarize(&cell.trials);
            }
        }
    }
    RunResults {
        schema_version: SCHEMA_VERSION,
        run_id: "synthetic".into(),
        started_at: "2025-01-01T00:00:00Z".into(),
        finished_at: Some("2025-01-01T00:01:00Z".into()),
        git: GitInfo {
            sha: Some("0123456789abcdef0123456789abcdef01234567".into()),
            ref_name: Some("refs/heads/main".into()),
        },
        environment: environment(),
        config: suite,
        results,
        interrupted: None,
        budget: Vec::new(),
        shard: None,
        jmh: None,
    }
}

/// The fictional machine of synthetic runs.
pub fn environment() -> Environment {
    Environment {
        cpu_model: "Synthetic CPU @ 3.0GHz".into(),
        cores: 2,
        kernel: "6.1.0".into(),
        os: "Linux".into(),
        arch: "x86_64".into(),
        benchgate_version: env!("CARGO_PKG_VERSION").into(),
        rustc_version: "rustc 1.82.0".into(),
        pinning: Pinning {
            enabled: true,
            server_cpus: vec![0],
            client_cpus: vec![1],
        },
        runner_image: None,
        governor: None,
    }
}

/// Plausible trial metrics from a throughput, a median latency and a CPU cost
/// per request (tails are fixed multiples of the median; no errors).
pub fn metrics(throughput_rps: f64, latency_us: f64, cpu_us_per_request: f64) -> TrialMetrics {
    let requests = throughput_rps.round() as u64;
    TrialMetrics {
        throughput_rps: Some(throughput_rps),
        bytes_per_sec: Some(throughput_rps * 100.0),
        latency_mean_us: Some(latency_us * 1.1),
        latency_stdev_us: Some(latency_us * 0.3),
        latency_p50_us: Some(latency_us),
        latency_p90_us: Some(latency_us * 1.5),
        latency_p99_us: Some(latency_us * 2.0),
        latency_p999_us: Some(latency_us * 3.0),
        latency_max_us: Some(latency_us * 5.0),
        cpu_us_per_request: Some(cpu_us_per_request),
        peak_rss_bytes: 20 << 20,
        peak_threads: 4,
        connections_opened: Some(16),
        requests_per_connection: Some(requests as f64 / 16.0),
        requests,
        ok: requests,
        elapsed_s: 1.0,
        bytes_received: requests * 22,
        cpu_user_us: (cpu_us_per_request * requests as f64) as u64,
        ..TrialMetrics::default()
    }
}

/// One scenario, one client, 3 rounds of `metrics`.
pub fn one_cell_run(metrics: TrialMetrics) -> RunResults {
    let mut suite = Suite::default_suite();
    suite.scenarios.truncate(1);
    suite.scenarios[0].clients.truncate(1);
    run(suite, 3, |_, _, _| Some(metrics.clone()))
}
