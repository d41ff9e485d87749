//! Client drivers: the code that sends one request and reads its whole response.
//!
//! - [`hyper`](hyper_driver): hyper-util's pooled legacy client on tokio.
//! - [`reqwest`](reqwest_driver): reqwest's async client, and its blocking client
//!   (one OS thread per worker, the "old SDK" shape).
//! - [`lean`]: `h1-lean`, the lean HTTP/1.1 load generator on its own epoll
//!   loop (the engine runs its trial: [`crate::engine::lean::run`]).
//! - [`mock`]: scripted latencies without sockets, for deterministic tests.
//! - [`spin`]: the `inject_cpu` knob's busy-spin (CPU burned per request).
//! - [`tail`]: the `inject_tail` knob (a share of requests delayed).
//! - [`source`]: source addresses spread over 127.0.0.x for tens of
//!   thousands of connections.
//!
//! Every driver classifies its failures into [`ErrorClass`]es; none panics.

pub mod hyper_driver;
pub mod lean;
pub mod mock;
pub mod reqwest_driver;
pub mod source;
pub mod spin;
pub mod tail;
pub mod tls;

use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::Semaphore;

use crate::config::{ClientKind, ClientSpec, Method, Scenario};
use crate::measure::ErrorClass;

pub use spin::CpuSpin;

/// A completed exchange: the status and the body bytes moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    pub status: u16,
    pub bytes_received: u64,
    pub bytes_sent: u64,
}

/// What every driver needs to know about the requests it sends.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    pub method: Method,
    /// Absolute URL: base URL + scenario path.
    pub url: String,
    /// Request body, shared by every request (cloning `Bytes` is a refcount).
    pub body: Bytes,
}

impl RequestTemplate {
    pub fn new(scenario: &Scenario, base_url: &str) -> RequestTemplate {
        RequestTemplate {
            method: scenario.method,
            url: format!("{}{}", base_url.trim_end_matches('/'), scenario.path),
            body: body_of_size(scenario.body),
        }
    }
}

/// A request body of `n` bytes of a fixed pattern.
pub fn body_of_size(n: u64) -> Bytes {
    const PATTERN: &[u8] = b"benchgate-request-body-0123456789";
    Bytes::from(
        PATTERN
            .iter()
            .copied()
            .cycle()
            .take(n as usize)
            .collect::<Vec<u8>>(),
    )
}

/// An async driver. An enum rather than a trait object: no allocation per request.
/// Built once per trial and shared, so the size difference between variants is moot.
#[allow(clippy::large_enum_variant)]
pub enum AsyncClient {
    Hyper(hyper_driver::HyperClient),
    Reqwest(reqwest_driver::ReqwestClient),
    Mock(mock::MockClient),
}

impl AsyncClient {
    /// Builds the driver for `spec`. `workers` sizes the pool when `spec.pool` is unset.
    pub fn build(
        spec: &ClientSpec,
        request: RequestTemplate,
        workers: u32,
    ) -> anyhow::Result<AsyncClient> {
        let limit = pool_limit(spec, workers);
        Ok(match &spec.kind {
            ClientKind::Hyper => {
                AsyncClient::Hyper(hyper_driver::HyperClient::new(spec, request, limit)?)
            }
            ClientKind::Reqwest => {
                AsyncClient::Reqwest(reqwest_driver::ReqwestClient::new(spec, request, limit)?)
            }
            ClientKind::Mock(script) => {
                mock::scripted_failure(&spec.name, script.fail.as_deref());
                AsyncClient::Mock(
                    mock::MockClient::new(script.clone())
                        .with_spin(CpuSpin::new(spec.inject_cpu_ns))
                        .with_tail(tail::TailDelay::new(spec.inject_tail)),
                )
            }
            ClientKind::ReqwestBlocking | ClientKind::H1Lean | ClientKind::Command(_) => {
                anyhow::bail!("client {} is not an async driver", spec.name)
            }
        })
    }

    /// Sends one request for worker `worker` (a driver may keep a pool per
    /// group of workers) and reads the whole response.
    pub async fn send(&self, worker: usize) -> Result<Exchange, ErrorClass> {
        match self {
            AsyncClient::Hyper(c) => c.send().await,
            AsyncClient::Reqwest(c) => c.send(worker).await,
            AsyncClient::Mock(c) => c.send().await,
        }
    }
}

/// A connection limit shared by a client's workers: the pool size, when it is
/// smaller than the worker count. A request waits for a permit the way a
/// request in a bounded pool (Apache's max-per-route) waits for a connection;
/// the wait is part of its latency.
#[derive(Debug, Clone)]
pub struct PoolLimit {
    pub max_connections: usize,
    pub permits: Option<Arc<Semaphore>>,
}

impl PoolLimit {
    pub async fn acquire(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        match &self.permits {
            Some(s) => s.acquire().await.ok(),
            None => None,
        }
    }
}

pub fn pool_limit(spec: &ClientSpec, workers: u32) -> PoolLimit {
    let workers = workers.max(1) as usize;
    match spec.pool {
        Some(p) if (p as usize) < workers => PoolLimit {
            max_connections: p as usize,
            permits: Some(Arc::new(Semaphore::new(p as usize))),
        },
        Some(p) => PoolLimit {
            max_connections: p as usize,
            permits: None,
        },
        None => PoolLimit {
            max_connections: workers,
            permits: None,
        },
    }
}

/// Class of a failed response status, or the exchange itself.
pub(crate) fn check_status(ex: Exchange) -> Result<Exchange, ErrorClass> {
    match ErrorClass::from_status(ex.status) {
        Some(class) => Err(class),
        None => Ok(ex),
    }
}

/// Classifies an error by walking its source chain for an I/O or hyper error.
/// Connection setup failures are classified by the caller (they know).
///
/// `sending_body`: the error ended a request that carries a body before any
/// response head arrived. A reset or closed connection then means the peer
/// stopped taking the body: a write failure, not a read failure.
pub(crate) fn classify_chain(
    err: &(dyn std::error::Error + 'static),
    sending_body: bool,
) -> ErrorClass {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(h) = e.downcast_ref::<::hyper::Error>() {
            if h.is_timeout() {
                return ErrorClass::Timeout;
            }
            if h.is_body_write_aborted() || format!("{h:?}").starts_with("hyper::Error(BodyWrite") {
                return ErrorClass::Write;
            }
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            match io.kind() {
                TimedOut => return ErrorClass::Timeout,
                ConnectionRefused | AddrNotAvailable => return ErrorClass::Connect,
                BrokenPipe => return ErrorClass::Write,
                ConnectionReset | ConnectionAborted | UnexpectedEof if sending_body => {
                    return ErrorClass::Write
                }
                _ => {}
            }
        }
        cur = e.source();
    }
    ErrorClass::Read
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HttpVersion;

    fn spec(pool: Option<u32>) -> ClientSpec {
        ClientSpec {
            name: "c".into(),
            kind: ClientKind::Hyper,
            pool,
            http: HttpVersion::Http1,
            tls: false,
            inject_cpu_ns: 0,
            inject_tail: None,
        }
    }

    #[test]
    fn pool_limit_only_when_smaller_than_workers() {
        assert!(pool_limit(&spec(Some(1)), 10).permits.is_some());
        assert_eq!(pool_limit(&spec(Some(1)), 10).max_connections, 1);
        assert!(pool_limit(&spec(Some(10)), 10).permits.is_none());
        assert_eq!(pool_limit(&spec(None), 16).max_connections, 16);
    }

    #[test]
    fn body_has_requested_size() {
        assert_eq!(body_of_size(0).len(), 0);
        assert_eq!(body_of_size(1 << 20).len(), 1 << 20);
    }

    #[test]
    fn io_errors_classify() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(classify_chain(&refused, false), ErrorClass::Connect);
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(classify_chain(&reset, false), ErrorClass::Read);
        assert_eq!(classify_chain(&reset, true), ErrorClass::Write);
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(classify_chain(&pipe, false), ErrorClass::Write);
    }
}
