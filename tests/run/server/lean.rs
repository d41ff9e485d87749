//! The lean HTTP/1.1 loop of the plain port: it answers `GET /bytes/{n}` with
//! the bytes hyper writes, counts like hyper's path, and hands every other
//! request, with its connection and the bytes already read, to hyper.

use std::time::Duration;

use benchgate::server::ServerOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::support::*;

fn server(lean_threads: usize) -> TestServer {
    TestServer::start(ServerOptions {
        tls: false,
        lean_threads,
        ..ServerOptions::default()
    })
}

/// The response with its `date` header's value blanked (it may differ by a second).
fn without_date(response: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(response).into_owned();
    let mut out = String::new();
    for (i, part) in text.split("\r\ndate: ").enumerate() {
        if i == 0 {
            out.push_str(part);
        } else {
            let rest = part.split_once("\r\n").map_or("", |(_, r)| r);
            out.push_str("\r\ndate: -\r\n");
            out.push_str(rest);
        }
    }
    out.into_bytes()
}

/// Reads until the peer closes or sends nothing for 300 ms.
async fn read_until_quiet(s: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(300), s.read(&mut chunk)).await
    {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..n]);
    }
    got
}

/// What one connection receives for `request` (until closed or quiet).
async fn answer(addr: std::net::SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    read_until_quiet(&mut s).await
}

/// Reads `len` bytes, each read within 5 s.
async fn read_len(s: &mut TcpStream, len: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut chunk = vec![0u8; 256 * 1024];
    while got.len() < len {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut chunk))
            .await
            .expect("the answer keeps coming")
            .unwrap();
        assert!(n > 0, "closed after {} of {len} bytes", got.len());
        got.extend_from_slice(&chunk[..n]);
    }
    got
}

/// The length of the head of a `GET /bytes/{n}` answer (its `date` is 29 bytes).
fn head_len(n: usize) -> usize {
    b"HTTP/1.1 200 OK\r\ncontent-length: \r\ndate: Wed, 02 Dec 2026 01:37:44 GMT\r\n\r\n".len()
        + n.to_string().len()
}

/// Sends `request` on one keep-alive connection and reads `expect_len` bytes.
async fn exchange(t: &TestServer, request: &[u8], expect_len: usize) -> Vec<u8> {
    let mut s = TcpStream::connect(t.http).await.unwrap();
    s.write_all(request).await.unwrap();
    read_len(&mut s, expect_len).await
}

#[tokio::test]
async fn bytes_answers_are_the_bytes_hyper_writes() {
    bounded(async {
        let (lean, hyper) = (server(1), server(0));
        for n in [0usize, 1, 22, 65_536, 65_537, 300_000] {
            let req = format!("GET /bytes/{n} HTTP/1.1\r\nHost: x\r\n\r\n");
            let head_len = head_len(n);
            let a = exchange(&lean, req.as_bytes(), head_len + n).await;
            let b = exchange(&hyper, req.as_bytes(), head_len + n).await;
            assert_eq!(a.len(), head_len + n, "n = {n}");
            assert_eq!(without_date(&a), without_date(&b), "n = {n}");
            assert!(is_pattern(&a[head_len..]), "n = {n}");
        }
    })
    .await;
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order_across_the_hand_off() {
    bounded(async {
        let t = server(1);
        // Two answered on the lean loop, an upload that goes to hyper with the
        // bytes after it (its body and one more request), all in one write.
        let req = b"GET /bytes/3 HTTP/1.1\r\nHost: x\r\n\r\n\
                    GET /bytes/2 HTTP/1.1\r\nHost: x\r\n\r\n\
                    PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello\
                    GET /bytes/4 HTTP/1.1\r\nHost: x\r\n\r\n";
        let mut s = TcpStream::connect(t.http).await.unwrap();
        s.write_all(req).await.unwrap();
        let text = String::from_utf8(read_until_quiet(&mut s).await).unwrap();
        let bodies: Vec<&str> = text
            .split("HTTP/1.1 200 OK\r\n")
            .skip(1)
            .map(|r| r.split_once("\r\n\r\n").unwrap().1)
            .collect();
        assert_eq!(bodies, ["012", "01", "5", "0123"], "{text}");
        // The connection stays open and keeps working after the hand-off.
        s.write_all(b"GET /bytes/1 HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let more = read_response(&mut s, 1).await;
        assert!(
            more.starts_with("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n"),
            "{more}"
        );
        let c = t.server.counters();
        assert_eq!(c.requests, 5);
        assert_eq!(
            c.connections_used, 1,
            "one connection, counted once across the hand-off"
        );
        assert_eq!((c.bytes_out, c.bytes_in), (3 + 2 + 1 + 4 + 1, 5));
        assert_eq!(c.service_time.count, 5);
    })
    .await;
}

#[tokio::test]
async fn a_head_split_over_many_writes_is_answered_once() {
    bounded(async {
        let t = server(1);
        let mut s = TcpStream::connect(t.http).await.unwrap();
        for piece in [
            &b"GET /by"[..],
            b"tes/22 HTT",
            b"P/1.1\r\nHo",
            b"st: x\r\n",
            b"\r\n",
        ] {
            s.write_all(piece).await.unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let r = read_response(&mut s, 22).await;
        assert!(
            r.starts_with("HTTP/1.1 200 OK\r\ncontent-length: 22\r\n"),
            "{r}"
        );
        assert!(r.ends_with("0123456789abcdefghijkl"), "{r}");
        assert_eq!(t.server.counters().requests, 1);
    })
    .await;
}

#[tokio::test]
async fn a_reader_slower_than_the_socket_gets_the_whole_body() {
    bounded(async {
        let t = server(1);
        let n = 8 << 20;
        let mut s = TcpStream::connect(t.http).await.unwrap();
        s.write_all(format!("GET /bytes/{n} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        // Let the socket buffers fill, so the loop waits for the writable edge.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let head = head_len(n);
        let got = read_len(&mut s, head + n).await;
        assert!(
            got[..head].ends_with(b"\r\n\r\n"),
            "{:?}",
            String::from_utf8_lossy(&got[..head])
        );
        assert_eq!(got.len(), head + n);
        assert!(is_pattern(&got[head..]));
        assert_eq!(t.server.counters().bytes_out, n as u64);
    })
    .await;
}

#[tokio::test]
async fn requests_the_lean_loop_does_not_answer_get_hypers_answers() {
    bounded(async {
        let (lean, hyper) = (server(1), server(0));
        for req in [
            &b"GET /bytes/x HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n",
            b"HEAD /bytes/5 HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /bytes/5 HTTP/1.0\r\n\r\n",
            b"GET /bytes/5 HTTP/1.1\r\nConnection: close\r\n\r\n",
            b"GET /bytes/99999999999 HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /bytes/5 HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            b"GARBAGE\r\n\r\n",
        ] {
            let (a, b) = (answer(lean.http, req).await, answer(hyper.http, req).await);
            assert!(!a.is_empty(), "{}", String::from_utf8_lossy(req));
            assert_eq!(
                without_date(&a),
                without_date(&b),
                "{}",
                String::from_utf8_lossy(req)
            );
        }
    })
    .await;
}
