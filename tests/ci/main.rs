//! benchgate in CI, through the real binary: the GitHub Action's flows and
//! steps (also under `act`), base vs head, the fake GitHub REST API's
//! comments, pulls, retries and stores, the data branch and its history,
//! GitLab notes, the installer, the action-only tree of the Marketplace listing, `benchgate init`'s kits, the container's init,
//! what the programs benchgate starts may see, and the log fence.
//!
//! One test binary per folder of tests/: each module here was a test binary of
//! its own, and cargo links the crate once per binary (docs/development.md).
//! The test command runs every test in a process of its own (cargo-nextest);
//! scripts/test.sh names the serial set, run last, one test at a time. One
//! module alone: `cargo nextest run --test ci -E 'test(/^NAME::/)'`.

#[path = "../common/mod.rs"]
mod common;
mod github;

mod action;
mod action_act;
mod action_cancel;
mod action_drift;
mod action_github;
mod action_jmh;
mod action_shards;
mod action_steps;
mod base_vs_head;
mod child_env;
mod container_init;
mod data_branch_history;
mod github_comment;
mod github_pulls;
mod github_retry;
mod github_store;
mod gitlab_note;
mod history;
mod init;
mod listing;
mod log_fence;
mod setup_install;
mod terminal_controls;
