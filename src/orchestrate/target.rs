//! What a trial drives: the reference server (with its counters and control
//! port) or a server under test (only its URL, and its process tree when
//! benchgate started it), and how the server's own cost is measured: CPU of
//! its process (tree) at the edges of the measurement window, peak RSS and
//! threads sampled from /proc during the trial.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::server_proc::ServerProcess;
use crate::measure::resources::{
    sample_group, sample_process, CpuSample, CpuTimes, GroupSampler, PeakSampler,
};
use crate::metric::TrialMetrics;

/// How often a process's threads and RSS are sampled during a trial (the
/// reference server's, a driver's).
const SAMPLE_EVERY: Duration = Duration::from_millis(20);
/// The same for a process group (one pass over /proc costs ~1 ms of the parent).
const SAMPLE_GROUP_EVERY: Duration = Duration::from_millis(50);

/// The server process(es) whose cost is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerWatch {
    /// One process (the reference server).
    Process(u32),
    /// Every process of a process group (a server under test and its children).
    Group(u32),
}

impl ServerWatch {
    /// CPU used so far by the process (tree): user+sys of the live processes
    /// plus what they reaped from exited children. `None` when it is gone.
    pub fn cpu(&self) -> Option<CpuTimes> {
        match *self {
            ServerWatch::Process(pid) => {
                let s = sample_process(pid)?;
                Some(CpuTimes {
                    user_us: s.cpu.user_us + s.children_cpu.user_us,
                    sys_us: s.cpu.sys_us + s.children_cpu.sys_us,
                })
            }
            ServerWatch::Group(pgid) => {
                let g = sample_group(pgid);
                (g.processes > 0).then_some(g.cpu)
            }
        }
    }
}

/// The server one trial drives.
pub struct Target<'a> {
    /// The `[[server]]` name; `None`: the reference server.
    pub name: Option<&'a str>,
    /// `http://127.0.0.1:PORT`.
    pub http_url: String,
    /// The reference server's HTTPS port (servers under test have none).
    pub https_url: Option<String>,
    /// The reference server: its counters and measurement window.
    pub reference: Option<&'a ServerProcess>,
    /// The process (tree) to measure; `None` for a `url` server.
    pub watch: Option<ServerWatch>,
}

impl<'a> Target<'a> {
    /// The reference server, measured as one process.
    pub fn reference(server: &'a ServerProcess) -> Target<'a> {
        Target {
            name: None,
            http_url: server.http_url.clone(),
            https_url: server.https_url.clone(),
            reference: Some(server),
            watch: Some(ServerWatch::Process(server.pid())),
        }
    }
}

/// Samples the peak threads and RSS of a server, or of a trial's client
/// ([`super::child`]), during a trial.
pub enum PeakWatch {
    Process(PeakSampler),
    Group(GroupSampler),
    Nothing,
}

impl PeakWatch {
    /// Samples the server `watch` names (nothing for a `url` server).
    pub fn start(watch: Option<ServerWatch>) -> PeakWatch {
        match watch {
            Some(ServerWatch::Process(pid)) => PeakWatch::process(pid),
            Some(ServerWatch::Group(pgid)) => PeakWatch::group(pgid),
            None => PeakWatch::Nothing,
        }
    }

    /// Samples process `pid`.
    pub fn process(pid: u32) -> PeakWatch {
        PeakWatch::Process(PeakSampler::start(pid, SAMPLE_EVERY))
    }

    /// Samples every process of group `pgid` (the sums of their threads and RSS).
    pub fn group(pgid: u32) -> PeakWatch {
        PeakWatch::Group(GroupSampler::start(pgid, SAMPLE_GROUP_EVERY))
    }

    /// A process group's CPU at its latest sample ([`GroupSampler::latest_cpu`]);
    /// `None` for a single process, and before the first sample.
    pub fn latest_group_cpu(&self) -> Option<CpuSample> {
        match self {
            PeakWatch::Group(s) => s.latest_cpu(),
            PeakWatch::Process(_) | PeakWatch::Nothing => None,
        }
    }

    /// Stops sampling; (peak threads, peak RSS bytes), `None` when nothing
    /// was sampled (no process known, or it was gone).
    pub fn finish(self) -> Option<(u64, u64)> {
        let (threads, rss) = match self {
            PeakWatch::Process(s) => s.finish(),
            PeakWatch::Group(s) => {
                let g = s.finish();
                (g.threads, g.rss_bytes)
            }
            PeakWatch::Nothing => return None,
        };
        (threads > 0).then_some((threads, rss))
    }
}

/// `metrics` with the server's figures in the trial: its CPU in the window
/// per request completed in it, its peaks ([`PeakWatch::finish`]), and its
/// threads' run delay in the window (the reference server's count). Whatever
/// was not measured stays absent (never estimated).
pub fn with_server_figures(
    metrics: TrialMetrics,
    window_cpu: Option<CpuTimes>,
    requests: u64,
    peaks: Option<(u64, u64)>,
    run_delay_ns: Option<u64>,
) -> TrialMetrics {
    TrialMetrics {
        server_run_delay_ms: run_delay_ns.map(|ns| ns as f64 / 1e6),
        server_cpu_us_per_request: window_cpu
            .filter(|_| requests > 0)
            .map(|c| c.total_us() as f64 / requests as f64),
        server_peak_rss_bytes: peaks.map(|p| p.1),
        server_peak_threads: peaks.map(|p| p.0),
        ..metrics
    }
}

/// CPU of the server between two readings, when both were taken.
pub fn window_cpu(start: Option<CpuTimes>, end: Option<CpuTimes>) -> Option<CpuTimes> {
    Some(end?.since(&start?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_measurable() {
        let w = ServerWatch::Process(std::process::id());
        let busy = std::time::Instant::now();
        while busy.elapsed() < Duration::from_millis(30) {
            std::hint::black_box(0u64);
        }
        assert!(w.cpu().is_some());
        let peaks = PeakWatch::start(Some(w));
        std::thread::sleep(Duration::from_millis(30));
        let (threads, rss) = peaks.finish().unwrap();
        assert!(threads >= 1 && rss > 0);
        assert!(PeakWatch::start(None).finish().is_none());
    }

    #[test]
    fn server_figures_are_absent_unless_measured() {
        let cpu = CpuTimes {
            user_us: 300,
            sys_us: 100,
        };
        let measured = crate::metric::every_field_measured();
        let c = with_server_figures(
            measured.clone(),
            Some(cpu),
            100,
            Some((3, 5 << 20)),
            Some(5e6 as u64),
        );
        assert_eq!(c.server_cpu_us_per_request, Some(4.0));
        assert_eq!(c.server_run_delay_ms, Some(5.0));
        assert_eq!(
            (c.server_peak_threads, c.server_peak_rss_bytes),
            (Some(3), Some(5 << 20))
        );
        let c = with_server_figures(measured, Some(cpu), 0, None, None);
        assert_eq!(
            (
                c.server_cpu_us_per_request,
                c.server_peak_threads,
                c.server_peak_rss_bytes,
                c.server_run_delay_ms
            ),
            (None, None, None, None)
        );
        assert_eq!(window_cpu(None, Some(cpu)), None);
        assert_eq!(window_cpu(Some(cpu), Some(cpu)).unwrap().total_us(), 0);
    }
}
