//! The built-in driver in the window loop (`window_loop`; WINDOW-LOOP.md):
//! one process, warmed once, measuring the windows the parent opens and
//! closes on its stdin, each window's record one `BENCHGATE-WINDOW-RESULT`
//! line on its stdout (nothing else is printed there).
//!
//! The client (its runtime and connection pool) is built and its workers
//! started once ([`crate::engine::warm`]): they send, unmeasured, from the
//! start to the parent's exit; an open and a close only switch counting on
//! and off. A pause stops the workers once what is in flight is done, then
//! the driver answers `BENCHGATE-PAUSED` and waits (the parent may stop its
//! process group).

use std::io::{BufRead as _, Write as _};

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};

use super::driver::{Client, TrialSpec};
use super::window_loop::{Command, DECLARE, PAUSED, READY, RESULT};
use crate::engine::warm::Warm;
use crate::engine::{Outcome, TrialPlan};
use crate::measure::resources::{self_cpu, CpuTimes};
use crate::measure::schedstat::{Edge, Starvation};

/// A window's record as the driver writes it after `BENCHGATE-WINDOW-RESULT`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverWindow {
    pub window: u32,
    pub outcome: Outcome,
    /// What the machine withheld from the driver's threads in the window.
    pub starvation: Option<Starvation>,
    /// The first window only: the client's start-up, its first response
    /// (warmup included) on the system-wide monotonic clock and the
    /// driver's own CPU from its start until the window opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_response_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_cpu: Option<CpuTimes>,
}

/// One line on stdout, flushed (a closed pipe ends the driver).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

/// The driver's workers, started, unmeasured.
fn start(spec: &TrialSpec) -> anyhow::Result<Warm> {
    let plan = TrialPlan {
        warmup: std::time::Duration::ZERO,
        ..TrialPlan::of(&spec.scenario)
    };
    Ok(match Client::build(spec, &plan)? {
        Some(Client::Async(runtime, client)) => Warm::start_async(runtime, client, plan),
        Some(Client::Blocking(client)) => Warm::start_blocking(client, plan),
        None => bail!(
            "client {} has no window loop in a driver process",
            spec.client.name
        ),
    })
}

/// The window loop in this process (a forked trial's,
/// [`super::trial::forked`]); returns when told to exit.
pub fn drive_loop(spec: &TrialSpec) -> anyhow::Result<()> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match Command::parse(&line) {
                Ok(c) => {
                    if tx.send(c).is_err() {
                        return;
                    }
                }
                Err(e) => crate::stderrln!("benchgate driver: {e}"),
            }
        }
    });
    say(DECLARE);
    let mut warm = start(spec)?;
    warm.sleep(spec.scenario.warmup);
    say(READY);
    let me = [std::process::id()];
    // The open window: its number and the starvation counters at its open.
    let mut open: Option<(u32, Edge)> = None;
    let mut startup_cpu = None;
    loop {
        // Stdin closed: as an exit.
        let Some(command) = warm.recv(&mut rx) else {
            return Ok(());
        };
        match (command, &open) {
            (Command::Open(k), None) => {
                let edge = Edge::read(&me);
                if k == 1 {
                    startup_cpu = Some(self_cpu());
                }
                warm.open();
                open = Some((k, edge));
            }
            (Command::Close(k), Some((o, _))) if k == *o => {
                let outcome = warm.close().context("no window was open")?;
                let starvation = open.take().map(|(_, e)| Edge::read(&me).since(&e));
                let record = DriverWindow {
                    window: k,
                    outcome,
                    starvation,
                    first_response_ns: (k == 1).then(|| warm.first_response_ns()).flatten(),
                    startup_cpu: if k == 1 { startup_cpu.take() } else { None },
                };
                say(&format!("{RESULT} {}", serde_json::to_string(&record)?));
            }
            (Command::Pause, None) => {
                warm.pause();
                say(PAUSED);
            }
            (Command::Resume, None) => warm.resume(),
            (Command::Exit, _) => return Ok(()),
            (c, o) => bail!(
                "the window loop broke: {} with window {:?} open",
                c.line(),
                o.as_ref().map(|(k, _)| *k)
            ),
        }
    }
}

/// Reads a `DriverWindow` from a result line's JSON.
pub fn parse_window(json: &str) -> anyhow::Result<DriverWindow> {
    serde_json::from_str(json).context("the driver's window result")
}
