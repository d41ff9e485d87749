//! One accepted connection: its shared state and its IO wrapper.
//!
//! [`ConnIo`] wraps the TCP stream (under TLS when there is TLS) and adds two things
//! hyper does not do for both protocols:
//! - an **idle timer**: the connection closes once it has seen no byte in either
//!   direction and had no request in flight for `idle_timeout` (checked in quarter
//!   ticks, so it closes between 1x and 1.25x the timeout). It covers keep-alive
//!   idleness for HTTP/1.1 and HTTP/2, stalled TLS handshakes and clients that stop
//!   reading. No clock is read per IO call: activity only sets a flag.
//!   Bytes read keep a connection alive only so long: once it has written
//!   nothing and had no request in flight for twice `idle_timeout`, it closes
//!   too, so a request head trickled a byte at a time (slowloris) cannot hold it.
//! - the **reset fault**: once a handler asks for it, every IO call fails and the
//!   socket is closed with `SO_LINGER` 0, so the peer receives a TCP RST.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::Server;

/// The idle timeout is checked this many times per timeout period.
const TICKS_PER_TIMEOUT: u32 = 4;

/// State shared between a connection's IO and the requests it serves.
#[derive(Default)]
pub(crate) struct ConnState {
    /// Last window epoch in which this connection served a request.
    pub(crate) epoch: AtomicU64,
    /// Requests whose response head is not produced yet (long handlers only).
    in_flight: AtomicUsize,
    reset: AtomicBool,
    /// The connection's [`Link`], set once its TLS handshake is done.
    link: AtomicU8,
}

/// How a connection reached the server: plain TCP, or TLS and the ALPN
/// protocol its handshake negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub(crate) enum Link {
    #[default]
    Plain = 0,
    /// TLS, no ALPN protocol negotiated.
    Tls = 1,
    /// TLS, ALPN `http/1.1`.
    TlsHttp1 = 2,
    /// TLS, ALPN `h2`.
    TlsH2 = 3,
}

impl Link {
    /// The link of a TLS connection whose handshake negotiated `alpn`.
    pub(crate) fn tls(alpn: Option<&[u8]>) -> Link {
        match alpn {
            Some(b"h2") => Link::TlsH2,
            Some(b"http/1.1") => Link::TlsHttp1,
            _ => Link::Tls,
        }
    }
}

impl ConnState {
    pub(crate) fn set_link(&self, link: Link) {
        self.link.store(link as u8, Relaxed);
    }

    pub(crate) fn link(&self) -> Link {
        match self.link.load(Relaxed) {
            1 => Link::Tls,
            2 => Link::TlsHttp1,
            3 => Link::TlsH2,
            _ => Link::Plain,
        }
    }

    /// Asks the IO to reset the connection at its next use (and when dropped).
    pub(crate) fn request_reset(&self) {
        self.reset.store(true, Relaxed);
    }

    /// Marks a request in flight until the guard drops: the idle timer waits for it.
    pub(crate) fn busy(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Relaxed);
        InFlight(self.clone())
    }
}

pub(crate) struct InFlight(Arc<ConnState>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Relaxed);
    }
}

/// Keeps the open-connection count right however the connection task ends.
pub(crate) struct OpenGuard(Arc<Server>);

impl OpenGuard {
    pub(crate) fn new(server: &Arc<Server>) -> Self {
        server.counters.connection_opened();
        OpenGuard(server.clone())
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.counters.connection_closed();
    }
}

struct IdleTimer {
    tick: Duration,
    sleep: Pin<Box<Sleep>>,
    active: bool,
    /// A byte was written since the last tick.
    wrote: bool,
    quiet_ticks: u32,
    /// Ticks without a byte written or a request in flight.
    unanswered_ticks: u32,
    expired: bool,
}

impl IdleTimer {
    fn new(timeout: Duration) -> Self {
        let tick = (timeout / TICKS_PER_TIMEOUT).max(Duration::from_millis(1));
        IdleTimer {
            tick,
            sleep: Box::pin(tokio::time::sleep(tick)),
            active: false,
            wrote: false,
            quiet_ticks: 0,
            unanswered_ticks: 0,
            expired: false,
        }
    }

    /// Called when IO would block: Ready once the connection has been idle too long.
    fn poll_expired(&mut self, cx: &mut Context<'_>, state: &ConnState) -> Poll<()> {
        while !self.expired && self.sleep.as_mut().poll(cx).is_ready() {
            if self.wrote || state.in_flight.load(Relaxed) > 0 {
                self.quiet_ticks = 0;
                self.unanswered_ticks = 0;
            } else if self.active {
                // Only bytes read: a request arriving, or a trickle.
                self.quiet_ticks = 0;
                self.unanswered_ticks += 1;
                self.expired = self.unanswered_ticks >= 2 * TICKS_PER_TIMEOUT;
            } else {
                self.quiet_ticks += 1;
                self.unanswered_ticks += 1;
                self.expired = self.quiet_ticks >= TICKS_PER_TIMEOUT
                    || self.unanswered_ticks >= 2 * TICKS_PER_TIMEOUT;
            }
            self.active = false;
            self.wrote = false;
            let next = Instant::now() + self.tick;
            self.sleep.as_mut().reset(next);
        }
        if self.expired {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// The TCP stream of one connection, with the idle timer and the reset fault.
pub(crate) struct ConnIo {
    stream: TcpStream,
    state: Arc<ConnState>,
    idle: IdleTimer,
    /// Bytes read before hyper got the connection (the lean path's hand-off),
    /// read first.
    prefix: Vec<u8>,
    prefix_read: usize,
}

impl ConnIo {
    pub(crate) fn new(stream: TcpStream, state: Arc<ConnState>, idle_timeout: Duration) -> Self {
        Self::with_prefix(stream, state, idle_timeout, Vec::new())
    }

    /// A connection whose first bytes, `prefix`, were already read from `stream`.
    pub(crate) fn with_prefix(
        stream: TcpStream,
        state: Arc<ConnState>,
        idle_timeout: Duration,
        prefix: Vec<u8>,
    ) -> Self {
        ConnIo {
            stream,
            state,
            idle: IdleTimer::new(idle_timeout),
            prefix,
            prefix_read: 0,
        }
    }

    fn reset_error(&self) -> Option<io::Error> {
        if self.state.reset.load(Relaxed) {
            let _ = self.stream.set_zero_linger();
            Some(io::ErrorKind::ConnectionReset.into())
        } else {
            None
        }
    }

    fn after_write(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match r {
            Poll::Ready(Ok(n)) => {
                self.idle.active |= n > 0;
                self.idle.wrote |= n > 0;
                Poll::Ready(Ok(n))
            }
            Poll::Pending => match self.idle.poll_expired(cx, &self.state) {
                Poll::Ready(()) => Poll::Ready(Err(io::ErrorKind::TimedOut.into())),
                Poll::Pending => Poll::Pending,
            },
            other => other,
        }
    }
}

impl Drop for ConnIo {
    fn drop(&mut self) {
        if self.state.reset.load(Relaxed) {
            let _ = self.stream.set_zero_linger();
        }
    }
}

impl AsyncRead for ConnIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(e) = this.reset_error() {
            return Poll::Ready(Err(e));
        }
        if this.idle.expired {
            return Poll::Ready(Ok(())); // end of stream
        }
        if this.prefix_read < this.prefix.len() {
            let rest = &this.prefix[this.prefix_read..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            this.prefix_read += n;
            if this.prefix_read == this.prefix.len() {
                this.prefix = Vec::new();
                this.prefix_read = 0;
            }
            this.idle.active |= n > 0;
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(r) => {
                this.idle.active |= buf.filled().len() > before;
                Poll::Ready(r)
            }
            // Idle expiry reads as a clean end of stream: hyper closes quietly.
            Poll::Pending => this.idle.poll_expired(cx, &this.state).map(Ok),
        }
    }
}

impl AsyncWrite for ConnIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(e) = this.reset_error() {
            return Poll::Ready(Err(e));
        }
        let r = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.after_write(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(e) = this.reset_error() {
            return Poll::Ready(Err(e));
        }
        let r = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.after_write(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(e) = this.reset_error() {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut this.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn pair(idle: Duration) -> (ConnIo, TcpStream, Arc<ConnState>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (server, _) = l.accept().await.unwrap();
        let state = Arc::new(ConnState::default());
        (ConnIo::new(server, state.clone(), idle), client, state)
    }

    #[tokio::test]
    async fn idle_connection_reads_end_of_stream_after_the_timeout() {
        let (mut io, mut client, _) = pair(Duration::from_millis(200)).await;
        client.write_all(b"x").await.unwrap();
        let start = Instant::now();
        let mut buf = [0u8; 8];
        assert_eq!(io.read(&mut buf).await.unwrap(), 1);
        assert_eq!(
            io.read(&mut buf).await.unwrap(),
            0,
            "idle expiry reads as EOF"
        );
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited <= Duration::from_millis(600), "{waited:?}");
    }

    #[tokio::test]
    async fn request_in_flight_keeps_the_connection() {
        let (mut io, _client, state) = pair(Duration::from_millis(100)).await;
        let guard = state.busy();
        let mut buf = [0u8; 8];
        let r = tokio::time::timeout(Duration::from_millis(400), io.read(&mut buf)).await;
        assert!(r.is_err(), "still open while a request is in flight");
        drop(guard);
        let start = Instant::now();
        assert_eq!(io.read(&mut buf).await.unwrap(), 0);
        assert!(start.elapsed() <= Duration::from_millis(400));
    }

    #[test]
    fn link_round_trips_and_reads_alpn() {
        let state = ConnState::default();
        assert_eq!(state.link(), Link::Plain);
        for link in [Link::Tls, Link::TlsHttp1, Link::TlsH2, Link::Plain] {
            state.set_link(link);
            assert_eq!(state.link(), link);
        }
        assert_eq!(Link::tls(Some(b"h2")), Link::TlsH2);
        assert_eq!(Link::tls(Some(b"http/1.1")), Link::TlsHttp1);
        assert_eq!(Link::tls(None), Link::Tls);
    }

    #[tokio::test]
    async fn reset_request_fails_io_and_sends_rst() {
        let (mut io, mut client, state) = pair(Duration::from_secs(30)).await;
        state.request_reset();
        assert_eq!(
            io.write(b"x").await.unwrap_err().kind(),
            io::ErrorKind::ConnectionReset
        );
        drop(io);
        let mut buf = [0u8; 8];
        let err = client.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
    }
}
