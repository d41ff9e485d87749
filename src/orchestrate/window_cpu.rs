//! A command client's CPU in its measurement window: its process group's CPU
//! ([`sample_group`](crate::measure::resources::sample_group)) read as the
//! window opens and as it closes. A program that exits as its window closes
//! (its own timer ending with benchgate's) is gone from /proc when the close
//! is read: its figure is then the last of the samples of the group's CPU
//! taken while the window was open ([`GroupSampler`]), per request completed
//! in the share of the window that sample covers, never its exit's
//! accounting (which would add its shutdown: a JVM's is a second of CPU).
//! Which reading it is goes into the trial ([`CpuSource`]).
//!
//! [`GroupSampler`]: crate::measure::resources::GroupSampler

use std::time::{Duration, Instant};

use super::child::TrialProcess;
use crate::measure::resources::{sample_group, CpuSample, CpuTimes, GroupSample};
use crate::results::CpuSource;

/// The group's CPU in the window, as read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowCpu {
    /// CPU from the window's open to the reading; zero when gone.
    pub cpu: CpuTimes,
    /// The share of the window's time (open to close, at benchgate's side)
    /// that `cpu` covers: 1 read at the close, less for the last sample, 0
    /// when gone.
    pub share: f64,
    pub source: CpuSource,
}

/// The window's CPU from the reading at its `open`, the latest sample of the
/// group taken before the close (`before_close`, if any), the instant the
/// window closed, and the group read there (`close`, possibly later: the
/// program may have exited meanwhile).
///
/// A group's CPU only grows while its processes live: a reading that found
/// no process, or less CPU than the open (or than a sample taken since), lost
/// a process and counts as gone. A sample counts only if taken while the
/// window was open.
pub fn read(
    open: CpuSample,
    before_close: Option<CpuSample>,
    closed_at: Instant,
    close: GroupSample,
) -> WindowCpu {
    let total = |c: &CpuTimes| c.total_us();
    let before = before_close
        .filter(|s| s.at > open.at && s.at <= closed_at && total(&s.cpu) >= total(&open.cpu));
    let floor = before.map_or(total(&open.cpu), |s| total(&s.cpu));
    if close.processes > 0 && total(&close.cpu) >= floor {
        return WindowCpu {
            cpu: close.cpu.since(&open.cpu),
            share: 1.0,
            source: CpuSource::Close,
        };
    }
    let span = closed_at.saturating_duration_since(open.at).as_secs_f64();
    match before {
        Some(s) if span > 0.0 => WindowCpu {
            cpu: s.cpu.since(&open.cpu),
            share: (s.at.duration_since(open.at).as_secs_f64() / span).min(1.0),
            source: CpuSource::LastSample,
        },
        _ => WindowCpu {
            cpu: CpuTimes::default(),
            share: 0.0,
            source: CpuSource::Gone,
        },
    }
}

/// The window of `program` (its group `pgid`) closing now: the latest
/// sample taken before the close, then the group read ([`read`]) after the
/// test knob's `close_lag`, if set; `open` as read at the window's open.
pub(super) fn at_close(
    program: &TrialProcess,
    pgid: u32,
    open: CpuSample,
    close_lag: Option<Duration>,
) -> WindowCpu {
    let closed_at = Instant::now();
    let before_close = program.latest_group_cpu();
    if let Some(lag) = close_lag {
        std::thread::sleep(lag);
    }
    read(open, before_close, closed_at, sample_group(pgid))
}

impl WindowCpu {
    /// CPU per request, µs, of the `requests` completed in the whole window:
    /// those of the share read, pro rata. `None` when gone, with no request,
    /// or with no CPU read (a reading in whole clock ticks that saw none).
    pub fn per_request(&self, requests: u64) -> Option<f64> {
        let us = self.cpu.total_us();
        (self.share > 0.0 && requests > 0 && us > 0)
            .then(|| us as f64 / (requests as f64 * self.share))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn cpu(us: u64) -> CpuTimes {
        CpuTimes {
            user_us: us,
            sys_us: 0,
        }
    }

    fn group(processes: u64, us: u64) -> GroupSample {
        GroupSample {
            processes,
            cpu: cpu(us),
            ..GroupSample::default()
        }
    }

    /// A window opened at t0 with 1,000 µs, closed at t0 + 1 s; a sample of
    /// 41,000 µs taken at t0 + 0.8 s.
    fn window() -> (CpuSample, CpuSample, Instant) {
        let t0 = Instant::now();
        let open = CpuSample {
            at: t0,
            cpu: cpu(1_000),
        };
        let sample = CpuSample {
            at: t0 + Duration::from_millis(800),
            cpu: cpu(41_000),
        };
        (open, sample, t0 + Duration::from_secs(1))
    }

    #[test]
    fn a_group_alive_at_the_close_is_read_there() {
        let (open, sample, closed) = window();
        let w = read(open, Some(sample), closed, group(2, 51_000));
        assert_eq!((w.source, w.share), (CpuSource::Close, 1.0));
        assert_eq!(w.cpu.total_us(), 50_000);
        assert_eq!(w.per_request(100), Some(500.0));
    }

    #[test]
    fn a_program_gone_at_the_close_keeps_its_last_sample_pro_rata() {
        let (open, sample, closed) = window();
        let w = read(open, Some(sample), closed, group(0, 0));
        assert_eq!(w.source, CpuSource::LastSample);
        assert_eq!(w.cpu.total_us(), 40_000);
        assert!((w.share - 0.8).abs() < 1e-9, "{}", w.share);
        // 40 ms over the 80 of 100 requests its 0.8 s covers.
        assert!((w.per_request(100).unwrap() - 500.0).abs() < 1e-6);
    }

    #[test]
    fn a_reading_below_the_open_or_an_earlier_sample_counts_as_gone() {
        let (open, sample, closed) = window();
        // A process left between the sample and the close: the sample.
        let w = read(open, Some(sample), closed, group(1, 30_000));
        assert_eq!(w.source, CpuSource::LastSample);
        // Below the open, with no sample since: gone, no figure.
        let w = read(open, None, closed, group(1, 500));
        assert_eq!((w.source, w.per_request(100)), (CpuSource::Gone, None));
        // A sample below the open is no sample.
        let low = CpuSample {
            cpu: cpu(900),
            ..sample
        };
        let w = read(open, Some(low), closed, group(0, 0));
        assert_eq!(w.source, CpuSource::Gone);
    }

    #[test]
    fn only_a_sample_taken_while_the_window_was_open_counts() {
        let (open, sample, closed) = window();
        let early = CpuSample {
            at: open.at,
            ..sample
        };
        assert_eq!(
            read(open, Some(early), closed, group(0, 0)).source,
            CpuSource::Gone
        );
        let late = CpuSample {
            at: closed + Duration::from_millis(1),
            ..sample
        };
        assert_eq!(
            read(open, Some(late), closed, group(0, 0)).source,
            CpuSource::Gone
        );
        assert_eq!(
            read(open, None, closed, group(0, 0)).source,
            CpuSource::Gone
        );
    }
}
