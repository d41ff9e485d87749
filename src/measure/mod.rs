//! Measurement primitives: latency in HDR histograms, error classes, the
//! client's own resource usage, and what the machine withheld from it in a
//! window (`schedstat`: run delay, involuntary context switches, steal).
//!
//! Latency is recorded in microseconds with 3 significant digits
//! ([HdrHistogram](https://hdrhistogram.github.io/HdrHistogram/)); memory per
//! histogram is fixed by its range, not by the number of samples, so a recorder's
//! footprint does not grow with run length. Histograms are stored in the standard
//! compressed encoding (V2 + DEFLATE, base64), which every HdrHistogram port reads.

pub mod histogram;
pub mod limits;
pub mod resources;
pub mod schedstat;

use serde::{Deserialize, Serialize};

pub use histogram::{LatencyHistogram, LatencySummary};

/// Why a request failed. Every failure lands in exactly one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Could not open a connection (refused, unreachable, TLS handshake failed).
    Connect,
    /// The request did not complete within its timeout.
    Timeout,
    /// Reading the response failed: reset, truncated body, malformed status line.
    Read,
    /// Sending the request (head or body) failed.
    Write,
    /// The server answered 4xx.
    Status4xx,
    /// The server answered 5xx (or another non-success status outside 4xx).
    Status5xx,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 6] = [
        ErrorClass::Connect,
        ErrorClass::Timeout,
        ErrorClass::Read,
        ErrorClass::Write,
        ErrorClass::Status4xx,
        ErrorClass::Status5xx,
    ];

    /// Class of an HTTP status that is not a success (2xx/3xx).
    pub fn from_status(status: u16) -> Option<ErrorClass> {
        match status {
            200..=399 => None,
            400..=499 => Some(ErrorClass::Status4xx),
            _ => Some(ErrorClass::Status5xx),
        }
    }
}

/// Failed requests by class (`errors.*` in the metric names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorCounts {
    pub connect: u64,
    pub timeout: u64,
    pub read: u64,
    pub write: u64,
    pub status_4xx: u64,
    pub status_5xx: u64,
}

impl ErrorCounts {
    pub fn add(&mut self, class: ErrorClass) {
        *self.slot(class) += 1;
    }

    pub fn get(&self, class: ErrorClass) -> u64 {
        match class {
            ErrorClass::Connect => self.connect,
            ErrorClass::Timeout => self.timeout,
            ErrorClass::Read => self.read,
            ErrorClass::Write => self.write,
            ErrorClass::Status4xx => self.status_4xx,
            ErrorClass::Status5xx => self.status_5xx,
        }
    }

    fn slot(&mut self, class: ErrorClass) -> &mut u64 {
        match class {
            ErrorClass::Connect => &mut self.connect,
            ErrorClass::Timeout => &mut self.timeout,
            ErrorClass::Read => &mut self.read,
            ErrorClass::Write => &mut self.write,
            ErrorClass::Status4xx => &mut self.status_4xx,
            ErrorClass::Status5xx => &mut self.status_5xx,
        }
    }

    pub fn total(&self) -> u64 {
        ErrorClass::ALL.iter().map(|c| self.get(*c)).sum()
    }

    pub fn merge(&mut self, other: &ErrorCounts) {
        for c in ErrorClass::ALL {
            *self.slot(c) += other.get(c);
        }
    }
}

/// What one trial's window counted, from the recorder (or a command
/// client's figures) to the trial's metrics: one record, not a copy at each
/// hop (the driver's report carries it across the process boundary as is).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// Successful responses in the window.
    pub ok: u64,
    pub errors: ErrorCounts,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Requests in flight when the window closed.
    pub in_flight_at_deadline: u64,
    /// Completions during the warmup (not in any figure; shows the warmup
    /// ran). 0 where nothing counted them (a command client).
    pub warmup_requests: u64,
}

impl Counts {
    /// Completed requests: successes and errors.
    pub fn requests(&self) -> u64 {
        self.ok + self.errors.total()
    }

    pub fn merge(&mut self, other: &Counts) {
        self.ok += other.ok;
        self.errors.merge(&other.errors);
        self.bytes_received += other.bytes_received;
        self.bytes_sent += other.bytes_sent;
        self.in_flight_at_deadline += other.in_flight_at_deadline;
        self.warmup_requests += other.warmup_requests;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes() {
        assert_eq!(ErrorClass::from_status(200), None);
        assert_eq!(ErrorClass::from_status(304), None);
        assert_eq!(ErrorClass::from_status(404), Some(ErrorClass::Status4xx));
        assert_eq!(ErrorClass::from_status(503), Some(ErrorClass::Status5xx));
    }

    #[test]
    fn error_counts_add_merge_total() {
        let mut a = ErrorCounts::default();
        a.add(ErrorClass::Read);
        a.add(ErrorClass::Read);
        a.add(ErrorClass::Connect);
        let mut b = ErrorCounts::default();
        b.add(ErrorClass::Status5xx);
        a.merge(&b);
        assert_eq!(a.read, 2);
        assert_eq!(a.connect, 1);
        assert_eq!(a.status_5xx, 1);
        assert_eq!(a.total(), 4);
    }
}
