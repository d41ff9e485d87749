//! One trial: a fresh driver process, watched from the outside.
//!
//! The parent writes the trial spec, starts `benchgate __drive` pinned to the
//! client cores, samples its thread count (and the server's threads and RSS)
//! from /proc, reaps it with `wait4` (CPU and max RSS), the three as for a
//! command client ([`super::child`]), reads the reference
//! server's total connection count before and after, takes the spawn time
//! (the start of start-up, `startup_ms`), and turns the driver's
//! report (with the server's counters and CPU for its window; a fork's: its
//! windows' sum, [`super::trial_loop`]) into [`TrialMetrics`]. Against a server under test the reference server's
//! counters are absent. Anything that goes wrong fails this trial only; a
//! driver that panics, exits non-zero or is killed fails it with one line,
//! its output (capped: [`super::capture`]) kept in a log file that line names
//! ([`super::failure`]).
//! On SIGINT/SIGTERM the driver is killed at once ([`super::interrupt`]).

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};

use super::capture::{Capture, Sink};
use super::child::{Kill, Sampled, TrialProcess};
use super::driver::{DriverReport, TrialSpec};
use super::target::{with_server_figures, PeakWatch, Target};
use super::trial_loop::Loop;
use super::window_loop::WindowRecord;
use crate::config::StopRule;
use crate::engine::Outcome;
use crate::measure::resources::{monotonic_ns, CpuTimes};
use crate::measure::LatencyHistogram;
use crate::metric::trial::{ConnectionMemory, Throughput};
use crate::metric::TrialMetrics;
use crate::results::Trial;
use crate::server::ServerCounters;

/// A trial's latency histograms: as measured (for open loop, from each
/// request's intended start) and, for open loop, from the actual send. They
/// join the cell's, not the trial's record.
pub type Latencies = (Option<LatencyHistogram>, Option<LatencyHistogram>);

/// How long a trial may take before its process is killed: warmup +
/// duration (10 minutes for a request-count stop) + the request timeout +
/// 30 s (a command client's `timeout` replaces it).
pub(super) fn trial_limit(spec: &TrialSpec) -> Duration {
    let s = &spec.scenario;
    let measure = match s.stop {
        StopRule::Duration(d) => d,
        StopRule::Requests(_) => Duration::from_secs(600),
    };
    s.warmup + measure + s.timeout + Duration::from_secs(30)
}

/// Runs one trial of a built-in client in a child process, `exe __drive`
/// (a command client's trial is its own program: [`super::command`]): one
/// window, or a fork of several ([`forked`], [`super::trial_loop`]) measured
/// back to back.
///
/// `log`: where the driver's whole output is kept if it fails (the failure
/// names it; [`super::failure`]). What the trial saw of its window (the
/// server's counters, the window's actual length) goes into `trial`, and
/// only once it measured; its metrics and histograms are returned.
pub fn run_trial(
    exe: &Path,
    spec: &TrialSpec,
    target: &Target,
    cpus: &[usize],
    scratch: &Path,
    log: &Path,
    trial: &mut Trial,
) -> anyhow::Result<(TrialMetrics, Latencies)> {
    let mut started = Started::spawn(exe, spec, target, cpus, scratch, log)?;
    started.step(Loop::ready);
    while started.wants_window() {
        started.step(|l| l.window(target, None));
    }
    started.finish(trial)
}

/// A built-in client's trial whose driver is running: for a fork, its
/// window loop, asked for READY and windows by the caller ([`Started::step`]:
/// back to back in [`run_trial`], taking turns with another fork's in an
/// interleaved round, `orchestrate::rounds`); then [`Started::finish`].
pub(super) struct Started<'a> {
    spec: &'a TrialSpec,
    target: &'a Target<'a>,
    log: &'a Path,
    out_path: PathBuf,
    capture: Capture<1>,
    before: Option<ServerCounters>,
    server_peaks: PeakWatch,
    driver: TrialProcess,
    spawned_ns: u64,
    /// A fork's window loop, or why it failed (it is then gone: its
    /// driver, its stdin closed, exits).
    fork: Option<anyhow::Result<Loop>>,
}

impl<'a> Started<'a> {
    /// Writes the trial spec into `scratch` (its own directory per live
    /// driver) and starts the driver, its output captured.
    pub(super) fn spawn(
        exe: &Path,
        spec: &'a TrialSpec,
        target: &'a Target<'a>,
        cpus: &[usize],
        scratch: &Path,
        log: &'a Path,
    ) -> anyhow::Result<Started<'a>> {
        let forked = forked(spec);
        let spec_path = scratch.join("trial-spec.json");
        let out_path = scratch.join("trial-report.json");
        let output_path = scratch.join("trial-driver.out");
        let _ = std::fs::remove_file(&out_path);
        // The driver's output in one file (never a pipe it could block on),
        // capped ([`super::capture`]); a fork's stdout is the window loop's.
        let (sink, output) = Sink::create(&output_path)
            .with_context(|| format!("creating {}", output_path.display()))?;
        let capture = Capture::start([sink])?;
        std::fs::write(&spec_path, serde_json::to_vec(spec)?)?;

        let before = target.reference.map(|s| s.counters()).transpose()?;
        let server_peaks = PeakWatch::start(target.watch);
        let mut cmd = Command::new(exe);
        // The driver is benchgate itself, and needs none of them either.
        super::child_env::scrub(&mut cmd, &[]);
        cmd.arg("__drive")
            .arg("--spec")
            .arg(&spec_path)
            .arg("--out")
            .arg(&out_path)
            .stderr(output.try_clone()?);
        if forked {
            // The window loop's commands and replies; its group is what a
            // pause stops.
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .process_group(0);
            crate::interrupt::die_with_parent(&mut cmd);
        } else {
            cmd.stdin(Stdio::null()).stdout(output);
        }
        // A panic's backtrace goes to the trial's log (not to the failure line);
        // anyhow errors capture none (RUST_LIB_BACKTRACE=0), so they cost nothing.
        if std::env::var_os("RUST_BACKTRACE").is_none() {
            cmd.env("RUST_BACKTRACE", "1");
            if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
                cmd.env("RUST_LIB_BACKTRACE", "0");
            }
        }
        let spawned_ns = monotonic_ns();
        let (driver, mut child) = TrialProcess::spawn(&mut cmd, cpus, Sampled::Process)
            .context("starting the driver process")?;
        let fork = forked.then(|| Loop::new(&mut child, spec));
        Ok(Started {
            spec,
            target,
            log,
            out_path,
            capture,
            before,
            server_peaks,
            driver,
            spawned_ns,
            fork,
        })
    }

    /// Asks the fork's window loop for `what`, unless it failed already (a
    /// failure is kept for [`Started::finish`]); whether it has not failed.
    /// A one-window trial has no loop: nothing is asked.
    pub(super) fn step(&mut self, what: impl FnOnce(&mut Loop) -> anyhow::Result<()>) -> bool {
        let fork = match &mut self.fork {
            None => return true,
            Some(Err(_)) => return false,
            Some(Ok(fork)) => fork,
        };
        match what(fork) {
            Ok(()) => true,
            Err(e) => {
                self.fork = Some(Err(e));
                false
            }
        }
    }

    /// Another fork runs beside this one (an interleaved round): the
    /// reference server's connection totals are no longer this trial's
    /// alone, and are not read.
    pub(super) fn beside_another(&mut self) {
        self.before = None;
    }

    /// Its fork's process group, while its window loop is alive.
    pub(super) fn pgid(&self) -> Option<u32> {
        match &self.fork {
            Some(Ok(l)) => Some(l.pgid()),
            _ => None,
        }
    }

    /// Windows its fork is to measure (none for a one-window trial).
    pub(super) fn planned_windows(&self) -> u32 {
        match &self.fork {
            Some(Ok(l)) => l.planned() as u32,
            _ => 0,
        }
    }

    /// Whether its fork, alive, has windows still to measure.
    pub(super) fn wants_window(&self) -> bool {
        matches!(&self.fork, Some(Ok(l)) if !l.done())
    }

    /// Tells a fork to exit, reaps the driver and turns its report (a
    /// fork's: its windows) into the trial's figures.
    pub(super) fn finish(self, trial: &mut Trial) -> anyhow::Result<(TrialMetrics, Latencies)> {
        let Started {
            spec,
            target,
            log,
            out_path,
            capture,
            before,
            server_peaks,
            driver,
            spawned_ns,
            fork,
        } = self;
        let windows = fork.map(|f| f.map(Loop::finish));
        let limit = match windows {
            Some(_) => trial_limit(spec) * spec.windows,
            None => trial_limit(spec),
        };
        let killed = driver.wait_or_kill(Instant::now() + limit);
        let (usage, (peak_threads, _peak_sampled_rss)) = driver.finish()?;
        let [output] = capture.finish();
        let server_peaks = server_peaks.finish();

        if let Some(Kill::Interrupted(signal)) = killed {
            bail!("{}", signal.reason());
        }
        let windows = windows.transpose().map_err(|e| {
            anyhow!(
                "the driver's window loop failed: {e:#} {}",
                super::failure::keep(&output.text(), log)
            )
        })?;
        if killed == Some(Kill::TimedOut) {
            bail!(
                "the driver did not finish within {limit:?} and was killed {}",
                super::failure::keep(&output.text(), log)
            );
        }
        if !usage.status.success() {
            bail!("{}", super::failure::report(usage.status, &output, log));
        }
        let server = target.reference;
        let m = match windows {
            Some(fork) => fork.measured(trial)?,
            None => one_window(&out_path, server.is_some())?,
        };
        let value = &m.value;
        let (connections_opened, requests_per_connection) = match (server, &before, &value.server) {
            (Some(server), Some(before), Some(window)) => {
                server_side(before, &server.counters()?, window)
            }
            _ => (None, None),
        };
        let metrics = TrialMetrics {
            peak_rss_bytes: usage.max_rss_bytes,
            peak_threads,
            connections_opened,
            requests_per_connection,
            latency_uncorrected: value.latency_uncorrected.as_ref().and_then(|h| h.summary()),
            startup_ms: m
                .first_response_ns
                .map(|t| t.saturating_sub(spawned_ns) as f64 / 1e6),
            startup_cpu_ms: m.startup_cpu.map(|c| c.total_us() as f64 / 1e3),
            memory_per_connection_bytes: m.memory_per_connection_bytes,
            ..with_server_figures(
                figures(value),
                value.server_cpu,
                value.counts.requests(),
                server_peaks,
                value.server.as_ref().and_then(|w| w.run_delay_ns),
            )
        };
        trial.server = m.value.server.clone();
        trial.window_actual_s = m.window_actual_s;
        Ok((metrics, (m.value.latency, m.value.latency_uncorrected)))
    }
}

/// What a driver measured in its trial: its window (a fork's: the sum of
/// its windows) and its start-up.
pub(super) struct Measured {
    pub value: WindowRecord,
    /// The client's first response (warmup included), on the system-wide
    /// monotonic clock, and the driver's own CPU until its window opened.
    pub first_response_ns: Option<u64>,
    pub startup_cpu: Option<CpuTimes>,
    pub memory_per_connection_bytes: Option<f64>,
    /// The window's (the windows') actual length, seconds.
    pub window_actual_s: Option<f64>,
}

/// A one-window trial's report, from the driver's out file. The server's
/// counters (the reference server's, the only one with a control port) are
/// required.
fn one_window(out_path: &Path, reference: bool) -> anyhow::Result<Measured> {
    let report: DriverReport =
        serde_json::from_slice(&std::fs::read(out_path).context("reading the driver's report")?)
            .context("parsing the driver's report")?;
    if let Some(e) = &report.server_error {
        bail!("bracketing the server's measurement window: {e}");
    }
    if reference && report.server.is_none() {
        bail!("the driver reported no server counters for its window");
    }
    let memory_per_connection_bytes = connection_memory(&report).and_then(|c| c.per_connection());
    let DriverReport {
        outcome,
        server,
        server_cpu,
        startup_cpu,
        window_actual_s,
        starvation,
        ..
    } = report;
    Ok(Measured {
        first_response_ns: outcome.recorder.first_response_ns,
        startup_cpu,
        memory_per_connection_bytes,
        window_actual_s,
        value: WindowRecord {
            window: 1,
            server,
            server_cpu,
            starvation,
            ..outcome_record(outcome)
        },
    })
}

/// A driver's outcome as a window record: its counts, length, own CPU at
/// its window's edges (the gated figure) and latencies; an empty histogram
/// is no histogram (it measured no latency). The other figures are the
/// caller's.
pub(super) fn outcome_record(o: Outcome) -> WindowRecord {
    WindowRecord {
        counts: o.recorder.counts,
        elapsed_s: o.elapsed.as_secs_f64(),
        cpu: Some(o.cpu),
        latency: Some(o.recorder.latency).filter(|h| !h.is_empty()),
        latency_uncorrected: o.recorder.latency_uncorrected.filter(|h| !h.is_empty()),
        ..WindowRecord::default()
    }
}

/// A window's (or a fork's) figures.
pub(super) fn figures(w: &WindowRecord) -> TrialMetrics {
    TrialMetrics::of_window(
        w.counts,
        w.elapsed_s,
        Throughput::Window,
        w.cpu.unwrap_or_default(),
        w.starvation.as_ref(),
    )
    .with_latency(w.latency.as_ref())
}

/// Whether a built-in client's trial is a fork of several windows (the
/// window loop): `[run] windows` above 1, a duration stop, and a driver
/// that speaks the loop (h1-lean's event loop does not yet).
pub fn forked(spec: &TrialSpec) -> bool {
    spec.windows > 1
        && matches!(spec.scenario.stop, StopRule::Duration(_))
        && spec.client.kind.driver().window_loop()
}

/// The driver's memory before its connections and at its window's close,
/// over the connections the reference server saw open at once in the window.
fn connection_memory(report: &DriverReport) -> Option<ConnectionMemory> {
    Some(ConnectionMemory {
        rss_before_bytes: report.rss_before_connections_bytes?,
        peak_rss_bytes: report.peak_rss_at_close_bytes?,
        connections: report.server.as_ref()?.peak_open_connections,
    })
}

/// Server-side figures of a trial: connections accepted during the whole trial
/// (totals before and after), and requests per used connection in its window.
pub(super) fn server_side(
    before: &ServerCounters,
    after: &ServerCounters,
    window: &ServerCounters,
) -> (Option<u64>, Option<f64>) {
    (
        Some(
            after
                .total_connections_accepted
                .saturating_sub(before.total_connections_accepted),
        ),
        (window.connections_used > 0).then_some(window.requests_per_connection),
    )
}
