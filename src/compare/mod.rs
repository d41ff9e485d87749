//! Comparison of two runs (or two clients of one run) and the gate's verdict.
//! Pure: no I/O. (The statistics land here next; `model` is the contract.)

pub mod model;
pub mod stats;
pub mod verdict;

pub use model::*;
