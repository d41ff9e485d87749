//! The lean HTTP/1.1 path of the reference server: plain-port connections are
//! served by one thread with its own `mio` event loop, at close to the kernel's
//! cost, until a request needs anything more than a prepared response.
//!
//! Why: the reference server must be clearly cheaper than what is measured
//! against it. Through hyper, `benchgate serve` cost what nginx's `return 200`
//! costs per request (scripts/bench-engine.sh); a load generator as lean as wrk
//! was then as expensive as the server, and its throughput measured the server.
//!
//! What it serves itself ([`conn`]): `GET /bytes/{n}` over HTTP/1.1 keep-alive,
//! the same bytes hyper writes (status line, `content-length`, `date`, the
//! pattern body), the body written from the static pattern buffer, never
//! copied; pipelined requests in order. Everything else is **handed off**: the
//! socket leaves this loop with the bytes read so far and is served by hyper on
//! the tokio runtime for the rest of its life (HTTP/2 prior knowledge, request
//! bodies and their smuggling shapes, other endpoints, faults, control
//! endpoints, HTTP/1.0, `Connection` other than `keep-alive`, `Expect`,
//! `Upgrade`, malformed or oversized heads, which hyper answers with 400 /
//! 431). So every behaviour, limit and error stays hyper's; the lean path only
//! answers the requests whose answer is fixed.
//!
//! Counting is the same as hyper's path (`Counters::request_done`, bytes out,
//! connections opened and used, the service-time histogram from the parsed
//! head to the response handed to the socket), so the window's figures do not
//! depend on the path. Idle connections close as in [`super::conn`]: after
//! `idle_timeout` without a byte either way, or twice that without a byte
//! written (a trickled head), found by a scan every quarter timeout.
//!
//! Off when `added_delay` is set (every response must wait) or
//! `ServerOptions::lean_http1` is false (`benchgate serve --hyper-only`, for
//! measuring the difference).

mod conn;
mod date;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

use self::conn::{Conn, Scratch, Step};
use self::date::DateCache;
use super::conn::{ConnState, OpenGuard};
use super::{accept_error_is_the_connections, Server, ACCEPT_RETRY};
use crate::timer::wakeup::Wakeup;

const TIMER: Token = Token(usize::MAX - 2);
const LISTENER: Token = Token(usize::MAX - 1);
const WAKER: Token = Token(usize::MAX);
/// Readiness events taken per `epoll_wait`.
const EVENTS: usize = 1024;

/// A connection leaving the lean loop for hyper: its socket, the bytes read
/// and not answered, and its shared state (so it is not counted twice).
pub(crate) struct HandOff {
    pub(crate) stream: std::net::TcpStream,
    pub(crate) prefix: Vec<u8>,
    pub(crate) state: Arc<ConnState>,
    pub(crate) open: OpenGuard,
}

/// The running lean loops; [`Lean::stop`] ends them and closes their connections.
pub(crate) struct Lean {
    stop: Arc<AtomicBool>,
    loops: Vec<(Arc<Waker>, JoinHandle<()>)>,
}

impl Lean {
    /// Starts `threads` loops (at least one), each on its own thread and epoll
    /// set, all accepting from `listener`; handed-off connections are sent to
    /// `handoff`.
    pub(crate) fn start(
        server: Arc<Server>,
        listener: std::net::TcpListener,
        threads: usize,
        handoff: UnboundedSender<HandOff>,
    ) -> io::Result<Lean> {
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut lean = Lean {
            stop: stop.clone(),
            loops: Vec::new(),
        };
        for i in 0..threads.max(1) {
            let mut listener = TcpListener::from_std(listener.try_clone()?);
            let poll = Poll::new()?;
            poll.registry()
                .register(&mut listener, LISTENER, Interest::READABLE)?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
            let timer = Wakeup::new(poll.registry(), TIMER)?;
            let mut event_loop = Loop {
                timer,
                poll,
                listener,
                server: server.clone(),
                handoff: handoff.clone(),
                conns: Vec::new(),
                free: Vec::new(),
                date: DateCache::new(),
                scratch: Scratch::new(),
                stop: stop.clone(),
                accept_again: None,
            };
            let thread = std::thread::Builder::new()
                .name(format!("benchgate-serve-lean-{i}"))
                .spawn(move || event_loop.run())?;
            lean.loops.push((waker, thread));
        }
        Ok(lean)
    }

    /// Stops accepting, closes every connection still on the loops, and waits
    /// for their threads (one wake-up each).
    pub(crate) fn stop(mut self) {
        self.wake_all();
        for (_, thread) in self.loops.drain(..) {
            let _ = thread.join();
        }
    }

    fn wake_all(&self) {
        self.stop.store(true, Relaxed);
        for (waker, _) in &self.loops {
            let _ = waker.wake();
        }
    }
}

impl Drop for Lean {
    fn drop(&mut self) {
        self.wake_all();
    }
}

struct Loop {
    poll: Poll,
    listener: TcpListener,
    server: Arc<Server>,
    handoff: UnboundedSender<HandOff>,
    /// Connections by token; `None` slots are listed in `free`.
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    date: DateCache,
    /// The read buffer and the response being built, shared by the connections.
    scratch: Scratch,
    stop: Arc<AtomicBool>,
    /// When accepting failed for lack of resources: retry then.
    accept_again: Option<Instant>,
    /// The idle scan's tick and the accept retry, as a timerfd in the epoll
    /// set: `epoll_wait` then blocks with no timeout (no timer armed and
    /// cancelled per wait) and the loop reads no clock per wake-up.
    timer: Wakeup,
}

impl Loop {
    fn run(&mut self) {
        let mut events = Events::with_capacity(EVENTS);
        let quarter = (self.server.opts.idle_timeout / 4).max(Duration::from_millis(1));
        let mut tick: u64 = 0;
        let mut next_tick = Instant::now() + quarter;
        while !self.stop.load(Relaxed) {
            let due = self.accept_again.map_or(next_tick, |at| at.min(next_tick));
            if let Err(e) = self.timer.set(Some(due)) {
                crate::stderrln!("benchgate serve: lean HTTP/1.1 loop stopped: its timer: {e}");
                break;
            }
            if let Err(e) = self.poll.poll(&mut events, None) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // The epoll set itself failed: nothing can be served on it.
                crate::stderrln!("benchgate serve: lean HTTP/1.1 loop stopped: {e}");
                break;
            }
            self.date.refresh();
            let mut timer = false;
            for event in events.iter() {
                match event.token() {
                    WAKER => {}
                    TIMER => timer = true,
                    LISTENER => self.accept(tick),
                    Token(i) => self.ready(i, tick),
                }
            }
            if !timer {
                continue;
            }
            let now = Instant::now();
            self.timer.fired(now);
            if self.accept_again.is_some_and(|at| now >= at) {
                self.accept_again = None;
                self.accept(tick);
            }
            if now >= next_tick {
                tick += 1;
                next_tick = now + quarter;
                self.close_idle(tick);
            }
        }
        // Dropping the connections closes them (and their open counts).
        self.conns.clear();
    }

    fn accept(&mut self, tick: u64) {
        loop {
            let (stream, _) = match self.listener.accept() {
                Ok(s) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if accept_error_is_the_connections(&e) => continue,
                Err(_) => {
                    // Out of file descriptors and the like: the backlog keeps
                    // the connections; an edge-triggered listener would not
                    // wake again for them, so retry on a timer.
                    self.accept_again = Some(Instant::now() + ACCEPT_RETRY);
                    return;
                }
            };
            if self.server.full() {
                continue; // closed at once, not counted
            }
            let _ = stream.set_nodelay(true);
            let open = OpenGuard::new(&self.server);
            let index = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            let mut conn = Conn::new(stream, open, self.server.http1_head_limit(), tick);
            if conn.register(self.poll.registry(), Token(index)).is_err() {
                self.free.push(index);
                continue;
            }
            self.conns[index] = Some(conn);
        }
    }

    fn ready(&mut self, index: usize, tick: u64) {
        let Some(conn) = self.conns.get_mut(index).and_then(Option::as_mut) else {
            return;
        };
        match conn.ready(
            &self.server,
            &self.date,
            &mut self.scratch,
            tick,
            self.poll.registry(),
            Token(index),
        ) {
            Step::Keep => {}
            Step::Close => self.remove(index),
            Step::HandOff => {
                let conn = self.conns[index].take().expect("connection present");
                self.free.push(index);
                // A closed channel means the server is shutting down:
                // dropping the connection closes it.
                let _ = self.handoff.send(conn.into_handoff(self.poll.registry()));
            }
        }
    }

    fn remove(&mut self, index: usize) {
        if let Some(mut conn) = self.conns[index].take() {
            conn.deregister(self.poll.registry());
            self.free.push(index);
        }
    }

    fn close_idle(&mut self, tick: u64) {
        for index in 0..self.conns.len() {
            if self.conns[index].as_ref().is_some_and(|c| c.idle(tick)) {
                self.remove(index);
            }
        }
    }
}
