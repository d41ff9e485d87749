//! The driver process: `benchgate __drive --spec FILE --out FILE` (hidden).
//!
//! The parent starts one per trial, so every trial runs in a fresh process. The
//! driver runs the engine with the client of its spec, starts and stops the
//! reference server's counting window through its control port at the moments
//! its own window opens and closes (so both count the same interval: the
//! engine's window lasts its duration from when it actually opened, and the
//! server's is started right after that opening, however late), reads the
//! server's CPU at the same moments, its own CPU when the window opens and
//! when its first response arrived (start-up), its own starvation counters
//! (run delay, involuntary context switches, the host's steal) at both edges
//! of the window, and writes a [`DriverReport`] as JSON to
//! the out file. Against a server under test there is no control port: the
//! window is the driver's own.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};

use super::control;
use super::target::{window_cpu, ServerWatch};
use crate::client::reqwest_driver::BlockingClient;
use crate::client::{AsyncClient, RequestTemplate};
use crate::config::{ClientSpec, Driver, Scenario};
use crate::engine::{self, Outcome, TrialPlan, WindowHooks};
use crate::measure::resources::{sample_process, self_cpu, self_peak_rss_bytes, CpuTimes};
use crate::measure::schedstat::{Edge, Starvation};
use crate::server::ServerCounters;

/// What the parent asks a driver process to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialSpec {
    pub scenario: Scenario,
    pub client: ClientSpec,
    /// `http://127.0.0.1:PORT` or `https://...` (by the client's `tls`).
    pub base_url: String,
    pub round: u32,
    /// The reference server's control port, `http://IP:PORT`; `None`: no
    /// server counters (a server not under our control).
    pub control_url: Option<String>,
    /// Runtime worker threads for async drivers (the client's core count).
    pub threads: usize,
    /// The server process (tree) whose CPU is read when the window opens and
    /// closes; `None`: not known (a `url` server).
    pub server_watch: Option<ServerWatch>,
    /// Windows of this fork (`[run] windows`): for a trial that is a fork
    /// ([`super::trial::forked`]), the driver speaks the window loop on its
    /// stdin and stdout (`super::driver_loop`).
    #[serde(default)]
    pub windows: u32,
    /// The test knob [`crate::knobs::MARKER_LAG_VAR`], for a command
    /// client's window markers (never sent to a driver process).
    #[serde(skip)]
    pub marker_lag: Option<std::time::Duration>,
    /// The test knob [`crate::knobs::CLOSE_LAG_VAR`], likewise.
    #[serde(skip)]
    pub close_lag: Option<std::time::Duration>,
}

/// What a driver process measured: the engine's [`Outcome`] as it is (its
/// counts, histograms, window length, own CPU and first response) plus what
/// the driver saw of its window around the engine ([`WindowWatch`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverReport {
    pub outcome: Outcome,
    /// The server's counters for the same window.
    pub server: Option<ServerCounters>,
    /// Why the server's window could not be bracketed, if it could not.
    pub server_error: Option<String>,
    /// The server process (tree)'s CPU during the window, when it was watched.
    pub server_cpu: Option<CpuTimes>,
    /// The driver's own CPU from its start until the window opened.
    pub startup_cpu: Option<CpuTimes>,
    /// The driver's resident set size just before it opened its first
    /// connection (runtime and client built), bytes.
    pub rss_before_connections_bytes: Option<u64>,
    /// The driver's peak resident set size from its start until its window
    /// closed (the kernel's high-water mark), bytes.
    pub peak_rss_at_close_bytes: Option<u64>,
    /// How long the window actually lasted, seconds: from the moment the
    /// driver opened it to the moment it closed it (monotonic clock). It is
    /// timed to last the planned duration from that opening, however late;
    /// a stall inside it reads longer.
    pub window_actual_s: Option<f64>,
    /// What the machine withheld from the driver's threads in its window,
    /// read from /proc at both edges (`measure::schedstat`).
    pub starvation: Option<Starvation>,
}

/// Watches the engine's window for the report: brackets the server's
/// counting window with it, reads the server's CPU at both edges (after
/// opening, before closing its window, so the control calls are not
/// counted), and the driver's own CPU, memory and starvation counters.
#[derive(Default)]
pub struct WindowWatch {
    control_url: Option<String>,
    watch: Option<ServerWatch>,
    /// At the window's open: the server's CPU, the moment, and the driver's
    /// starvation counters.
    cpu_start: Option<CpuTimes>,
    opened_at: Option<Instant>,
    starvation_open: Option<Edge>,
    /// The report's window figures (its outcome is the engine's).
    report: DriverReport,
}

impl WindowWatch {
    fn fail(&mut self, e: anyhow::Error) {
        (self.report.server_error).get_or_insert_with(|| format!("{e:#}"));
    }
}

impl WindowHooks for WindowWatch {
    fn connecting(&mut self) {
        self.report.rss_before_connections_bytes =
            sample_process(std::process::id()).map(|s| s.rss_bytes);
    }
    fn opening(&mut self) {
        self.starvation_open = Some(Edge::read(&[std::process::id()]));
    }
    fn opened(&mut self) {
        self.opened_at = Some(Instant::now());
        self.report.startup_cpu = Some(self_cpu());
        if let Some(url) = &self.control_url {
            if let Err(e) = control::window_start(url) {
                self.fail(e);
            }
        }
        self.cpu_start = self.watch.and_then(|w| w.cpu());
    }
    fn closed(&mut self) {
        let r = &mut self.report;
        r.window_actual_s = self.opened_at.map(|t| t.elapsed().as_secs_f64());
        r.starvation = (self.starvation_open.as_ref())
            .map(|open| Edge::read(&[std::process::id()]).since(open));
        r.peak_rss_at_close_bytes = Some(self_peak_rss_bytes());
        r.server_cpu = window_cpu(self.cpu_start, self.watch.and_then(|w| w.cpu()));
        if let Some(url) = &self.control_url {
            match control::window_stop(url) {
                Ok(c) => r.server = Some(c),
                Err(e) => self.fail(e),
            }
        }
    }
}

/// Runs one trial as specified and writes the report. Entry of `__drive`.
pub fn drive_main(spec_path: &Path, out_path: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(spec_path)
        .with_context(|| format!("reading trial spec {}", spec_path.display()))?;
    let spec: TrialSpec = serde_json::from_str(&text)
        .with_context(|| format!("parsing trial spec {}", spec_path.display()))?;
    // Thousands of connections need as many file descriptors.
    crate::measure::limits::raise_nofile_limit();
    // As the parent decided (a lean driver or a request-count stop: one window).
    if super::trial::forked(&spec) {
        return super::driver_loop::drive_loop(&spec);
    }
    let mut window = WindowWatch {
        control_url: spec.control_url.clone(),
        watch: spec.server_watch,
        ..WindowWatch::default()
    };
    let outcome = drive(&spec, &mut window)?;
    let json = serde_json::to_vec(&DriverReport {
        outcome,
        ..window.report
    })?;
    std::fs::write(out_path, json).with_context(|| format!("writing {}", out_path.display()))?;
    Ok(())
}

/// Runs one trial in this process.
pub fn drive(spec: &TrialSpec, hooks: &mut dyn WindowHooks) -> anyhow::Result<Outcome> {
    let plan = TrialPlan::of(&spec.scenario);
    if spec.client.kind.driver() == Driver::Lean {
        hooks.connecting();
        let request = RequestTemplate::new(&spec.scenario, &spec.base_url);
        return crate::engine::lean::run(&spec.client, &request, plan, hooks);
    }
    let Some(client) = Client::build(spec, &plan)? else {
        bail!(
            "client {} runs its own program, not in a driver process",
            spec.client.name
        )
    };
    hooks.connecting();
    Ok(match client {
        Client::Async(runtime, client) => runtime.block_on(engine::run_async(client, plan, hooks)),
        Client::Blocking(client) => engine::run_blocking(client, plan, hooks),
    })
}

/// A built-in driver's client for the engine's workers: an async one with
/// its runtime, or the blocking one.
pub(super) enum Client {
    Async(tokio::runtime::Runtime, Arc<AsyncClient>),
    Blocking(Arc<BlockingClient>),
}

impl Client {
    /// Builds the client of `spec` for `plan`'s workers; `None`: its kind
    /// has neither engine (h1-lean's event loop, a command client).
    pub(super) fn build(spec: &TrialSpec, plan: &TrialPlan) -> anyhow::Result<Option<Client>> {
        let request = RequestTemplate::new(&spec.scenario, &spec.base_url);
        let workers = plan.load.workers();
        Ok(Some(match spec.client.kind.driver() {
            Driver::Async => {
                let runtime = runtime(spec.threads)?;
                let client = {
                    let _guard = runtime.enter();
                    AsyncClient::build(&spec.client, request, workers)?
                };
                Client::Async(runtime, Arc::new(client))
            }
            Driver::Blocking => {
                let limit = crate::client::pool_limit(&spec.client, workers);
                let client = BlockingClient::new(&spec.client, request, limit, plan.timeout)?;
                Client::Blocking(Arc::new(client))
            }
            Driver::Lean | Driver::Program => return Ok(None),
        }))
    }
}

/// The tokio runtime of an async driver: one thread, or `threads` workers.
fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
}
