//! A JMH result file read as a results file (`results::jmh`: `compare`,
//! `merge` and report mode read one where they read benchgate's own), the
//! first byte picking what a trial is (even: a fork, odd: an iteration,
//! `[jmh] iterations_as_trials`). A file that is read must be one a store
//! may keep: its run, written as the stores write it, reads back as itself
//! (issue 53: a figure no reader accepts broke every later lookup); merged
//! with a copy of itself under other benchmark names (`benchgate merge` of
//! shards), the same holds; it compares with itself and renders.
#![no_main]

use benchgate::compare::compare;
use benchgate::config::Suite;
use benchgate::report::run_table::Width;
use benchgate::report::{json, markdown, terminal};
use benchgate::results::jmh::{self, TrialUnit};
use benchgate::results::{jmh_merge, RunResults};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// `run` written as the stores write it (compact, and pretty) reads back as
/// itself, its figures within a rounding: serde_json reads a float back to
/// the nearest double only with its `float_roundtrip` feature, which
/// benchgate does not enable (a figure may come back 1 ULP off).
fn reads_back(run: &RunResults, what: &str) {
    for bytes in [
        serde_json::to_vec(run).unwrap(),
        serde_json::to_vec_pretty(run).unwrap(),
    ] {
        match RunResults::parse_bytes(&bytes, "stored.json") {
            Ok(back) => assert!(
                same(
                    &serde_json::to_value(&back).unwrap(),
                    &serde_json::to_value(run).unwrap()
                ),
                "{what} read back as another run"
            ),
            Err(e) => panic!("{what} was read, but what a store writes of it is not: {e:#}"),
        }
    }
}

/// Whether `a` and `b` are the same document, numbers within 4 ULP.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => {
                x == y || (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs())
            }
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    let trials = match pick % 2 {
        0 => TrialUnit::Forks,
        _ => TrialUnit::Iterations,
    };
    let Ok(run) = jmh::parse(file, "jmh.json", trials) else {
        return;
    };
    reads_back(&run, "a JMH file");
    let mut shard = run.clone();
    for s in &mut shard.config.scenarios {
        s.name = format!("shard.{}", s.name);
    }
    for c in &mut shard.results {
        c.scenario = format!("shard.{}", c.scenario);
    }
    // Names over the limit of a name are refused by the merged file's reader.
    if shard.results.iter().all(|c| c.scenario.len() <= 256) {
        let merged = jmh_merge::merge(vec![
            ("a.json".into(), run.clone()),
            ("b.json".into(), shard),
        ]);
        if let Ok(merged) = merged {
            reads_back(&merged, "a merge of JMH files");
        }
    }
    let gate = Suite::default_suite().gate;
    let cmp = compare(Some(&run), &run, &gate);
    let _ = markdown::render(
        &cmp,
        &run,
        Some(&run),
        &markdown::MarkdownOptions::default(),
    );
    let _ = json::render(&cmp);
    for width in [Width::narrow(), Width::Wide] {
        let _ = terminal::render_comparison(&cmp, false, width);
    }
});
