//! One connection on the lean loop: read, answer `GET /bytes/{n}` from
//! prepared bytes, or hand the connection to hyper.
//!
//! A wake-up costs one `read` when it returns less than the buffer's room
//! (edge-triggered: a short read drained the socket, and new bytes bring a new
//! event), and one `write` per response: bodies up to [`INLINE_BODY`] are
//! copied behind the head, longer ones go out with `writev` straight from the
//! static pattern buffer. The socket is registered for reading only, so the
//! ACKs of sent responses wake nobody; only output that does not fit the
//! socket adds the writable interest until it is sent. No request is parsed
//! while a response is unsent, so pipelined responses keep their order.

use std::io::{self, IoSlice, Read as _, Write as _};
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

/// Read buffer to start with; it grows once, to the head limit, for a long head.
const BUF: usize = 8 * 1024;
/// Bodies up to this size are copied behind the head: one buffer, one `write`.
const INLINE_BODY: u64 = 4096;
/// Headers parsed in place; a request with more goes to hyper.
const HEADERS: usize = 32;
/// Idle scan ticks (quarters of `idle_timeout`) without a byte either way, and
/// without a byte written, after which a connection closes.
const IDLE_TICKS: u64 = 4;
const UNANSWERED_TICKS: u64 = 2 * IDLE_TICKS;

/// What the loop does with a connection after a wake-up.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    Keep,
    Close,
    HandOff,
}

enum Next {
    Answered,
    Incomplete,
    HandOff,
}

pub(super) struct Conn {
    stream: TcpStream,
    state: Arc<ConnState>,
    open: OpenGuard,
    /// Bytes read: `buf[start..end]` are not answered yet.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The largest head hyper would read (`max(max_header_bytes, 8 KiB)`).
    max_head: usize,
    /// The response being written: its head, then `body_len` pattern bytes.
    head: Vec<u8>,
    head_sent: usize,
    body_len: u64,
    body_sent: u64,
    last_io: u64,
    last_write: u64,
    /// Registered for writable edges too (only while output waits).
    writable: bool,
}

impl Conn {
    pub(super) fn new(
        stream: TcpStream,
        open: OpenGuard,
        max_header_bytes: usize,
        tick: u64,
    ) -> Self {
        Conn {
            stream,
            state: Arc::new(ConnState::default()),
            open,
            buf: vec![0; BUF],
            start: 0,
            end: 0,
            max_head: max_header_bytes.max(8192),
            head: Vec::with_capacity(128),
            head_sent: 0,
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
        tick: u64,
        registry: &Registry,
        token: Token,
    ) -> Step {
        let step = self.serve(server, date, tick);
        // Output waits (Keep with bytes unsent) or went out: the writable
        // interest follows.
        let waiting = step == Step::Keep && !self.sent_all();
        match self.want_writable(waiting, registry, token) {
            Ok(()) => step,
            Err(_) => Step::Close,
        }
    }

    fn sent_all(&self) -> bool {
        self.head_sent == self.head.len() && self.body_sent == self.body_len
    }

    fn serve(&mut self, server: &Server, date: &DateCache, tick: u64) -> Step {
        let mut drained = false;
        loop {
            if let Some(step) = self.answer_buffered(server, date, tick) {
                return step;
            }
            if drained {
                // A short read emptied the socket: the next bytes bring an edge.
                return Step::Keep;
            }
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                // A head longer than the first buffer: room up to the limit
                // (past it, `next_request` hands off and hyper answers 431).
                self.buf.resize(self.max_head + 1, 0);
            }
            let room = self.buf.len() - self.end;
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(0) => return Step::Close,
                Ok(n) => {
                    self.end += n;
                    self.last_io = tick;
                    drained = n < room;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Keep,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Step::Close,
            }
        }
    }

    /// Answers the complete requests buffered; `None` when it is waiting for
    /// more bytes.
    fn answer_buffered(&mut self, server: &Server, date: &DateCache, tick: u64) -> Option<Step> {
        loop {
            match self.flush(tick) {
                Ok(true) => {}
                Ok(false) => return Some(Step::Keep),
                Err(_) => return Some(Step::Close),
            }
            match self.next_request(server, date) {
                Next::Answered => {}
                Next::Incomplete => return None,
                Next::HandOff => return Some(Step::HandOff),
            }
        }
    }

    /// Parses the next buffered request and prepares its response, or says why not.
    fn next_request(&mut self, server: &Server, date: &DateCache) -> Next {
        let data = &self.buf[self.start..self.end];
        if data.is_empty() {
            return Next::Incomplete;
        }
        let mut headers = [httparse::EMPTY_HEADER; HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        let (len, n) = match req.parse(data) {
            Ok(httparse::Status::Complete(len)) => match fast(&req, server.opts.max_body_bytes) {
                Some(n) => (len, n),
                None => return Next::HandOff,
            },
            Ok(httparse::Status::Partial) if data.len() <= self.max_head => {
                return Next::Incomplete
            }
            // Too long, malformed, or more headers than parsed here: hyper answers.
            _ => return Next::HandOff,
        };
        let arrived = Instant::now();
        self.start += len;
        self.head.clear();
        self.head
            .extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-length: ");
        self.head
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        self.head.extend_from_slice(b"\r\ndate: ");
        self.head.extend_from_slice(date.as_bytes());
        self.head.extend_from_slice(b"\r\n\r\n");
        self.head_sent = 0;
        self.body_sent = 0;
        if n <= INLINE_BODY {
            self.head.extend_from_slice(pattern_from(0, n));
            self.body_len = 0;
        } else {
            self.body_len = n;
        }
        server.counters.add_bytes_out(n);
        server.counters.request_done(
            &self.state.epoch,
            Protocol::default(),
            200,
            arrived.elapsed(),
        );
        Next::Answered
    }

    /// Writes what is left of the response; `Ok(true)` once nothing is left.
    fn flush(&mut self, tick: u64) -> io::Result<bool> {
        loop {
            let head = &self.head[self.head_sent..];
            let body = pattern_from(self.body_sent, self.body_len - self.body_sent);
            let written = match (head.is_empty(), body.is_empty()) {
                (true, true) => return Ok(true),
                (false, true) => self.stream.write(head),
                (true, false) => self.stream.write(body),
                (false, false) => self
                    .stream
                    .write_vectored(&[IoSlice::new(head), IoSlice::new(body)]),
            };
            match written {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.last_io = tick;
                    self.last_write = tick;
                    let from_head = n.min(head.len());
                    self.head_sent += from_head;
                    self.body_sent += (n - from_head) as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The connection for hyper: off this loop, with the bytes not answered.
    pub(super) fn into_handoff(mut self, registry: &Registry) -> Option<HandOff> {
        self.deregister(registry);
        Some(HandOff {
            prefix: self.buf[self.start..self.end].to_vec(),
            stream: std::net::TcpStream::from(self.stream),
            state: self.state,
            open: self.open,
        })
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
