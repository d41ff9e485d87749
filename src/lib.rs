//! benchgate: benchmark HTTP clients against a local reference server and gate
//! pull requests on the result.
//!
//! Map of the crate, in the order data flows. The layers (which module may use
//! which) are README's "Architecture" table, held by `tests/house/layers.rs`.
//! - [`config`]: `benchgate.toml` (or the built-in default suite) -> validated
//!   [`config::Suite`]; which suite runs ([`config::SuiteChoice`]) and the
//!   command line's overrides; the gate's settings; base-vs-head variants.
//! - [`plan`]: what a run is compared with (a stored run, side by side, base vs
//!   head, nothing), decided once for the CLI and every action flow.
//! - [`orchestrate`]: the parent process of a run: the reference server (or
//!   servers under test), one driver or command-client process per trial,
//!   rounds, extra rounds, signals, the base commit's worktree.
//! - [`engine`]: inside a driver process: schedules (closed/open loop), the
//!   measurement window, recorders; the worker loop over a client, and
//!   h1-lean's own load loop (one thread, an epoll event loop).
//! - [`client`]: the built-in drivers: hyper, reqwest, reqwest-blocking and mock
//!   send one request at a time; h1-lean's HTTP/1.1 connection, request and
//!   response pieces.
//! - [`server`]: the reference server (`benchgate serve`), endpoints, counters.
//! - [`measure`]: the instruments: HDR latency histograms, error classes,
//!   resource usage (CPU, memory, threads).
//! - [`metric`]: what a trial measured and the metric registry (every
//!   metric's unit, direction, default gate, CloudWatch unit, format).
//! - [`results`]: the versioned results file and the environment fingerprint.
//! - [`compare`]: the statistics and the verdict (pure: results + gate ->
//!   comparison); change points and drift in a stored history.
//! - [`report`]: renderers of results and comparisons (terminal, markdown,
//!   JSON, exports); no I/O beyond what they are handed, but for the one
//!   writer of the report files every edge writes ([`report::files`]).
//! - [`baseline`]: baseline stores (local directory; data branch via GitHub),
//!   one index type.
//! - [`github`]: the GitHub REST client, the sticky PR comment, PR lookup.
//! - [`publish`]: CloudWatch (`benchgate publish cloudwatch`).
//! - [`pipeline`]: what the two edges share below them: one run in three
//!   stages (lookup, measure, judge) that each presents its own way; a
//!   branch's stored history analysed; CloudWatch publishing with what
//!   happened printed.
//! - [`commands`]: the CLI's edge: `run`, `compare`, `calibrate`, `serve`,
//!   `publish`, `history`, and the report files their flags ask for.
//! - [`action`]: `benchgate action`: the GitHub Action's flows and steps.
//! - [`retry`], [`files`], [`timer`], [`interrupt`]: the foundation: the retry
//!   policy, atomic writes and appends, a precise timer and the timerfd
//!   wake-up, SIGINT/SIGTERM.

pub mod action;
pub mod baseline;
pub mod cli;
pub mod client;
pub mod commands;
pub mod compare;
pub mod config;
pub mod engine;
pub mod files;
pub mod github;
pub mod interrupt;
pub mod knobs;
pub mod measure;
pub mod metric;
pub mod orchestrate;
pub mod pipeline;
pub mod plan;
pub mod publish;
pub mod report;
pub mod results;
pub mod retry;
pub mod server;
pub mod timer;

/// Every consumer covers every entry of the metric registry.
#[cfg(test)]
mod registry_coverage_tests;

/// The test fixtures under tests/common that the unit tests share with the
/// integration tests (`results::synthetic`, `metric::measured`) name the
/// library `benchgate`, as the integration tests do.
#[cfg(test)]
extern crate self as benchgate;
