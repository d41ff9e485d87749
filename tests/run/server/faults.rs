//! Fault endpoints, malformed input and limits; the server must survive all of it.

use std::io::ErrorKind;
use std::time::{Duration, Instant};

use benchgate::server::ServerOptions;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::support::*;

async fn still_serves(t: &TestServer) {
    let body = client()
        .get(t.url("/bytes/22"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(body.len(), 22);
}

#[tokio::test]
async fn close_mid_body_gives_an_incomplete_body() {
    let t = TestServer::plain();
    bounded(async {
        let resp = client()
            .get(t.url("/fault/close-mid-body?size=10000"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.content_length(), Some(10_000));
        let err = resp.bytes().await.unwrap_err();
        assert!(err.is_body() || err.is_decode(), "{err:?}");

        // On the wire: the head, exactly half the body, then the connection closes.
        let raw = raw_exchange(
            t.http,
            b"GET /fault/close-mid-body?size=1000 HTTP/1.1\r\nhost: x\r\n\r\n",
        )
        .await
        .unwrap();
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let head = String::from_utf8_lossy(&raw[..end]).to_lowercase();
        assert!(head.contains("content-length: 1000"), "{head}");
        assert_eq!(raw.len() - end, 500);
        assert!(is_pattern(&raw[end..]));
        still_serves(&t).await;
    })
    .await;
}

#[tokio::test]
async fn reset_gives_a_connection_reset() {
    let t = TestServer::plain();
    bounded(async {
        let err = client()
            .get(t.url("/fault/reset"))
            .send()
            .await
            .unwrap_err();
        assert!(!err.is_timeout(), "{err:?}");
        let raw = raw_exchange(t.http, b"GET /fault/reset HTTP/1.1\r\nhost: x\r\n\r\n").await;
        assert_eq!(raw.unwrap_err().kind(), ErrorKind::ConnectionReset);
        still_serves(&t).await;
    })
    .await;
}

#[test]
fn reset_is_reported_as_reset_by_a_blocking_client() {
    let t = TestServer::plain();
    let c = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let err = c.get(t.url("/fault/reset")).send().unwrap_err();
    assert_eq!(io_kind(&err), Some(ErrorKind::ConnectionReset), "{err:?}");
}

#[tokio::test]
async fn stall_times_out_a_client_then_closes() {
    let t = TestServer::plain();
    bounded(async {
        let impatient = reqwest::Client::builder()
            .timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        let start = Instant::now();
        let err = impatient
            .get(t.url("/fault/stall?ms=5000"))
            .send()
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err:?}");
        assert!(start.elapsed() < Duration::from_secs(2));

        let start = Instant::now();
        let raw = raw_exchange(
            t.http,
            b"GET /fault/stall?ms=200 HTTP/1.1\r\nhost: x\r\n\r\n",
        )
        .await
        .unwrap();
        assert!(raw.is_empty(), "nothing is sent: {raw:?}");
        assert!(start.elapsed() >= Duration::from_millis(200));
        still_serves(&t).await;
    })
    .await;
}

#[tokio::test]
async fn malformed_and_oversized_requests_get_4xx() {
    let t = TestServer::plain();
    bounded(async {
        let raw = raw_exchange(t.http, b"THIS IS NOT HTTP\r\n\r\n")
            .await
            .unwrap();
        assert!(
            raw.starts_with(b"HTTP/1.1 400"),
            "{}",
            String::from_utf8_lossy(&raw)
        );

        let raw = raw_exchange(t.http, b"GET /bytes/1 HTTP/1.1\r\nbad header line\r\n\r\n")
            .await
            .unwrap();
        assert!(
            raw.starts_with(b"HTTP/1.1 400"),
            "{}",
            String::from_utf8_lossy(&raw)
        );

        let big = format!(
            "GET /bytes/1 HTTP/1.1\r\nhost: x\r\nx-big: {}\r\n\r\n",
            "a".repeat(32 * 1024)
        );
        let raw = raw_exchange(t.http, big.as_bytes()).await.unwrap();
        assert!(
            raw.starts_with(b"HTTP/1.1 431"),
            "{}",
            String::from_utf8_lossy(&raw)
        );

        // Over HTTP/2 too.
        let h2 = reqwest::Client::builder()
            .http2_prior_knowledge()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let resp = h2
            .get(t.url("/bytes/1"))
            .header("x-big", "a".repeat(32 * 1024))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 431);
        still_serves(&t).await;
    })
    .await;
}

#[tokio::test]
async fn oversized_upload_gets_413() {
    let t = TestServer::start(ServerOptions {
        tls: false,
        max_body_bytes: 1024,
        ..ServerOptions::default()
    });
    bounded(async {
        // Declared too large: answered before reading the body.
        let raw = raw_exchange(
            t.http,
            b"PUT /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 4096\r\n\r\n",
        )
        .await
        .unwrap();
        assert!(
            raw.starts_with(b"HTTP/1.1 413"),
            "{}",
            String::from_utf8_lossy(&raw)
        );

        // Chunked: found out while streaming.
        let mut s = TcpStream::connect(t.http).await.unwrap();
        s.write_all(b"PUT /upload HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
            .await
            .unwrap();
        s.write_all(b"400\r\n").await.unwrap();
        s.write_all(&[b'z'; 0x400]).await.unwrap();
        s.write_all(b"\r\n400\r\n").await.unwrap();
        s.write_all(&[b'z'; 0x400]).await.unwrap();
        s.write_all(b"\r\n").await.unwrap();
        let head = read_response(&mut s, 0).await;
        assert!(head.starts_with("HTTP/1.1 413"), "{head}");

        let ok = client()
            .put(t.url("/upload"))
            .body(vec![0u8; 1024])
            .send()
            .await
            .unwrap();
        assert_eq!(ok.text().await.unwrap(), "1024");
        let too_big = client().get(t.url("/bytes/1025")).send().await.unwrap();
        assert_eq!(too_big.status(), 400);
    })
    .await;
}
