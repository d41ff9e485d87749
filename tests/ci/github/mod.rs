//! Helpers shared by the GitHub tests: a fake GitHub REST server.
#![allow(dead_code)]

pub mod client;
pub mod comments;
pub mod fake;
pub mod fake_contents;
pub mod fake_git;
pub mod fake_issues;
pub mod workflow;
