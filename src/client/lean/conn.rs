//! One keep-alive connection as a state machine, driven by readiness events.
//!
//! Sockets are registered once, edge-triggered, for reading and writing, so a
//! request costs no `epoll_ctl`: the request is written at once (it fits the
//! socket buffer unless its body is large; then the rest waits for a writable
//! edge), and the response is read when a readable edge arrives. A read that
//! returns less than the space offered drained the socket, so the connection
//! waits for the next edge instead of reading again for `EAGAIN` (data that
//! arrives later raises a new edge), unless the edge said the peer had closed:
//! a short read may have consumed the FIN silently, so it reads on to the end
//! of stream.
//!
//! Reads land in one buffer per connection that is only ever parsed in place;
//! it grows (to [`MAX_READ_BUFFER`]) when a read fills it, so large bodies take
//! few reads.

use std::io::{self, Read as _, Write as _};
use std::net::IpAddr;
use tokio::time::Instant;

use mio::event::Event;
use mio::net::TcpStream;
use mio::{Interest, Registry, Token};

use super::request::WireRequest;
use super::response::ResponseParser;
use crate::client::{check_status, classify_chain, source, Exchange};
use crate::measure::ErrorClass;

/// A connection's first read buffer (wrk's is 8 KiB too).
const READ_BUFFER: usize = 8 * 1024;
/// Largest read buffer a connection grows to.
const MAX_READ_BUFFER: usize = 256 * 1024;

/// How one request ended: its exchange or its error class.
pub type Completion = Result<Exchange, ErrorClass>;

/// The times of the request a connection carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// When the schedule meant it to start.
    pub intended: Instant,
    /// When it was handed to the connection.
    pub sent: Instant,
    /// When it times out.
    pub deadline: Instant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No socket: the next request connects first.
    Closed,
    Connecting,
    /// Connected, no request.
    Idle,
    /// Part of the request is written; the rest waits for a writable edge.
    Writing,
    /// The request is written; the response is being read.
    Reading,
}

/// A connection and the request it carries.
pub struct Conn {
    token: Token,
    stream: Option<TcpStream>,
    phase: Phase,
    /// Read buffer; `buf[start..end]` arrived and is not consumed yet.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Request bytes written so far.
    written: usize,
    /// A readable edge arrived that reading has not drained yet.
    readable: bool,
    /// An edge said the peer closed (or reset): read to the end of stream.
    peer_closed: bool,
    parser: ResponseParser,
    /// The source address this connection binds, if any
    /// ([`crate::client::source`]).
    source: Option<IpAddr>,
    /// The request in flight, if any.
    pub flight: Option<InFlight>,
}

impl Conn {
    /// A closed connection that will identify its events by `token` and
    /// connect from `source` (the kernel's choice if `None`).
    pub fn new(token: Token, request: &WireRequest, source: Option<IpAddr>) -> Conn {
        Conn {
            token,
            stream: None,
            phase: Phase::Closed,
            buf: Vec::new(),
            start: 0,
            end: 0,
            written: 0,
            readable: false,
            peer_closed: false,
            parser: ResponseParser::new(request.head),
            source,
            flight: None,
        }
    }

    /// Whether a request is in flight.
    pub fn busy(&self) -> bool {
        self.flight.is_some()
    }

    /// Starts a request (connecting first when closed). Returns its
    /// completion if it already failed.
    pub fn send(
        &mut self,
        flight: InFlight,
        request: &WireRequest,
        registry: &Registry,
    ) -> Option<Completion> {
        self.flight = Some(flight);
        self.written = 0;
        if self.stream.is_none() {
            return self.connect(request, registry);
        }
        self.write(request)
    }

    /// Handles a readiness event for this connection.
    pub fn on_event(&mut self, event: &Event, request: &WireRequest) -> Option<Completion> {
        if event.is_read_closed() || event.is_error() {
            self.peer_closed = true;
        }
        if event.is_readable() || self.peer_closed {
            self.readable = true;
        }
        let writable = event.is_writable() || event.is_write_closed() || event.is_error();
        match self.phase {
            Phase::Closed => None,
            Phase::Connecting => self.connected(request),
            Phase::Idle => {
                if self.readable {
                    self.idle_read();
                }
                None
            }
            Phase::Writing if writable => self.write(request),
            Phase::Writing => None,
            Phase::Reading if self.readable => self.read(request),
            Phase::Reading => None,
        }
    }

    /// Drops the socket (the peer sees it close); the request in flight, if
    /// any, is forgotten.
    pub fn close(&mut self) {
        self.stream = None;
        self.phase = Phase::Closed;
        self.start = 0;
        self.end = 0;
        self.readable = false;
        self.peer_closed = false;
        self.parser.reset();
    }

    fn connect(&mut self, request: &WireRequest, registry: &Registry) -> Option<Completion> {
        let opened = match self.source {
            Some(from) => source::connect_from(from, request.addr).map(TcpStream::from_std),
            None => TcpStream::connect(request.addr),
        };
        let mut stream = match opened {
            Ok(s) => s,
            Err(_) => return self.fail(ErrorClass::Connect),
        };
        let registered = registry.register(
            &mut stream,
            self.token,
            Interest::READABLE | Interest::WRITABLE,
        );
        if registered.is_err() {
            return self.fail(ErrorClass::Connect);
        }
        // Request and response are one write each: nothing to coalesce.
        let _ = stream.set_nodelay(true);
        if self.buf.is_empty() {
            self.buf = vec![0; READ_BUFFER];
        }
        self.stream = Some(stream);
        self.phase = Phase::Connecting;
        None
    }

    /// A connecting socket became ready: connected, failed, or not yet.
    fn connected(&mut self, request: &WireRequest) -> Option<Completion> {
        let stream = self.stream.as_ref()?;
        if !matches!(stream.take_error(), Ok(None)) {
            return self.fail(ErrorClass::Connect);
        }
        match stream.peer_addr() {
            Ok(_) => self.write(request),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => None,
            Err(_) => self.fail(ErrorClass::Connect),
        }
    }

    fn write(&mut self, request: &WireRequest) -> Option<Completion> {
        let stream = self.stream.as_mut()?;
        while self.written < request.bytes.len() {
            match stream.write(&request.bytes[self.written..]) {
                Ok(0) => return self.fail(ErrorClass::Write),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.phase = Phase::Writing;
                    return None;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(self.io_class(&e, request)),
            }
        }
        self.phase = Phase::Reading;
        // An edge that came while writing (an early response) is not repeated.
        if self.readable {
            return self.read(request);
        }
        None
    }

    fn read(&mut self, request: &WireRequest) -> Option<Completion> {
        loop {
            if self.end == self.buf.len() && !self.make_room() {
                return self.fail(ErrorClass::Read);
            }
            let space = self.buf.len() - self.end;
            let stream = self.stream.as_mut()?;
            match stream.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.readable = false;
                    return match self.parser.eof() {
                        Ok(()) => self.complete(request),
                        Err(_) => {
                            let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
                            self.fail(self.io_class(&eof, request))
                        }
                    };
                }
                Ok(n) => {
                    self.end += n;
                    if n < space && !self.peer_closed {
                        self.readable = false;
                    }
                    match self.parser.feed(&self.buf[self.start..self.end]) {
                        Ok(used) => self.start += used,
                        Err(_) => return self.fail(ErrorClass::Read),
                    }
                    if self.parser.is_done() {
                        return self.complete(request);
                    }
                    if self.start == self.end {
                        (self.start, self.end) = (0, 0);
                    }
                    if !self.readable {
                        return None;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    return None;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(self.io_class(&e, request)),
            }
        }
    }

    /// Makes room at the end of a full buffer: moves unconsumed bytes to the
    /// front, or grows it. False when it is as large as it may get.
    fn make_room(&mut self) -> bool {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        } else if self.buf.len() < MAX_READ_BUFFER {
            self.buf.resize(self.buf.len() * 2, 0);
        } else {
            return false;
        }
        true
    }

    /// A readable edge on a connection with no request: the server closed it
    /// (keep-alive timeout), or sent bytes nobody asked for. Either way it is
    /// not used again; the next request connects anew.
    fn idle_read(&mut self) {
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        let mut probe = [0u8; 64];
        match stream.read(&mut probe) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable = false,
            _ => self.close(),
        }
    }

    /// The response is complete: the connection stays open for the next
    /// request unless the response, stray bytes after it or the peer's close
    /// say otherwise.
    fn complete(&mut self, request: &WireRequest) -> Option<Completion> {
        let exchange = Exchange {
            status: self.parser.status(),
            bytes_received: self.parser.body_bytes(),
            bytes_sent: request.body_len,
        };
        if self.parser.must_close() || self.start < self.end || self.peer_closed {
            self.close();
        } else {
            self.phase = Phase::Idle;
            self.parser.reset();
            (self.start, self.end) = (0, 0);
        }
        Some(check_status(exchange))
    }

    /// The request failed: the connection is dropped (like a pooled client
    /// drops a connection whose request failed).
    fn fail(&mut self, class: ErrorClass) -> Option<Completion> {
        self.close();
        Some(Err(class))
    }

    /// The class of an I/O failure, decided as for the other drivers: a reset
    /// before any response head, while a request body was on its way, is a
    /// write failure.
    fn io_class(&self, e: &io::Error, request: &WireRequest) -> ErrorClass {
        let sending_body = request.body_len > 0 && !self.parser.head_done();
        classify_chain(e, sending_body)
    }
}
