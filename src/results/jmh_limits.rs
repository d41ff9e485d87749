//! The limits a JMH result file is checked against before serde builds
//! anything from it ([`super::jmh`]), with what each place becomes once read,
//! so that the scanner's memory estimate covers what reading the file
//! allocates: an entry becomes a cell (its scenario, its summary, its names
//! in the index), a fork (or an iteration, `[jmh] iterations_as_trials`) a
//! trial, a SampleTime `[value, count]` pair three copies of 16 bytes.
//!
//! A file holds at most [`MAX_CELLS`] entries, the cell cap of every
//! results file and config: one entry per benchmark, params and mode, so a
//! benchmark in several modes takes several.

use std::mem::size_of;

use crate::config::Scenario;
use crate::files::json::{map_entry_bytes, Cap, Limits, Rule, STRING_BYTES};
use crate::metric::{Family, JmhFigures, METRICS};

use super::check::{MAX_CELLS, MAX_NAME_BYTES, SUMMARY_ENTRY_BYTES};
use super::jmh::TrialUnit;
use super::{CellResult, Trial};

/// Memory a JMH entry takes while read and once a cell: the entry (`Vec`
/// slack included), three copies of its name (the index, the cell, the
/// scenario), its slots in the index maps, its scenario (a copy of the
/// default one), its cell and a summary of every JMH metric.
const ENTRY_BYTES: u64 = 2 * size_of::<super::jmh::Entry>() as u64
    + 3 * (MAX_NAME_BYTES as u64 + STRING_BYTES)
    + 2 * (size_of::<(String, usize)>() as u64 + 1)
    + 2 * (size_of::<(usize, super::jmh::Mode)>() as u64 + 1)
    + 2 * size_of::<(String, Vec<Option<JmhFigures>>)>() as u64
    + 2 * size_of::<Scenario>() as u64
    + SCENARIO_HEAP_BYTES
    + 2 * size_of::<CellResult>() as u64
    + STRING_BYTES
    + jmh_metrics() * (SUMMARY_ENTRY_BYTES + 2 * STRING_BYTES);

/// What the default scenario a JMH cell copies holds on the heap (its path
/// and its one client's name), with room to spare.
const SCENARIO_HEAP_BYTES: u64 = 256;

/// Memory a trial takes: its `Trial` and its figures (`Vec` slack
/// included), and the value and where it is while read.
const TRIAL_BYTES: u64 = 2 * size_of::<Trial>() as u64
    + 2 * size_of::<Option<JmhFigures>>() as u64
    + 2 * size_of::<(String, f64)>() as u64
    + STRING_BYTES;

/// Memory a SampleTime `[value, count]` pair takes: read into a `Vec`
/// (slack included), copied into its trial's samples.
const PAIR_BYTES: u64 = 3 * size_of::<(f64, u64)>() as u64;

/// Memory an array item takes where no rule says otherwise: numbers and
/// arrays of them in `Vec`s, with slack.
const ITEM_BYTES: u64 = 64;

/// How many metrics a JMH cell may summarize.
const fn jmh_metrics() -> u64 {
    let (mut n, mut i) = (0, 0);
    while i < METRICS.len() {
        if matches!(METRICS[i].family, Family::Jmh) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The limits of a JMH result file read with `trials` as its trials.
pub fn limits(trials: TrialUnit) -> Limits {
    Limits {
        // [entry].primaryMetric.rawDataHistogram[fork][iteration][pair][2]
        depth: 16,
        values: 64_000_000,
        key_bytes: 256,
        text_bytes: 16 * 1024,
        items: 100_000,
        item_bytes: ITEM_BYTES,
        // Structs (every secondary metric but one is skipped unbuilt); the
        // params map has a rule.
        member_bytes: 0,
        extra_bytes: 512 << 20,
        rules: match trials {
            TrialUnit::Forks => &FORKS,
            TrialUnit::Iterations => &ITERATIONS,
        },
    }
}

/// The rules of a file whose trials are at `trials` below `primaryMetric`:
/// a fork (`rawData[fork]`) or an iteration (`rawData[fork][iteration]`).
const fn rules(trial: &'static str, at_iteration: bool) -> [Rule; 6] {
    let trial_cap = Cap::Items {
        max: 100_000,
        unit: trial,
        bytes: ITEM_BYTES + TRIAL_BYTES,
    };
    let (raw_data, histogram): (&[&str], &[&str]) = match at_iteration {
        false => (
            &["*", "primaryMetric", "rawData"],
            &["*", "primaryMetric", "rawDataHistogram"],
        ),
        true => (
            &["*", "primaryMetric", "rawData", "*"],
            &["*", "primaryMetric", "rawDataHistogram", "*"],
        ),
    };
    [
        Rule {
            path: &[],
            cap: Cap::Items {
                max: MAX_CELLS,
                unit: "results (a benchmark with its params in one mode each)",
                bytes: ENTRY_BYTES,
            },
        },
        Rule {
            path: &["*", "params"],
            cap: Cap::Items {
                max: 100_000,
                unit: "params",
                bytes: map_entry_bytes(size_of::<String>(), size_of::<String>()),
            },
        },
        Rule {
            path: raw_data,
            cap: trial_cap,
        },
        Rule {
            path: histogram,
            cap: trial_cap,
        },
        Rule {
            path: &["*", "primaryMetric", "rawDataHistogram", "*", "*"],
            cap: Cap::Items {
                max: 10_000_000,
                unit: "[value, count] pairs",
                bytes: PAIR_BYTES,
            },
        },
        // A pair's two numbers are inside its 16 bytes.
        Rule {
            path: &["*", "primaryMetric", "rawDataHistogram", "*", "*", "*"],
            cap: Cap::Items {
                max: 2,
                unit: "numbers (a [value, count] pair)",
                bytes: 0,
            },
        },
    ]
}

static FORKS: [Rule; 6] = rules("forks", false);
static ITERATIONS: [Rule; 6] = rules("iterations", true);
