//! A built-in client's trial as one fork over W windows (`[run] windows`):
//! the driver process is started once, warmed once, and measured in W
//! windows the parent opens and closes ([`super::fork`]); the trial's
//! figures are the sums over its windows ([`fork_value`]), so the fork stays
//! the statistical unit. A starved window (no request, or a window more than
//! 10% off its planned length at the server) is measured again, at most
//! `MAX_STARVED_RERUNS` times per fork; one still starved after that is kept
//! and named in the trial, which is then marked starved.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};

use super::capture::{Capture, Sink};
use super::child::{Kill, Sampled, TrialProcess};
use super::driver::TrialSpec;
use super::driver_loop::parse_window;
use super::fork::{self, Fork};
use super::target::{with_server_figures, PeakWatch, Target};
use super::trial::{server_side, trial_limit, Latencies};
use super::window_loop::{fork_value, quote, WindowRecord};
use crate::config::StopRule;
use crate::measure::resources::{monotonic_ns, CpuTimes};
use crate::metric::trial::Throughput;
use crate::metric::TrialMetrics;
use crate::results::validity::{self, InvalidMark};
use crate::results::{ForkCpu, ForkWindows, Trial};

/// Runs one fork of W windows of a built-in client.
pub fn run_fork(
    exe: &Path,
    spec: &TrialSpec,
    target: &Target,
    cpus: &[usize],
    scratch: &Path,
    log: &Path,
    trial: &mut Trial,
) -> anyhow::Result<(TrialMetrics, Latencies)> {
    let StopRule::Duration(length) = spec.scenario.stop else {
        bail!("a fork of several windows needs a duration stop rule");
    };
    let spec_path = scratch.join("trial-spec.json");
    let output_path = scratch.join("trial-driver.err");
    let (sink, output) = Sink::create(&output_path)
        .with_context(|| format!("creating {}", output_path.display()))?;
    let capture = Capture::start([sink])?;
    std::fs::write(&spec_path, serde_json::to_vec(spec)?)?;
    let server = target.reference;
    let before = server.map(|s| s.counters()).transpose()?;
    let server_peaks = PeakWatch::start(target.watch);
    let mut cmd = Command::new(exe);
    super::child_env::scrub(&mut cmd, &[]);
    cmd.arg("__drive")
        .arg("--spec")
        .arg(&spec_path)
        .arg("--out")
        .arg(scratch.join("trial-report.json"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(output)
        .process_group(0);
    crate::interrupt::die_with_parent(&mut cmd);
    let spawned_ns = monotonic_ns();
    let (driver, mut child) = TrialProcess::spawn(&mut cmd, cpus, Sampled::Process)
        .context("starting the driver process")?;
    let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
    let mut fork = Fork::new(
        driver.pid,
        stdin.context("the driver's stdin")?,
        stdout.context("the driver's stdout")?,
        spec.scenario.timeout + Duration::from_secs(5),
    );
    let windows = measure(&mut fork, spec, length, target);
    fork.exit();
    let limit = trial_limit(spec) * spec.windows.max(1);
    let killed = driver.wait_or_kill(Instant::now() + limit);
    let (usage, (peak_threads, _)) = driver.finish()?;
    let [output] = capture.finish();
    let server_peaks = server_peaks.finish();
    if let Some(Kill::Interrupted(signal)) = killed {
        bail!("{}", signal.reason());
    }
    let (records, startup, rerun, starved, actual_s) = windows.map_err(|e| {
        anyhow!(
            "the driver's window loop failed: {e:#} {}",
            super::failure::keep(&output.text(), log)
        )
    })?;
    if killed == Some(Kill::TimedOut) {
        bail!("the driver did not exit within {limit:?} and was killed");
    }
    if !usage.status.success() {
        bail!("{}", super::failure::report(usage.status, &output, log));
    }
    let value = fork_value(&records).context("the fork measured no window")?;
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
        startup_ms: startup
            .first_response_ns
            .map(|t| t.saturating_sub(spawned_ns) as f64 / 1e6),
        startup_cpu_ms: startup.startup_cpu.map(|c| c.total_us() as f64 / 1e3),
        ..with_server_figures(
            figures(&value),
            value.server_cpu,
            value.counts.requests(),
            server_peaks,
            value.server.as_ref().and_then(|w| w.run_delay_ns),
        )
    };
    trial.window_planned_s = Some(length.as_secs_f64() * records.len() as f64);
    trial.window_actual_s = Some(actual_s);
    trial.server = value.server.clone();
    if !starved.is_empty() {
        trial.invalid.push(InvalidMark::Starved {
            reason: format!("starved windows kept: {}", starved.join("; ")),
        });
    }
    trial.windows = Some(ForkWindows {
        count: records.len() as u32,
        rerun,
        starved,
        peer_cpu_us: value.peer_cpu.map(|c| c.total_us()),
        values: Vec::new(),
        gated_cpu: Some(ForkCpu::Driver),
        driver_cpu_us: value.cpu.map(|c| c.total_us()),
        group_cpu_us: value.group_cpu.map(|c| c.total_us()),
    });
    Ok((metrics, (value.latency, value.latency_uncorrected)))
}

/// A window's (or a fork's) figures.
fn figures(w: &WindowRecord) -> TrialMetrics {
    TrialMetrics::of_window(
        w.counts,
        w.elapsed_s,
        Throughput::Window,
        w.cpu.unwrap_or_default(),
        w.starvation.as_ref(),
    )
    .with_latency(w.latency.as_ref())
}

/// The kept windows, the first window's start-up figures, how many were
/// measured again, the starved ones kept, and the kept windows' summed
/// length at the parent (open to close), s.
type Windows = (Vec<WindowRecord>, Startup, u32, Vec<String>, f64);

/// What the driver's first window says of its start-up.
#[derive(Default)]
struct Startup {
    first_response_ns: Option<u64>,
    startup_cpu: Option<CpuTimes>,
}

/// The fork's W windows, starved ones measured again.
fn measure(
    fork: &mut Fork,
    spec: &TrialSpec,
    length: Duration,
    target: &Target,
) -> anyhow::Result<Windows> {
    fork.ready(spec.scenario.warmup + Duration::from_secs(30))?;
    let (mut records, mut rerun, mut starved, mut actual) = (Vec::new(), 0, Vec::new(), 0.0);
    let mut startup = Startup::default();
    while records.len() < spec.windows as usize {
        let b = fork.window(length, target.reference, target.watch)?;
        let client = parse_window(&b.record_json)
            .map_err(|e| anyhow!("{e:#}, in the line {}", quote(&b.record_json)))?;
        if client.window != b.window {
            bail!(
                "the result of window {} says window {}",
                b.window,
                client.window
            );
        }
        if b.window == 1 {
            startup = Startup {
                first_response_ns: client.first_response_ns,
                startup_cpu: client.startup_cpu,
            };
        }
        let record = fork::record(&b, client);
        let why = validity::starved(
            &figures(&record),
            Some(length.as_secs_f64()),
            record.server.as_ref().map(|s| s.window_secs),
        );
        if let Some(InvalidMark::Starved { reason }) = why {
            if rerun < validity::MAX_STARVED_RERUNS {
                rerun += 1;
                continue;
            }
            starved.push(format!("window {}: {reason}", b.window));
        }
        actual += b.actual_s;
        records.push(record);
    }
    Ok((records, startup, rerun, starved, actual))
}
