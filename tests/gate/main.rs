//! The gate's inputs and verdicts: the config, comparisons, the budget,
//! calibration, the paired test, reports, result files (JMH's included) and
//! hostile or oversized input, verdicts end to end, and the feature sets.
//!
//! One test binary per folder of tests/: each module here was a test binary of
//! its own, and cargo links the crate once per binary (docs/development.md).
//! The test command runs every test in a process of its own (cargo-nextest);
//! scripts/test.sh names the serial set, run last, one test at a time. One
//! module alone: `cargo nextest run --test gate -E 'test(/^NAME::/)'`.

#[path = "../common/mod.rs"]
mod common;

mod bounded_reads;
mod budget;
mod calibrate;
mod compare;
mod config;
mod feature_sets;
mod gate_config;
mod hostile_inputs;
mod jmh_config;
mod jmh_files;
mod jmh_hostile;
mod jmh_merge;
mod jmh_results;
mod paired_sign;
mod parser_props;
mod refused_histograms;
mod report;
mod server_config;
mod verdict_e2e;
