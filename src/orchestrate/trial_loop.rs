//! A built-in client's trial as one fork over W windows (`[run] windows`):
//! the driver process is started once (as a one-window trial's,
//! [`super::trial::Started`]), warmed once, and measured in W windows
//! the parent opens and closes through its pipes ([`super::fork`]); the trial's
//! figures are the sums over its windows ([`fork_value`]), so the fork stays
//! the statistical unit. A starved window (no request, or a window more than
//! 10% off its planned length at the server or at the driver) is measured
//! again, at most `MAX_STARVED_RERUNS` times per fork; one still starved
//! after that is kept and named in the trial, which is then marked starved.

use std::process::Child;
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};

use super::driver::TrialSpec;
use super::driver_loop::parse_window;
use super::fork::{self, Fork};
use super::target::Target;
use super::trial::{figures, Measured};
use super::window_loop::{fork_value, quote, WindowRecord};
use crate::config::StopRule;
use crate::measure::resources::CpuTimes;
use crate::metric::trial::Throughput;
use crate::results::validity::{self, InvalidMark};
use crate::results::{ForkCpu, ForkWindows, Trial};

/// What a fork measured: its kept windows (each of `length`), the first
/// window's start-up figures, how many were measured again, the starved
/// ones kept, and the kept windows' summed length at the parent (open to
/// close), s.
#[derive(Default)]
pub(super) struct Windows {
    records: Vec<WindowRecord>,
    length: Duration,
    first_response_ns: Option<u64>,
    startup_cpu: Option<CpuTimes>,
    rerun: u32,
    starved: Vec<String>,
    actual_s: f64,
}

/// A started driver's window loop: its pipes, and its windows so far. The
/// caller asks for READY ([`Loop::ready`]), then for windows until
/// [`Loop::done`] (back to back, or taking turns with another fork's,
/// `orchestrate::rounds`), and ends it with [`Loop::finish`].
pub(super) struct Loop {
    fork: Fork,
    warmup: Duration,
    planned: usize,
    windows: Windows,
}

impl Loop {
    /// Takes the started driver's pipes; nothing is asked of it yet.
    pub(super) fn new(child: &mut Child, spec: &TrialSpec) -> anyhow::Result<Loop> {
        let StopRule::Duration(length) = spec.scenario.stop else {
            bail!("a fork of several windows needs a duration stop rule");
        };
        let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
        let fork = Fork::new(
            child.id(),
            stdin.context("the driver's stdin")?,
            stdout.context("the driver's stdout")?,
            spec.scenario.timeout + Duration::from_secs(5),
        );
        Ok(Loop {
            fork,
            warmup: spec.scenario.warmup,
            planned: spec.windows as usize,
            windows: Windows {
                length,
                ..Windows::default()
            },
        })
    }

    /// Waits for the driver's READY (its start-up and warmup).
    pub(super) fn ready(&mut self) -> anyhow::Result<()> {
        self.fork.ready(self.warmup + Duration::from_secs(30))
    }

    /// Whether all the planned windows are measured.
    pub(super) fn done(&self) -> bool {
        self.windows.records.len() >= self.planned
    }

    /// Its driver's process group.
    pub(super) fn pgid(&self) -> u32 {
        self.fork.pgid
    }

    /// Its pipes, to freeze and thaw it.
    pub(super) fn fork(&mut self) -> &mut Fork {
        &mut self.fork
    }

    /// Windows it is to measure.
    pub(super) fn planned(&self) -> usize {
        self.planned
    }

    /// Measures the next window, a starved one again (at most
    /// `MAX_STARVED_RERUNS` per fork) until one is kept. `peer`: the
    /// process group of a fork frozen meanwhile, whose CPU is read at the
    /// window's edges.
    pub(super) fn window(&mut self, target: &Target, peer: Option<u32>) -> anyhow::Result<()> {
        let w = &mut self.windows;
        loop {
            let b = self
                .fork
                .window(w.length, target.reference, target.watch, peer)?;
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
                w.first_response_ns = client.first_response_ns;
                w.startup_cpu = client.startup_cpu;
            }
            let record = fork::record(&b, client);
            if let Some(reason) = starved_window(&record, w.length.as_secs_f64()) {
                if w.rerun < validity::MAX_STARVED_RERUNS {
                    w.rerun += 1;
                    continue;
                }
                w.starved.push(format!("window {}: {reason}", b.window));
            }
            w.actual_s += b.actual_s;
            w.records.push(record);
            return Ok(());
        }
    }

    /// Tells the driver to exit ([`super::trial::Started::finish`] reaps
    /// it): what its windows measured.
    pub(super) fn finish(mut self) -> Windows {
        self.fork.exit();
        self.windows
    }
}

impl Windows {
    /// The fork's value (its windows' sum), its windows named in `trial`.
    pub(super) fn measured(self, trial: &mut Trial) -> anyhow::Result<Measured> {
        let value = fork_value(&self.records).context("the fork measured no window")?;
        let count = self.records.len();
        trial.window_planned_s = Some(self.length.as_secs_f64() * count as f64);
        if !self.starved.is_empty() {
            trial.invalid.push(InvalidMark::Starved {
                reason: format!("starved windows kept: {}", self.starved.join("; ")),
            });
        }
        trial.windows = Some(ForkWindows {
            count: count as u32,
            rerun: self.rerun,
            starved: self.starved,
            peer_cpu_us: value.peer_cpu.map(|c| c.total_us()),
            values: (self.records.iter())
                .map(|w| w.figures(figures(w).cpu_us_per_request, Throughput::Window))
                .collect(),
            gated_cpu: Some(ForkCpu::Driver),
            driver_cpu_us: value.cpu.map(|c| c.total_us()),
            group_cpu_us: value.group_cpu.map(|c| c.total_us()),
        });
        Ok(Measured {
            value,
            first_response_ns: self.first_response_ns,
            startup_cpu: self.startup_cpu,
            memory_per_connection_bytes: None,
            window_actual_s: Some(self.actual_s),
        })
    }
}

/// Why a window of a fork is starved, if it is: as a one-window trial
/// (no request, or its window at the server off the plan), or its window at
/// the driver off the plan. The driver counts from reading OPEN to reading
/// CLOSE, so a stall of its process there stretches its window and thins its
/// counts while the server's, bracketed by the parent, keeps its length (a
/// one-window driver closes on its own deadline).
fn starved_window(record: &WindowRecord, planned_s: f64) -> Option<String> {
    let server_s = record.server.as_ref().map(|s| s.window_secs);
    match validity::starved(&figures(record), Some(planned_s), server_s) {
        Some(InvalidMark::Starved { reason }) => Some(reason),
        _ => validity::off_plan(record.elapsed_s, planned_s).then(|| {
            format!(
                "the driver counted it over {:.1} ms where {:.1} ms were planned (a stall of the driver)",
                record.elapsed_s * 1e3,
                planned_s * 1e3
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Counts;

    /// A window of `requests` counted by the driver over `elapsed_s`.
    fn window(requests: u64, elapsed_s: f64) -> WindowRecord {
        WindowRecord {
            counts: Counts {
                ok: requests,
                ..Counts::default()
            },
            elapsed_s,
            cpu: Some(CpuTimes::default()),
            ..WindowRecord::default()
        }
    }

    #[test]
    fn a_window_the_driver_counted_over_a_stall_is_starved() {
        // As measured under load: 16 requests over 2.7 s of a 150 ms window
        // (the server's, bracketed by the parent, lasted 152 ms).
        let why = starved_window(&window(16, 2.738), 0.15).expect("starved");
        assert!(why.contains("2738.0 ms where 150.0 ms"), "{why}");
        assert!(starved_window(&window(16, 0.12), 0.15).is_some());
        assert_eq!(starved_window(&window(5000, 0.16), 0.15), None);
        // A one-window trial's rules still hold.
        let why = starved_window(&window(0, 0.15), 0.15).expect("starved");
        assert!(why.contains("no request"), "{why}");
    }
}
