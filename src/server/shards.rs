//! Per-thread shards of the cumulative counters.
//!
//! Each runtime thread writes to its own cache-line-aligned shard (chosen once per
//! thread), so counting never bounces a cache line between cores. Readers (the
//! control endpoints, rarely) sum all shards.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, PoisonError};

use hdrhistogram::Histogram;

/// Highest service time the histogram tracks (one hour, in µs); longer values saturate.
const HIST_MAX_US: u64 = 3_600_000_000;
/// Significant digits of the service time histogram.
const HIST_SIGFIG: u8 = 3;
/// Upper bound on shards; threads beyond it share shards (still correct, contended).
const MAX_SHARDS: usize = 16;

pub(super) fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, HIST_SIGFIG).expect("static histogram bounds")
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a counter lock leaves plain numbers behind: keep using them.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One thread's share of the counters.
#[repr(align(128))]
pub(super) struct Shard {
    pub(super) requests: AtomicU64,
    pub(super) bytes_in: AtomicU64,
    pub(super) bytes_out: AtomicU64,
    pub(super) connections_used: AtomicU64,
    pub(super) status_4xx: AtomicU64,
    pub(super) status_5xx: AtomicU64,
    /// Requests served as HTTP/2.
    pub(super) http2: AtomicU64,
    /// Requests on TLS connections; of those, on connections whose ALPN
    /// negotiated `h2` / `http/1.1`.
    pub(super) tls: AtomicU64,
    pub(super) alpn_h2: AtomicU64,
    pub(super) alpn_http1: AtomicU64,
    pub(super) hist: Mutex<Histogram<u64>>,
}

impl Shard {
    fn new() -> Self {
        Shard {
            requests: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            connections_used: AtomicU64::new(0),
            status_4xx: AtomicU64::new(0),
            status_5xx: AtomicU64::new(0),
            http2: AtomicU64::new(0),
            tls: AtomicU64::new(0),
            alpn_h2: AtomicU64::new(0),
            alpn_http1: AtomicU64::new(0),
            hist: Mutex::new(new_hist()),
        }
    }
}

/// Cumulative totals at one instant.
#[derive(Clone)]
pub(super) struct Totals {
    pub(super) requests: u64,
    pub(super) bytes_in: u64,
    pub(super) bytes_out: u64,
    pub(super) accepted: u64,
    pub(super) used: u64,
    pub(super) status_4xx: u64,
    pub(super) status_5xx: u64,
    pub(super) http2: u64,
    pub(super) tls: u64,
    pub(super) alpn_h2: u64,
    pub(super) alpn_http1: u64,
    pub(super) hist: Histogram<u64>,
}

impl Totals {
    pub(super) fn zero() -> Self {
        Totals {
            requests: 0,
            bytes_in: 0,
            bytes_out: 0,
            accepted: 0,
            used: 0,
            status_4xx: 0,
            status_5xx: 0,
            http2: 0,
            tls: 0,
            alpn_h2: 0,
            alpn_http1: 0,
            hist: new_hist(),
        }
    }
}

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static THREAD_INDEX: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn thread_index() -> usize {
    THREAD_INDEX.with(|i| {
        if i.get() == usize::MAX {
            i.set(NEXT_THREAD.fetch_add(1, Relaxed));
        }
        i.get()
    })
}

/// One shard per available core (at most [`MAX_SHARDS`]).
pub(super) struct Shards(Box<[Shard]>);

impl Shards {
    pub(super) fn new() -> Self {
        let n = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, MAX_SHARDS);
        Shards((0..n).map(|_| Shard::new()).collect())
    }

    /// The calling thread's shard.
    #[inline]
    pub(super) fn current(&self) -> &Shard {
        &self.0[thread_index() % self.0.len()]
    }

    /// The sum of all shards (`accepted` is kept outside the shards).
    pub(super) fn sum(&self, accepted: u64) -> Totals {
        let mut t = Totals::zero();
        t.accepted = accepted;
        for s in self.0.iter() {
            t.requests += s.requests.load(Relaxed);
            t.bytes_in += s.bytes_in.load(Relaxed);
            t.bytes_out += s.bytes_out.load(Relaxed);
            t.used += s.connections_used.load(Relaxed);
            t.status_4xx += s.status_4xx.load(Relaxed);
            t.status_5xx += s.status_5xx.load(Relaxed);
            t.http2 += s.http2.load(Relaxed);
            t.tls += s.tls.load(Relaxed);
            t.alpn_h2 += s.alpn_h2.load(Relaxed);
            t.alpn_http1 += s.alpn_http1.load(Relaxed);
            // Same bounds on both sides: `add` cannot fail.
            let _ = t.hist.add(&*lock(&s.hist));
        }
        t
    }
}
