//! The `hyper` driver: hyper-util's pooled legacy client. Plain HTTP uses the
//! bare `HttpConnector` (nothing in the path but hyper); HTTPS goes through
//! hyper-rustls's connector, offering ALPN `h2` (HTTP/2) or `http/1.1`.
//! Beyond a quarter of the ephemeral port range, new connections take the
//! trial's source addresses in turn ([`SpreadConnector`], [`super::source`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::{check_status, classify_chain, Exchange, PoolLimit, RequestTemplate};
use crate::config::{ClientSpec, HttpVersion};
use crate::measure::ErrorClass;

type HttpsConnector = hyper_rustls::HttpsConnector<SpreadConnector>;

enum Inner {
    Plain(Client<SpreadConnector, Full<Bytes>>),
    Tls(Client<HttpsConnector, Full<Bytes>>),
}

/// A pooled hyper client bound to one request template.
pub struct HyperClient {
    inner: Inner,
    method: hyper::Method,
    uri: Uri,
    body: Bytes,
    limit: PoolLimit,
    /// `inject_cpu`: CPU to burn per request (testing knob).
    spin: super::CpuSpin,
    /// `inject_tail`: a share of requests delayed (testing knob).
    tail: super::tail::TailDelay,
}

impl HyperClient {
    pub fn new(
        spec: &ClientSpec,
        request: RequestTemplate,
        limit: PoolLimit,
    ) -> anyhow::Result<HyperClient> {
        let uri: Uri = request
            .url
            .parse()
            .map_err(|e| anyhow::anyhow!("invalid target URL {}: {e}", request.url))?;
        let mut builder = Client::builder(TokioExecutor::new());
        builder.pool_max_idle_per_host(limit.max_connections);
        if spec.http == HttpVersion::Http2 {
            builder.http2_only(true);
        }
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        let target = uri.host().and_then(|h| h.parse().ok());
        let sources = target.map_or(vec![], |ip| {
            super::source::source_addresses(limit.max_connections as u64, ip)
        });
        let inner = if spec.tls {
            http.enforce_http(false);
            let http = SpreadConnector::new(&http, &sources);
            // ALPN as the HTTP version says. Not `HttpsConnectorBuilder`: it
            // sets ALPN itself, panics on a config that has some, and offers
            // none for HTTP/1.1 only.
            let mut tls = super::tls::insecure_tls_config();
            tls.alpn_protocols = super::tls::alpn(spec.http);
            let mut connector = HttpsConnector::from((http, tls));
            connector.enforce_https();
            Inner::Tls(builder.build(connector))
        } else {
            Inner::Plain(builder.build(SpreadConnector::new(&http, &sources)))
        };
        Ok(HyperClient {
            inner,
            method: hyper::Method::from_bytes(request.method.as_str().as_bytes())?,
            uri,
            body: request.body,
            limit,
            spin: super::CpuSpin::new(spec.inject_cpu_ns),
            tail: super::tail::TailDelay::new(spec.inject_tail),
        })
    }

    pub async fn send(&self) -> Result<Exchange, ErrorClass> {
        self.tail.wait().await;
        let _permit = self.limit.acquire().await;
        self.spin.burn();
        let req = Request::builder()
            .method(self.method.clone())
            .uri(self.uri.clone())
            .body(Full::new(self.body.clone()))
            .map_err(|_| ErrorClass::Write)?;
        let resp = match &self.inner {
            Inner::Plain(c) => c.request(req).await,
            Inner::Tls(c) => c.request(req).await,
        };
        let resp = resp.map_err(|e| classify_client_error(&e, !self.body.is_empty()))?;
        let status = resp.status().as_u16();
        let bytes_received = read_body(resp).await?;
        check_status(Exchange {
            status,
            bytes_received,
            bytes_sent: self.body.len() as u64,
        })
    }
}

/// `HttpConnector`s, one per source address (or one with the kernel's
/// choice), taken in turn by new connections: one pool whatever the spread.
#[derive(Clone)]
pub struct SpreadConnector {
    connectors: Arc<[HttpConnector]>,
    next: Arc<AtomicUsize>,
}

impl SpreadConnector {
    fn new(http: &HttpConnector, sources: &[std::net::IpAddr]) -> SpreadConnector {
        let connectors: Vec<HttpConnector> = if sources.is_empty() {
            vec![http.clone()]
        } else {
            sources
                .iter()
                .map(|ip| {
                    let mut c = http.clone();
                    c.set_local_address(Some(*ip));
                    c
                })
                .collect()
        };
        SpreadConnector {
            connectors: connectors.into(),
            next: Arc::new(AtomicUsize::new(0)),
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower_service::Service<Uri> for SpreadConnector {
    type Response = <HttpConnector as tower_service::Service<Uri>>::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Each call readies the connector it takes.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.connectors.len();
        let mut c = self.connectors[i].clone();
        Box::pin(async move {
            std::future::poll_fn(|cx| c.poll_ready(cx)).await?;
            Ok(c.call(uri).await?)
        })
    }
}

/// Reads a response body to its end, counting bytes without keeping them.
pub async fn read_body(resp: Response<Incoming>) -> Result<u64, ErrorClass> {
    let mut body = resp.into_body();
    let mut n = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| classify_chain(&e, false))?;
        if let Some(data) = frame.data_ref() {
            n += data.len() as u64;
        }
    }
    Ok(n)
}

/// Classifies a failure before the response head arrived.
fn classify_client_error(e: &hyper_util::client::legacy::Error, sending_body: bool) -> ErrorClass {
    if e.is_connect() {
        // A connect error whose cause is a timeout is still a failure to connect.
        return ErrorClass::Connect;
    }
    classify_chain(e, sending_body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ClientKind, Method};

    #[test]
    fn builds_over_tls_for_both_http_versions() {
        for http in [HttpVersion::Http1, HttpVersion::Http2] {
            let spec = ClientSpec {
                name: "hyper-tls".into(),
                kind: ClientKind::Hyper,
                pool: None,
                http,
                tls: true,
                inject_cpu_ns: 0,
                inject_tail: None,
            };
            let request = RequestTemplate {
                method: Method::Get,
                url: "https://127.0.0.1:1/bytes/22".into(),
                body: Bytes::new(),
            };
            let limit = PoolLimit {
                max_connections: 1,
                permits: None,
            };
            let client = HyperClient::new(&spec, request, limit).expect("builds");
            assert!(matches!(client.inner, Inner::Tls(_)), "{http:?}");
        }
    }
}
