//! A reference server on its own thread and runtime (as in production, where it is
//! its own process), plus small raw-socket helpers for what HTTP clients won't send.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use benchgate::server::{run, Server, ServerCounters, ServerOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// Upper bound for any single test.
pub const TEST_LIMIT: Duration = Duration::from_secs(30);

pub struct TestServer {
    pub server: Arc<Server>,
    pub http: SocketAddr,
    pub https: Option<SocketAddr>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<anyhow::Result<()>>>,
}

impl TestServer {
    pub fn start(opts: ServerOptions) -> Self {
        Self::start_with_threads(opts, 1)
    }

    /// Like `start`, on a multi-thread runtime when `threads > 1` (as `serve --threads`).
    pub fn start_with_threads(opts: ServerOptions, threads: usize) -> Self {
        let tls = opts.tls;
        let server = Server::new(opts).expect("server builds");
        let bind = || {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.set_nonblocking(true).unwrap();
            l
        };
        let (plain, secure) = (bind(), tls.then(bind));
        let http = plain.local_addr().unwrap();
        let https = secure.as_ref().map(|l| l.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let s = server.clone();
        let thread = std::thread::spawn(move || {
            let rt = if threads > 1 {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(threads)
                    .enable_all()
                    .build()?
            } else {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?
            };
            rt.block_on(async move {
                let plain = tokio::net::TcpListener::from_std(plain)?;
                let secure = secure.map(tokio::net::TcpListener::from_std).transpose()?;
                run(s, plain, secure, None, async {
                    let _ = stopped.await;
                })
                .await
            })
        });
        TestServer {
            server,
            http,
            https,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn plain() -> Self {
        Self::start(ServerOptions {
            tls: false,
            ..ServerOptions::default()
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.http, path)
    }

    pub fn https_url(&self, path: &str) -> String {
        format!("https://{}{}", self.https.expect("TLS listener"), path)
    }

    /// Stops the server; returns how long `run` took to return.
    pub fn stop(mut self) -> Duration {
        let started = std::time::Instant::now();
        let _ = self.stop.take().unwrap().send(());
        self.thread.take().unwrap().join().unwrap().unwrap();
        started.elapsed()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Runs a test body with a hard time limit.
pub async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(TEST_LIMIT, f)
        .await
        .expect("test exceeded its time limit")
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// A client that opens a new connection for every request.
pub fn client_without_keepalive() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

pub async fn control(c: &reqwest::Client, t: &TestServer, action: &str) -> ServerCounters {
    let req = match action {
        "counters" => c.get(t.url("/__benchgate/counters")),
        _ => c.post(t.url(&format!("/__benchgate/window/{action}"))),
    };
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap()
}

/// Sends raw bytes on a fresh connection and reads until the server closes it
/// (or 5 s pass). Returns what was read, or the read error.
pub async fn raw_exchange(addr: SocketAddr, request: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(request).await?;
    read_to_close(&mut s).await
}

pub async fn read_to_close(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    match read {
        Ok(Ok(_)) => Ok(out),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(std::io::ErrorKind::TimedOut.into()),
    }
}

/// Reads one HTTP/1.1 response head from a keep-alive connection (no body expected
/// beyond `body_len` bytes). Returns the head and body as text.
pub async fn read_response(s: &mut TcpStream, body_len: usize) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            if buf.len() >= end + 4 + body_len {
                return String::from_utf8_lossy(&buf).into_owned();
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut chunk))
            .await
            .expect("response in time")
            .expect("read");
        assert!(n > 0, "connection closed mid-response: {buf:?}");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// True if the pattern invariant holds: byte i is PATTERN[i % 64].
pub fn is_pattern(b: &[u8]) -> bool {
    let p = benchgate::server::PATTERN;
    b.iter().enumerate().all(|(i, &c)| c == p[i % p.len()])
}

/// The `std::io::ErrorKind` somewhere in an error's source chain, if any.
pub fn io_kind(e: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        cur = err.source();
    }
    None
}
