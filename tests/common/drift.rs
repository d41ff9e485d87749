//! Stored histories with known shifts on real run-to-run noise: the per-run
//! medians of 100 real A/A runs (fixtures/noise/aa-runs.csv, its README),
//! resampled (a fixed-seed shuffle of whole runs), one cell per run, a shift
//! planted at a known run.
//!
//! Resampled, not in time order: in time order the A/A runs hold real
//! episodes of the shared machine (`hyper`'s runs 79 to 88 measured 3-11%
//! more CPU per request than the 78 before them), which are level shifts a
//! detector rightly finds; a shuffle keeps each run's real values and removes
//! the machine's drift.

use benchgate::baseline::BaselineStore;
use benchgate::config::Suite;
use benchgate::results::RunResults;

use super::synthetic;

/// One real run's medians.
#[derive(Debug, Clone, Copy)]
pub struct Noise {
    pub cpu_us_per_request: f64,
    pub throughput_rps: f64,
    pub latency_p99_us: f64,
}

/// The 100 runs of `client` (`hyper` or `hyper-twin`), in time order.
pub fn noise(client: &str) -> Vec<Noise> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/noise/aa-runs.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("started_at,client,cpu_us_per_request,throughput_rps,latency_p99_us,rounds")
    );
    let rows: Vec<Noise> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[1] == client)
        .map(|f| Noise {
            cpu_us_per_request: f[2].parse().unwrap(),
            throughput_rps: f[3].parse().unwrap(),
            latency_p99_us: f[4].parse().unwrap(),
        })
        .collect();
    assert_eq!(rows.len(), 100, "{client}");
    rows
}

/// The runs of [`noise`] in the order of a fixed-seed shuffle (xorshift64*,
/// Fisher-Yates).
pub fn shuffled(client: &str, seed: u64) -> Vec<Noise> {
    let mut v = noise(client);
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..v.len()).rev() {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let j = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

/// A planted shift: from run `at` on, CPU per request and latency are
/// `1 + by` times their noise and the throughput `1 / (1 + by)` times.
#[derive(Debug, Clone, Copy)]
pub struct Planted {
    pub at: usize,
    pub by: f64,
}

/// The run of one cell (`get-22b`, `hyper`; 3 rounds, each with these
/// medians) that noise `n` and `shift` give.
pub fn run(i: usize, n: Noise, shift: Option<Planted>) -> RunResults {
    let k = match shift {
        Some(p) if i >= p.at => 1.0 + p.by,
        _ => 1.0,
    };
    let mut suite = Suite::default_suite();
    suite.scenarios.retain(|s| s.name == "get-22b");
    suite.scenarios[0].clients.retain(|c| c == "hyper");
    assert_eq!(suite.scenarios[0].clients.len(), 1);
    let mut r = synthetic::run(suite, 3, |_, _, _| {
        // `synthetic::metrics` makes p99 twice its latency argument.
        Some(synthetic::metrics(
            n.throughput_rps / k,
            n.latency_p99_us * k / 2.0,
            n.cpu_us_per_request * k,
        ))
    });
    r.run_id = format!("run-{i}");
    r.started_at = format!("2026-09-{:02}T{:02}:00:00Z", 1 + i / 24, i % 24);
    r
}

/// The commit of run `i` (its first 12 digits differ from every other's).
pub fn sha(i: usize) -> String {
    format!("{i:06x}{}", "c0ffee".repeat(34 / 6 + 1))[..40].to_string()
}

/// Stores `noise` as the history of `main`, oldest first, with `shift`.
pub fn store_history(store: &dyn BaselineStore, noise: &[Noise], shift: Option<Planted>) {
    for (i, n) in noise.iter().enumerate() {
        store
            .store("main", &sha(i), &run(i, *n, shift), 1000)
            .unwrap();
    }
}
