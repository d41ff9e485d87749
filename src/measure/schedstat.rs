//! Starvation: what the machine withheld from a client while it wanted to
//! run, read from /proc at the two edges of a measurement window (issue 29).
//! A trial whose client waited for a CPU, was preempted or lost its vCPU to
//! the hypervisor measured the machine as much as the client; these figures
//! say by how much, next to the trial's own.
//!
//! - **Run delay**: the second field of `/proc/<pid>/task/<tid>/schedstat`,
//!   the nanoseconds the thread spent runnable on a run queue, waiting for a
//!   CPU (the kernel's `sched_info.run_delay`, Documentation/scheduler/sched-stats.rst).
//!   Per thread: `/proc/<pid>/schedstat` is the main thread's only.
//! - **Involuntary context switches**: `nonvoluntary_ctxt_switches` of
//!   `/proc/<pid>/task/<tid>/status`: how often the scheduler took a CPU from
//!   a thread that still wanted it. Per thread for the same reason.
//! - **Steal**: the eighth value of `/proc/stat`'s aggregate `cpu` line, in
//!   USER_HZ ticks (`sysconf(_SC_CLK_TCK)`): time the hypervisor ran
//!   something else while a vCPU of this machine wanted to run, summed over
//!   all its CPUs (0 on bare metal).
//!
//! A window's figure for a set of processes is, over the threads alive when
//! it closed, each thread's increase since it opened (a thread started inside
//! the window counts from 0). A thread that exits inside the window takes its
//! part with it: an undercount, never a negative sum. Every reader returns
//! `None` where the kernel has no such file or field (a kernel without
//! `CONFIG_SCHED_INFO`, no /proc): n/a, never an error.

use std::collections::BTreeMap;
use std::fs;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::resources::clock_ticks_per_sec;

/// The run delay in a `schedstat` file's text (its second field), ns.
fn parse_run_delay(schedstat: &str) -> Option<u64> {
    let mut fields = schedstat.split_whitespace();
    // sum_exec_runtime, run_delay, pcount: all three, or a format we do not know.
    let (_runtime, delay, _slices) = (fields.next()?, fields.next()?, fields.next()?);
    delay.parse().ok()
}

/// `nonvoluntary_ctxt_switches` in a `status` file's text.
fn parse_involuntary_switches(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))?
        .trim()
        .parse()
        .ok()
}

/// The steal ticks in `/proc/stat`'s text: the eighth value of its aggregate
/// `cpu` line (kernels before 2.6.11 have fewer values: `None`).
fn parse_steal_ticks(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    line.split_whitespace().nth(8)?.parse().ok()
}

/// Each live thread's counters of some processes at one instant, by thread
/// id (unique on the machine while the thread lives).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskCounters {
    run_delay_ns: BTreeMap<u32, u64>,
    involuntary: BTreeMap<u32, u64>,
}

impl TaskCounters {
    /// Reads every thread of `pids`; a process or thread gone meanwhile is
    /// left out.
    pub fn read(pids: &[u32]) -> TaskCounters {
        let mut c = TaskCounters::default();
        for pid in pids {
            let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
                continue;
            };
            for task in tasks.flatten() {
                let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                    continue;
                };
                let dir = task.path();
                let read = |file: &str| fs::read_to_string(dir.join(file)).ok();
                if let Some(ns) = read("schedstat").as_deref().and_then(parse_run_delay) {
                    c.run_delay_ns.insert(tid, ns);
                }
                if let Some(n) = read("status")
                    .as_deref()
                    .and_then(parse_involuntary_switches)
                {
                    c.involuntary.insert(tid, n);
                }
            }
        }
        c
    }

    /// This process's threads.
    pub fn read_self() -> TaskCounters {
        TaskCounters::read(&[std::process::id()])
    }

    /// Run delay of the threads read now since `open`, ns; `None` when either
    /// reading found no thread's run delay.
    pub fn run_delay_since(&self, open: &TaskCounters) -> Option<u64> {
        increase(&self.run_delay_ns, &open.run_delay_ns)
    }

    /// Involuntary context switches of the threads read now since `open`.
    pub fn involuntary_since(&self, open: &TaskCounters) -> Option<u64> {
        increase(&self.involuntary, &open.involuntary)
    }
}

/// Sum over the threads of `close` of their increase since `open` (from 0
/// for a thread `open` did not see).
fn increase(close: &BTreeMap<u32, u64>, open: &BTreeMap<u32, u64>) -> Option<u64> {
    if close.is_empty() || open.is_empty() {
        return None;
    }
    Some(
        close
            .iter()
            .map(|(tid, now)| now.saturating_sub(open.get(tid).copied().unwrap_or(0)))
            .sum(),
    )
}

/// The host's steal so far, in USER_HZ ticks.
fn steal_ticks() -> Option<u64> {
    parse_steal_ticks(&fs::read_to_string("/proc/stat").ok()?)
}

/// Everything starvation is computed from, at one edge of a window.
#[derive(Debug, Clone)]
pub struct Edge {
    at: Instant,
    tasks: TaskCounters,
    steal_ticks: Option<u64>,
}

impl Edge {
    /// The counters of the threads of `pids`, and the host's steal, now.
    pub fn read(pids: &[u32]) -> Edge {
        Edge {
            at: Instant::now(),
            tasks: TaskCounters::read(pids),
            steal_ticks: steal_ticks(),
        }
    }

    /// From the window's opening edge `open` to this one.
    pub fn since(&self, open: &Edge) -> Starvation {
        let steal = self
            .steal_ticks
            .zip(open.steal_ticks)
            .and_then(|(close, open)| close.checked_sub(open));
        Starvation {
            span_s: self.at.saturating_duration_since(open.at).as_secs_f64(),
            run_delay_ns: self.tasks.run_delay_since(&open.tasks),
            involuntary_switches: self.tasks.involuntary_since(&open.tasks),
            steal_ms: steal.map(|t| t as f64 * 1e3 / clock_ticks_per_sec() as f64),
        }
    }
}

/// What the machine withheld from a client between two [`Edge`]s. Each
/// figure is `None` where it could not be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Starvation {
    /// Time between the two readings, seconds: the window they bracket.
    pub span_s: f64,
    /// The client's threads' run delay, summed, ns.
    pub run_delay_ns: Option<u64>,
    /// The client's threads' involuntary context switches, summed.
    pub involuntary_switches: Option<u64>,
    /// The host's steal time, all CPUs, ms.
    pub steal_ms: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_delay_is_the_second_schedstat_field() {
        assert_eq!(parse_run_delay("123456 7890 12\n"), Some(7890));
        assert_eq!(parse_run_delay("0 0 0"), Some(0));
        assert_eq!(parse_run_delay(""), None);
        assert_eq!(parse_run_delay("123456 7890\n"), None, "truncated");
        assert_eq!(parse_run_delay("123456 -5 12"), None);
        assert_eq!(parse_run_delay("123456 x 12"), None);
    }

    #[test]
    fn involuntary_switches_from_status() {
        let status = "Name:\tpython3\nThreads:\t3\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t17\n";
        assert_eq!(parse_involuntary_switches(status), Some(17));
        // The voluntary line alone is not the involuntary one.
        let only_voluntary = "voluntary_ctxt_switches:\t150\n";
        assert_eq!(parse_involuntary_switches(only_voluntary), None);
        assert_eq!(
            parse_involuntary_switches("nonvoluntary_ctxt_switches:\tmany\n"),
            None
        );
        assert_eq!(parse_involuntary_switches(""), None);
    }

    #[test]
    fn steal_is_the_eighth_value_of_the_cpu_line() {
        let stat = "cpu  1199868 130799 244393 868640 13227 0 57762 527 0 0\n\
                    cpu0 599934 65399 122196 434320 6613 0 28881 263 0 0\n\
                    intr 1 2 3\n";
        assert_eq!(parse_steal_ticks(stat), Some(527));
        // A per-CPU line is not the aggregate one.
        assert_eq!(parse_steal_ticks("cpu0 1 2 3 4 5 6 7 8 0 0\n"), None);
        assert_eq!(
            parse_steal_ticks("cpu  1 2 3 4 5 6 7\n"),
            None,
            "no steal value"
        );
        assert_eq!(parse_steal_ticks("cpu  1 2 3 4 5 6 7 x\n"), None);
        assert_eq!(parse_steal_ticks(""), None);
    }

    fn counters(delays: &[(u32, u64)]) -> TaskCounters {
        TaskCounters {
            run_delay_ns: delays.iter().copied().collect(),
            involuntary: BTreeMap::new(),
        }
    }

    #[test]
    fn a_window_counts_each_thread_alive_at_its_close_from_its_open() {
        let open = counters(&[(10, 1_000), (11, 5_000), (12, 9_000)]);
        // 10 grew by 500, 11 exited (its part is lost), 12 did not move, 13
        // started inside the window with 300.
        let close = counters(&[(10, 1_500), (12, 9_000), (13, 300)]);
        assert_eq!(close.run_delay_since(&open), Some(800));
        // Nothing read at one edge (no schedstat, the process gone): n/a.
        assert_eq!(close.run_delay_since(&TaskCounters::default()), None);
        assert_eq!(TaskCounters::default().run_delay_since(&open), None);
        assert_eq!(close.involuntary_since(&open), None);
    }

    #[test]
    fn a_reused_thread_id_never_counts_negative() {
        let open = counters(&[(10, 9_000)]);
        let close = counters(&[(10, 100)]);
        assert_eq!(close.run_delay_since(&open), Some(0));
    }

    /// On this machine's kernel the readers find this process's threads,
    /// and an unknown process reads as nothing.
    #[test]
    fn this_process_reads_its_own_threads() {
        let open = Edge::read(&[std::process::id()]);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let s = Edge::read(&[std::process::id()]).since(&open);
        assert!(s.span_s >= 0.02, "{s:?}");
        if std::path::Path::new("/proc/self/schedstat").exists() {
            assert!(s.run_delay_ns.is_some(), "{s:?}");
        }
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(s.involuntary_switches.is_some(), "{s:?}");
        }
        if let Some(ms) = s.steal_ms {
            assert!(ms >= 0.0 && ms.is_finite(), "{s:?}");
        }
        assert_eq!(TaskCounters::read(&[u32::MAX]), TaskCounters::default());
    }
}
