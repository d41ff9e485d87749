//! benchgate: benchmark HTTP clients against a local reference server and gate
//! pull requests on the result.
//!
//! Map of the crate (the pipeline, in order):
//! - [`config`]: `benchgate.toml` -> validated [`config::Suite`]; the default suite.
//! - [`server`]: the reference server (`benchgate serve`), its endpoints and counters.

pub mod config;
pub mod server;
