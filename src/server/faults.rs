//! Fault endpoints: what each one does on the wire.
//!
//! | endpoint | HTTP/1.1 | HTTP/2 |
//! |---|---|---|
//! | `/fault/close-mid-body?size=N` | head with `content-length: N`, N/2 body bytes (flushed), then the connection closes | same bytes, then RST_STREAM on that stream |
//! | `/fault/stall?ms=M` | nothing for M ms, then the connection closes | nothing for M ms, then RST_STREAM |
//! | `/fault/reset` | TCP RST (`SO_LINGER` 0, then close) | TCP RST of the whole connection |
//!
//! A handler signals "no response" by failing the hyper service with [`Fault`].

use std::sync::Arc;
use std::time::Duration;

use hyper::Response;

use super::body::Payload;
use super::conn::ConnState;
use super::Server;

/// Default and maximum stall.
pub(crate) const MAX_STALL: Duration = Duration::from_secs(30);
/// Default body size announced by `/fault/close-mid-body`.
pub(crate) const DEFAULT_CUT_SIZE: u64 = 1024;

/// Why a request got no (complete) response. Deliberate faults, plus the ways a
/// request can fail on its own side.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    #[error("fault injected: stall")]
    Stall,
    #[error("fault injected: connection reset")]
    Reset,
    #[error("reading the request body: {0}")]
    RequestBody(#[source] hyper::Error),
}

/// `GET /fault/close-mid-body`: the body announces `size` bytes and fails half way.
pub(crate) fn close_mid_body(size: u64, server: &Arc<Server>) -> Response<Payload> {
    Response::new(Payload::cut_in_half(size, server))
}

/// `GET /fault/stall`: no answer for `wait`, then the request fails.
pub(crate) async fn stall(wait: Duration) -> Result<Response<Payload>, Fault> {
    tokio::time::sleep(wait.min(MAX_STALL)).await;
    Err(Fault::Stall)
}

/// `GET /fault/reset`: the connection's IO fails from now on and closes with RST.
pub(crate) fn reset(conn: &ConnState) -> Fault {
    conn.request_reset();
    Fault::Reset
}
