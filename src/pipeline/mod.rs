//! One run in three stages, for both edges: the CLI's `benchgate run`
//! ([`crate::commands`]) and the GitHub Action's flows ([`crate::action`])
//! call them in a row, or (the action's split steps) one per process with
//! the record in a file; each edge only presents what they do
//! ([`Events`]).
//!
//! - [`lookup()`] -> [`Lookup`]: what the run is compared with (the edge's
//!   `Asked` resolved once; under base vs head the base commit's gate), and
//!   the stored run that takes (a file, a store, or what an earlier step
//!   recorded), the store's notes, the trend;
//! - [`measure()`] -> [`Measured`]: the suite cut to its shard, the plan's
//!   reachability checked, the base commit checked out beside the workspace
//!   (base vs head), the rounds with extra ones while the plan's comparison
//!   is undecided (`orchestrate::extend`), and the interrupt check;
//! - [`judge()`] -> [`Judged`]: every comparison of the results, the gating
//!   one and the informative one with the stored run.
//!
//! Also shared, below the edges:
//! - [`history`]: a branch's stored history, with the change points of each
//!   gating series (`benchgate history`, the action's nightly drift check),
//!   and the trend charts' points;
//! - [`cloudwatch`]: publishing to CloudWatch, with what happened printed
//!   (`benchgate publish cloudwatch`, the action's push and schedule flows).

pub mod cloudwatch;
pub mod history;
mod judge;
mod lookup;
mod measure;

pub use judge::{judge, Judged};
pub use lookup::{lookup, Baseline, Lookup, Where};
pub use measure::{measure, Events, Measured, Options};
