//! The mock driver: scripted latencies, no sockets. Selected by the hidden
//! `--mock` flag of `benchgate run`, so the engine, metrics and reports can be
//! tested deterministically (with tokio's paused clock, exactly), and, with
//! the script's `fail` (the test knob [`MOCK_FAIL_VAR`]), how a failing
//! driver process is reported.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::Exchange;
use crate::config::MockScript;
use crate::knobs::{TestKnobs, MOCK_FAIL_VAR};
use crate::measure::ErrorClass;

pub struct MockClient {
    script: MockScript,
    sent: AtomicU64,
    /// `inject_cpu`: CPU burned per request, as in the built-in drivers (a
    /// mock's own CPU per request is small and steady: tests/run/inject_cpu.rs
    /// measures the knob's precision on it).
    spin: super::CpuSpin,
    /// `inject_tail`: a share of requests delayed, as in the built-in drivers.
    tail: super::tail::TailDelay,
}

/// Fails as the script's `fail` says ([`MOCK_FAIL_VAR`], `[CLIENT=]HOW`), if
/// it names this client (or no client); never in a build without the
/// `test-knobs` feature.
pub fn scripted_failure(client: &str, fail: Option<&str>) {
    let Some(value) = fail.filter(|_| TestKnobs::COMPILED) else {
        return;
    };
    let how = ["panic:", "abort", "exit:"]
        .iter()
        .any(|p| value.starts_with(p))
        .then_some(value)
        .or_else(|| {
            let (name, how) = value.split_once('=')?;
            (name == client).then_some(how)
        });
    let Some(how) = how else {
        return;
    };
    if let Some(message) = how.strip_prefix("panic:") {
        panic!("{message}");
    }
    if how == "abort" {
        std::process::abort();
    }
    if let Some(code) = how.strip_prefix("exit:").and_then(|c| c.parse().ok()) {
        crate::stderrln!("benchgate: error: {MOCK_FAIL_VAR} asked for exit status {code}");
        std::process::exit(code);
    }
}

impl MockClient {
    pub fn new(script: MockScript) -> MockClient {
        MockClient {
            script,
            sent: AtomicU64::new(0),
            spin: super::CpuSpin::OFF,
            tail: super::tail::TailDelay::default(),
        }
    }

    /// The same client burning `spin` per request.
    pub fn with_spin(self, spin: super::CpuSpin) -> MockClient {
        MockClient { spin, ..self }
    }

    /// The same client delaying a share of its requests.
    pub fn with_tail(self, tail: super::tail::TailDelay) -> MockClient {
        MockClient { tail, ..self }
    }

    /// Waits the next scripted latency (0: only yields); every
    /// `error_every`-th request is a 503.
    pub async fn send(&self) -> Result<Exchange, ErrorClass> {
        let i = self.sent.fetch_add(1, Ordering::Relaxed);
        self.tail.wait().await;
        self.spin.burn();
        let lat = match self.script.latencies_us.len() {
            0 => 0,
            n => self.script.latencies_us[(i % n as u64) as usize],
        };
        if lat == 0 {
            // No timer (tokio's rounds up to the next millisecond): a yield,
            // so the engine's other tasks run.
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(Duration::from_micros(lat)).await;
        }
        if self.script.error_every > 0 && (i + 1).is_multiple_of(self.script.error_every) {
            return Err(ErrorClass::Status5xx);
        }
        Ok(Exchange {
            status: 200,
            bytes_received: self.script.response_bytes,
            bytes_sent: 0,
        })
    }
}
