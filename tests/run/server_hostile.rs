//! The reference server against hostile request shapes (issue 17, point 9):
//! request smuggling (Content-Length with Transfer-Encoding, repeated
//! Content-Length), malformed framing and byte-trickle (slowloris) heads. Every
//! server binds 127.0.0.1:0; every test is bounded in time and stops by itself.

use crate::server::support;

use std::time::{Duration, Instant};

use benchgate::server::ServerOptions;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use support::*;

const BAD_REQUEST: &str = "HTTP/1.1 400 Bad Request\r\nconnection: close\r\n";

/// What the server answers to `request` on a fresh connection, read until it closes.
async fn answer(t: &TestServer, request: &str) -> String {
    let bytes = raw_exchange(t.http, request.as_bytes())
        .await
        .unwrap_or_else(|e| panic!("{request:?}: connection not closed in time: {e}"));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A server whose idle timeout is `idle`.
fn with_idle(idle: Duration) -> TestServer {
    TestServer::start(ServerOptions {
        tls: false,
        idle_timeout: idle,
        ..ServerOptions::default()
    })
}

#[tokio::test]
async fn content_length_with_transfer_encoding_is_read_chunked_and_the_connection_closed() {
    let t = TestServer::plain();
    bounded(async {
        // Both orders; a front end trusting Content-Length would see the GET as body.
        for head in [
            "content-length: 5\r\ntransfer-encoding: chunked",
            "transfer-encoding: chunked\r\ncontent-length: 40",
        ] {
            let smuggled = "GET /bytes/3 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
            let req =
                format!("POST /upload HTTP/1.1\r\nhost: x\r\n{head}\r\n\r\n0\r\n\r\n{smuggled}");
            let got = answer(&t, &req).await;
            assert!(
                got.starts_with("HTTP/1.1 200 OK\r\nconnection: close\r\n"),
                "{got}"
            );
            assert!(got.ends_with("\r\n\r\n0"), "an empty chunked upload: {got}");
            assert_eq!(
                got.matches("HTTP/1.1").count(),
                1,
                "the smuggled GET was served: {got}"
            );
        }
        assert_eq!(t.server.counters().requests, 2);
    })
    .await;
}

#[tokio::test]
async fn repeated_or_malformed_content_length_is_a_400() {
    let t = TestServer::plain();
    bounded(async {
        for cl in [
            "content-length: 3\r\ncontent-length: 4",
            "content-length: 3, 4",
            "content-length: +3",
            "content-length: -3",
            "content-length: 99999999999999999999999",
        ] {
            let got = answer(&t, &format!("POST /upload HTTP/1.1\r\nhost: x\r\n{cl}\r\n\r\nabcd")).await;
            assert!(got.starts_with(BAD_REQUEST), "{cl:?}: {got}");
        }
        // The same length twice is one length (RFC 9112, 6.3).
        let req = "POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ncontent-length: 3\r\nconnection: close\r\n\r\nabc";
        let got = answer(&t, req).await;
        assert!(got.starts_with("HTTP/1.1 200 OK") && got.ends_with("\r\n\r\n3"), "{got}");
    })
    .await;
}

#[tokio::test]
async fn malformed_transfer_encodings_and_header_shapes_are_a_400() {
    let t = TestServer::plain();
    bounded(async {
        for head in [
            "transfer-encoding: gzip",
            "transfer-encoding: chunked, identity",
            "transfer-encoding : chunked",
            " transfer-encoding: chunked",
            "x-a: 1\r\n folded: chunked",
        ] {
            let got = answer(&t, &format!("POST /upload HTTP/1.1\r\nhost: x\r\n{head}\r\n\r\n0\r\n\r\n")).await;
            assert!(got.starts_with(BAD_REQUEST), "{head:?}: {got}");
        }
        // A chunk size beyond u64 ends the connection without a response.
        let req = "POST /upload HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffffffff\r\nabc";
        assert_eq!(answer(&t, req).await, "");
        let start = Instant::now();
        while t.server.counters().open_connections > 0 {
            assert!(start.elapsed() < Duration::from_secs(2), "connection kept");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

/// Trickles a long request head one byte every `gap`; returns how long the
/// server took to close the connection, if it did within 4 s.
async fn trickle_cut_off(t: &TestServer, gap: Duration) -> Option<Duration> {
    let s = TcpStream::connect(t.http).await.unwrap();
    let (mut rx, mut tx) = s.into_split();
    let pad = "a".repeat(200); // a whole head would take longer than the test
    let head = format!("GET /bytes/3 HTTP/1.1\r\nhost: x\r\nx-pad: {pad}\r\n\r\n");
    let trickle = tokio::spawn(async move {
        for b in head.bytes() {
            if tx.write_all(&[b]).await.is_err() {
                return;
            }
            tokio::time::sleep(gap).await;
        }
    });
    let start = Instant::now();
    let mut buf = [0u8; 256];
    let read = tokio::time::timeout(Duration::from_secs(4), rx.read(&mut buf)).await;
    trickle.abort();
    matches!(read, Ok(Ok(0)) | Ok(Err(_))).then(|| start.elapsed())
}

#[tokio::test]
async fn a_trickled_request_head_is_cut_off_after_twice_the_idle_timeout() {
    let idle = Duration::from_millis(300);
    let t = with_idle(idle);
    bounded(async {
        // A byte in every idle tick (75 ms), and in most of them: never idle.
        for gap in [Duration::from_millis(30), Duration::from_millis(100)] {
            let waited = trickle_cut_off(&t, gap).await;
            let waited = waited.unwrap_or_else(|| panic!("a byte every {gap:?}: still open"));
            assert!(waited >= 2 * idle, "{gap:?}: {waited:?}");
            assert!(
                waited <= 2 * idle + Duration::from_secs(1),
                "{gap:?}: {waited:?}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn a_slow_head_within_the_bound_and_bare_newlines_are_served() {
    let t = with_idle(Duration::from_millis(300));
    bounded(async {
        let mut s = TcpStream::connect(t.http).await.unwrap();
        for part in ["GET /bytes/3 HT", "TP/1.1\r\nhost:", " x\r\n\r\n"] {
            s.write_all(part.as_bytes()).await.unwrap();
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        let got = read_response(&mut s, 3).await;
        assert!(
            got.starts_with("HTTP/1.1 200 OK") && got.ends_with("012"),
            "{got}"
        );
        // Bare LF line ends are read as CRLF; the connection stays open.
        s.write_all(b"GET /bytes/2 HTTP/1.1\nhost: x\n\n")
            .await
            .unwrap();
        let got = read_response(&mut s, 2).await;
        assert!(got.ends_with("01"), "{got}");
    })
    .await;
}

/// A valid request with random bytes inserted, replaced or removed.
fn mangled_request() -> impl Strategy<Value = Vec<u8>> {
    let base = prop::sample::select(vec![
        "GET /bytes/22 HTTP/1.1\r\nhost: x\r\n\r\n",
        "POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\n\r\nabcd",
        "POST /upload HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
        "GET /delay/1?x=%zz HTTP/1.0\r\n\r\n",
    ]);
    let byte = prop::sample::select(b"\r\n :\0\xff09-,;\t/%?".to_vec());
    let edit = (any::<usize>(), 0u8..3, byte);
    (base, prop::collection::vec(edit, 0..6)).prop_map(|(base, edits)| {
        let mut req = base.as_bytes().to_vec();
        for (at, op, b) in edits {
            let i = at % (req.len() + 1);
            match op {
                0 => req.insert(i, b),
                1 if i < req.len() => req[i] = b,
                _ if i < req.len() => {
                    req.remove(i);
                }
                _ => {}
            }
        }
        req
    })
}

/// Any mangled request gets a well-formed response or none, and the
/// connection closes soon after the client stops sending; the server survives.
#[test]
fn mangled_requests_get_a_response_or_a_close_and_the_server_survives() {
    let t = with_idle(Duration::from_millis(300));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut runner = TestRunner::new(Config::with_cases(48));
    let started = Instant::now();
    runner
        .run(&mangled_request(), |req| {
            let got = rt.block_on(async {
                let mut s = TcpStream::connect(t.http).await.unwrap();
                s.write_all(&req).await.unwrap();
                s.shutdown().await.unwrap();
                read_to_close(&mut s).await
            });
            let shown = String::from_utf8_lossy(&req).into_owned();
            let got = got.map_err(|e| TestCaseError::fail(format!("{shown:?}: {e}")))?;
            prop_assert!(got.is_empty() || got.starts_with(b"HTTP/1."), "{:?}", shown);
            Ok(())
        })
        .unwrap();
    rt.block_on(async {
        let got = answer(
            &t,
            "GET /bytes/2 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        )
        .await;
        assert!(got.ends_with("01"), "{got}");
    });
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

/// `server::serve_bytes`, the fuzz target `server_request`'s entry point,
/// answers as a connection to `run` would (pipelined requests in order, a
/// smuggling shape refused), and ends when the input does.
#[test]
fn serve_bytes_answers_like_a_connection() {
    let server = benchgate::server::Server::new(ServerOptions {
        tls: false,
        ..ServerOptions::default()
    })
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let serve = |input: &str| {
        let reply = rt.block_on(benchgate::server::serve_bytes(
            &server,
            input.as_bytes(),
            1 << 20,
            Duration::from_secs(5),
        ));
        String::from_utf8(reply).unwrap()
    };
    let started = Instant::now();
    let got = serve(
        "GET /bytes/3 HTTP/1.1\r\nhost: x\r\n\r\nGET /status/503 HTTP/1.1\r\nhost: x\r\n\r\n",
    );
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(
        got.contains("\r\n\r\n012HTTP/1.1 503 Service Unavailable\r\n"),
        "{got}"
    );
    let got = serve(
        "POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd",
    );
    assert!(got.starts_with(BAD_REQUEST), "{got}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}
