//! Results files are untrusted input (they come back from artifact stores and data
//! branches): after parsing, every number that is a measurement must be finite and
//! non-negative, and ratios at most 1. (`serde_json` already rejects `NaN` and
//! `Infinity` literals and out-of-range numbers.)

use super::RunResults;
use crate::metric::METRICS;

/// Most cells (scenario x client x server) a results file may hold; real suites have tens.
pub const MAX_CELLS: usize = 10_000;
/// Most trials per cell; real runs have 3 to 30.
pub const MAX_TRIALS: usize = 1_000;
/// Longest name (scenario, client, server) and object key (metric names and
/// every other key) in bytes; config names are a few dozen at most.
pub const MAX_NAME_BYTES: usize = 256;

/// Structural limits on an untrusted results document, checked on the parsed
/// JSON before it becomes a [`RunResults`] (and before any histogram is decoded):
/// [`MAX_CELLS`], [`MAX_TRIALS`] per cell, [`MAX_NAME_BYTES`] for cell names
/// and every object key. The error names the file, where, and the limit.
pub fn check_limits(doc: &serde_json::Value, source: &str) -> anyhow::Result<()> {
    let over = |what: String, n: usize, limit: usize, unit: &str| {
        anyhow::anyhow!(
            "{source}: {what} has {n} {unit}, over the limit of {limit}; the file is corrupt or was not written by benchgate"
        )
    };
    if let Some(cells) = doc.get("results").and_then(|r| r.as_array()) {
        if cells.len() > MAX_CELLS {
            return Err(over("results".into(), cells.len(), MAX_CELLS, "cells"));
        }
        for (i, cell) in cells.iter().enumerate() {
            for name in ["scenario", "client", "server"] {
                if let Some(text) = cell.get(name).and_then(|v| v.as_str()) {
                    if text.len() > MAX_NAME_BYTES {
                        return Err(over(
                            format!("results[{i}].{name}"),
                            text.len(),
                            MAX_NAME_BYTES,
                            "bytes",
                        ));
                    }
                }
            }
            if let Some(trials) = cell.get("trials").and_then(|t| t.as_array()) {
                if trials.len() > MAX_TRIALS {
                    return Err(over(
                        format!("results[{i}].trials"),
                        trials.len(),
                        MAX_TRIALS,
                        "trials",
                    ));
                }
            }
        }
    }
    // Every key anywhere (metric names, summary keys, config keys): iterative,
    // so a deeply nested document cannot overflow the stack here.
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    if k.len() > MAX_NAME_BYTES {
                        let shown: String = k.chars().take(32).collect();
                        return Err(over(
                            format!("the key starting {shown:?}"),
                            k.len(),
                            MAX_NAME_BYTES,
                            "bytes",
                        ));
                    }
                    stack.push(v);
                }
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    Ok(())
}

/// Checks every measured value; the error names the file, the field and the fix.
pub fn check_values(r: &RunResults, source: &str) -> anyhow::Result<()> {
    let bad = |field: String, v: f64, rule: &str| {
        anyhow::anyhow!(
            "{source}: {field} is {v}, but {rule}; the file is corrupt or was not written by benchgate: re-run the benchmark to regenerate it"
        )
    };
    let mut cells = std::collections::HashSet::new();
    for (i, cell) in r.results.iter().enumerate() {
        let at = format!(
            "results[{i}] (scenario {:?}, client {:?})",
            cell.scenario, cell.client
        );
        // A repeated cell would shadow or be shadowed by the first one in reports and gates.
        if !cells.insert((&cell.scenario, &cell.client, &cell.server)) {
            anyhow::bail!(
                "{source}: {at} repeats an earlier cell (server {:?}); benchgate writes each cell once: the file is corrupt or was edited, re-run the benchmark to regenerate it",
                cell.server
            );
        }
        for (j, trial) in cell.trials.iter().enumerate() {
            for (name, v) in [
                ("window_planned_s", trial.window_planned_s),
                ("window_actual_s", trial.window_actual_s),
            ] {
                if let Some(v) = v.filter(|v| !v.is_finite() || *v < 0.0) {
                    let field = format!("{at}.trials[{j}].{name}");
                    return Err(bad(field, v, "a window's length must be finite and >= 0"));
                }
            }
            let Some(m) = &trial.metrics else { continue };
            // (name, value, the registry's bound)
            let mut values: Vec<(String, f64, Option<f64>)> = METRICS
                .iter()
                .filter_map(|d| Some((d.name.to_string(), (d.value)(m)?, d.max)))
                .collect();
            values.push(("elapsed_s".into(), m.elapsed_s, None));
            if let Some(u) = &m.latency_uncorrected {
                values.push(("latency_uncorrected.mean_us".into(), u.mean_us, None));
                values.push(("latency_uncorrected.stdev_us".into(), u.stdev_us, None));
            }
            for (name, v, max) in values {
                let field = format!("{at}.trials[{j}].metrics.{name}");
                if !v.is_finite() || v < 0.0 {
                    return Err(bad(field, v, "measured values must be finite and >= 0"));
                }
                if let Some(max) = max.filter(|max| v > *max) {
                    return Err(bad(field, v, &format!("a rate is at most {max}")));
                }
            }
        }
        for (name, s) in &cell.summary {
            for (what, v) in [("median", s.median), ("min", s.min), ("max", s.max)] {
                if !v.is_finite() || v < 0.0 {
                    return Err(bad(
                        format!("{at}.summary.{name}.{what}"),
                        v,
                        "measured values must be finite and >= 0",
                    ));
                }
            }
        }
    }
    if let Some(info) = &r.shard {
        super::merge::check(info, source)?;
    }
    for (i, b) in r.budget.iter().enumerate() {
        let at = format!("budget[{i}] (scenario {:?})", b.scenario);
        for (name, v) in [("share_s", b.share_s), ("elapsed_s", b.elapsed_s)] {
            if !v.is_finite() || v < 0.0 {
                return Err(bad(
                    format!("{at}.{name}"),
                    v,
                    "a time must be finite and >= 0",
                ));
            }
        }
        for (j, look) in b.looks.iter().enumerate() {
            if !(look.alpha > 0.0 && look.alpha <= 0.5) {
                return Err(bad(
                    format!("{at}.looks[{j}].alpha"),
                    look.alpha,
                    "a look's alpha must be above 0 and at most 0.5",
                ));
            }
        }
    }
    let alpha = r.config.gate.alpha;
    if !(alpha > 0.0 && alpha <= 0.5) {
        return Err(bad(
            "config.gate.alpha".into(),
            alpha,
            "alpha must be above 0 and at most 0.5",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::synthetic;

    #[test]
    fn negative_and_non_finite_values_are_named() {
        let mut r = synthetic::run(crate::config::Suite::default_suite(), 2, |_, _, _| {
            Some(synthetic::metrics(100.0, 50.0, 10.0))
        });
        assert!(check_values(&r, "f.json").is_ok());
        r.results[1].trials[0]
            .metrics
            .as_mut()
            .unwrap()
            .latency_p99_us = Some(-1.0);
        let e = check_values(&r, "f.json").unwrap_err().to_string();
        assert!(e.starts_with("f.json: results[1] (scenario \"get-22b\", client \"reqwest\").trials[0].metrics.latency_p99_us is -1"), "{e}");
        assert!(e.contains("re-run the benchmark"), "{e}");
        r.results[1].trials[0]
            .metrics
            .as_mut()
            .unwrap()
            .latency_p99_us = Some(f64::INFINITY);
        assert!(check_values(&r, "f.json").is_err());
        r.results[1].trials[0]
            .metrics
            .as_mut()
            .unwrap()
            .latency_p99_us = Some(1.0);
        r.results[0].trials[1].metrics.as_mut().unwrap().error_rate = 2.0;
        let e = check_values(&r, "f.json").unwrap_err().to_string();
        assert!(
            e.contains("error_rate is 2, but a rate is at most 1"),
            "{e}"
        );
        r.results[0].trials[1].metrics.as_mut().unwrap().error_rate = 0.0;
        r.results[0].trials[1].window_planned_s = Some(0.15);
        r.results[0].trials[1].window_actual_s = Some(0.0004);
        assert!(check_values(&r, "f.json").is_ok());
        r.budget.push(crate::results::budget::ScenarioBudget {
            scenario: "get-22b".into(),
            share_s: 60.0,
            elapsed_s: 12.0,
            rounds: 10,
            looks: vec![crate::results::budget::Look {
                round: 10,
                alpha: 0.05,
            }],
            stopped: crate::results::budget::Stop::Decided,
        });
        assert!(check_values(&r, "f.json").is_ok());
        r.budget[0].looks[0].alpha = 0.0;
        let e = check_values(&r, "f.json").unwrap_err().to_string();
        assert!(
            e.contains("budget[0] (scenario \"get-22b\").looks[0].alpha is 0"),
            "{e}"
        );
        r.budget[0].looks[0].alpha = 0.05;
        r.budget[0].elapsed_s = f64::NAN;
        assert!(check_values(&r, "f.json").is_err());
        r.budget.clear();
        r.results[0].trials[1].window_actual_s = Some(-0.1);
        let e = check_values(&r, "f.json").unwrap_err().to_string();
        assert!(e.contains(".trials[1].window_actual_s is -0.1"), "{e}");
        r.results[0].trials[1].window_actual_s = None;
        r.results[0].trials[1].window_planned_s = Some(f64::NAN);
        let e = check_values(&r, "f.json").unwrap_err().to_string();
        assert!(e.contains(".trials[1].window_planned_s is NaN"), "{e}");
    }
}
