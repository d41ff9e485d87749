//! Request counters and the measurement window.
//!
//! Hot path: a served request adds to a few relaxed atomics and records one value in
//! an HDR histogram, all in the calling thread's *shard* (shards are cache-line
//! aligned, so worker threads never write to a shared line). Nothing allocates.
//!
//! The window is not a second set of counters. Cumulative totals never reset; the
//! window is the difference between the totals at `window/start` (the *base*) and the
//! totals now, or the totals captured at `window/stop`, which freezes the window until
//! the next start. Histograms are subtracted the same way (HdrHistogram `subtract`).
//!
//! The server's threads' run delay in the window (time runnable but waiting for a
//! CPU, `measure::schedstat`) is read from /proc at `window/start` and at
//! `window/stop`, outside the hot path, and reported with the closed window.
//!
//! The histogram is exported in the HdrHistogram "V2 compressed" encoding (deflate),
//! base64 with the standard alphabet: the format every HdrHistogram port decodes.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::conn::Link;
use super::shards::{lock, Shard, Shards, Totals};
use crate::measure::schedstat::TaskCounters;

/// The reference server's service time in a window, microseconds, as
/// `GET /__benchgate/counters` serves it and results files keep it
/// (`service_time`: `p50`, `mean`, ...). A record of the server's wire format,
/// not the client's latency figures ([`crate::measure::LatencySummary`],
/// named `p50_us` and so on, with min and stdev).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceTime {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// Snapshot of the current measurement window and of the cumulative totals, as served
/// by `GET /__benchgate/counters`. Bytes are body bytes only (read by `/upload`,
/// handed to the connection for responses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerCounters {
    pub window_open: bool,
    pub window_secs: f64,
    pub requests: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub connections_accepted: u64,
    /// Peak of concurrently open connections; starts at the open count at window start.
    pub peak_open_connections: u64,
    /// Distinct connections that served at least one request in the window.
    pub connections_used: u64,
    /// `requests / connections_used`, 0 when no connection was used.
    pub requests_per_connection: f64,
    pub status_4xx: u64,
    pub status_5xx: u64,
    /// Requests served as HTTP/1.x and as HTTP/2 (they add up to `requests`).
    /// Absent (0) in results written before these fields existed.
    #[serde(default)]
    pub requests_http1: u64,
    #[serde(default)]
    pub requests_http2: u64,
    /// Requests that came over TLS (the HTTPS port).
    #[serde(default)]
    pub requests_tls: u64,
    /// Of those, requests on connections whose TLS handshake negotiated ALPN
    /// `h2` / `http/1.1` (the rest negotiated none).
    #[serde(default)]
    pub requests_alpn_h2: u64,
    #[serde(default)]
    pub requests_alpn_http1: u64,
    /// The server's threads' run delay in the closed window, summed over
    /// threads, ns: how long they waited for a CPU while runnable, read from
    /// their `/proc/self/task/*/schedstat` at the window's start and stop.
    /// Absent while the window is open, on a kernel without schedstat, and in
    /// counters from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_delay_ns: Option<u64>,
    /// Server service time in µs (see the `server` module docs for what is timed).
    pub service_time: ServiceTime,
    /// The window's service time histogram (µs): V2 deflate encoding, base64.
    pub service_time_hist: String,
    pub total_requests: u64,
    pub total_connections_accepted: u64,
    pub open_connections: u64,
}

impl ServerCounters {
    /// Decodes [`ServerCounters::service_time_hist`].
    pub fn decode_hist(&self) -> anyhow::Result<Histogram<u64>> {
        // Bounded before decoding: counters come back inside untrusted results files.
        let v2 = crate::measure::histogram::check_encoding(&self.service_time_hist)
            .map_err(|e| anyhow::anyhow!("service_time_hist: {e}"))?;
        let hist = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut v2.as_slice())
            .map_err(|e| anyhow::anyhow!("service_time_hist: {e}"))?;
        Ok(hist)
    }

    /// Adds a later window's counters (of the same fork, the window loop):
    /// counts and times summed, service times merged, the peak the larger,
    /// the cumulative totals the later's.
    pub fn merge(&mut self, later: &ServerCounters) {
        self.window_open = later.window_open;
        self.window_secs += later.window_secs;
        self.requests += later.requests;
        self.bytes_in += later.bytes_in;
        self.bytes_out += later.bytes_out;
        self.connections_accepted += later.connections_accepted;
        self.peak_open_connections = self.peak_open_connections.max(later.peak_open_connections);
        // Connections used in both windows count in each: requests per
        // connection is per window-connection.
        self.connections_used += later.connections_used;
        self.requests_per_connection = if self.connections_used == 0 {
            0.0
        } else {
            self.requests as f64 / self.connections_used as f64
        };
        self.status_4xx += later.status_4xx;
        self.status_5xx += later.status_5xx;
        self.requests_http1 += later.requests_http1;
        self.requests_http2 += later.requests_http2;
        self.requests_tls += later.requests_tls;
        self.requests_alpn_h2 += later.requests_alpn_h2;
        self.requests_alpn_http1 += later.requests_alpn_http1;
        self.run_delay_ns = self
            .run_delay_ns
            .zip(later.run_delay_ns)
            .map(|(a, b)| a + b);
        if let (Ok(mut a), Ok(b)) = (self.decode_hist(), later.decode_hist()) {
            if a.add(&b).is_ok() {
                self.service_time = summarize(&a);
                self.service_time_hist = encode(&a);
            }
        }
        self.total_requests = later.total_requests;
        self.total_connections_accepted = later.total_connections_accepted;
        self.open_connections = later.open_connections;
    }
}

/// How one request was served: its HTTP version and its connection's link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Protocol {
    pub(crate) http2: bool,
    pub(crate) link: Link,
}

struct Window {
    opened: Instant,
    base: Totals,
    /// The server's threads' counters when the window opened.
    tasks_base: TaskCounters,
    /// Set by `stop`: when, the totals then, and the peak then.
    closed: Option<(Instant, Totals, u64)>,
    /// Set by `stop`: the run delay since the window opened.
    run_delay_ns: Option<u64>,
}

/// The server's counters: cumulative totals plus the window bookkeeping.
pub(crate) struct Counters {
    shards: Shards,
    accepted: AtomicU64,
    open: AtomicU64,
    window_peak: AtomicU64,
    /// Incremented by every window start; a connection counts as "used" once per epoch.
    epoch: AtomicU64,
    window: Mutex<Window>,
}

impl Counters {
    pub(crate) fn new() -> Self {
        Counters {
            shards: Shards::new(),
            accepted: AtomicU64::new(0),
            open: AtomicU64::new(0),
            window_peak: AtomicU64::new(0),
            epoch: AtomicU64::new(1),
            window: Mutex::new(Window {
                opened: Instant::now(),
                base: Totals::zero(),
                tasks_base: TaskCounters::read_self(),
                closed: None,
                run_delay_ns: None,
            }),
        }
    }

    #[inline]
    fn shard(&self) -> &Shard {
        self.shards.current()
    }

    /// A connection was accepted (and is now open).
    pub(crate) fn connection_opened(&self) {
        self.accepted.fetch_add(1, Relaxed);
        let open = self.open.fetch_add(1, Relaxed) + 1;
        self.window_peak.fetch_max(open, Relaxed);
    }

    pub(crate) fn connection_closed(&self) {
        self.open.fetch_sub(1, Relaxed);
    }

    pub(crate) fn open_connections(&self) -> u64 {
        self.open.load(Relaxed)
    }

    /// Counts one served request. `status` 0 means no response was sent (a fault).
    /// `conn_epoch` is the connection's "last window I was counted in" marker.
    #[inline]
    pub(crate) fn request_done(
        &self,
        conn_epoch: &AtomicU64,
        protocol: Protocol,
        status: u16,
        service: Duration,
    ) {
        let shard = self.shard();
        shard.requests.fetch_add(1, Relaxed);
        if protocol.http2 {
            shard.http2.fetch_add(1, Relaxed);
        }
        if protocol.link != Link::Plain {
            shard.tls.fetch_add(1, Relaxed);
            match protocol.link {
                Link::TlsH2 => shard.alpn_h2.fetch_add(1, Relaxed),
                Link::TlsHttp1 => shard.alpn_http1.fetch_add(1, Relaxed),
                Link::Tls | Link::Plain => 0,
            };
        }
        let epoch = self.epoch.load(Relaxed);
        if conn_epoch.load(Relaxed) != epoch && conn_epoch.swap(epoch, Relaxed) != epoch {
            shard.connections_used.fetch_add(1, Relaxed);
        }
        match status {
            400..=499 => shard.status_4xx.fetch_add(1, Relaxed),
            500..=599 => shard.status_5xx.fetch_add(1, Relaxed),
            _ => 0,
        };
        let micros = u64::try_from(service.as_micros()).unwrap_or(u64::MAX);
        lock(&shard.hist).saturating_record(micros);
    }

    #[inline]
    pub(crate) fn add_bytes_out(&self, n: u64) {
        self.shard().bytes_out.fetch_add(n, Relaxed);
    }

    #[inline]
    pub(crate) fn add_bytes_in(&self, n: u64) {
        self.shard().bytes_in.fetch_add(n, Relaxed);
    }

    fn totals(&self) -> Totals {
        self.shards.sum(self.accepted.load(Relaxed))
    }

    /// Resets the window: it opens now, empty; answers the new (empty) window.
    pub(crate) fn start_window(&self) -> ServerCounters {
        let tasks = TaskCounters::read_self();
        let mut w = lock(&self.window);
        self.epoch.fetch_add(1, Relaxed);
        self.window_peak.store(self.open.load(Relaxed), Relaxed);
        w.base = self.totals();
        w.opened = Instant::now();
        w.tasks_base = tasks;
        w.closed = None;
        w.run_delay_ns = None;
        self.render(&w)
    }

    /// Closes the window (idempotent): its figures stop moving until the next start.
    pub(crate) fn stop_window(&self) -> ServerCounters {
        let mut w = lock(&self.window);
        if w.closed.is_none() {
            let peak = self.window_peak.load(Relaxed);
            w.closed = Some((Instant::now(), self.totals(), peak));
            w.run_delay_ns = TaskCounters::read_self().run_delay_since(&w.tasks_base);
        }
        self.render(&w)
    }

    pub(crate) fn snapshot(&self) -> ServerCounters {
        let w = lock(&self.window);
        self.render(&w)
    }

    fn render(&self, w: &Window) -> ServerCounters {
        let now_totals;
        let (until, current, peak) = match &w.closed {
            Some((at, totals, peak)) => (*at, totals, *peak),
            None => {
                now_totals = self.totals();
                (Instant::now(), &now_totals, self.window_peak.load(Relaxed))
            }
        };
        let cumulative = if w.closed.is_some() {
            self.totals()
        } else {
            current.clone()
        };
        let base = &w.base;
        let mut hist = current.hist.clone();
        // The base is an earlier state of the same monotone totals: cannot fail.
        let _ = hist.subtract(&base.hist);
        let requests = current.requests - base.requests;
        let used = current.used - base.used;
        let http2 = current.http2 - base.http2;
        ServerCounters {
            window_open: w.closed.is_none(),
            window_secs: until.duration_since(w.opened).as_secs_f64(),
            requests,
            bytes_in: current.bytes_in - base.bytes_in,
            bytes_out: current.bytes_out - base.bytes_out,
            connections_accepted: current.accepted - base.accepted,
            peak_open_connections: peak,
            connections_used: used,
            requests_per_connection: if used == 0 {
                0.0
            } else {
                requests as f64 / used as f64
            },
            status_4xx: current.status_4xx - base.status_4xx,
            status_5xx: current.status_5xx - base.status_5xx,
            requests_http1: requests - http2,
            requests_http2: http2,
            requests_tls: current.tls - base.tls,
            requests_alpn_h2: current.alpn_h2 - base.alpn_h2,
            requests_alpn_http1: current.alpn_http1 - base.alpn_http1,
            run_delay_ns: w.run_delay_ns,
            service_time: summarize(&hist),
            service_time_hist: encode(&hist),
            total_requests: cumulative.requests,
            total_connections_accepted: cumulative.accepted,
            open_connections: self.open.load(Relaxed),
        }
    }
}

fn summarize(h: &Histogram<u64>) -> ServiceTime {
    if h.is_empty() {
        return ServiceTime::default();
    }
    ServiceTime {
        count: h.len(),
        mean: h.mean(),
        p50: h.value_at_quantile(0.5),
        p90: h.value_at_quantile(0.9),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max: h.max(),
    }
}

fn encode(h: &Histogram<u64>) -> String {
    let mut raw = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut raw) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(raw),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(c: &Counters, conn: &AtomicU64, status: u16, us: u64) {
        c.request_done(conn, Protocol::default(), status, Duration::from_micros(us));
    }

    #[test]
    fn window_is_open_from_start_and_counts_everything() {
        let c = Counters::new();
        let conn = AtomicU64::new(0);
        c.connection_opened();
        record(&c, &conn, 200, 100);
        record(&c, &conn, 404, 200);
        record(&c, &conn, 503, 300);
        c.add_bytes_out(22);
        c.add_bytes_in(7);
        let s = c.snapshot();
        assert!(s.window_open);
        assert_eq!(s.requests, 3);
        assert_eq!((s.status_4xx, s.status_5xx), (1, 1));
        assert_eq!((s.bytes_out, s.bytes_in), (22, 7));
        assert_eq!(s.connections_accepted, 1);
        assert_eq!(s.connections_used, 1);
        assert_eq!(s.requests_per_connection, 3.0);
        assert_eq!(s.peak_open_connections, 1);
        assert_eq!(s.service_time.count, 3);
        assert_eq!(s.service_time.max, 300);
    }

    #[test]
    fn start_resets_and_stop_freezes() {
        let c = Counters::new();
        let (a, b) = (AtomicU64::new(0), AtomicU64::new(0));
        c.connection_opened();
        c.connection_opened();
        record(&c, &a, 200, 5000);
        c.connection_closed();
        let started = c.start_window();
        assert_eq!(started.requests, 0);
        assert_eq!(
            started.peak_open_connections, 1,
            "peak starts at the open count"
        );
        assert_eq!(started.total_requests, 1);

        record(&c, &a, 200, 10);
        record(&c, &a, 200, 20);
        record(&c, &b, 200, 30);
        let stopped = c.stop_window();
        assert!(!stopped.window_open);
        assert_eq!(stopped.requests, 3);
        assert_eq!(stopped.connections_used, 2);
        assert_eq!(stopped.requests_per_connection, 1.5);
        assert_eq!(stopped.connections_accepted, 0);
        assert_eq!(stopped.service_time.max, 30, "the pre-window 5 ms is gone");

        record(&c, &b, 500, 40);
        c.connection_opened();
        let later = c.snapshot();
        assert_eq!(later.requests, 3, "a stopped window does not move");
        assert_eq!(later.status_5xx, 0);
        assert_eq!(later.peak_open_connections, 1);
        assert_eq!(later.total_requests, 5);
        assert_eq!(later.total_connections_accepted, 3);
        assert_eq!(later.window_secs, stopped.window_secs);
    }

    #[test]
    fn run_delay_comes_with_the_closed_window() {
        let c = Counters::new();
        assert_eq!(c.start_window().run_delay_ns, None, "not while open");
        let stopped = c.stop_window();
        if std::path::Path::new("/proc/self/schedstat").exists() {
            assert!(stopped.run_delay_ns.is_some(), "{stopped:?}");
        }
        assert_eq!(c.snapshot().run_delay_ns, stopped.run_delay_ns, "frozen");
        assert_eq!(c.start_window().run_delay_ns, None, "a new window is open");
    }

    #[test]
    fn requests_are_counted_by_http_version_and_alpn() {
        let c = Counters::new();
        let conn = AtomicU64::new(0);
        let served = |http2, link, n| {
            for _ in 0..n {
                c.request_done(&conn, Protocol { http2, link }, 200, Duration::ZERO);
            }
        };
        served(false, Link::Plain, 1);
        c.start_window();
        served(false, Link::Plain, 2);
        served(true, Link::Plain, 3);
        served(false, Link::TlsHttp1, 4);
        served(true, Link::TlsH2, 5);
        served(false, Link::Tls, 6);
        let s = c.stop_window();
        assert_eq!(s.requests, 20, "the pre-window request is not in it");
        assert_eq!((s.requests_http1, s.requests_http2), (12, 8));
        assert_eq!(s.requests_tls, 15);
        assert_eq!((s.requests_alpn_h2, s.requests_alpn_http1), (5, 4));
    }

    #[test]
    fn counters_without_the_protocol_fields_still_parse() {
        let mut json = serde_json::to_value(Counters::new().snapshot()).unwrap();
        let obj = json.as_object_mut().unwrap();
        for k in [
            "requests_http1",
            "requests_http2",
            "requests_tls",
            "requests_alpn_h2",
            "requests_alpn_http1",
        ] {
            obj.remove(k).unwrap();
        }
        let back: ServerCounters = serde_json::from_value(json).unwrap();
        assert_eq!((back.requests_http1, back.requests_tls), (0, 0));
    }

    #[test]
    fn histogram_round_trips_through_the_standard_encoding() {
        let c = Counters::new();
        let conn = AtomicU64::new(0);
        for us in [1, 10, 100, 1000, 10_000] {
            record(&c, &conn, 200, us);
        }
        let s = c.snapshot();
        let h = s.decode_hist().unwrap();
        assert_eq!(h.len(), 5);
        assert_eq!(h.max(), h.highest_equivalent(10_000));
        assert_eq!(s.service_time.p50, 100);
        let json = serde_json::to_string(&s).unwrap();
        let back: ServerCounters = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let c = std::sync::Arc::new(Counters::new());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    let conn = AtomicU64::new(0);
                    for _ in 0..1000 {
                        c.request_done(&conn, Protocol::default(), 200, Duration::from_micros(3));
                        c.add_bytes_out(2);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let s = c.snapshot();
        assert_eq!(s.requests, 4000);
        assert_eq!(s.bytes_out, 8000);
        assert_eq!(s.connections_used, 4);
        assert_eq!(s.service_time.count, 4000);
    }
}
