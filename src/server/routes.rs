//! Routing and the endpoint handlers: the hyper service of one connection.
//!
//! Fast endpoints (`/bytes`, `/status`, `/sha1`, errors) answer inside `call` and
//! return a ready future: no boxing, no clone of shared state, no allocation beyond
//! hyper's own. Slow ones (`/upload`, `/delay`, `/fault/stall`) return a boxed future
//! and mark the connection busy for the idle timer.
//!
//! Service time is measured from the moment hyper hands the parsed request head to the
//! service until the response head (and the body, which then streams) is handed back:
//! it includes reading the upload body and the `/delay` wait, not the time to send
//! the response body.

use std::cell::RefCell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::FutureExt as _;
use http::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use http::{Method, StatusCode};
use http_body_util::BodyExt as _;
use hyper::body::{Body as _, Incoming};
use hyper::{Request, Response};
use rand::rngs::SmallRng;
use rand::{RngCore as _, SeedableRng as _};
use sha1::{Digest as _, Sha1};

use super::body::Payload;
use super::conn::ConnState;
use super::faults::{self, Fault, DEFAULT_CUT_SIZE, MAX_STALL};
use super::{Server, ServerOptions};

/// Longest `/delay`.
const MAX_DELAY: Duration = Duration::from_secs(60);
/// Largest and default `/sha1` input.
const MAX_SHA1_SIZE: u64 = 16 << 20;
const DEFAULT_SHA1_SIZE: u64 = 8192;

type Reply = Result<Response<Payload>, Fault>;

/// The hyper service of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    server: Arc<Server>,
    conn: Arc<ConnState>,
}

/// The service's future: ready for fast endpoints, boxed for slow ones.
pub(crate) enum ReplyFuture {
    Ready(Option<Reply>),
    Deferred(Pin<Box<dyn Future<Output = Reply> + Send>>),
}

impl Future for ReplyFuture {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        match self.get_mut() {
            ReplyFuture::Ready(r) => {
                Poll::Ready(r.take().expect("ReplyFuture polled after completion"))
            }
            ReplyFuture::Deferred(f) => f.as_mut().poll(cx),
        }
    }
}

enum Endpoint {
    Bytes(u64),
    Upload,
    Delay(Duration),
    Sha1(u64),
    Status(StatusCode),
    CloseMidBody(u64),
    Stall(Duration),
    Reset,
    WindowStart,
    WindowStop,
    Counters,
}

/// A request answered with an error status and a short text.
struct Reject {
    status: StatusCode,
    text: &'static str,
    allow: Option<&'static str>,
}

const NOT_FOUND: Reject = reject(StatusCode::NOT_FOUND, "not found\n");

const fn reject(status: StatusCode, text: &'static str) -> Reject {
    Reject {
        status,
        text,
        allow: None,
    }
}

fn require(ok: bool, allow: &'static str) -> Result<(), Reject> {
    if ok {
        Ok(())
    } else {
        Err(Reject {
            status: StatusCode::METHOD_NOT_ALLOWED,
            text: "method not allowed\n",
            allow: Some(allow),
        })
    }
}

fn number(s: &str) -> Result<u64, Reject> {
    s.parse()
        .map_err(|_| reject(StatusCode::BAD_REQUEST, "expected a decimal number\n"))
}

/// The value of `key` in a query string, as a number.
fn query_number(query: Option<&str>, key: &str) -> Result<Option<u64>, Reject> {
    let Some(q) = query else { return Ok(None) };
    for pair in q.split('&') {
        if let Some((k, v)) = pair.split_once('=') {
            if k == key {
                return number(v).map(Some);
            }
        }
    }
    Ok(None)
}

fn route(
    method: &Method,
    path: &str,
    query: Option<&str>,
    opts: &ServerOptions,
) -> Result<Endpoint, Reject> {
    let get = method == Method::GET;
    let too_big = || reject(StatusCode::BAD_REQUEST, "size over max_body_bytes\n");
    if let Some(n) = path.strip_prefix("/bytes/") {
        require(get, "GET")?;
        let n = number(n)?;
        return if n > opts.max_body_bytes {
            Err(too_big())
        } else {
            Ok(Endpoint::Bytes(n))
        };
    }
    if let Some(ms) = path.strip_prefix("/delay/") {
        require(get, "GET")?;
        return Ok(Endpoint::Delay(
            Duration::from_millis(number(ms)?).min(MAX_DELAY),
        ));
    }
    if let Some(code) = path.strip_prefix("/status/") {
        require(get, "GET")?;
        let code = u16::try_from(number(code)?)
            .ok()
            .and_then(|c| StatusCode::from_u16(c).ok());
        return match code {
            Some(code) if code.as_u16() >= 200 => Ok(Endpoint::Status(code)),
            _ => Err(reject(StatusCode::BAD_REQUEST, "status must be 200-999\n")),
        };
    }
    match path {
        "/upload" => {
            require(method == Method::PUT || method == Method::POST, "PUT, POST")?;
            Ok(Endpoint::Upload)
        }
        "/sha1" => {
            require(get, "GET")?;
            let size = query_number(query, "size")?.unwrap_or(DEFAULT_SHA1_SIZE);
            Ok(Endpoint::Sha1(size.min(MAX_SHA1_SIZE)))
        }
        "/fault/close-mid-body" => {
            require(get, "GET")?;
            let n = query_number(query, "size")?.unwrap_or(DEFAULT_CUT_SIZE);
            if n > opts.max_body_bytes {
                return Err(too_big());
            }
            Ok(Endpoint::CloseMidBody(n))
        }
        "/fault/stall" => {
            require(get, "GET")?;
            let ms = query_number(query, "ms")?.map(Duration::from_millis);
            Ok(Endpoint::Stall(ms.unwrap_or(MAX_STALL).min(MAX_STALL)))
        }
        "/fault/reset" => require(get, "GET").map(|_| Endpoint::Reset),
        "/__benchgate/window/start" => {
            require(method == Method::POST, "POST").map(|_| Endpoint::WindowStart)
        }
        "/__benchgate/window/stop" => {
            require(method == Method::POST, "POST").map(|_| Endpoint::WindowStop)
        }
        "/__benchgate/counters" => require(get, "GET").map(|_| Endpoint::Counters),
        _ => Err(NOT_FOUND),
    }
}

fn respond(status: StatusCode, body: Payload) -> Response<Payload> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp
}

fn rejection(r: Reject) -> Response<Payload> {
    let mut resp = respond(r.status, Payload::from_static(r.text.as_bytes()));
    if let Some(allow) = r.allow {
        resp.headers_mut()
            .insert(ALLOW, HeaderValue::from_static(allow));
    }
    resp
}

fn json(counters: &impl serde::Serialize) -> Response<Payload> {
    let body = serde_json::to_vec(counters).unwrap_or_default();
    let mut resp = respond(StatusCode::OK, Payload::bytes(Bytes::from(body)));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

thread_local! {
    static RNG: RefCell<SmallRng> = RefCell::new(SmallRng::from_entropy());
}

/// Lowercase hex SHA-1 of `size` fresh random bytes.
fn sha1_of_random(size: u64) -> [u8; 40] {
    let mut hasher = Sha1::new();
    let mut buf = [0u8; 8192];
    RNG.with(|rng| {
        let mut rng = rng.borrow_mut();
        let mut left = size;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            rng.fill_bytes(&mut buf[..n]);
            hasher.update(&buf[..n]);
            left -= n as u64;
        }
    });
    let mut hex = [0u8; 40];
    for (i, b) in hasher.finalize().iter().enumerate() {
        hex[2 * i] = b"0123456789abcdef"[(b >> 4) as usize];
        hex[2 * i + 1] = b"0123456789abcdef"[(b & 15) as usize];
    }
    hex
}

async fn upload(server: Arc<Server>, req: Request<Incoming>) -> Reply {
    let max = server.opts.max_body_bytes;
    let too_large = || {
        rejection(reject(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body over max_body_bytes\n",
        ))
    };
    if req.body().size_hint().lower() > max {
        return Ok(too_large());
    }
    let mut body = req.into_body();
    let mut total = 0u64;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.map_err(Fault::RequestBody)?.into_data() {
            let n = data.len() as u64;
            total += n;
            server.counters.add_bytes_in(n);
            if total > max {
                return Ok(too_large());
            }
        }
    }
    Ok(respond(
        StatusCode::OK,
        Payload::bytes(Bytes::from(total.to_string())),
    ))
}

impl Handler {
    pub(crate) fn new(server: Arc<Server>, conn: Arc<ConnState>) -> Self {
        Handler { server, conn }
    }

    fn handle(&self, req: Request<Incoming>, start: Instant) -> ReplyFuture {
        let uri = req.uri();
        let endpoint = match route(req.method(), uri.path(), uri.query(), &self.server.opts) {
            Ok(e) => e,
            Err(r) => return self.finish(start, rejection(r)),
        };
        let server = &self.server;
        match endpoint {
            Endpoint::Bytes(n) => self.finish(start, Response::new(Payload::pattern(n, server))),
            Endpoint::Status(code) => self.finish(start, respond(code, Payload::empty())),
            Endpoint::Sha1(size) => {
                let hex = sha1_of_random(size);
                self.finish(
                    start,
                    Response::new(Payload::bytes(Bytes::copy_from_slice(&hex))),
                )
            }
            Endpoint::CloseMidBody(n) => self.finish(start, faults::close_mid_body(n, server)),
            Endpoint::Reset => {
                let fault = faults::reset(&self.conn);
                self.count(start, 0);
                ReplyFuture::Ready(Some(Err(fault)))
            }
            Endpoint::Upload => self.deferred(start, upload(server.clone(), req)),
            Endpoint::Delay(wait) => self.deferred(start, async move {
                tokio::time::sleep(wait).await;
                Ok(Response::new(Payload::from_static(b"ok")))
            }),
            Endpoint::Stall(wait) => self.deferred(start, faults::stall(wait)),
            // Control endpoints: never counted.
            Endpoint::WindowStart => {
                ReplyFuture::Ready(Some(Ok(json(&server.counters.start_window()))))
            }
            Endpoint::WindowStop => {
                ReplyFuture::Ready(Some(Ok(json(&server.counters.stop_window()))))
            }
            Endpoint::Counters => ReplyFuture::Ready(Some(Ok(json(&server.counters.snapshot())))),
        }
    }

    fn count(&self, start: Instant, status: u16) {
        self.server
            .counters
            .request_done(&self.conn.epoch, status, start.elapsed());
    }

    fn finish(&self, start: Instant, resp: Response<Payload>) -> ReplyFuture {
        self.server
            .counters
            .add_bytes_out(resp.body().one_piece_len());
        self.count(start, resp.status().as_u16());
        ReplyFuture::Ready(Some(Ok(resp)))
    }

    fn deferred(
        &self,
        start: Instant,
        fut: impl Future<Output = Reply> + Send + 'static,
    ) -> ReplyFuture {
        let server = self.server.clone();
        let conn = self.conn.clone();
        let busy = conn.busy();
        ReplyFuture::Deferred(Box::pin(async move {
            let _busy = busy;
            let reply = AssertUnwindSafe(fut)
                .catch_unwind()
                .await
                .unwrap_or_else(|_| Ok(panicked()));
            let status = match &reply {
                Ok(resp) => {
                    server.counters.add_bytes_out(resp.body().one_piece_len());
                    resp.status().as_u16()
                }
                Err(_) => 0,
            };
            server
                .counters
                .request_done(&conn.epoch, status, start.elapsed());
            reply
        }))
    }
}

fn panicked() -> Response<Payload> {
    rejection(reject(
        StatusCode::INTERNAL_SERVER_ERROR,
        "handler panicked\n",
    ))
}

/// Runs a synchronous handler; `None` if it panicked. The caller answers 500 then,
/// instead of the panic taking the connection down.
fn guarded(f: impl FnOnce() -> ReplyFuture) -> Option<ReplyFuture> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).ok()
}

impl hyper::service::Service<Request<Incoming>> for Handler {
    type Response = Response<Payload>;
    type Error = Fault;
    type Future = ReplyFuture;

    fn call(&self, req: Request<Incoming>) -> ReplyFuture {
        let start = Instant::now();
        guarded(|| self.handle(req, start)).unwrap_or_else(|| self.finish(start, panicked()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(method: Method, uri: &str) -> Result<Endpoint, Reject> {
        let uri: http::Uri = uri.parse().unwrap();
        route(&method, uri.path(), uri.query(), &ServerOptions::default())
    }

    fn status_of(r: Result<Endpoint, Reject>) -> u16 {
        r.map_or_else(|r| r.status.as_u16(), |_| 200)
    }

    #[test]
    fn routes_and_rejections() {
        assert!(matches!(
            ep(Method::GET, "/bytes/22"),
            Ok(Endpoint::Bytes(22))
        ));
        assert_eq!(status_of(ep(Method::GET, "/bytes/x")), 400);
        assert_eq!(status_of(ep(Method::GET, "/bytes/67108865")), 400);
        assert_eq!(status_of(ep(Method::POST, "/bytes/1")), 405);
        assert_eq!(status_of(ep(Method::GET, "/upload")), 405);
        assert!(matches!(ep(Method::PUT, "/upload"), Ok(Endpoint::Upload)));
        assert!(
            matches!(ep(Method::GET, "/delay/999999"), Ok(Endpoint::Delay(d)) if d == MAX_DELAY)
        );
        assert!(matches!(ep(Method::GET, "/sha1"), Ok(Endpoint::Sha1(8192))));
        assert!(matches!(
            ep(Method::GET, "/sha1?x=1&size=99999999"),
            Ok(Endpoint::Sha1(MAX_SHA1_SIZE))
        ));
        assert_eq!(status_of(ep(Method::GET, "/sha1?size=-1")), 400);
        assert!(matches!(ep(Method::GET, "/status/503"), Ok(Endpoint::Status(s)) if s == 503));
        for bad in [
            "/status/100",
            "/status/199",
            "/status/1000",
            "/status/abc",
            "/status/99",
        ] {
            assert_eq!(status_of(ep(Method::GET, bad)), 400, "{bad}");
        }
        assert!(
            matches!(ep(Method::GET, "/fault/stall"), Ok(Endpoint::Stall(d)) if d == MAX_STALL)
        );
        assert!(matches!(
            ep(Method::GET, "/fault/close-mid-body?size=10"),
            Ok(Endpoint::CloseMidBody(10))
        ));
        assert_eq!(status_of(ep(Method::GET, "/__benchgate/window/start")), 405);
        assert_eq!(status_of(ep(Method::GET, "/nope")), 404);
        assert_eq!(status_of(ep(Method::GET, "/bytes")), 404);
    }

    #[test]
    fn sha1_is_lowercase_hex_and_fresh() {
        let (a, b) = (sha1_of_random(8192), sha1_of_random(8192));
        assert!(a
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c)));
        assert_ne!(a, b, "fresh random input each time");
        // SHA-1 of the empty input is well known.
        assert_eq!(
            &sha1_of_random(0),
            b"da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
    }

    #[test]
    fn a_panicking_handler_is_caught() {
        assert!(guarded(|| panic!("boom")).is_none());
        assert!(guarded(|| ReplyFuture::Ready(Some(Err(Fault::Stall)))).is_some());
    }
}
