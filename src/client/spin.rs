//! The `inject_cpu` knob's busy-spin: a known amount of CPU burned per request
//! inside the built-in drivers, so CPU per request and latency rise by that
//! amount (a stand-in for a slower client, for validating gates).
//!
//! How a spin of N ns burns N ns of CPU, not N ns of wall time:
//! - It counts on-CPU time with the cheap monotonic clock (`Instant`, ~20 ns a
//!   read through the vDSO), step by step. A step much longer than the loop's own
//!   (over [`Calibration::max_step_ns`]) means the thread was off the CPU
//!   (preempted, or the vCPU descheduled); such a step counts as one ordinary
//!   step, so a preempted spin still burns its full amount. (The thread CPU
//!   clock itself is a syscall, ~250 ns a read on a VM: too coarse to spin on.)
//! - Its fixed cost (the first clock read, the last step's overshoot, the
//!   call) is measured once per process against the thread CPU clock
//!   ([`Calibration::overhead_ns`], ~40-80 ns here) and taken off the amount
//!   counted, so the whole call costs N ns. An amount below that fixed cost
//!   burns the fixed cost (one step).

use std::sync::OnceLock;
use std::time::Instant;

/// CPU to burn per call, ready to [`burn`](CpuSpin::burn): what was asked and
/// what the loop counts to after its fixed cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuSpin {
    /// Asked for, ns (0: off).
    ns: u64,
    /// On-CPU time the loop counts: `ns` less the fixed cost, at least 1.
    count_ns: u64,
    step_ns: u64,
    max_step_ns: u64,
}

impl CpuSpin {
    /// No spin.
    pub const OFF: CpuSpin = CpuSpin {
        ns: 0,
        count_ns: 0,
        step_ns: 0,
        max_step_ns: 0,
    };

    /// A spin of `ns` nanoseconds of CPU per call; the first nonzero one in a
    /// process calibrates (about 1.5 ms, before any request).
    pub fn new(ns: u64) -> CpuSpin {
        if ns == 0 {
            return CpuSpin::OFF;
        }
        let cal = calibration();
        CpuSpin {
            ns,
            count_ns: ns.saturating_sub(cal.overhead_ns).max(1),
            step_ns: cal.step_ns,
            max_step_ns: cal.max_step_ns,
        }
    }

    /// The amount asked for, ns.
    #[cfg(test)]
    fn ns(&self) -> u64 {
        self.ns
    }

    /// Burns the amount on this thread.
    #[inline]
    pub fn burn(&self) {
        if self.ns != 0 {
            count_on_cpu(self.count_ns, self.step_ns, self.max_step_ns);
        }
    }
}

/// This process's measurements of the spin loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calibration {
    /// One step of the loop (a clock read), ns: the fastest of a few timings.
    pub step_ns: u64,
    /// Longest step counted as time on the CPU: 20 steps, at least 1 µs.
    pub max_step_ns: u64,
    /// The spin's fixed CPU cost per call, ns, measured on the thread CPU clock.
    pub overhead_ns: u64,
}

/// The calibration, measured on first use.
pub fn calibration() -> Calibration {
    static CAL: OnceLock<Calibration> = OnceLock::new();
    *CAL.get_or_init(calibrate)
}

/// Counts `ns` of on-CPU time in steps of the monotonic clock; a step over
/// `max_step_ns` (the thread was off the CPU) counts as `step_ns`.
#[inline(never)]
fn count_on_cpu(ns: u64, step_ns: u64, max_step_ns: u64) {
    let mut last = Instant::now();
    let mut counted = 0u64;
    while counted < ns {
        std::hint::spin_loop();
        let now = Instant::now();
        let step = now.duration_since(last).as_nanos() as u64;
        counted += if step <= max_step_ns { step } else { step_ns };
        last = now;
    }
}

fn calibrate() -> Calibration {
    // The step: 1000 loop iterations timed, fastest of 5 (a preemption only
    // makes a timing longer).
    let step_ns = (0..5)
        .map(|_| {
            let start = Instant::now();
            let mut last = start;
            for _ in 0..1000 {
                std::hint::spin_loop();
                last = std::hint::black_box(Instant::now());
            }
            (last - start).as_nanos() as u64 / 1000
        })
        .min()
        .unwrap_or(0)
        .max(1);
    let max_step_ns = (20 * step_ns).max(1_000);
    // The fixed cost: CPU of REPS spins counting to PROBE_NS, less PROBE_NS,
    // lowest of 3 (an interrupt only adds CPU). The two clock syscalls add
    // ~500 ns over REPS calls: ~2 ns each.
    const PROBE_NS: u64 = 2_000;
    const REPS: u64 = 200;
    let overhead_ns = (0..3)
        .filter_map(|_| {
            let before = thread_cpu_ns()?;
            for _ in 0..REPS {
                count_on_cpu(PROBE_NS, step_ns, max_step_ns);
            }
            let after = thread_cpu_ns()?;
            Some((after.saturating_sub(before) / REPS).saturating_sub(PROBE_NS))
        })
        .min()
        .unwrap_or(0)
        .min(PROBE_NS / 2);
    Calibration {
        step_ns,
        max_step_ns,
        overhead_ns,
    }
}

/// CPU time of the calling thread, ns (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> Option<u64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPU per call of `reps` burns, lowest of 5 tries (disturbances only add).
    fn cpu_per_burn(spin: CpuSpin, reps: u64) -> u64 {
        (0..5)
            .map(|_| {
                let before = thread_cpu_ns().unwrap();
                for _ in 0..reps {
                    spin.burn();
                }
                (thread_cpu_ns().unwrap() - before) / reps
            })
            .min()
            .unwrap()
    }

    #[test]
    fn calibration_is_plausible() {
        let cal = calibration();
        assert!((1..1_000).contains(&cal.step_ns), "{cal:?}");
        assert!(cal.max_step_ns >= 1_000, "{cal:?}");
        assert!(cal.overhead_ns <= 1_000, "{cal:?}");
    }

    #[test]
    fn a_spin_burns_about_its_amount_of_cpu() {
        for ns in [1_300, 5_000] {
            let got = cpu_per_burn(CpuSpin::new(ns), 400);
            // The thread CPU clock's own reads add ~1 ns a call here.
            assert!(
                got * 10 >= ns * 8 && got * 10 <= ns * 13,
                "asked {ns} ns, burned {got} ns per call ({:?})",
                calibration()
            );
        }
    }

    #[test]
    fn off_and_tiny_spins_return() {
        assert_eq!(CpuSpin::new(0), CpuSpin::OFF);
        CpuSpin::OFF.burn();
        let tiny = CpuSpin::new(1);
        assert_eq!(tiny.ns(), 1);
        tiny.burn();
        assert!(cpu_per_burn(tiny, 1000) < 2_000);
    }
}
