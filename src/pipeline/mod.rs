//! What both edges share, below them: the CLI's subcommands
//! ([`crate::commands`]) and the GitHub Action's flows ([`crate::action`])
//! call these and only present the result their own way.
//!
//! - [`history`]: a branch's stored history, with the change points of each
//!   gating series (`benchgate history`, the action's nightly drift check);
//! - [`cloudwatch`]: publishing to CloudWatch, with what happened printed
//!   (`benchgate publish cloudwatch`, the action's push and schedule flows).

pub mod cloudwatch;
pub mod history;
