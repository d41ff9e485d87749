//! Test inputs for the renderers, built directly (never by running a
//! benchmark): runs with deterministic trials and histograms, and comparisons
//! with chosen verdicts. Everything is a pure function of its arguments.

use benchgate::compare::{Comparison, GateOutcome, MetricComparison, RunRef, Tier, Verdict};
use benchgate::config::Suite;
use benchgate::measure::{ErrorCounts, LatencyHistogram};
use benchgate::metric::{metric_def, Direction, Spread, TrialMetrics, METRICS};
use benchgate::results::environment::Pinning;
use benchgate::results::{CellResult, Environment, GitInfo, RunResults, Trial};

/// Trial metrics around a base latency (µs), shifted by `round`.
pub fn trial_metrics(latency_us: f64, round: u32) -> TrialMetrics {
    let wiggle = 1.0 + 0.01 * f64::from(round);
    let lat = latency_us * wiggle;
    TrialMetrics {
        throughput_rps: Some(1e6 / lat * 10.0),
        bytes_per_sec: Some(1e6 / lat * 10.0 * 22.0),
        latency_mean_us: Some(lat * 1.1),
        latency_stdev_us: Some(lat * 0.2),
        latency_p50_us: Some(lat),
        latency_p90_us: Some(lat * 1.5),
        latency_p99_us: Some(lat * 3.0),
        latency_p999_us: Some(lat * 5.0),
        latency_max_us: Some(lat * 9.0),
        error_rate: 0.001 * f64::from(round),
        errors: ErrorCounts {
            connect: 0,
            timeout: u64::from(round),
            read: 1,
            write: 0,
            status_4xx: 0,
            status_5xx: 2,
        },
        cpu_us_per_request: Some(12.5 * wiggle),
        throughput_rps_anchored: None,
        cpu_us_per_request_anchored: None,
        peak_rss_bytes: 24 * 1024 * 1024 + u64::from(round) * 4096,
        peak_threads: 17,
        connections_opened: Some(10),
        requests_per_connection: Some(1000.0),
        server_cpu_us_per_request: None,
        server_peak_rss_bytes: None,
        server_peak_threads: None,
        startup_ms: None,
        startup_cpu_ms: None,
        memory_per_connection_bytes: None,
        run_delay_ms: None,
        run_delay_share: None,
        involuntary_context_switches: None,
        server_run_delay_ms: None,
        host_steal_ms: None,
        requests: 10_000,
        ok: 9_990,
        elapsed_s: 1.0,
        in_flight_at_deadline: 3,
        bytes_received: 220_000,
        bytes_sent: 0,
        cpu_user_us: 100_000,
        cpu_sys_us: 25_000,
        latency_uncorrected: None,
        jmh: None,
    }
}

/// A deterministic merged histogram around `latency_us`.
pub fn histogram(latency_us: f64) -> String {
    let mut h = LatencyHistogram::new();
    for i in 0..1000u64 {
        let v = latency_us * (0.5 + (i * 7919 % 1000) as f64 / 1000.0);
        h.record_us(v as u64);
    }
    h.record_us((latency_us * 9.0) as u64);
    h.encode()
}

/// A cell of `rounds` trials; `failed_round` marks one trial failed with `reason`.
pub fn cell(
    scenario: &str,
    client: &str,
    latency_us: f64,
    rounds: u32,
    failure: Option<(u32, &str)>,
    hist: Option<String>,
) -> CellResult {
    let trials: Vec<Trial> = (1..=rounds)
        .map(|round| match failure {
            Some((r, reason)) if r == round => Trial {
                round,
                failure: Some(reason.to_string()),
                metrics: None,
                server: None,
                invalid: vec![],
                ..Default::default()
            },
            _ => Trial {
                round,
                failure: None,
                metrics: Some(trial_metrics(latency_us, round)),
                server: None,
                invalid: vec![],
                ..Default::default()
            },
        })
        .collect();
    let summary = METRICS
        .iter()
        .filter_map(|d| {
            let vals: Vec<f64> = trials
                .iter()
                .filter_map(|t| t.metrics.as_ref()?.get(d.name))
                .collect();
            Some((d.name.to_string(), Spread::of(&vals)?))
        })
        .collect();
    CellResult {
        scenario: scenario.to_string(),
        client: client.to_string(),
        server: None,
        anchor: false,
        trials,
        summary,
        histogram: hist,
        histogram_uncorrected: None,
    }
}

/// An environment fingerprint with a chosen CPU model.
pub fn environment(cpu_model: &str) -> Environment {
    Environment {
        cpu_model: cpu_model.to_string(),
        cores: 2,
        kernel: "6.8.0-1017-azure".to_string(),
        os: "Ubuntu 24.04.1 LTS".to_string(),
        arch: "x86_64".to_string(),
        benchgate_version: "0.1.0".to_string(),
        rustc_version: "rustc 1.82.0".to_string(),
        pinning: Pinning {
            enabled: true,
            server_cpus: vec![0],
            client_cpus: vec![1],
        },
        runner_image: None,
        governor: None,
    }
}

/// A run with the given identity and cells.
pub fn run(
    run_id: &str,
    started_at: &str,
    sha: &str,
    git_ref: &str,
    cpu: &str,
    cells: Vec<CellResult>,
) -> RunResults {
    let config = Suite::from_toml(
        "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\n[[scenario]]\nname = \"get-22b\"\npath = \"/bytes/22\"\n",
        "test",
    )
    .expect("test config is valid");
    RunResults {
        schema_version: benchgate::results::SCHEMA_VERSION,
        run_id: run_id.to_string(),
        started_at: started_at.to_string(),
        finished_at: None,
        git: GitInfo {
            sha: Some(sha.to_string()),
            ref_name: Some(git_ref.to_string()),
        },
        environment: environment(cpu),
        config,
        results: cells,
        interrupted: None,
        budget: Vec::new(),
        shard: None,
        jmh: None,
    }
}

/// The run reference of a run.
pub fn run_ref(r: &RunResults) -> RunRef {
    RunRef {
        run_id: r.run_id.clone(),
        started_at: r.started_at.clone(),
        git_sha: r.git.sha.clone(),
        git_ref: r.git.ref_name.clone(),
    }
}

/// One compared metric with a chosen verdict, tier and change (a fraction);
/// `None` change means no baseline value.
pub fn metric(
    scenario: &str,
    client: &str,
    name: &str,
    verdict: Verdict,
    tier: Tier,
    change: Option<f64>,
) -> MetricComparison {
    let def = metric_def(name);
    let base = match def.map(|d| d.unit) {
        _ if name == "cpu_us_per_request" => 12.5,
        Some("us") => 1200.0,
        Some("req/s") => 8000.0,
        Some("bytes") => 25_165_824.0,
        Some("ratio") => 0.002,
        _ => 17.0,
    };
    let current = change.map_or(base, |c| base * (1.0 + c));
    // The metrics that gate by default (the registry's fail tier).
    let gating = def.is_some_and(|d| d.gate.fail.is_some());
    MetricComparison {
        scenario: scenario.to_string(),
        client: client.to_string(),
        baseline_client: client.to_string(),
        server: None,
        baseline_server: None,
        metric: name.to_string(),
        direction: def.map_or(Direction::LowerIsBetter, |d| d.direction),
        baseline: if change.is_some() {
            vec![base * 0.99, base, base * 1.01]
        } else {
            vec![]
        },
        current: vec![current * 0.99, current, current * 1.01],
        baseline_median: change.map(|_| base),
        current_median: Some(current),
        change,
        ci_low: change.map(|c| c - 0.042),
        ci_high: change.map(|c| c + 0.037),
        confidence: change.map(|_| 0.95),
        p_value: change.map(|c| if c.abs() > 0.05 { 0.01 } else { 0.6 }),
        mde: change.map(|_| 0.031),
        verdict,
        tier,
        gating,
        reason: format!("Hodges-Lehmann shift {verdict:?} against a 10% threshold"),
        invalid: vec![],
        lacking: vec![],
        advice: None,
        undecidable: None,
        decided_at: None,
        stopped_at: None,
    }
}

/// A comparison of `metrics`, with counts and outcome derived from them.
pub fn comparison(
    mode: &str,
    current: &RunResults,
    baseline: Option<&RunResults>,
    metrics: Vec<MetricComparison>,
) -> Comparison {
    let count =
        |f: &dyn Fn(&MetricComparison) -> bool| metrics.iter().filter(|m| f(m)).count() as u32;
    let regressions = count(&|m| m.verdict == Verdict::Regressed && m.tier == Tier::Fail);
    let outcome = if baseline.is_none() && mode == "baseline" {
        GateOutcome::NoBaseline
    } else if regressions > 0 {
        GateOutcome::Fail
    } else {
        GateOutcome::Pass
    };
    Comparison {
        schema_version: 1,
        mode: serde_json::from_value(serde_json::Value::String(mode.to_string()))
            .expect("a comparison mode's name"),
        method: "Hodges-Lehmann shift with a Mann-Whitney rank interval (Hollander & Wolfe 1999)"
            .to_string(),
        baseline_run: baseline.map(run_ref),
        current_run: run_ref(current),
        environment_differences: vec![],
        environment_changes: vec![],
        outcome,
        exit_code: u8::from(outcome == GateOutcome::Fail),
        regressions,
        improvements: count(&|m| m.verdict == Verdict::Improved),
        warnings: count(&|m| m.tier == Tier::Warn),
        anchoring: None,
        inconclusive_policy: Default::default(),
        optimistic: false,
        metrics,
    }
}
