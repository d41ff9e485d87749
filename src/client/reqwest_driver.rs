//! The `reqwest` drivers: the async client, and the blocking client that runs
//! one OS thread per worker.

use std::io;
use std::time::Duration;

use bytes::Bytes;

use super::{check_status, classify_chain, Exchange, PoolLimit, RequestTemplate};
use crate::config::{ClientSpec, HttpVersion};
use crate::measure::ErrorClass;

fn method(m: crate::config::Method) -> reqwest::Method {
    reqwest::Method::from_bytes(m.as_str().as_bytes()).expect("static method names are valid")
}

/// `sending_body`: see [`classify_chain`].
fn classify(e: &reqwest::Error, sending_body: bool) -> ErrorClass {
    if e.is_connect() {
        ErrorClass::Connect
    } else if e.is_timeout() {
        ErrorClass::Timeout
    } else {
        classify_chain(e, sending_body)
    }
}

macro_rules! configure {
    ($builder:expr, $spec:expr, $limit:expr) => {{
        let mut b = $builder
            .pool_max_idle_per_host($limit.max_connections)
            .tcp_nodelay(true)
            .danger_accept_invalid_certs(true)
            .no_proxy();
        b = match $spec.http {
            HttpVersion::Http1 => b.http1_only(),
            HttpVersion::Http2 => b.http2_prior_knowledge(),
        };
        b
    }};
}

/// reqwest's async client bound to one request template.
pub struct ReqwestClient {
    /// One client per source address (or one with the kernel's choice);
    /// worker `w` sends on `clients[w % len]`, so each pool holds its share.
    clients: Vec<reqwest::Client>,
    method: reqwest::Method,
    url: reqwest::Url,
    body: Bytes,
    limit: PoolLimit,
    /// `inject_cpu`: CPU to burn per request (testing knob).
    spin: super::CpuSpin,
    /// `inject_tail`: a share of requests delayed (testing knob).
    tail: super::tail::TailDelay,
}

impl ReqwestClient {
    pub fn new(
        spec: &ClientSpec,
        request: RequestTemplate,
        limit: PoolLimit,
    ) -> anyhow::Result<ReqwestClient> {
        let url: reqwest::Url = request.url.parse()?;
        let target = url.host_str().and_then(|h| h.parse().ok());
        let sources = target.map_or(vec![], |ip| {
            super::source::source_addresses(limit.max_connections as u64, ip)
        });
        let share = PoolLimit {
            max_connections: limit.max_connections.div_ceil(sources.len().max(1)),
            permits: None,
        };
        let build = |from: Option<std::net::IpAddr>| {
            configure!(reqwest::Client::builder(), spec, share)
                .local_address(from)
                .build()
        };
        let clients = if sources.is_empty() {
            vec![build(None)?]
        } else {
            sources
                .iter()
                .map(|ip| build(Some(*ip)))
                .collect::<Result<_, _>>()?
        };
        Ok(ReqwestClient {
            clients,
            method: method(request.method),
            url,
            body: request.body,
            limit,
            spin: super::CpuSpin::new(spec.inject_cpu_ns),
            tail: super::tail::TailDelay::new(spec.inject_tail),
        })
    }

    /// Sends one request for worker `worker`.
    pub async fn send(&self, worker: usize) -> Result<Exchange, ErrorClass> {
        self.tail.wait().await;
        let _permit = self.limit.acquire().await;
        self.spin.burn();
        let client = &self.clients[worker % self.clients.len()];
        let mut req = client.request(self.method.clone(), self.url.clone());
        if !self.body.is_empty() {
            req = req.body(self.body.clone());
        }
        let sending_body = !self.body.is_empty();
        let mut resp = req.send().await.map_err(|e| classify(&e, sending_body))?;
        let status = resp.status().as_u16();
        let mut bytes_received = 0u64;
        while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&e, false))? {
            bytes_received += chunk.len() as u64;
        }
        check_status(Exchange {
            status,
            bytes_received,
            bytes_sent: self.body.len() as u64,
        })
    }
}

/// reqwest's blocking client; each worker is an OS thread blocked in `send`.
pub struct BlockingClient {
    client: reqwest::blocking::Client,
    method: reqwest::Method,
    url: reqwest::Url,
    body: Bytes,
    /// Connection limit for blocking workers (a std semaphore substitute).
    limit: Option<std::sync::Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>>,
    /// `inject_cpu`: CPU to burn per request (testing knob).
    spin: super::CpuSpin,
    /// `inject_tail`: a share of requests delayed (testing knob).
    tail: super::tail::TailDelay,
}

impl BlockingClient {
    pub fn new(
        spec: &ClientSpec,
        request: RequestTemplate,
        limit: PoolLimit,
        timeout: Duration,
    ) -> anyhow::Result<BlockingClient> {
        let client = configure!(reqwest::blocking::Client::builder(), spec, limit)
            .timeout(timeout)
            .build()?;
        let permits = limit.permits.as_ref().map(|_| {
            std::sync::Arc::new((
                std::sync::Mutex::new(limit.max_connections),
                std::sync::Condvar::new(),
            ))
        });
        Ok(BlockingClient {
            client,
            method: method(request.method),
            url: request.url.parse()?,
            body: request.body,
            limit: permits,
            spin: super::CpuSpin::new(spec.inject_cpu_ns),
            tail: super::tail::TailDelay::new(spec.inject_tail),
        })
    }

    pub fn send(&self) -> Result<Exchange, ErrorClass> {
        self.tail.wait_blocking();
        let _permit = self.limit.as_ref().map(BlockingPermit::acquire);
        self.spin.burn();
        let mut req = self.client.request(self.method.clone(), self.url.clone());
        if !self.body.is_empty() {
            req = req.body(self.body.clone());
        }
        let sending_body = !self.body.is_empty();
        let mut resp = req.send().map_err(|e| classify(&e, sending_body))?;
        let status = resp.status().as_u16();
        let bytes_received = resp
            .copy_to(&mut io::sink())
            .map_err(|e| classify(&e, false))?;
        check_status(Exchange {
            status,
            bytes_received,
            bytes_sent: self.body.len() as u64,
        })
    }
}

struct BlockingPermit<'a>(&'a (std::sync::Mutex<usize>, std::sync::Condvar));

impl<'a> BlockingPermit<'a> {
    fn acquire(l: &'a std::sync::Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>) -> Self {
        let (lock, cv) = &**l;
        let mut free = lock.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = cv.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        BlockingPermit(l)
    }
}

impl Drop for BlockingPermit<'_> {
    fn drop(&mut self) {
        let (lock, cv) = self.0;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        cv.notify_one();
    }
}
