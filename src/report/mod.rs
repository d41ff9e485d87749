//! Renderers: results and comparisons in, strings or bytes out. Where they go
//! (stdout, a file, a PR comment, `$GITHUB_STEP_SUMMARY`) is decided by the caller.
//!
//! - [`terminal`]: the run table and the comparison table, optional colour;
//! - [`markdown`]: the pull-request comment and the job summary, and the
//!   report of a run compared with nothing;
//! - [`run_table`]: a run's table as text, which both show;
//! - [`json`]: the comparison as JSON (`schema/comparison.schema.json`);
//! - [`drift`]: `benchgate history`'s change points (terminal, JSON; its
//!   markdown is in [`markdown`]);
//! - [`export`]: files for other tools (github-action-benchmark, `.hgrm`);
//! - [`files`]: the one writer of the report files the CLI and the action
//!   ask for (the comment's markdown, the job summary, JSON, exports);
//! - [`untrusted`]: the one print path for untrusted text (a program's
//!   output, names, errors quoting them) to a terminal or a log.

pub mod drift;
pub mod escape;
pub mod export;
pub mod files;
pub mod format;
pub mod json;
pub mod markdown;
pub mod rows;
pub mod run_table;
pub mod spent;
pub mod terminal;
pub mod undecided;
pub mod untrusted;

/// What every report says next to the verdict of an optimistic comparison
/// ([`crate::compare::Comparison::optimistic`]).
pub const OPTIMISTIC_NOTE: &str = "optimistic: iterations of one JMH fork taken as independent trials ([jmh] iterations_as_trials); they share the fork's JIT and GC state, so the intervals are narrower than the truth: run -f 4 or more forks to drop this";
