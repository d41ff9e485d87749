//! Results files are untrusted input (they come back from artifact stores and data
//! branches): their JSON is checked against [`LIMITS`] before anything is
//! built from it ([`scan`]), and after parsing, every number that is a
//! measurement must be finite and non-negative, and ratios at most 1
//! ([`check_values`]). (`serde_json` already rejects `NaN` and `Infinity`
//! literals and out-of-range numbers.)

use std::mem::size_of;

use super::{CellResult, RunResults, Trial};
use crate::files::json::{self, Breach, Cap, Limits, Rule};
use crate::metric::METRICS;

/// Most cells (scenario x client x server) a results file may hold; real
/// suites have tens. One limit with what a config may make.
pub use crate::config::limits::MAX_CELLS;
/// Most trials per cell; real runs have 3 to 30.
pub const MAX_TRIALS: usize = 1_000;
/// Longest name (scenario, client, server) and object key (metric names and
/// every other key) in bytes; config names are a few dozen at most.
pub const MAX_NAME_BYTES: usize = 256;
/// Longest free text where no other cap applies (run id, git ref and sha,
/// CPU model, kernel, times, a starved trial's reason); real ones are under
/// 200 bytes, and reports print them.
pub const MAX_TEXT_BYTES: usize = 4 * 1024;
/// Longest failure reason: it may quote the last 2 KiB of a command
/// client's stdout and stderr (lossily decoded, so up to three times that).
pub const MAX_FAILURE_BYTES: usize = 64 * 1024;
/// Memory a results file's cells, trials and strings may take beyond the
/// file's own size once read: with the bytes read and the strings copied
/// out of them, reading a file takes at most twice its size plus this. One
/// limit with what a config may make: a suite whose cells and rounds would
/// take more is refused at load (`config::limits`, whose estimates of a
/// cell and a trial the tests below hold to this reader's count).
pub use crate::config::limits::MAX_RESULTS_EXTRA_BYTES as MAX_EXTRA_BYTES;

/// Most items of an array or members of an object where no rule says otherwise.
const MAX_ITEMS: usize = 10_000;

/// A summary entry: its share of a `BTreeMap` node (key and
/// [`crate::metric::Spread`]); the key's heap is counted as a map key.
pub(crate) const SUMMARY_ENTRY_BYTES: u64 =
    json::map_entry_bytes(size_of::<String>(), size_of::<crate::metric::Spread>());

/// An entry of a map of strings (`env`, `dimensions`): its share of a node;
/// the key's and the value's heap are counted as strings.
const STRING_MAP_ENTRY_BYTES: u64 = json::map_entry_bytes(size_of::<String>(), size_of::<String>());

/// The limits of a results file, by place. A `Vec` item is counted twice
/// its size: a growing `Vec` holds up to twice its length. A struct's
/// members cost nothing (they are inside it); the maps of the schema
/// (`schema/results.schema.json`'s objects with `additionalProperties`) and
/// the internally tagged enums, whose members serde buffers before it reads
/// them, have rules of their own.
pub const LIMITS: Limits = Limits {
    // Real files nest 6 deep (results, cell, trials, trial, metrics, errors).
    depth: 32,
    values: 16_000_000,
    key_bytes: MAX_NAME_BYTES,
    text_bytes: MAX_TEXT_BYTES,
    items: MAX_ITEMS,
    // Every other `Vec`'s items are structs of at most 264 bytes (a merged
    // shard), strings or numbers.
    item_bytes: 512,
    member_bytes: 0,
    extra_bytes: MAX_EXTRA_BYTES,
    rules: &[
        Rule {
            path: &["results"],
            cap: Cap::Items {
                max: MAX_CELLS,
                unit: "cells",
                bytes: 2 * size_of::<CellResult>() as u64,
            },
        },
        Rule {
            path: &["results", "*", "trials"],
            cap: Cap::Items {
                max: MAX_TRIALS,
                unit: "trials",
                bytes: 2 * size_of::<Trial>() as u64,
            },
        },
        Rule {
            path: &["results", "*", "summary"],
            cap: Cap::Items {
                max: 4 * METRICS.len(),
                unit: "metrics",
                bytes: SUMMARY_ENTRY_BYTES,
            },
        },
        // A trial's marks and a scenario's load are internally tagged.
        Rule {
            path: &["results", "*", "trials", "*", "invalid", "*", "**"],
            cap: Cap::Items {
                max: MAX_ITEMS,
                unit: "items",
                bytes: json::BUFFERED_BYTES,
            },
        },
        Rule {
            path: &["config", "scenarios", "*", "load", "**"],
            cap: Cap::Items {
                max: MAX_ITEMS,
                unit: "items",
                bytes: json::BUFFERED_BYTES,
            },
        },
        Rule {
            path: &["config", "clients", "*", "kind", "command", "env"],
            cap: Cap::Items {
                max: MAX_ITEMS,
                unit: "variables",
                bytes: STRING_MAP_ENTRY_BYTES,
            },
        },
        Rule {
            path: &["config", "servers", "*", "target", "command", "env"],
            cap: Cap::Items {
                max: MAX_ITEMS,
                unit: "variables",
                bytes: STRING_MAP_ENTRY_BYTES,
            },
        },
        Rule {
            path: &["config", "publish", "cloudwatch", "dimensions"],
            cap: Cap::Items {
                max: MAX_ITEMS,
                unit: "dimensions",
                bytes: STRING_MAP_ENTRY_BYTES,
            },
        },
        Rule {
            path: &["results", "*", "scenario"],
            cap: Cap::Text(MAX_NAME_BYTES),
        },
        Rule {
            path: &["results", "*", "client"],
            cap: Cap::Text(MAX_NAME_BYTES),
        },
        Rule {
            path: &["results", "*", "server"],
            cap: Cap::Text(MAX_NAME_BYTES),
        },
        Rule {
            path: &["results", "*", "histogram"],
            cap: Cap::Text(crate::measure::histogram::MAX_ENCODED_CHARS),
        },
        Rule {
            path: &["results", "*", "histogram_uncorrected"],
            cap: Cap::Text(crate::measure::histogram::MAX_ENCODED_CHARS),
        },
        Rule {
            path: &["results", "*", "trials", "*", "failure"],
            cap: Cap::Text(MAX_FAILURE_BYTES),
        },
        // The resolved config: no string of it is longer than its file.
        Rule {
            path: &["config", "**"],
            cap: Cap::Text(crate::config::MAX_CONFIG_BYTES as usize),
        },
    ],
};

/// Checks a results document's bytes against [`LIMITS`] before anything is
/// built from them. The error names the file, where, and the limit.
pub fn scan(bytes: &[u8], source: &str) -> anyhow::Result<()> {
    match json::scan(bytes, &LIMITS) {
        Ok(()) => Ok(()),
        Err(Breach::Syntax(e)) => {
            Err(anyhow::anyhow!("{e}").context(format!("{source} is not valid JSON")))
        }
        Err(breach) => Err(anyhow::anyhow!(
            "{source}: {breach}; the file is corrupt or was not written by benchgate"
        )),
    }
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
        let times = [
            ("share_s", Some(b.share_s)),
            ("elapsed_s", Some(b.elapsed_s)),
            ("rounds_s", b.rounds_s),
        ];
        for (name, v) in times.into_iter().filter_map(|(n, v)| Some((n, v?))) {
            if !v.is_finite() || v < 0.0 {
                return Err(bad(
                    format!("{at}.{name}"),
                    v,
                    "a time must be finite and >= 0",
                ));
            }
        }
        let looks = b.looks.iter().enumerate();
        let decided = b.decided.iter().enumerate();
        let alphas = (looks.map(|(j, l)| (format!("looks[{j}]"), l.alpha)))
            .chain(decided.map(|(j, d)| (format!("decided[{j}]"), d.alpha)));
        for (name, alpha) in alphas {
            if !(alpha > 0.0 && alpha <= 0.5) {
                return Err(bad(
                    format!("{at}.{name}.alpha"),
                    alpha,
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

    fn run() -> RunResults {
        synthetic::run(crate::config::Suite::default_suite(), 3, |_, c, round| {
            (c != "reqwest" || round != 2).then(|| synthetic::metrics(100.0, 50.0, 10.0))
        })
    }

    #[test]
    fn a_written_file_reads_back_as_it_was() {
        let mut r = run();
        let mut h = crate::measure::LatencyHistogram::new();
        h.record(std::time::Duration::from_micros(120));
        r.results[0].histogram = Some(h.encode());
        r.results[0].trials[0].started_at = Some("2026-11-30T01:02:03.123456Z".into());
        r.results[1].trials[1].failure = Some("é\"\n".repeat(MAX_FAILURE_BYTES / 4));
        r.results[2].trials[0].invalid = vec![crate::results::validity::InvalidMark::Starved {
            reason: "run delay".into(),
        }];
        for bytes in [
            serde_json::to_vec_pretty(&r).unwrap(),
            serde_json::to_vec(&r).unwrap(),
        ] {
            let back = RunResults::parse_bytes(&bytes, "r.json").unwrap();
            assert_eq!(back, r);
            assert_eq!(
                serde_json::to_vec_pretty(&back).unwrap(),
                serde_json::to_vec_pretty(&r).unwrap()
            );
        }
    }

    fn refused(doc: &serde_json::Value) -> String {
        format!(
            "{:#}",
            RunResults::parse_bytes(doc.to_string().as_bytes(), "r.json").unwrap_err()
        )
    }

    #[test]
    fn free_text_is_capped_where_it_is() {
        let doc = serde_json::to_value(run()).unwrap();
        let at = |path: &str, len: usize| {
            let mut doc = doc.clone();
            *doc.pointer_mut(path).unwrap() = "x".repeat(len).into();
            doc
        };
        for path in [
            "/run_id",
            "/git/ref",
            "/environment/cpu_model",
            "/started_at",
        ] {
            RunResults::parse_bytes(at(path, MAX_TEXT_BYTES).to_string().as_bytes(), "r.json")
                .unwrap();
            let shown = path[1..].replace('/', ".");
            assert_eq!(
                refused(&at(path, MAX_TEXT_BYTES + 1)),
                format!("r.json: {shown} has 4097 bytes, over the limit of 4096; the file is corrupt or was not written by benchgate")
            );
        }
        let failure = "/results/1/trials/1/failure";
        RunResults::parse_bytes(
            at(failure, MAX_FAILURE_BYTES).to_string().as_bytes(),
            "r.json",
        )
        .unwrap();
        assert!(refused(&at(failure, MAX_FAILURE_BYTES + 1)).starts_with(
            "r.json: results[1].trials[1].failure has 65537 bytes, over the limit of 65536"
        ));
    }

    #[test]
    fn small_trials_cannot_take_unbounded_memory() {
        // 40 cells of 1,000 trials of nothing: a 0.5 MB file that would take
        // 40,000 x size_of::<Trial>() bytes (twice, for the growing Vecs) once
        // read.
        let mut doc = serde_json::to_value(run()).unwrap();
        let cell = &doc["results"][0];
        let mut cell = cell.clone();
        cell["trials"] = serde_json::Value::Array(vec![serde_json::json!({"round": 1}); 1_000]);
        doc["results"] = (0..40)
            .map(|i| {
                let mut c = cell.clone();
                c["client"] = format!("c{i}").into();
                c
            })
            .collect();
        let e = refused(&doc);
        let said: usize = e
            .strip_prefix("r.json: its items would take about ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{e}"));
        // The trials' share, and a little for the 40 cells around them.
        let trials = (40_000 * 2 * size_of::<Trial>()) >> 20;
        assert!(
            (trials..trials + 4).contains(&said),
            "{said} MiB, trials {trials}: {e}"
        );
        assert!(
            e.contains(" MiB of memory beyond the file's own size, over the limit of 64 MiB"),
            "{e}"
        );
        // 30 such cells: read.
        doc["results"].as_array_mut().unwrap().truncate(30);
        assert_eq!(
            RunResults::parse_bytes(doc.to_string().as_bytes(), "r.json")
                .unwrap()
                .results
                .len(),
            30
        );
    }

    #[test]
    fn the_version_is_read_before_the_rest() {
        let mut doc = serde_json::to_value(run()).unwrap();
        doc["schema_version"] = 2.into();
        doc["unknown"] = true.into();
        assert!(refused(&doc)
            .starts_with("r.json has schema_version 2, but this benchgate reads version 1"));
        for not_a_version in [
            serde_json::json!("1"),
            serde_json::json!(1.0),
            serde_json::json!([1]),
            serde_json::json!({"v": 1}),
        ] {
            doc["schema_version"] = not_a_version;
            assert!(refused(&doc).starts_with("r.json has no numeric schema_version"));
        }
        // An array is no benchgate results file: it is read as a JMH one.
        assert!(refused(&serde_json::json!([1])).starts_with(
            "r.json is a JSON array, read as a JMH result file, but its entries are not JMH results"
        ));
        doc["schema_version"] = 1.into();
        assert!(refused(&doc)
            .starts_with("r.json does not match the results schema v1: unknown field `unknown`"));
        // Twice, even with the same value: called duplicated, not missing.
        let twice = doc.to_string().replacen("{", "{\"schema_version\":1,", 1);
        let e = RunResults::parse_bytes(twice.as_bytes(), "r.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("r.json has schema_version twice (duplicate field `schema_version` at line 1 column "),
            "{e}"
        );
        let e = format!(
            "{:#}",
            RunResults::parse_bytes(b"{\"schema_version\": 1,", "r.json").unwrap_err()
        );
        assert_eq!(
            e,
            "r.json is not valid JSON: EOF while parsing an object at line 1 column 21"
        );
        let e = RunResults::parse_bytes(b"{\"run_id\": \"\xff\"}", "r.json").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("r.json is not UTF-8 text (byte 12 is not)"),
            "{e}"
        );
    }

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
            rounds_s: None,
            rounds: 10,
            looks: vec![crate::results::budget::Look {
                round: 10,
                alpha: 0.05,
            }],
            decided: vec![crate::results::budget::Decided {
                client: "hyper".into(),
                server: None,
                metric: "throughput_rps".into(),
                round: 10,
                alpha: 0.05,
            }],
            undecidable: vec![],
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
        r.budget[0].decided[0].alpha = 0.7;
        let e = check_values(&r, "f.json").unwrap_err().to_string();
        assert!(
            e.contains("budget[0] (scenario \"get-22b\").decided[0].alpha is 0.7"),
            "{e}"
        );
        r.budget[0].decided[0].alpha = 0.05;
        r.budget[0].elapsed_s = f64::NAN;
        assert!(check_values(&r, "f.json").is_err());
        r.budget[0].elapsed_s = 12.0;
        r.budget[0].rounds_s = Some(-1.0);
        let e = check_values(&r, "f.json").unwrap_err().to_string();
        assert!(
            e.contains("budget[0] (scenario \"get-22b\").rounds_s is -1"),
            "{e}"
        );
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

#[cfg(test)]
#[path = "check_estimate_tests.rs"]
mod estimate_tests;
