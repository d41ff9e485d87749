//! `benchgate changepoints` (hidden): change points of series read from
//! stdin, one JSON array of numbers per line, written as one JSON line per
//! series. The building block of drift detection, and what
//! scripts/changepoint-vs-otava.py measures against Apache Otava.

use std::io::{BufRead as _, Write as _};

use anyhow::Context as _;

use crate::cli::{ChangepointArgs, DetectArgs};
use crate::compare::changepoint::{change_points, Options};

/// The search options of `--alpha`, `--permutations` and `--min-size`,
/// checked.
pub fn options(args: DetectArgs) -> anyhow::Result<Options> {
    anyhow::ensure!(
        args.alpha > 0.0 && args.alpha < 1.0,
        "--alpha {}: use a value between 0 and 1",
        args.alpha
    );
    anyhow::ensure!(
        (1..=100_000).contains(&args.permutations),
        "--permutations {}: use a value from 1 to 100000",
        args.permutations
    );
    Ok(Options {
        alpha: args.alpha,
        permutations: args.permutations,
        min_size: args.min_size,
    })
}

/// Reads every line of stdin; exit 0, or an error naming the line.
pub fn run(args: ChangepointArgs) -> anyhow::Result<u8> {
    let opts = options(args.detect)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let series: Vec<f64> = serde_json::from_str(&line).with_context(|| {
            format!(
                "stdin line {}: not a JSON array of numbers; write one series per line, like [1.0, 1.1, 0.9]",
                i + 1
            )
        })?;
        anyhow::ensure!(
            series.iter().all(|v| v.is_finite()),
            "stdin line {}: a value is not a finite number",
            i + 1
        );
        let found: Vec<serde_json::Value> = change_points(&series, opts)
            .iter()
            .map(|c| {
                serde_json::json!({
                    "index": c.index,
                    "p_value": c.p_value,
                    "mean_before": c.mean_before,
                    "mean_after": c.mean_after,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::json!({ "change_points": found }))?;
    }
    Ok(0)
}
