//! One connection on the lean loop: read, answer `GET /bytes/{n}` from
//! prepared bytes, or hand the connection to hyper.
//!
//! A wake-up costs one `read` when it returns less than the buffer's room
//! (edge-triggered: a short read drained the socket, and new bytes bring a new
//! event), and one `write` per response: bodies up to [`INLINE_BODY`] are
//! copied behind the head, longer ones follow from the static pattern buffer.
//! The socket is registered for reading only, so the ACKs of sent responses
//! wake nobody; only output that does not fit the socket adds the writable
//! interest until it is sent. No request is parsed while a response is unsent,
//! so pipelined responses keep their order.
//!
//! Memory: reads land in the loop's [`Scratch`] buffer and responses are built
//! there; a connection keeps bytes of its own only while it has a partial
//! request head or unsent output, so an idle keep-alive connection costs a
//! few hundred bytes, not a read buffer.

use std::io::{self, Read as _, Write as _};
use std::sync::Arc;
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};

use super::date::DateCache;
use super::HandOff;
use crate::server::body::pattern_from;
use crate::server::conn::{ConnState, OpenGuard};
use crate::server::counters::Protocol;
use crate::server::Server;

/// The loop's read buffer: one read takes at most this much.
const READ_BUF: usize = 64 * 1024;
/// Bodies up to this size are copied behind the head: one buffer, one `write`.
const INLINE_BODY: u64 = 4096;
/// Headers parsed in place; a request with more goes to hyper.
const HEADERS: usize = 32;
/// Idle scan ticks (quarters of `idle_timeout`) without a byte either way, and
/// without a byte written, after which a connection closes.
const IDLE_TICKS: u64 = 4;
const UNANSWERED_TICKS: u64 = 2 * IDLE_TICKS;

/// Buffers the loop's connections share: what was just read, and the
/// response being built.
pub(super) struct Scratch {
    read: Vec<u8>,
    head: Vec<u8>,
}

impl Scratch {
    pub(super) fn new() -> Self {
        Scratch {
            read: vec![0; READ_BUF],
            head: Vec::with_capacity(256 + INLINE_BODY as usize),
        }
    }
}

/// What the loop does with a connection after a wake-up.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    Keep,
    Close,
    HandOff,
}

/// Where answering a run of buffered bytes stopped.
enum Stop {
    /// Every complete request answered; the rest is a partial head (or nothing).
    Incomplete,
    /// A response waits for the socket.
    Blocked,
    /// The next request is hyper's.
    HandOff,
    Failed,
}

pub(super) struct Conn {
    stream: TcpStream,
    state: Arc<ConnState>,
    open: OpenGuard,
    /// Bytes read and not answered yet: a partial head, or requests pipelined
    /// behind a response that waits. Usually empty (no allocation).
    carried: Vec<u8>,
    /// The largest head hyper would read (`Server::http1_head_limit`).
    max_head: usize,
    /// Unsent output: the rest of a head (with its inline body), then
    /// `body_len - body_sent` pattern bytes.
    out: Vec<u8>,
    out_sent: usize,
    body_len: u64,
    body_sent: u64,
    last_io: u64,
    last_write: u64,
    /// Registered for writable edges too (only while output waits).
    writable: bool,
}

impl Conn {
    pub(super) fn new(stream: TcpStream, open: OpenGuard, max_head: usize, tick: u64) -> Self {
        Conn {
            stream,
            state: Arc::new(ConnState::default()),
            open,
            carried: Vec::new(),
            max_head,
            out: Vec::new(),
            out_sent: 0,
            body_len: 0,
            body_sent: 0,
            last_io: tick,
            last_write: tick,
            writable: false,
        }
    }

    pub(super) fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut self.stream, token, Interest::READABLE)
    }

    /// Adds or drops the writable interest: wanted only while output waits.
    fn want_writable(&mut self, want: bool, registry: &Registry, token: Token) -> io::Result<()> {
        if want != self.writable {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            registry.reregister(&mut self.stream, token, interest)?;
            self.writable = want;
        }
        Ok(())
    }

    pub(super) fn deregister(&mut self, registry: &Registry) {
        let _ = registry.deregister(&mut self.stream);
    }

    /// True when the connection has been idle too long (see the module docs of
    /// [`super`]).
    pub(super) fn idle(&self, tick: u64) -> bool {
        tick.saturating_sub(self.last_io) >= IDLE_TICKS
            || tick.saturating_sub(self.last_write) >= UNANSWERED_TICKS
    }

    /// The socket became readable or writable.
    pub(super) fn ready(
        &mut self,
        server: &Server,
        date: &DateCache,
        scratch: &mut Scratch,
        tick: u64,
        registry: &Registry,
        token: Token,
    ) -> Step {
        let step = self.serve(server, date, scratch, tick);
        // The writable interest follows whether output waits.
        let waiting = step == Step::Keep && !self.sent_all();
        match self.want_writable(waiting, registry, token) {
            Ok(()) => step,
            Err(_) => Step::Close,
        }
    }

    fn sent_all(&self) -> bool {
        self.out_sent == self.out.len() && self.body_sent == self.body_len
    }

    fn serve(
        &mut self,
        server: &Server,
        date: &DateCache,
        scratch: &mut Scratch,
        tick: u64,
    ) -> Step {
        // Output left from an earlier wake-up, then the requests behind it.
        match self.flush(tick) {
            Ok(true) => {}
            Ok(false) => return Step::Keep,
            Err(_) => return Step::Close,
        }
        if !self.carried.is_empty() {
            let stop = self.answer_carried(server, date, &mut scratch.head, tick);
            if let Some(step) = step_of(stop) {
                return step;
            }
        }
        loop {
            let n = match self.stream.read(&mut scratch.read) {
                Ok(0) => return Step::Close,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Keep,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Step::Close,
            };
            self.last_io = tick;
            let stop = if self.carried.is_empty() {
                let (used, stop) =
                    self.answer(&scratch.read[..n], server, date, &mut scratch.head, tick);
                self.carried.extend_from_slice(&scratch.read[used..n]);
                stop
            } else {
                self.carried.extend_from_slice(&scratch.read[..n]);
                self.answer_carried(server, date, &mut scratch.head, tick)
            };
            if let Some(step) = step_of(stop) {
                return step;
            }
            if n < scratch.read.len() {
                // A short read emptied the socket: the next bytes bring an edge.
                if self.carried.capacity() > 2 * self.max_head && self.carried.is_empty() {
                    self.carried = Vec::new();
                }
                return Step::Keep;
            }
        }
    }

    /// [`Conn::answer`] on the bytes carried from earlier reads; keeps the rest.
    fn answer_carried(
        &mut self,
        server: &Server,
        date: &DateCache,
        head: &mut Vec<u8>,
        tick: u64,
    ) -> Stop {
        let carried = std::mem::take(&mut self.carried);
        let (used, stop) = self.answer(&carried, server, date, head, tick);
        self.carried = carried;
        self.carried.drain(..used);
        stop
    }

    /// Answers the complete requests at the start of `data`; how many bytes
    /// they took, and why it stopped.
    fn answer(
        &mut self,
        data: &[u8],
        server: &Server,
        date: &DateCache,
        head: &mut Vec<u8>,
        tick: u64,
    ) -> (usize, Stop) {
        let mut used = 0;
        loop {
            let rest = &data[used..];
            if rest.is_empty() {
                return (used, Stop::Incomplete);
            }
            let mut headers = [httparse::EMPTY_HEADER; HEADERS];
            let mut req = httparse::Request::new(&mut headers);
            let (len, n) = match req.parse(rest) {
                // A head over the limit is hyper's to refuse (431), even when
                // it arrived whole.
                Ok(httparse::Status::Complete(len)) if len <= self.max_head => {
                    match fast(&req, server.opts.max_body_bytes) {
                        Some(n) => (len, n),
                        None => return (used, Stop::HandOff),
                    }
                }
                Ok(httparse::Status::Partial) if rest.len() <= self.max_head => {
                    return (used, Stop::Incomplete)
                }
                // Too long, malformed, or more headers than parsed here: hyper answers.
                _ => return (used, Stop::HandOff),
            };
            used += len;
            let arrived = Instant::now();
            head.clear();
            head.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-length: ");
            head.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
            head.extend_from_slice(b"\r\ndate: ");
            head.extend_from_slice(date.as_bytes());
            head.extend_from_slice(b"\r\n\r\n");
            let (inline, body) = if n <= INLINE_BODY { (n, 0) } else { (0, n) };
            head.extend_from_slice(pattern_from(0, inline));
            server.counters.add_bytes_out(n);
            server.counters.request_done(
                &self.state.epoch,
                Protocol::default(),
                200,
                arrived.elapsed(),
            );
            match self.send(head, body, tick) {
                Ok(true) => {}
                Ok(false) => return (used, Stop::Blocked),
                Err(_) => return (used, Stop::Failed),
            }
        }
    }

    /// Writes `head`, then `body` pattern bytes; keeps what does not fit.
    /// `Ok(true)` once everything is sent.
    fn send(&mut self, head: &[u8], body: u64, tick: u64) -> io::Result<bool> {
        let sent = write_some(&mut self.stream, head)?.unwrap_or(0);
        if sent > 0 {
            self.wrote(tick);
        }
        self.out.clear();
        self.out.extend_from_slice(&head[sent..]);
        self.out_sent = 0;
        self.body_len = body;
        self.body_sent = 0;
        self.flush(tick)
    }

    /// Writes what is left of the response; `Ok(true)` once nothing is left.
    fn flush(&mut self, tick: u64) -> io::Result<bool> {
        loop {
            let head = &self.out[self.out_sent..];
            let from_head = !head.is_empty();
            let piece = if from_head {
                head
            } else {
                pattern_from(self.body_sent, self.body_len - self.body_sent)
            };
            if piece.is_empty() {
                if self.out.capacity() > 2 * INLINE_BODY as usize {
                    self.out = Vec::new();
                }
                return Ok(true);
            }
            let Some(n) = write_some(&mut self.stream, piece)? else {
                return Ok(false);
            };
            self.wrote(tick);
            if from_head {
                self.out_sent += n;
            } else {
                self.body_sent += n as u64;
            }
        }
    }

    fn wrote(&mut self, tick: u64) {
        self.last_io = tick;
        self.last_write = tick;
    }

    /// The connection for hyper: off this loop, with the bytes not answered.
    pub(super) fn into_handoff(mut self, registry: &Registry) -> HandOff {
        self.deregister(registry);
        HandOff {
            prefix: self.carried,
            stream: std::net::TcpStream::from(self.stream),
            state: self.state,
            open: self.open,
        }
    }
}

/// One `write` of `buf` (non-empty): `Some(bytes written)`, or `None` when
/// the socket is full.
fn write_some(stream: &mut TcpStream, buf: &[u8]) -> io::Result<Option<usize>> {
    loop {
        match stream.write(buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => return Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// What a wake-up ends with when answering stopped there (`None`: read on).
fn step_of(stop: Stop) -> Option<Step> {
    match stop {
        Stop::Incomplete => None,
        Stop::Blocked => Some(Step::Keep),
        Stop::HandOff => Some(Step::HandOff),
        Stop::Failed => Some(Step::Close),
    }
}

/// `n` when the request is `GET /bytes/{n}` over HTTP/1.1 with nothing that
/// asks for more than the prepared answer; `None` sends it to hyper (which
/// also answers sizes over the limit with 400).
fn fast(req: &httparse::Request<'_, '_>, max_body_bytes: u64) -> Option<u64> {
    if req.version != Some(1) || req.method != Some("GET") {
        return None;
    }
    let digits = req.path?.strip_prefix("/bytes/")?;
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    if n > max_body_bytes {
        return None;
    }
    for h in req.headers.iter() {
        let name = h.name;
        let plain = ["content-length", "transfer-encoding", "expect", "upgrade"];
        if plain.iter().any(|p| name.eq_ignore_ascii_case(p)) {
            return None;
        }
        if name.eq_ignore_ascii_case("connection")
            && !h.value.trim_ascii().eq_ignore_ascii_case(b"keep-alive")
        {
            return None;
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &[u8], max: u64) -> Option<u64> {
        let mut headers = [httparse::EMPTY_HEADER; HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        assert!(matches!(req.parse(raw), Ok(httparse::Status::Complete(_))));
        fast(&req, max)
    }

    #[test]
    fn only_plain_gets_of_bytes_are_answered_here() {
        let max = 1 << 20;
        assert_eq!(
            parse(b"GET /bytes/22 HTTP/1.1\r\nHost: x\r\n\r\n", max),
            Some(22)
        );
        assert_eq!(parse(b"GET /bytes/0 HTTP/1.1\r\n\r\n", max), Some(0));
        assert_eq!(
            parse(
                b"GET /bytes/7 HTTP/1.1\r\nConnection:  Keep-Alive \r\n\r\n",
                max
            ),
            Some(7)
        );
        for raw in [
            &b"GET /bytes/22 HTTP/1.0\r\n\r\n"[..],
            b"HEAD /bytes/22 HTTP/1.1\r\n\r\n",
            b"POST /bytes/22 HTTP/1.1\r\n\r\n",
            b"GET /bytes/22?x=1 HTTP/1.1\r\n\r\n",
            b"GET /bytes/+22 HTTP/1.1\r\n\r\n",
            b"GET /bytes/ HTTP/1.1\r\n\r\n",
            b"GET /bytes/2097152 HTTP/1.1\r\n\r\n",
            b"GET /bytes/99999999999999999999 HTTP/1.1\r\n\r\n",
            b"GET /status/200 HTTP/1.1\r\n\r\n",
            b"GET /bytes/22 HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
            b"GET /bytes/22 HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n",
            b"GET /bytes/22 HTTP/1.1\r\nConnection: close\r\n\r\n",
            b"GET /bytes/22 HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n",
            b"GET /bytes/22 HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
        ] {
            assert_eq!(parse(raw, max), None, "{}", String::from_utf8_lossy(raw));
        }
    }
}
