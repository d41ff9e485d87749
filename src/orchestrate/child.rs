//! A trial's process, started and watched the same way for a built-in
//! client's driver ([`super::trial`]) and a command client's program
//! ([`super::command`]): pinned to the client's cores, its peak threads and
//! RSS sampled from /proc while it runs (the process itself, or a command
//! client's whole process group), and reaped with `wait4` (its CPU and max
//! RSS) on a thread of its own, so that the caller watches the clock, the
//! interrupt flag and the window meanwhile.

use std::process::{Child, Command};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::target::PeakWatch;
use crate::interrupt;
use crate::measure::resources::{pin_command, wait_child, ChildUsage, CpuSample};

/// What is sampled of a trial's process while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampled {
    /// The process alone (a driver: one process).
    Process,
    /// Its process group, which it leads (a command client and whatever it
    /// starts: a shell wrapper and its JVM alike).
    Group,
}

/// A trial's running process.
pub struct TrialProcess {
    /// Its pid (and, for [`Sampled::Group`], its process group's id).
    pub pid: u32,
    peaks: PeakWatch,
    reaper: JoinHandle<std::io::Result<ChildUsage>>,
}

/// Why [`TrialProcess::wait_or_kill`] killed the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// It outlived its time limit.
    TimedOut,
    /// SIGINT/SIGTERM reached benchgate ([`interrupt`]).
    Interrupted(interrupt::Signal),
}

/// How often [`TrialProcess::wait_or_kill`] looks at the clock and the
/// interrupt flag.
const WATCH_EVERY: Duration = Duration::from_millis(20);

impl TrialProcess {
    /// Starts `cmd` pinned to `cpus` (none: not pinned), samples what
    /// `sampled` says, and reaps it on a thread of its own. The [`Child`]
    /// is the caller's for its pipes only: it must not wait on it.
    pub fn spawn(
        cmd: &mut Command,
        cpus: &[usize],
        sampled: Sampled,
    ) -> std::io::Result<(TrialProcess, Child)> {
        if !cpus.is_empty() {
            pin_command(cmd, cpus);
        }
        let child = cmd.spawn()?;
        let pid = child.id();
        let peaks = match sampled {
            Sampled::Process => PeakWatch::process(pid),
            Sampled::Group => PeakWatch::group(pid),
        };
        let reaper = std::thread::spawn(move || wait_child(pid));
        Ok((TrialProcess { pid, peaks, reaper }, child))
    }

    /// Whether the process has exited (and been reaped).
    pub fn exited(&self) -> bool {
        self.reaper.is_finished()
    }

    /// For [`Sampled::Group`], the group's CPU at the latest of the samples
    /// taken while it runs ([`PeakWatch::latest_group_cpu`]).
    pub fn latest_group_cpu(&self) -> Option<CpuSample> {
        self.peaks.latest_group_cpu()
    }

    /// Waits for the process to exit; kills it (SIGKILL) at `deadline`, or
    /// at once when benchgate is interrupted, and says why it did.
    pub fn wait_or_kill(&self, deadline: Instant) -> Option<Kill> {
        while !self.exited() {
            let kill = match interrupt::received() {
                Some(signal) => Some(Kill::Interrupted(signal)),
                None if Instant::now() >= deadline => Some(Kill::TimedOut),
                None => None,
            };
            if kill.is_some() {
                // SAFETY: kill(2) on our own child, which the reaper has not
                // reaped yet (it was still running just above).
                unsafe {
                    libc::kill(self.pid as libc::pid_t, libc::SIGKILL);
                }
                return kill;
            }
            std::thread::sleep(WATCH_EVERY);
        }
        None
    }

    /// Waits until the process is reaped: its exit status, CPU and max RSS,
    /// and the peaks sampled while it ran, (threads, RSS bytes); (0, 0) when
    /// nothing was sampled.
    pub fn finish(self) -> anyhow::Result<(ChildUsage, (u64, u64))> {
        let usage = self
            .reaper
            .join()
            .map_err(|_| anyhow::anyhow!("the thread reaping the trial's process panicked"))?
            .context("waiting for the trial's process")?;
        Ok((usage, self.peaks.finish().unwrap_or((0, 0))))
    }
}
