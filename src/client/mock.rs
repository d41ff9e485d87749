//! The mock driver: scripted latencies, no sockets. Selected by the hidden
//! `--mock` flag of `benchgate run`, so the engine, metrics and reports can be
//! tested deterministically (with tokio's paused clock, exactly).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::Exchange;
use crate::config::MockScript;
use crate::metrics::ErrorClass;

pub struct MockClient {
    script: MockScript,
    sent: AtomicU64,
}

impl MockClient {
    pub fn new(script: MockScript) -> MockClient {
        MockClient {
            script,
            sent: AtomicU64::new(0),
        }
    }

    /// Waits the next scripted latency; every `error_every`-th request is a 503.
    pub async fn send(&self) -> Result<Exchange, ErrorClass> {
        let i = self.sent.fetch_add(1, Ordering::Relaxed);
        let lat = match self.script.latencies_us.len() {
            0 => 0,
            n => self.script.latencies_us[(i % n as u64) as usize],
        };
        tokio::time::sleep(Duration::from_micros(lat)).await;
        if self.script.error_every > 0 && (i + 1).is_multiple_of(self.script.error_every) {
            return Err(ErrorClass::Status5xx);
        }
        Ok(Exchange {
            status: 200,
            bytes_in: self.script.response_bytes,
            bytes_out: 0,
        })
    }
}
