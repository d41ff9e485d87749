//! The `inject_tail` knob: a known tail added to a built-in client's latency,
//! for validating tail-latency gates (`latency_p99_us`) the way `inject_cpu`
//! validates CPU and throughput gates.
//!
//! A fixed share of the requests (every request whose running number crosses
//! the next multiple of `1 / share`, counted across the client's workers) waits
//! a fixed delay before it is sent, off the CPU. The wait is inside the
//! latency the engine records (from the intended start), so a share above 1%
//! lifts p99 by about the delay; the share is exact over any run of
//! `1 / share` requests, so two runs with the same knob differ only by noise.
//! The wait is off the CPU (a timer, not a spin): CPU per request stays as it
//! was, so a tail gate is tested on the tail alone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::config::inject::{TailInjection, PPM};

/// A client's tail injection at run time: the knob and the request counter
/// its workers share.
#[derive(Debug, Default)]
pub struct TailDelay {
    knob: Option<TailInjection>,
    sent: AtomicU64,
}

impl TailDelay {
    pub fn new(knob: Option<TailInjection>) -> TailDelay {
        TailDelay {
            knob: knob.filter(|k| k.share_ppm > 0 && k.delay_ns > 0),
            sent: AtomicU64::new(0),
        }
    }

    /// The wait before the next request: the delay for the requests that
    /// make up the share, `None` for the others (and always when off).
    #[inline]
    pub fn next(&self) -> Option<Duration> {
        let knob = self.knob?;
        let k = self.sent.fetch_add(1, Ordering::Relaxed);
        delayed(k, knob.share_ppm).then(|| Duration::from_nanos(knob.delay_ns))
    }

    /// Waits as [`next`](Self::next) says, on the precise timer
    /// ([`crate::timer`]: tokio's own rounds up to whole milliseconds, and a
    /// loopback tail is a few hundred microseconds).
    pub async fn wait(&self) {
        if let Some(d) = self.next() {
            crate::timer::sleep_precise(d).await;
        }
    }

    /// Waits as [`next`](Self::next) says, blocking the thread (with its
    /// timer slack set to 1 ns first, as the precise timer's: the default
    /// 50 µs would be a sizeable part of a loopback tail).
    pub fn wait_blocking(&self) {
        if let Some(d) = self.next() {
            thread_local! {
                static PRECISE: () = {
                    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's slack.
                    unsafe {
                        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
                    }
                };
            }
            PRECISE.with(|_| ());
            std::thread::sleep(d);
        }
    }
}

/// Whether request number `k` (from 0) is one of the delayed: the requests
/// where `k * share` reaches a new whole number of delayed requests, so that
/// any `n` consecutive requests hold `n * share` delayed ones, rounded.
fn delayed(k: u64, share_ppm: u32) -> bool {
    let s = u128::from(share_ppm);
    let k = u128::from(k);
    (k + 1) * s / u128::from(PPM) > k * s / u128::from(PPM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_exact_over_every_window() {
        for (ppm, window) in [(20_000u32, 50u64), (10_000, 100), (250_000, 4), (PPM, 1)] {
            let d = TailDelay::new(Some(TailInjection {
                share_ppm: ppm,
                delay_ns: 1,
            }));
            let hits: Vec<bool> = (0..window * 40).map(|_| d.next().is_some()).collect();
            for chunk in hits.chunks(window as usize) {
                assert_eq!(chunk.iter().filter(|h| **h).count(), 1, "ppm {ppm}");
            }
        }
    }

    #[test]
    fn an_uneven_share_rounds_over_a_long_run() {
        // 3%: 3 of every 100, spread out rather than in a burst.
        let d = TailDelay::new(Some(TailInjection {
            share_ppm: 30_000,
            delay_ns: 5,
        }));
        let hits: Vec<usize> = (0..10_000).filter(|_| d.next().is_some()).collect();
        assert_eq!(hits.len(), 300);
        let gaps: Vec<usize> = hits.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|g| (33..=34).contains(g)), "{gaps:?}");
    }

    #[test]
    fn off_delays_nothing() {
        for knob in [
            None,
            Some(TailInjection {
                share_ppm: 0,
                delay_ns: 1_000,
            }),
            Some(TailInjection {
                share_ppm: 10_000,
                delay_ns: 0,
            }),
        ] {
            let d = TailDelay::new(knob);
            assert!((0..1_000).all(|_| d.next().is_none()));
        }
    }

    #[test]
    fn the_delay_is_the_one_asked_for() {
        let d = TailDelay::new(Some(TailInjection {
            share_ppm: PPM,
            delay_ns: 1_500_000,
        }));
        assert_eq!(d.next(), Some(Duration::from_micros(1_500)));
    }
}
