//! benchgate: benchmark HTTP clients against a local reference server and gate
//! pull requests on the result.
//!
//! Map of the crate (the pipeline, in order):
//! - [`config`]: `benchgate.toml` -> validated [`config::Suite`]; the default suite.
//! - [`server`]: the reference server (`benchgate serve`), its endpoints and counters.
//! - [`client`]: drivers that send one request: hyper, reqwest, reqwest-blocking, mock.
//! - [`engine`]: schedules (closed/open loop), the measurement window, recorders.
//! - [`metrics`]: HDR latency histograms, error classes, resource usage.
//! - [`results`]: the versioned results file and the environment fingerprint.
//! - [`plan`]: what a run is compared with (stored run, side by side, nothing),
//!   decided once for the CLI and every action flow.
//! - [`runner`]: `benchgate run`: the reference server (or servers under test) as
//!   processes, one driver process per trial.
//! - [`calibrate`]: `benchgate calibrate`: A/A runs, noise, suggested thresholds.
//! - [`report`]: renderers (terminal table).
//! - [`publish`]: side effects after a run: CloudWatch (`benchgate publish cloudwatch`).
//! - [`baseline`]: baseline stores (local directory; data branch via GitHub).
//! - [`github`]: the GitHub REST client (when to retry), the sticky PR comment, PR lookup.
//! - [`retry`]: the retry policy (backoff with jitter, bounded) every client shares.
//! - [`action`]: `benchgate action`, the GitHub Action's container entrypoint.
//! - [`files`]: atomic writes and appends (the one place files are replaced).
//! - [`timer`]: a precise timer (tokio's rounds to 1 ms).

pub mod action;
pub mod baseline;
pub mod calibrate;
pub mod cli;
pub mod client;
pub mod commands;
pub mod compare;
pub mod config;
pub mod engine;
pub mod files;
pub mod github;
pub mod metrics;
pub mod plan;
pub mod publish;
pub mod report;
pub mod results;
pub mod retry;
pub mod runner;
pub mod server;
pub mod timer;

/// Every consumer covers every entry of the metric registry.
#[cfg(test)]
mod registry_coverage_tests;
