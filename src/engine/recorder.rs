//! Recording completions: a few mutex-guarded shards of HDR histograms and
//! counters. Workers map onto shards round-robin; with one client core the locks
//! are uncontended, and memory is fixed (a shard is two histograms), unlike a
//! sample vector that grows with run length.

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::Slot;
use crate::client::Exchange;
use crate::measure::resources::{monotonic_ns_at, CpuTimes};
use crate::measure::{Counts, ErrorClass, LatencyHistogram};

/// Measurements of one shard (or, merged, of a whole trial).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorder {
    /// Latency from the intended start (== the actual send in a closed loop).
    pub latency: LatencyHistogram,
    /// Open loop only: latency from the actual send.
    pub latency_uncorrected: Option<LatencyHistogram>,
    pub counts: Counts,
    /// When the first response (any status, warmup included) arrived: the
    /// end of the client's start-up, on the system-wide monotonic clock
    /// ([`monotonic_ns_at`]), so that the parent of a driver process can
    /// subtract its spawn time.
    pub first_response_ns: Option<u64>,
}

impl Recorder {
    pub fn new(open_loop: bool) -> Recorder {
        Recorder {
            latency_uncorrected: open_loop.then(LatencyHistogram::new),
            ..Recorder::default()
        }
    }

    /// Records one completion.
    pub fn record(
        &mut self,
        slot: Slot,
        intended: Instant,
        sent: Instant,
        done: Instant,
        result: Result<Exchange, ErrorClass>,
    ) {
        if self.first_response_ns.is_none() && responded(&result) {
            self.first_response_ns = Some(monotonic_ns_at(done.into_std()));
        }
        match slot {
            Slot::Warmup => self.counts.warmup_requests += 1,
            Slot::Late => self.counts.in_flight_at_deadline += 1,
            Slot::Measured => match result {
                Ok(ex) => {
                    self.counts.ok += 1;
                    self.counts.bytes_received += ex.bytes_received;
                    self.counts.bytes_sent += ex.bytes_sent;
                    self.latency
                        .record(done.saturating_duration_since(intended));
                    if let Some(h) = &mut self.latency_uncorrected {
                        h.record(done.saturating_duration_since(sent));
                    }
                }
                Err(class) => self.counts.errors.add(class),
            },
        }
    }

    pub fn merge(&mut self, other: &Recorder) {
        self.latency.merge(&other.latency);
        if let (Some(a), Some(b)) = (&mut self.latency_uncorrected, &other.latency_uncorrected) {
            a.merge(b);
        }
        self.counts.merge(&other.counts);
        self.first_response_ns = match (self.first_response_ns, other.first_response_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// Whether the server answered (a status error is an answer too).
fn responded(result: &Result<Exchange, ErrorClass>) -> bool {
    matches!(
        result,
        Ok(_) | Err(ErrorClass::Status4xx | ErrorClass::Status5xx)
    )
}

/// Recorder shards shared by a trial's workers.
pub struct Shards {
    shards: Vec<Mutex<Recorder>>,
    open_loop: bool,
}

impl Shards {
    /// One shard a worker, at most 8.
    pub fn new(workers: u32, open_loop: bool) -> Shards {
        Shards {
            shards: (0..workers.clamp(1, 8))
                .map(|_| Mutex::new(Recorder::new(open_loop)))
                .collect(),
            open_loop,
        }
    }

    fn shard(&self, worker: usize) -> std::sync::MutexGuard<'_, Recorder> {
        let m = &self.shards[worker % self.shards.len()];
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn record(
        &self,
        worker: usize,
        slot: Slot,
        intended: Instant,
        sent: Instant,
        done: Instant,
        result: Result<Exchange, ErrorClass>,
    ) {
        self.shard(worker)
            .record(slot, intended, sent, done, result);
    }

    /// Counts a request abandoned in flight when the window closed.
    pub fn late(&self, worker: usize) {
        self.shard(worker).counts.in_flight_at_deadline += 1;
    }

    /// Merges the shards into the trial's outcome.
    pub fn into_outcome(&self, elapsed: Duration, cpu: CpuTimes) -> Outcome {
        let mut all = Recorder::new(self.open_loop);
        for s in &self.shards {
            all.merge(&s.lock().unwrap_or_else(|p| p.into_inner()));
        }
        Outcome {
            recorder: all,
            elapsed,
            cpu,
        }
    }
}

/// Everything one trial measured in-process. A driver process reports it
/// as is, with what it saw of its window (`orchestrate::driver`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    pub recorder: Recorder,
    /// Length of the measurement window.
    pub elapsed: Duration,
    /// This process's CPU during the window.
    pub cpu: CpuTimes,
}
