//! The hyper service of one connection: dispatch, counting, panic containment.
//!
//! Fast endpoints (`/bytes`, `/status`, `/sha1`, errors) answer inside `call` and
//! return a ready future: no boxing, no clone of shared state, no allocation beyond
//! hyper's own. Slow ones (`/upload`, `/delay`, `/fault/stall`) return a boxed future
//! and mark the connection busy for the idle timer.
//!
//! Service time is measured from the moment hyper hands the parsed request head to the
//! service until the response head (and the body, which then streams) is handed back:
//! it includes reading the upload body and the `/delay` wait, not the time to send
//! the response body. A request is counted at that moment (faults: when they fire).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use futures_util::FutureExt as _;
use hyper::body::Incoming;
use hyper::{Request, Response};

use super::body::Payload;
use super::conn::ConnState;
use super::counters::Protocol;
use super::faults::{self, Fault};
use super::handlers::{json, panicked, rejection, respond, sha1_of_random, upload};
use super::routes::{route, Endpoint};
use super::Server;

type Reply = Result<Response<Payload>, Fault>;

/// When a request's head reached the service, and how it was served.
#[derive(Clone, Copy)]
struct Arrival {
    at: Instant,
    protocol: Protocol,
}

/// The hyper service of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    server: Arc<Server>,
    conn: Arc<ConnState>,
}

/// The service's future: ready for fast endpoints, boxed for slow ones.
pub(crate) enum ReplyFuture {
    Ready(Option<Reply>),
    /// A control endpoint's answer (ready; exempt from `added_delay`).
    Control(Option<Reply>),
    Deferred(Pin<Box<dyn Future<Output = Reply> + Send>>),
}

impl Future for ReplyFuture {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        match self.get_mut() {
            ReplyFuture::Ready(r) | ReplyFuture::Control(r) => {
                Poll::Ready(r.take().expect("ReplyFuture polled after completion"))
            }
            ReplyFuture::Deferred(f) => f.as_mut().poll(cx),
        }
    }
}

impl Handler {
    pub(crate) fn new(server: Arc<Server>, conn: Arc<ConnState>) -> Self {
        Handler { server, conn }
    }

    fn handle(&self, req: Request<Incoming>, start: Arrival) -> ReplyFuture {
        let delay = self.server.opts.added_delay;
        let reply = self.dispatch(req, start);
        if delay.is_zero() || matches!(reply, ReplyFuture::Control(_)) {
            return reply;
        }
        // `--added-delay`: hold the response back (counted already; the
        // connection stays busy for the idle timer).
        let busy = self.conn.busy();
        ReplyFuture::Deferred(Box::pin(async move {
            let _busy = busy;
            crate::timer::sleep_precise(delay).await;
            reply.await
        }))
    }

    fn dispatch(&self, req: Request<Incoming>, start: Arrival) -> ReplyFuture {
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
                crate::timer::sleep_precise(wait).await;
                Ok(Response::new(Payload::from_static(b"ok")))
            }),
            Endpoint::Stall(wait) => self.deferred(start, faults::stall(wait)),
            // Control endpoints: never counted, never delayed.
            Endpoint::WindowStart => {
                ReplyFuture::Control(Some(Ok(json(&server.counters.start_window()))))
            }
            Endpoint::WindowStop => {
                ReplyFuture::Control(Some(Ok(json(&server.counters.stop_window()))))
            }
            Endpoint::Counters => ReplyFuture::Control(Some(Ok(json(&server.counters.snapshot())))),
        }
    }

    fn count(&self, start: Arrival, status: u16) {
        self.server.counters.request_done(
            &self.conn.epoch,
            start.protocol,
            status,
            start.at.elapsed(),
        );
    }

    fn finish(&self, start: Arrival, resp: Response<Payload>) -> ReplyFuture {
        self.server
            .counters
            .add_bytes_out(resp.body().one_piece_len());
        self.count(start, resp.status().as_u16());
        ReplyFuture::Ready(Some(Ok(resp)))
    }

    fn deferred(
        &self,
        start: Arrival,
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
                .request_done(&conn.epoch, start.protocol, status, start.at.elapsed());
            reply
        }))
    }
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
        let start = Arrival {
            at: Instant::now(),
            protocol: Protocol {
                http2: req.version() == hyper::Version::HTTP_2,
                link: self.conn.link(),
            },
        };
        guarded(|| self.handle(req, start)).unwrap_or_else(|| self.finish(start, panicked()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_handler_is_caught() {
        assert!(guarded(|| panic!("boom")).is_none());
        assert!(guarded(|| ReplyFuture::Ready(Some(Err(Fault::Stall)))).is_some());
    }
}
