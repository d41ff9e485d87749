//! The reference server (`benchgate serve`): a deterministic HTTP server whose
//! behaviour clients are measured against.
//!
//! - Plain HTTP on one port: HTTP/1.1 (keep-alive) and HTTP/2 with prior knowledge
//!   (h2c), told apart by the connection preface (`hyper_util` auto builder).
//!   Its connections start on the lean HTTP/1.1 loop (`lean`), which answers
//!   `GET /bytes/{n}` itself and hands every other request, with its
//!   connection, to hyper.
//! - HTTPS on a second port: ALPN `h2` and `http/1.1`, self-signed certificate
//!   generated at start (`tls`).
//! - Routing in `routes`, the per-connection service in `service`, handlers in
//!   `handlers`, faults in `faults`, counters and the measurement
//!   window in `counters`, connection IO (idle timeout, reset fault) in `conn`.
//!
//! Limits: request head size (HTTP/1.1: hyper's read buffer, `max(max_header_bytes,
//! 8 KiB)`, over it -> 431; HTTP/2: `max_header_list_size`), upload size (413),
//! idle connections (closed after `idle_timeout` without traffic or request in
//! flight, and after twice that without a byte written or request in flight, so
//! a trickled request head cannot hold one), concurrent connections (beyond `max_connections`, accepted sockets are
//! closed at once and not counted). Malformed requests get hyper's 400.
//! A panicking handler answers 500; a panicking connection task only loses that
//! connection.

mod body;
mod conn;
mod counters;
mod faults;
mod handlers;
mod lean;
mod routes;
mod serve;
mod service;
mod shards;
mod tls;

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

pub use body::PATTERN;
pub use counters::{ServerCounters, ServiceTime};
pub use faults::Fault;
pub use serve::{serve_main, ServeArgs};
pub use tls::CERT_NAMES;

use conn::{ConnIo, ConnState, Link, OpenGuard};
use service::Handler;

/// How long in-flight connections may finish after shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Limits and features of a [`Server`].
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Largest request head (HTTP/1.1: at least 8 KiB, hyper's minimum buffer).
    pub max_header_bytes: usize,
    /// Largest `/upload` body and `/bytes/{n}` size. Default: the largest
    /// `body` a config may give ([`MAX_BODY_BYTES`](crate::config::limits::MAX_BODY_BYTES));
    /// an upload is counted as it streams, never held.
    pub max_body_bytes: u64,
    /// A connection without traffic or request in flight for this long is closed;
    /// one that only receives (a trickled head), after twice this long.
    pub idle_timeout: Duration,
    /// Connections beyond this many open ones are closed on accept. Default:
    /// the most a trial opens ([`MAX_WORKERS`](crate::config::validate::MAX_WORKERS))
    /// and a tenth more, for pools that connect ahead of need.
    pub max_connections: usize,
    /// Generate a certificate so that [`run`] can serve HTTPS.
    pub tls: bool,
    /// Testing knob for validating server gates: every response (not the
    /// control endpoints) waits this long before it is handed back, on the
    /// precise timer. Zero: off.
    pub added_delay: Duration,
    /// Threads of the lean HTTP/1.1 loop that serves plain-port connections
    /// until a request needs hyper (`lean`). 0: every connection is hyper's
    /// (`benchgate serve --hyper-only`); also off while `added_delay` is set.
    pub lean_threads: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_header_bytes: 16 * 1024,
            max_body_bytes: crate::config::limits::MAX_BODY_BYTES,
            idle_timeout: Duration::from_secs(30),
            max_connections: crate::config::validate::MAX_WORKERS as usize * 11 / 10,
            tls: true,
            added_delay: Duration::ZERO,
            lean_threads: 1,
        }
    }
}

/// State shared by every connection: options, counters, TLS configuration.
pub struct Server {
    opts: ServerOptions,
    counters: counters::Counters,
    tls: Option<tls::Tls>,
}

impl Server {
    /// Builds the shared state; generates the self-signed certificate when `opts.tls`.
    pub fn new(opts: ServerOptions) -> anyhow::Result<Arc<Server>> {
        anyhow::ensure!(
            !opts.idle_timeout.is_zero(),
            "server idle_timeout must be above zero"
        );
        let tls = if opts.tls {
            Some(tls::Tls::self_signed()?)
        } else {
            None
        };
        Ok(Arc::new(Server {
            opts,
            counters: counters::Counters::new(),
            tls,
        }))
    }

    /// Current window and cumulative totals (what `GET /__benchgate/counters` answers).
    pub fn counters(&self) -> ServerCounters {
        self.counters.snapshot()
    }

    /// The PEM certificate HTTPS is served with, for clients that want to trust it.
    pub fn cert_pem(&self) -> Option<&str> {
        self.tls.as_ref().map(|t| t.cert_pem.as_str())
    }

    /// The largest HTTP/1.1 request head read (hyper's buffer, at least 8 KiB):
    /// longer ones are answered 431, by hyper on both paths.
    fn http1_head_limit(&self) -> usize {
        self.opts.max_header_bytes.max(8192)
    }

    /// True when `max_connections` are open: a newly accepted socket is
    /// closed at once, not counted (on both paths).
    fn full(&self) -> bool {
        self.counters.open_connections() >= self.opts.max_connections as u64
    }

    fn http(&self) -> auto::Builder<TokioExecutor> {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .keep_alive(true)
            .max_buf_size(self.http1_head_limit())
            // The idle timer in `conn` covers this without a timer per request.
            .header_read_timeout(None);
        builder
            .http2()
            .max_header_list_size(u32::try_from(self.opts.max_header_bytes).unwrap_or(u32::MAX));
        builder
    }
}

/// Which listener a connection came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Port {
    Plain,
    Tls,
    /// Out-of-band control port: its connections are never counted, so a
    /// harness reading the counters does not disturb them.
    Control,
}

/// Serves plain HTTP (HTTP/1.1 and h2c prior knowledge) on `listener` and, if given,
/// HTTPS on `tls_listener` and the control listener: plain HTTP whose connections
/// are not counted (requests to control endpoints never are, on any port); until
/// `shutdown` resolves, then stops accepting and lets open connections finish for
/// at most one second.
pub async fn run(
    server: Arc<Server>,
    listener: TcpListener,
    tls_listener: Option<TcpListener>,
    control_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let acceptor = match (&tls_listener, &server.tls) {
        (Some(_), None) => {
            anyhow::bail!("a TLS listener was given but the server was built with tls: false")
        }
        (Some(_), Some(tls)) => Some(tokio_rustls::TlsAcceptor::from(tls.config.clone())),
        (None, _) => None,
    };
    let builder = Arc::new(server.http());
    let graceful = GracefulShutdown::new();
    let mut tasks = JoinSet::new();
    // The plain port's connections go to the lean loop, and come back here
    // when a request needs hyper.
    let (handoff_tx, mut handoff_rx) = tokio::sync::mpsc::unbounded_channel::<lean::HandOff>();
    let (listener, lean) = if server.opts.lean_threads > 0 && server.opts.added_delay.is_zero() {
        let lean = lean::Lean::start(
            server.clone(),
            listener.into_std()?,
            server.opts.lean_threads,
            handoff_tx,
        )?;
        (None, Some(lean))
    } else {
        (Some(listener), None)
    };
    tokio::pin!(shutdown);
    loop {
        let (stream, port) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            Some(h) = handoff_rx.recv(), if lean.is_some() => {
                let Ok(stream) = TcpStream::from_std(h.stream) else { continue };
                let (idle, handler) = (server.opts.idle_timeout, Handler::new(server.clone(), h.state.clone()));
                let (builder, watcher, open) = (builder.clone(), graceful.watcher(), h.open);
                tasks.spawn(async move {
                    let _open = open;
                    // The request came from the prefix, not from this socket's
                    // first event: until the reactor has seen the socket, a
                    // write would wait a turn, and `/fault/close-mid-body`
                    // fails its body after one wake-up, before the flush.
                    let _ = stream.writable().await;
                    let io = ConnIo::with_prefix(stream, h.state, idle, h.prefix);
                    let conn = builder.serve_connection(TokioIo::new(io), handler);
                    let _ = watcher.watch(conn).await;
                });
                continue;
            }
            accepted = accept_opt(listener.as_ref()) => (accepted, Port::Plain),
            accepted = accept_opt(tls_listener.as_ref()) => (accepted, Port::Tls),
            accepted = accept_opt(control_listener.as_ref()) => (accepted, Port::Control),
            // Reap finished connection tasks (a panic there only ends its connection).
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
        };
        let stream = match stream {
            Ok((stream, _)) => stream,
            Err(e) => {
                accept_backoff(&e).await;
                continue;
            }
        };
        let open = if port == Port::Control {
            None
        } else if server.full() {
            drop(stream);
            continue;
        } else {
            Some(OpenGuard::new(&server))
        };
        let _ = stream.set_nodelay(true);
        let state = Arc::new(ConnState::default());
        let io = ConnIo::new(stream, state.clone(), server.opts.idle_timeout);
        let handler = Handler::new(server.clone(), state.clone());
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let acceptor = if port == Port::Tls {
            acceptor.clone()
        } else {
            None
        };
        tasks.spawn(async move {
            let _open = open;
            match acceptor {
                None => {
                    let conn = builder.serve_connection(TokioIo::new(io), handler);
                    let _ = watcher.watch(conn).await;
                }
                Some(acceptor) => {
                    // The idle timer in `ConnIo` bounds a stalled handshake.
                    let Ok(tls_stream) = acceptor.accept(io).await else {
                        return;
                    };
                    state.set_link(Link::tls(tls_stream.get_ref().1.alpn_protocol()));
                    let conn = builder.serve_connection(TokioIo::new(tls_stream), handler);
                    let _ = watcher.watch(conn).await;
                }
            }
        });
    }
    drop(listener);
    if let Some(lean) = lean {
        lean.stop();
    }
    drop(handoff_rx);
    drop(tls_listener);
    drop(control_listener);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    tasks.shutdown().await;
    Ok(())
}

/// Fuzzing entry point (`fuzz/fuzz_targets/server_request.rs`), not an API:
/// serves `input` as everything one plain-HTTP connection sends, then end of
/// stream, with the hyper settings and the handler [`run`] uses (request head
/// parsing, HTTP/1.1 or h2c by the preface, routing, uploads). No socket and
/// no idle timer (`conn`). The input ends with a half-close, which `run`'s
/// connections take as the client leaving; here HTTP/1.1 half-closes are
/// allowed, so every request gets answered as if the client waited for the
/// responses before closing. Returns what the server wrote back, at most
/// `max_reply` bytes, within `deadline` (`/delay` and `/fault/stall` wait on
/// the real clock).
#[doc(hidden)]
pub async fn serve_bytes(
    server: &Arc<Server>,
    input: &[u8],
    max_reply: usize,
    deadline: Duration,
) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut client, server_side) = tokio::io::duplex(64 * 1024);
    let handler = Handler::new(server.clone(), Arc::new(ConnState::default()));
    let mut builder = server.http();
    builder.http1().half_close(true);
    let conn = builder.serve_connection(TokioIo::new(server_side), handler);
    let mut reply = Vec::new();
    let exchange = async {
        let (rx, mut tx) = tokio::io::split(&mut client);
        let send = async {
            let _ = tx.write_all(input).await;
            let _ = tx.shutdown().await;
        };
        let mut rx = rx.take(max_reply as u64);
        let _ = tokio::join!(send, rx.read_to_end(&mut reply));
    };
    let _ = tokio::time::timeout(deadline, async { tokio::join!(conn, exchange) }).await;
    reply
}

async fn accept_opt(
    listener: Option<&TcpListener>,
) -> io::Result<(TcpStream, std::net::SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

/// After an accept error that is not one connection's own (out of file
/// descriptors and similar), accepting is retried this much later, not spun on.
const ACCEPT_RETRY: Duration = Duration::from_millis(10);

/// Whether an accept error concerns only the connection being accepted (then
/// the next accept goes on at once), for both paths.
fn accept_error_is_the_connections(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

/// Out of file descriptors and similar: wait a little instead of spinning.
async fn accept_backoff(e: &io::Error) {
    if !accept_error_is_the_connections(e) {
        tokio::time::sleep(ACCEPT_RETRY).await;
    }
}
