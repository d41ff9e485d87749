//! Idle connections, the connection cap and shutdown.

use std::time::{Duration, Instant};

use benchgate::server::ServerOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::support::*;

const GET_22: &[u8] = b"GET /bytes/22 HTTP/1.1\r\nhost: x\r\n\r\n";

fn opts(f: impl FnOnce(&mut ServerOptions)) -> ServerOptions {
    let mut o = ServerOptions {
        tls: false,
        ..ServerOptions::default()
    };
    f(&mut o);
    o
}

/// Waits until the server has closed `s` (EOF or error); returns how long that took.
async fn closed_within(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 64];
    match tokio::time::timeout(limit, s.read(&mut buf)).await {
        Ok(Ok(0)) | Ok(Err(_)) => Some(start.elapsed()),
        Ok(Ok(n)) => panic!("unexpected {n} bytes"),
        Err(_) => None,
    }
}

#[tokio::test]
async fn idle_keepalive_connections_are_closed() {
    let t = TestServer::start(opts(|o| o.idle_timeout = Duration::from_millis(300)));
    bounded(async {
        // Served, then idle.
        let mut s = TcpStream::connect(t.http).await.unwrap();
        s.write_all(GET_22).await.unwrap();
        read_response(&mut s, 22).await;
        let waited = closed_within(&mut s, Duration::from_secs(3))
            .await
            .expect("closed");
        assert!(waited >= Duration::from_millis(250), "{waited:?}");

        // Connected, never sent a byte.
        let mut silent = TcpStream::connect(t.http).await.unwrap();
        assert!(closed_within(&mut silent, Duration::from_secs(3))
            .await
            .is_some());

        // A slow request is not idleness.
        let mut slow = TcpStream::connect(t.http).await.unwrap();
        slow.write_all(b"GET /delay/800 HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let resp = read_response(&mut slow, 2).await;
        assert!(
            resp.starts_with("HTTP/1.1 200") && resp.ends_with("ok"),
            "{resp}"
        );
    })
    .await;
}

#[tokio::test]
async fn idle_h2_connections_are_closed() {
    let t = TestServer::start(opts(|o| o.idle_timeout = Duration::from_millis(300)));
    bounded(async {
        let h2 = reqwest::Client::builder()
            .http2_prior_knowledge()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap();
        h2.get(t.url("/bytes/22"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(t.server.counters().open_connections, 1);
        let start = Instant::now();
        while t.server.counters().open_connections > 0 {
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "h2 connection never closed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The client reconnects transparently.
        h2.get(t.url("/bytes/22"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test]
async fn connections_beyond_the_cap_are_closed_at_once() {
    let t = TestServer::start(opts(|o| o.max_connections = 2));
    bounded(async {
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut s = TcpStream::connect(t.http).await.unwrap();
            s.write_all(GET_22).await.unwrap();
            read_response(&mut s, 22).await;
            held.push(s);
        }
        let mut third = TcpStream::connect(t.http).await.unwrap();
        let _ = third.write_all(GET_22).await;
        let waited = closed_within(&mut third, Duration::from_secs(2)).await;
        assert!(waited.is_some(), "third connection was served");
        assert_eq!(t.server.counters().total_connections_accepted, 2);

        // Once one closes, there is room again.
        drop(held.pop());
        let start = Instant::now();
        loop {
            let mut s = TcpStream::connect(t.http).await.unwrap();
            let _ = s.write_all(GET_22).await;
            let mut buf = [0u8; 12];
            if s.read_exact(&mut buf).await.is_ok() && &buf == b"HTTP/1.1 200" {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "no room after a close"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn shutdown_waits_at_most_a_second_for_busy_connections() {
    let t = TestServer::plain();
    bounded(async {
        // An idle keep-alive connection and a request that would take 10 s.
        let mut idle = TcpStream::connect(t.http).await.unwrap();
        idle.write_all(GET_22).await.unwrap();
        read_response(&mut idle, 22).await;
        let mut busy = TcpStream::connect(t.http).await.unwrap();
        busy.write_all(b"GET /delay/10000 HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;

        let took = tokio::task::spawn_blocking(move || t.stop()).await.unwrap();
        assert!(took < Duration::from_millis(1800), "{took:?}");
        assert!(
            took >= Duration::from_millis(900),
            "waited for the busy one: {took:?}"
        );
        assert!(closed_within(&mut idle, Duration::from_secs(1))
            .await
            .is_some());
        assert!(closed_within(&mut busy, Duration::from_secs(1))
            .await
            .is_some());
    })
    .await;
}
