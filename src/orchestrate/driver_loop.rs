//! The built-in driver in the window loop (`window_loop`; WINDOW-LOOP.md):
//! one process, warmed once, measuring the windows the parent opens and
//! closes on its stdin, each window's record one `BENCHGATE-WINDOW-RESULT`
//! line on its stdout (nothing else is printed there).
//!
//! The client (its runtime and connection pool) is built once; every window
//! is one run of the engine with that client, whose workers send, unmeasured,
//! from the run's start until the parent's open, then measured until its
//! close ([`crate::engine::Edges`]). A pause ends the run without a window:
//! the workers finish what is in flight, then the driver answers
//! `BENCHGATE-PAUSED` and waits (the parent may stop its process group).

use std::io::{BufRead as _, Write as _};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};

use super::driver::TrialSpec;
use super::window_loop::{Command, DECLARE, PAUSED, READY, RESULT};
use crate::client::reqwest_driver::BlockingClient;
use crate::client::{AsyncClient, RequestTemplate};
use crate::config::{Driver, StopRule};
use crate::engine::{self, Edges, Outcome, TrialPlan, WindowHooks};
use crate::measure::schedstat::{Edge, Starvation};

/// A window's record as the driver writes it after `BENCHGATE-WINDOW-RESULT`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverWindow {
    pub window: u32,
    pub outcome: Outcome,
    /// What the machine withheld from the driver's threads in the window.
    pub starvation: Option<Starvation>,
}

/// What ended an engine run.
#[derive(Debug, Clone, PartialEq)]
enum Ended {
    Window(u32),
    Pause,
    Exit,
    Broken(String),
}

/// The parent's commands, read on a thread of their own, and what the
/// engine's run is told.
struct Loop {
    commands: Mutex<Receiver<Option<Command>>>,
    /// The warmup, run (once) before `READY`.
    warmup: Mutex<Option<Duration>>,
    ended: Mutex<Option<Ended>>,
    open: Mutex<Option<u32>>,
}

impl Loop {
    fn next(&self) -> Option<Command> {
        let rx = self.commands.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match rx.recv_timeout(Duration::from_secs(3600)) {
                Ok(c) => return c,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    fn end(&self, how: Ended) {
        *self.ended.lock().unwrap_or_else(|p| p.into_inner()) = Some(how);
    }
}

impl Edges for Loop {
    fn open(&self) -> bool {
        if let Some(warmup) = self.warmup.lock().unwrap_or_else(|p| p.into_inner()).take() {
            std::thread::sleep(warmup);
            say(READY);
        }
        loop {
            match self.next() {
                Some(Command::Open(k)) => {
                    *self.open.lock().unwrap_or_else(|p| p.into_inner()) = Some(k);
                    return true;
                }
                Some(Command::Resume) => continue,
                Some(Command::Pause) => self.end(Ended::Pause),
                None | Some(Command::Exit) => self.end(Ended::Exit),
                Some(c @ Command::Close(_)) => {
                    self.end(Ended::Broken(format!("{} with no window open", c.line())))
                }
            }
            return false;
        }
    }

    fn close(&self) {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner()).take();
        let how = match (self.next(), open) {
            (Some(Command::Close(k)), Some(o)) if k == o => Ended::Window(k),
            (None | Some(Command::Exit), _) => Ended::Exit,
            (c, o) => Ended::Broken(format!(
                "window {o:?} open, then {:?} where its close was expected",
                c.map(|c| c.line())
            )),
        };
        self.end(how);
    }
}

/// Hooks of one engine run: the loop's edges, and the driver's starvation
/// counters at the window's edges.
struct Hooks {
    edges: Arc<Loop>,
    open: Option<Edge>,
    starvation: Option<Starvation>,
}

impl WindowHooks for Hooks {
    fn opening(&mut self) {
        self.open = Some(Edge::read(&[std::process::id()]));
    }
    fn closed(&mut self) {
        self.starvation = self
            .open
            .as_ref()
            .map(|o| Edge::read(&[std::process::id()]).since(o));
    }
    fn edges(&self) -> Option<Arc<dyn Edges>> {
        Some(self.edges.clone())
    }
}

/// One line on stdout, flushed (a closed pipe ends the driver).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

/// The window loop in this process; returns when told to exit.
pub fn drive_loop(spec: &TrialSpec) -> anyhow::Result<()> {
    if !matches!(spec.scenario.stop, StopRule::Duration(_)) {
        bail!("the window loop needs a duration stop rule");
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match Command::parse(&line) {
                Ok(c) => {
                    if tx.send(Some(c)).is_err() {
                        return;
                    }
                }
                Err(e) => crate::stderrln!("benchgate driver: {e}"),
            }
        }
        let _ = tx.send(None);
    });
    let edges = Arc::new(Loop {
        commands: Mutex::new(rx),
        warmup: Mutex::new(Some(spec.scenario.warmup)),
        ended: Mutex::new(None),
        open: Mutex::new(None),
    });
    let plan = TrialPlan {
        warmup: Duration::ZERO,
        // The parent closes the window: the engine's own deadline is far.
        stop: StopRule::Duration(Duration::from_secs(86_400)),
        ..TrialPlan::of(&spec.scenario)
    };
    let request = RequestTemplate::new(&spec.scenario, &spec.base_url);
    let workers = plan.load.workers();
    say(DECLARE);
    let mut run_once: Box<dyn FnMut(&mut Hooks) -> Outcome> = match spec.client.kind.driver() {
        Driver::Async => {
            let runtime = if spec.threads <= 1 {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?
            } else {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(spec.threads)
                    .enable_all()
                    .build()?
            };
            let client = {
                let _guard = runtime.enter();
                Arc::new(AsyncClient::build(&spec.client, request, workers)?)
            };
            Box::new(move |hooks| runtime.block_on(engine::run_async(client.clone(), plan, hooks)))
        }
        Driver::Blocking => {
            let limit = crate::client::pool_limit(&spec.client, workers);
            let client = Arc::new(BlockingClient::new(
                &spec.client,
                request,
                limit,
                plan.timeout,
            )?);
            Box::new(move |hooks| engine::run_blocking(client.clone(), plan, hooks))
        }
        Driver::Lean | Driver::Program => bail!(
            "client {} has no window loop in a driver process",
            spec.client.name
        ),
    };
    loop {
        let mut hooks = Hooks {
            edges: edges.clone(),
            open: None,
            starvation: None,
        };
        let outcome = run_once(&mut hooks);
        let ended = edges.ended.lock().unwrap_or_else(|p| p.into_inner()).take();
        match ended {
            Some(Ended::Window(window)) => {
                let record = DriverWindow {
                    window,
                    outcome,
                    starvation: hooks.starvation,
                };
                say(&format!("{RESULT} {}", serde_json::to_string(&record)?));
            }
            Some(Ended::Pause) => {
                say(PAUSED);
                // Nothing runs until the next command (a resume, or an open).
                let paused = Instant::now();
                match edges.next() {
                    None | Some(Command::Exit) => return Ok(()),
                    Some(Command::Resume) => {}
                    Some(c) => bail!(
                        "{} while paused (for {:?}); expected {}",
                        c.line(),
                        paused.elapsed(),
                        Command::Resume.line()
                    ),
                }
            }
            Some(Ended::Exit) => return Ok(()),
            Some(Ended::Broken(why)) => bail!("the window loop broke: {why}"),
            None => bail!("the engine ended without a window or a command"),
        }
    }
}

/// Reads a `DriverWindow` from a result line's JSON.
pub fn parse_window(json: &str) -> anyhow::Result<DriverWindow> {
    serde_json::from_str(json).context("the driver's window result")
}
