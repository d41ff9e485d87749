//! What a command client's trial measured ([`super::command`]): the
//! program's result file (benchgate's format, or JMH's), the server's window
//! for a black box, or a window loop's fork summed over its windows.

use std::path::Path;

use anyhow::bail;

use super::command_loop;
use super::driver::TrialSpec;
use super::external;
use super::jmh;
use super::window_cpu;
use super::window_loop::fork_value;
use crate::config::{ResultFormat, StopRule};
use crate::measure::{ErrorCounts, LatencyHistogram};
use crate::metric::trial::Throughput;
use crate::results::Trial;
use crate::server::ServerCounters;

/// What a window (or a loop's windows, summed) measured at benchgate's side:
/// the server's counters, the group's CPU at the first open (start-up) and
/// in the window, the server's CPU, the window's length, the starvation.
pub(super) type Window = (
    ServerCounters,
    crate::measure::resources::CpuTimes,
    window_cpu::WindowCpu,
    Option<crate::measure::resources::CpuTimes>,
    f64,
    crate::measure::schedstat::Starvation,
);

/// A loop's fork as one trial: its windows summed (the server's counters,
/// CPU, starvation, the program's counts and histograms), each window's
/// figures in `trial.windows` and the planned window all of them.
pub(super) fn fork_figures(
    fork: command_loop::Fork,
    trial: &mut Trial,
) -> (Option<Window>, Option<Figures>) {
    let cpu = fork.cpu();
    let Some(sum) = fork_value(&fork.windows) else {
        return (None, None);
    };
    trial.window_planned_s = trial
        .window_planned_s
        .map(|p| p * fork.windows.len() as f64);
    // Rates and costs at benchgate's edges of the windows.
    let values = fork
        .windows
        .iter()
        .zip(&fork.cpu)
        .map(|(w, c)| {
            let served = w
                .server
                .as_ref()
                .map_or(w.counts.requests(), |s| s.requests);
            w.figures(c.per_request(served), w.at_server_edges())
        })
        .collect();
    trial.windows = Some(crate::results::ForkWindows {
        count: fork.windows.len() as u32,
        values,
        // A command client's CPU is always its process group's.
        gated_cpu: Some(crate::results::ForkCpu::Group),
        // A frozen peer's CPU over these windows (an interleaved round).
        peer_cpu_us: sum.peer_cpu.map(|c| c.total_us()),
        ..Default::default()
    });
    let figures = Figures {
        throughput: sum.at_server_edges(),
        requests: sum.counts.requests(),
        ok: sum.counts.ok,
        errors: sum.counts.errors,
        elapsed_s: sum.elapsed_s,
        histogram: sum.latency,
        window: true,
    };
    let window = sum.server.map(|server| {
        (
            server,
            fork.cpu_at_first_open,
            cpu,
            sum.server_cpu,
            fork.actual_s,
            sum.starvation.unwrap_or_default(),
        )
    });
    (window, Some(figures))
}

/// What a trial's result reading gives: the client's own figures, or the
/// server's window for a black box.
pub(super) struct Figures {
    pub throughput: Throughput,
    pub requests: u64,
    pub ok: u64,
    pub errors: ErrorCounts,
    pub elapsed_s: f64,
    pub histogram: Option<LatencyHistogram>,
    /// Whether the server's window figures (bytes, CPU per request, requests
    /// per connection, server CPU) apply to this client.
    pub window: bool,
}

/// Reads the trial's result: JMH's file (required) for a JMH client;
/// benchgate's file when the program wrote one; otherwise the server's
/// window (black box).
pub(super) fn read_result(
    format: &ResultFormat,
    spec: &TrialSpec,
    result_path: &Path,
    server_window: &ServerCounters,
) -> anyhow::Result<Figures> {
    let exists = std::fs::metadata(result_path).is_ok();
    if let ResultFormat::Jmh { benchmark } = format {
        if !exists {
            bail!(
                "JMH wrote no result file at {} (the program must hand the {} argument to JMH, whose -rf json -rff name that file)",
                result_path.display(),
                ResultFormat::JMH_ARGS
            );
        }
        let r = jmh::parse(
            &read_bounded(
                result_path,
                "run fewer benchmarks or shorter SampleTime iterations",
            )?,
            benchmark,
        )
        .map_err(|e| anyhow::anyhow!("JMH result file {}: {e}", result_path.display()))?;
        // JMH reports a rate and sampled latencies, no request counts: those
        // stay 0 and the rate is JMH's own (n/a without a Throughput result).
        let elapsed_s = match spec.scenario.stop {
            StopRule::Duration(d) => d.as_secs_f64(),
            StopRule::Requests(_) => bail!("JMH measures for a time, not a request count"),
        };
        return Ok(Figures {
            throughput: Throughput::Reported(r.throughput_rps),
            requests: 0,
            ok: 0,
            errors: ErrorCounts::default(),
            elapsed_s,
            histogram: r.latency,
            window: false,
        });
    }
    if exists {
        let r = external::parse(&read_bounded(
            result_path,
            "write a latency_histogram instead of a latency_us list",
        )?)
        .map_err(|e| anyhow::anyhow!("result file {}: {e}", result_path.display()))?;
        return Ok(Figures {
            throughput: Throughput::Window,
            requests: r.requests,
            ok: r.ok,
            errors: r.errors,
            elapsed_s: r.elapsed_s,
            histogram: r.latency,
            window: true,
        });
    }
    // Black box: what the server answered in its window.
    let errors = ErrorCounts {
        status_4xx: server_window.status_4xx,
        status_5xx: server_window.status_5xx,
        ..ErrorCounts::default()
    };
    Ok(Figures {
        throughput: Throughput::Window,
        requests: server_window.requests,
        ok: server_window.requests.saturating_sub(errors.total()),
        errors,
        elapsed_s: server_window.window_secs,
        histogram: None,
        window: true,
    })
}

/// The program's result file: written by the benchmarked code, so a FIFO
/// or a device there is refused, not read ([`crate::files::read_untrusted`]);
/// `fix` says what to do when it is too big.
fn read_bounded(path: &Path, fix: &str) -> anyhow::Result<Vec<u8>> {
    crate::files::read_untrusted(path, "result file", external::MAX_RESULT_BYTES).map_err(|e| {
        match e.is_too_big() {
            true => anyhow::anyhow!("{e}; {fix}"),
            false => e.into(),
        }
    })
}
