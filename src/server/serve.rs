//! `benchgate serve`: runtime, listeners, the address lines on stdout, and the
//! shutdown triggers (SIGTERM, SIGINT, and stdin reaching end of file so that a
//! parent that dies takes the server with it).

use std::io::{Read as _, Write as _};
use std::net::SocketAddr;

use anyhow::Context as _;
use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;

use super::{run, Server, ServerOptions};

/// Validated arguments of `benchgate serve`.
#[derive(Debug, Clone)]
pub struct ServeArgs {
    /// Plain HTTP (HTTP/1.1 and h2c) address.
    pub listen: SocketAddr,
    /// HTTPS address; default: the IP of `listen`, port 0 (any free port).
    pub tls_listen: Option<SocketAddr>,
    /// Serve plain HTTP only.
    pub no_tls: bool,
    /// Runtime worker threads: 1 (the default) is a current-thread runtime; as
    /// many lean HTTP/1.1 loops.
    pub threads: usize,
    /// Stop when stdin reaches end of file.
    pub exit_on_stdin_eof: bool,
    /// Testing knob: every response waits this long (see [`ServerOptions::added_delay`]).
    pub added_delay: std::time::Duration,
    /// Serve plain HTTP/1.1 through hyper only (no lean loop), for measuring
    /// what the lean loop saves (see [`ServerOptions::lean_threads`]).
    pub hyper_only: bool,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls_listen: None,
            no_tls: false,
            threads: 1,
            exit_on_stdin_eof: true,
            added_delay: std::time::Duration::ZERO,
            hyper_only: false,
        }
    }
}

/// Runs the reference server until SIGTERM/SIGINT (or stdin EOF when asked).
/// Prints `http://IP:PORT`, with TLS `https://IP:PORT`, then
/// `control: http://IP:PORT` (the uncounted control port), then flushes stdout.
pub fn serve_main(args: ServeArgs) -> anyhow::Result<()> {
    // Thousands of client connections need as many file descriptors.
    crate::measure::limits::raise_nofile_limit();
    let mut rt = if args.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(args.threads);
        b
    };
    let rt = rt
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(async {
        let server = Server::new(ServerOptions {
            tls: !args.no_tls,
            added_delay: args.added_delay,
            lean_threads: if args.hyper_only {
                0
            } else {
                args.threads.max(1)
            },
            ..ServerOptions::default()
        })?;
        let listener =
            listen(args.listen).with_context(|| format!("binding --listen {}", args.listen))?;
        let tls_listener = if args.no_tls {
            None
        } else {
            let addr = args
                .tls_listen
                .unwrap_or(SocketAddr::new(args.listen.ip(), 0));
            let l = listen(addr).with_context(|| format!("binding --tls-listen {addr}"))?;
            Some(l)
        };
        let control = TcpListener::bind(SocketAddr::new(args.listen.ip(), 0))
            .await
            .context("binding the control port")?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "http://{}", listener.local_addr()?)?;
        if let Some(l) = &tls_listener {
            writeln!(out, "https://{}", l.local_addr()?)?;
        }
        writeln!(out, "control: http://{}", control.local_addr()?)?;
        out.flush()?;
        drop(out);
        let shutdown = shutdown_signal(args.exit_on_stdin_eof)?;
        run(server, listener, tls_listener, Some(control), shutdown).await
    })?;
    // Don't wait for the stdin reader thread: it may be blocked in read(2).
    rt.shutdown_background();
    Ok(())
}

/// Pending connections a listener queues: the most the kernel allows
/// (`net.core.somaxconn` caps it, 4096 by default). Tokio's 1024 overflows
/// when thousands of connections open at once, and a dropped SYN is retried
/// only after 1 s, then 3 s, 7 s.
const LISTEN_BACKLOG: u32 = 65_535;

/// A listener on `addr` with [`LISTEN_BACKLOG`] (SO_REUSEADDR, as tokio's `bind`).
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

fn shutdown_signal(stdin_eof: bool) -> anyhow::Result<impl std::future::Future<Output = ()>> {
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let eof = stdin_eof.then(watch_stdin_eof);
    Ok(async move {
        let eof = async {
            match eof {
                Some(rx) => {
                    let _ = rx.await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            () = eof => {}
        }
    })
}

/// Resolves when stdin reaches end of file (or fails). A detached thread does the
/// blocking reads, so the process can exit while it is still blocked.
fn watch_stdin_eof() -> oneshot::Receiver<()> {
    let (tx, rx) = oneshot::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 1024];
        while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
        let _ = tx.send(());
    });
    rx
}
