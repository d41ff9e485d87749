//! Misbehaving raw-TCP peers on 127.0.0.1: every failure lands in the right
//! error class, for every built-in driver, and none crashes a trial.

use std::sync::Arc;
use std::time::Duration;

use benchgate::client::reqwest_driver::BlockingClient;
use benchgate::client::{pool_limit, AsyncClient, RequestTemplate};
use benchgate::config::{ClientKind, ClientSpec, HttpVersion, Load, Method, Scenario, StopRule};
use benchgate::engine::{run_async, run_blocking, NoHooks, Outcome, TrialPlan};
use benchgate::measure::{ErrorClass, ErrorCounts};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Copy, Debug)]
enum Peer {
    /// Nothing listens on the port.
    Refused,
    /// Reads the request, then resets the connection (RST).
    Reset,
    /// Announces 100 body bytes, sends 5, closes.
    TruncatedBody,
    /// Answers with a line that is not an HTTP status line.
    GarbageStatus,
    /// Reads the request and never answers.
    Stall,
    /// Answers this status with an empty body.
    Status(u16),
}

/// Reads one request head (up to the blank line) and any small body.
async fn read_head(s: &mut TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut seen = Vec::new();
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

async fn serve(peer: Peer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    if let Peer::Refused = peer {
        drop(listener);
        return format!("http://{addr}");
    }
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                read_head(&mut s).await;
                match peer {
                    Peer::Refused => {}
                    Peer::Reset => {
                        let std = s.into_std().unwrap();
                        socket_reset(std);
                    }
                    Peer::TruncatedBody => {
                        let _ = s
                            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
                            .await;
                        let _ = s.shutdown().await;
                    }
                    Peer::GarbageStatus => {
                        let _ = s.write_all(b"HELLO THERE FRIEND\r\n\r\n").await;
                        let _ = s.shutdown().await;
                    }
                    Peer::Stall => {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                    }
                    Peer::Status(code) => {
                        let resp = format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n");
                        let _ = s.write_all(resp.as_bytes()).await;
                        // Keep the connection open for the next request.
                        loop {
                            read_head(&mut s).await;
                            if s.write_all(resp.as_bytes()).await.is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

/// Closes with SO_LINGER 0, which sends RST instead of FIN.
fn socket_reset(s: std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt on a socket we own, with a correctly sized struct.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(s);
}

fn scenario(body: u64) -> Scenario {
    Scenario {
        name: "s".into(),
        method: if body > 0 { Method::Put } else { Method::Get },
        path: "/x".into(),
        body,
        load: Load::Closed { concurrency: 1 },
        warmup: Duration::ZERO,
        stop: StopRule::Requests(4),
        timeout: Duration::from_millis(300),
        clients: vec![],
    }
}

fn client(kind: ClientKind) -> ClientSpec {
    ClientSpec {
        name: "c".into(),
        kind,
        pool: None,
        http: HttpVersion::Http1,
        tls: false,
        inject_cpu_ns: 0,
        inject_tail: None,
    }
}

async fn trial(kind: ClientKind, base: &str, body: u64) -> Outcome {
    let s = scenario(body);
    let spec = client(kind.clone());
    let request = RequestTemplate::new(&s, base);
    let plan = TrialPlan::of(&s);
    if kind == ClientKind::H1Lean {
        // Runs the trial on its own thread, as in its driver process.
        return tokio::task::spawn_blocking(move || {
            benchgate::engine::lean::run(&spec, &request, plan, &mut NoHooks).unwrap()
        })
        .await
        .unwrap();
    }
    if kind == ClientKind::ReqwestBlocking {
        let limit = pool_limit(&spec, 1);
        return tokio::task::spawn_blocking(move || {
            let c = Arc::new(BlockingClient::new(&spec, request, limit, plan.timeout).unwrap());
            run_blocking(c, plan, &mut NoHooks)
        })
        .await
        .unwrap();
    }
    let c = Arc::new(AsyncClient::build(&spec, request, 1).unwrap());
    run_async(c, plan, &mut NoHooks).await
}

fn only(class: ErrorClass, n: u64) -> ErrorCounts {
    let mut e = ErrorCounts::default();
    for _ in 0..n {
        e.add(class);
    }
    e
}

async fn check(peer: Peer, class: ErrorClass) {
    check_with_body(peer, class, 0).await
}

async fn check_with_body(peer: Peer, class: ErrorClass, body: u64) {
    let base = serve(peer).await;
    for kind in [
        ClientKind::Hyper,
        ClientKind::Reqwest,
        ClientKind::ReqwestBlocking,
        ClientKind::H1Lean,
    ] {
        let out = trial(kind.clone(), &base, body).await;
        assert_eq!(out.recorder.counts.ok, 0, "{peer:?} with {kind:?}");
        assert_eq!(
            out.recorder.counts.errors,
            only(class, 4),
            "{peer:?} with {kind:?}"
        );
        assert!(out.recorder.latency.is_empty(), "errors carry no latency");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connection_is_connect() {
    check(Peer::Refused, ErrorClass::Connect).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_is_read() {
    check(Peer::Reset, ErrorClass::Read).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_body_is_read() {
    check(Peer::TruncatedBody, ErrorClass::Read).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_status_line_is_read() {
    check(Peer::GarbageStatus, ErrorClass::Read).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stall_is_timeout() {
    check(Peer::Stall, ErrorClass::Timeout).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statuses_are_4xx_and_5xx() {
    check(Peer::Status(404), ErrorClass::Status4xx).await;
    check(Peer::Status(503), ErrorClass::Status5xx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_while_sending_a_large_body_is_write() {
    check_with_body(Peer::Reset, ErrorClass::Write, 8 << 20).await;
}
