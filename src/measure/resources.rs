//! The client's own cost: CPU (getrusage; of other processes their CPU-time
//! clocks, in ns), peak RSS and thread counts (/proc), child-process
//! accounting (wait4) and CPU pinning (sched_setaffinity). Linux.

use std::fs;
use std::io;
use std::process::{Command, ExitStatus};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// User and system CPU time, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user_us: u64,
    pub sys_us: u64,
}

impl CpuTimes {
    pub fn total_us(&self) -> u64 {
        self.user_us + self.sys_us
    }

    /// `self - earlier`, saturating; the total is the difference of the
    /// totals (a sample's user/system split is proportional, see
    /// [`sample_process`], so one part may shrink while the total grows).
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        let total = self.total_us().saturating_sub(earlier.total_us());
        let user_us = self.user_us.saturating_sub(earlier.user_us).min(total);
        CpuTimes {
            user_us,
            sys_us: total - user_us,
        }
    }
}

fn timeval_us(tv: libc::timeval) -> u64 {
    (tv.tv_sec as u64) * 1_000_000 + tv.tv_usec as u64
}

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: getrusage fills the zeroed struct; RUSAGE_SELF/CHILDREN are valid.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    }
}

/// Nanoseconds on the system-wide monotonic clock (`CLOCK_MONOTONIC`): one
/// time line for the parent and its driver process, so a spawn and an event
/// in the child can be subtracted.
pub fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime fills the zeroed struct; CLOCK_MONOTONIC is valid.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
        ts
    };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// An earlier instant of this process on the [`monotonic_ns`] clock.
pub fn monotonic_ns_at(t: std::time::Instant) -> u64 {
    let ago = std::time::Instant::now().saturating_duration_since(t);
    monotonic_ns().saturating_sub(ago.as_nanos() as u64)
}

/// CPU used so far by this process, all threads.
pub fn self_cpu() -> CpuTimes {
    let ru = rusage(libc::RUSAGE_SELF);
    CpuTimes {
        user_us: timeval_us(ru.ru_utime),
        sys_us: timeval_us(ru.ru_stime),
    }
}

/// Peak resident set size of this process so far, bytes.
pub fn self_peak_rss_bytes() -> u64 {
    (rusage(libc::RUSAGE_SELF).ru_maxrss as u64) * 1024
}

/// One reading of a process from `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcSample {
    pub threads: u64,
    pub rss_bytes: u64,
    pub cpu: CpuTimes,
    /// CPU of its reaped children (cutime, cstime).
    pub children_cpu: CpuTimes,
    /// Process group id.
    pub pgrp: u32,
}

/// Reads `/proc/<pid>/stat`, and the process's CPU from its CPU-time clock;
/// `None` when the process is gone.
///
/// `/proc/<pid>/stat` counts CPU in clock ticks (10 ms at the usual 100 Hz):
/// over a 150 ms window that is an error of up to 10 ms, 7% of a core-bound
/// window, more for a partly idle program. The process's CPU-time clock
/// (`clock_getcpuclockid`) has the kernel's nanoseconds, exited threads
/// included: the sample's user + system total is that, split between user
/// and system in the ticks' proportion (as the kernel splits its own). The
/// children's CPU (reaped, `cutime` + `cstime`) stays in ticks.
pub fn sample_process(pid: u32) -> Option<ProcSample> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut sample = parse_stat(&stat)?;
    if let Some(ns) = process_cpu_ns(pid) {
        sample.cpu = split_like(ns / 1000, sample.cpu);
    }
    Some(sample)
}

/// The CPU time of process `pid` (all its threads, exited ones included), in
/// ns, from its CPU-time clock; `None` when it is gone.
fn process_cpu_ns(pid: u32) -> Option<u64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: clock_getcpuclockid(3) and clock_gettime(2) write only into the
    // locals we own.
    unsafe {
        if libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) != 0 {
            return None;
        }
        let mut ts: libc::timespec = std::mem::zeroed();
        if libc::clock_gettime(clock, &mut ts) != 0 {
            return None;
        }
        Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }
}

/// `total_us` split between user and system as `ticks` splits its own total
/// (all user when the ticks say nothing yet).
fn split_like(total_us: u64, ticks: CpuTimes) -> CpuTimes {
    let t = ticks.total_us();
    let user_us = if t == 0 {
        total_us
    } else {
        (u128::from(total_us) * u128::from(ticks.user_us) / u128::from(t)) as u64
    };
    CpuTimes {
        user_us,
        sys_us: total_us - user_us,
    }
}

/// USER_HZ: the unit of /proc's tick counts.
pub(super) fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Parses the fields we need from a `/proc/<pid>/stat` line. The command name
/// (field 2) may contain spaces and parentheses, so fields are counted from the
/// last `)`.
fn parse_stat(stat: &str) -> Option<ProcSample> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After ")": field 3 (state) is index 0, so field N is index N - 3.
    let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
    let ticks = clock_ticks_per_sec();
    let to_us = |t: u64| t * 1_000_000 / ticks;
    Some(ProcSample {
        cpu: CpuTimes {
            user_us: to_us(field(14)?),
            sys_us: to_us(field(15)?),
        },
        children_cpu: CpuTimes {
            user_us: to_us(field(16)?),
            sys_us: to_us(field(17)?),
        },
        threads: field(20)?,
        rss_bytes: field(24)? * page_size(),
        pgrp: field(5)? as u32,
    })
}

/// Exit status and resource usage of a reaped child.
#[derive(Debug, Clone, Copy)]
pub struct ChildUsage {
    pub status: ExitStatus,
    pub cpu: CpuTimes,
    pub max_rss_bytes: u64,
}

/// Waits for child `pid` with `wait4`, returning its status and rusage.
/// The caller must not also `wait()` on the same child.
pub fn wait_child(pid: u32) -> io::Result<ChildUsage> {
    use std::os::unix::process::ExitStatusExt;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: wait4 writes into the zeroed rusage and the status int we own.
        let (rc, ru) = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            let rc = libc::wait4(pid as libc::pid_t, &mut status, 0, &mut ru);
            (rc, ru)
        };
        if rc == -1 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        return Ok(ChildUsage {
            status: ExitStatus::from_raw(status),
            cpu: CpuTimes {
                user_us: timeval_us(ru.ru_utime),
                sys_us: timeval_us(ru.ru_stime),
            },
            max_rss_bytes: (ru.ru_maxrss as u64) * 1024,
        });
    }
}

/// CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the zeroed cpu_set_t we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Makes `cmd`'s process start pinned to `cpus`.
pub fn pin_command(cmd: &mut Command, cpus: &[usize]) {
    use std::os::unix::process::CommandExt;
    let cpus = cpus.to_vec();
    // SAFETY: the closure only calls async-signal-safe libc functions on a
    // stack-owned cpu_set_t between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in &cpus {
                libc::CPU_SET(c, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Peak thread count and RSS of a process, sampled from /proc every `every`
/// on a background thread until the process is gone or `stop` is called.
pub struct PeakSampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<(u64, u64)>>,
}

impl PeakSampler {
    pub fn start(pid: u32, every: Duration) -> PeakSampler {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let (mut threads, mut rss) = (0u64, 0u64);
            while !flag.load(Ordering::Relaxed) {
                match sample_process(pid) {
                    Some(s) => {
                        threads = threads.max(s.threads);
                        rss = rss.max(s.rss_bytes);
                    }
                    None => break,
                }
                std::thread::sleep(every);
            }
            (threads, rss)
        });
        PeakSampler {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops sampling; returns (peak threads, peak sampled RSS bytes).
    pub fn finish(mut self) -> (u64, u64) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or((0, 0))
    }
}

impl Drop for PeakSampler {
    /// A sampler dropped without [`PeakSampler::finish`] (an error path) stops too.
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A process group at one instant: its members' sums.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupSample {
    pub processes: u64,
    pub threads: u64,
    pub rss_bytes: u64,
    /// CPU of the live members plus what they reaped from exited children.
    pub cpu: CpuTimes,
}

/// The live processes of group `pgid` (one pass over /proc).
pub fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| parse_stat(&stat))
                .is_some_and(|s| s.pgrp == pgid)
        })
        .collect()
}

/// Puts every thread of every live process of group `pgid` and the calling
/// thread on one CPU, the one the caller runs on; returns the threads of the
/// group moved. Best effort: a thread started meanwhile by a thread not yet
/// moved stays where it was (one started later by a moved thread inherits).
pub fn pin_group_beside_me(pgid: u32) -> usize {
    // SAFETY: sched_getcpu(3) takes nothing and returns a CPU or -1.
    let Ok(cpu) = usize::try_from(unsafe { libc::sched_getcpu() }) else {
        return 0;
    };
    // SAFETY: a zeroed cpu_set_t we own, filled by CPU_SET; sched_setaffinity
    // only reads it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    };
    let pin = |tid: libc::pid_t| {
        // SAFETY: see above; a thread gone meanwhile is an error we ignore.
        unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
    };
    pin(0);
    let mut moved = 0;
    for pid in group_members(pgid) {
        let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for tid in tasks
            .flatten()
            .filter_map(|t| t.file_name().to_str()?.parse().ok())
        {
            moved += usize::from(pin(tid));
        }
    }
    moved
}

/// Sums every live process of group `pgid`.
pub fn sample_group(pgid: u32) -> GroupSample {
    let mut g = GroupSample::default();
    for pid in group_members(pgid) {
        // Gone, or (its pid reused) in another group since.
        let Some(s) = sample_process(pid).filter(|s| s.pgrp == pgid) else {
            continue;
        };
        g.processes += 1;
        g.threads += s.threads;
        g.rss_bytes += s.rss_bytes;
        g.cpu.user_us += s.cpu.user_us + s.children_cpu.user_us;
        g.cpu.sys_us += s.cpu.sys_us + s.children_cpu.sys_us;
    }
    g
}

/// One sample of a process group's CPU ([`sample_group`]) by a
/// [`GroupSampler`], and when its pass over /proc began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSample {
    pub at: std::time::Instant,
    pub cpu: CpuTimes,
}

/// Peaks of a process group (sum of RSS, sum of threads), sampled from /proc
/// every `every` on a background thread until stopped, and the group's CPU
/// at the latest sample that found a member ([`GroupSampler::latest_cpu`]).
/// One /proc scan costs about a millisecond of the parent's CPU, not the
/// client's.
pub struct GroupSampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    latest: std::sync::Arc<std::sync::Mutex<Option<CpuSample>>>,
    handle: Option<std::thread::JoinHandle<GroupSample>>,
}

impl GroupSampler {
    pub fn start(pgid: u32, every: Duration) -> GroupSampler {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let latest = std::sync::Arc::new(std::sync::Mutex::new(None));
        let (flag, last) = (stop.clone(), latest.clone());
        let handle = std::thread::spawn(move || {
            let mut peak = GroupSample::default();
            while !flag.load(Ordering::Relaxed) {
                let at = std::time::Instant::now();
                let s = sample_group(pgid);
                peak.processes = peak.processes.max(s.processes);
                peak.threads = peak.threads.max(s.threads);
                peak.rss_bytes = peak.rss_bytes.max(s.rss_bytes);
                if s.processes > 0 {
                    let sample = Some(CpuSample { at, cpu: s.cpu });
                    *last.lock().unwrap_or_else(|p| p.into_inner()) = sample;
                }
                std::thread::sleep(every);
            }
            peak
        });
        GroupSampler {
            stop,
            latest,
            handle: Some(handle),
        }
    }

    /// The group's CPU at the latest finished sample that found a member of
    /// it; `None` before the first.
    pub fn latest_cpu(&self) -> Option<CpuSample> {
        *self.latest.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stops sampling; returns the peaks (processes, threads, RSS sums).
    pub fn finish(mut self) -> GroupSample {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for GroupSampler {
    /// A sampler dropped without [`GroupSampler::finish`] (an error path) stops too.
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_spaces_in_name() {
        let line = "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 100 10000000 300 18446744073709551615";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.threads, 7);
        assert_eq!(s.rss_bytes, 300 * page_size());
        let ticks = clock_ticks_per_sec();
        assert_eq!(s.cpu.user_us, 250 * 1_000_000 / ticks);
        assert_eq!(s.cpu.sys_us, 50 * 1_000_000 / ticks);
        assert_eq!(s.pgrp, 1234);
    }

    #[test]
    fn samples_a_process_group_tree() {
        use std::os::unix::process::CommandExt;
        // A shell (its own group) with two sleeping children: 3 processes.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 5 & sleep 5 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id();
        let mut g = GroupSample::default();
        for _ in 0..100 {
            g = sample_group(pgid);
            if g.processes >= 3 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(g.processes, 3, "{g:?}");
        assert!(g.threads >= 3 && g.rss_bytes > 0);
        // SAFETY: kill(2) on the group we created.
        unsafe {
            libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
        }
        let _ = child.wait();
    }

    #[test]
    fn a_group_sampler_keeps_the_latest_cpu_it_found() {
        use std::os::unix::process::CommandExt;
        let started = std::time::Instant::now();
        let mut child = Command::new("sh")
            .args(["-c", "sleep 5"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id();
        let sampler = GroupSampler::start(pgid, Duration::from_millis(5));
        let mut latest = None;
        for _ in 0..400 {
            latest = sampler.latest_cpu();
            if latest.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let latest = latest.expect("a sample of a live group");
        assert!(latest.at >= started);
        // SAFETY: kill(2) on the group we created.
        unsafe {
            libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
        }
        let _ = child.wait();
        // A pass that finds the group gone leaves the last sample in place.
        std::thread::sleep(Duration::from_millis(20));
        assert!(sampler.latest_cpu().is_some_and(|s| s.at >= latest.at));
        assert!(sampler.finish().processes >= 1);
    }

    #[test]
    fn a_process_cpu_is_read_to_the_microsecond_not_in_ticks() {
        // A child that spins 25 ms of its own CPU, then sleeps: in 10 ms
        // ticks that reads 20 or 30 ms; from its CPU-time clock, 25 ms plus
        // what fork and the spin's clock reads cost.
        // SAFETY: the child only reads clocks, sleeps and exits (async-signal-safe).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            unsafe {
                let now = || {
                    let mut t: libc::timespec = std::mem::zeroed();
                    libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
                    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
                };
                let end = now() + 25_000_000;
                while now() < end {}
                let t = libc::timespec {
                    tv_sec: 30,
                    tv_nsec: 0,
                };
                libc::nanosleep(&t, std::ptr::null_mut());
                libc::_exit(0);
            }
        }
        let pid = pid as u32;
        let mut cpu_us = 0;
        for _ in 0..500 {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
            let state = stat[stat.rfind(')').unwrap() + 2..].chars().next();
            cpu_us = sample_process(pid).unwrap().cpu.total_us();
            if state == Some('S') && cpu_us >= 25_000 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: kill(2) and waitpid(2) of our own child.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
            libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
        }
        assert!(
            (25_000..27_000).contains(&cpu_us),
            "read {cpu_us} µs of a 25 ms spin"
        );
    }

    #[test]
    fn a_split_keeps_the_precise_total_and_the_ticks_proportion() {
        let ticks = CpuTimes {
            user_us: 30_000,
            sys_us: 10_000,
        };
        let s = split_like(41_234, ticks);
        assert_eq!(s.total_us(), 41_234);
        assert_eq!(s.user_us, 30_925);
        assert_eq!(split_like(7, CpuTimes::default()).user_us, 7);
        // A later sample whose user part shrank by the split: the total
        // difference is kept.
        let later = CpuTimes {
            user_us: 30_900,
            sys_us: 10_600,
        };
        let d = later.since(&s);
        assert_eq!(d.total_us(), 41_500 - 41_234);
    }

    #[test]
    fn samples_own_process() {
        let s = sample_process(std::process::id()).unwrap();
        assert!(s.threads >= 1);
        assert!(s.rss_bytes > 0);
        assert!(self_peak_rss_bytes() > 0);
        assert!(!allowed_cpus().is_empty());
    }

    #[test]
    #[allow(clippy::zombie_processes)] // reaped by wait_child (wait4), not Child::wait
    fn wait_child_reports_cpu_and_status() {
        let child = Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3",
            ])
            .spawn()
            .unwrap();
        let usage = wait_child(child.id()).unwrap();
        assert_eq!(usage.status.code(), Some(3));
        assert!(usage.cpu.total_us() > 0);
        assert!(usage.max_rss_bytes > 0);
    }
}
