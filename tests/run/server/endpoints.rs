//! Every endpoint's status, body and length, over HTTP/1.1, h2c and HTTPS.

use std::time::{Duration, Instant};

use benchgate::config::limits::MAX_BODY_BYTES;
use benchgate::server::ServerOptions;
use reqwest::Version;

use super::support::*;

#[tokio::test]
async fn bytes_returns_exact_pattern_bodies() {
    let t = TestServer::plain();
    let c = client();
    bounded(async {
        for n in [0usize, 1, 22, 20_000, 65_536, 1_000_003] {
            let resp = c.get(t.url(&format!("/bytes/{n}"))).send().await.unwrap();
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.content_length(), Some(n as u64), "n = {n}");
            let body = resp.bytes().await.unwrap();
            assert_eq!(body.len(), n);
            assert!(is_pattern(&body), "n = {n}");
        }
        let status = |p: &'static str| {
            let c = c.clone();
            let url = t.url(p);
            async move { c.get(url).send().await.unwrap().status().as_u16() }
        };
        assert_eq!(status("/bytes/abc").await, 400);
        let over = format!("/bytes/{}", MAX_BODY_BYTES + 1);
        let resp = c.get(t.url(&over)).send().await.unwrap();
        assert_eq!(resp.status(), 400, "over max_body_bytes");
        let post = c.post(t.url("/bytes/1")).send().await.unwrap();
        assert_eq!(post.status(), 405);
        assert_eq!(post.headers()["allow"], "GET");
        assert_eq!(status("/nowhere").await, 404);
    })
    .await;
}

#[tokio::test]
async fn added_delay_holds_every_response_back() {
    // `benchgate serve --added-delay`: the knob for validating server gates.
    let t = TestServer::start(ServerOptions {
        tls: false,
        added_delay: Duration::from_millis(100),
        ..ServerOptions::default()
    });
    let c = client();
    bounded(async {
        for (path, status) in [("/bytes/22", 200), ("/status/503", 503)] {
            let start = Instant::now();
            let resp = c.get(t.url(path)).send().await.unwrap();
            assert_eq!(resp.status(), status);
            let _ = resp.bytes().await.unwrap();
            assert!(start.elapsed() >= Duration::from_millis(100), "{path}");
        }
    })
    .await;
    assert_eq!(t.server.counters().total_requests, 2, "counted as usual");
}

#[tokio::test]
async fn upload_counts_the_body() {
    let t = TestServer::plain();
    let c = client();
    bounded(async {
        let body = vec![7u8; 1 << 20];
        let resp = c.put(t.url("/upload")).body(body).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.text().await.unwrap(), "1048576");
        let resp = c.post(t.url("/upload")).body("hello").send().await.unwrap();
        assert_eq!(resp.text().await.unwrap(), "5");
        // Chunked (no content-length) bodies stream too.
        let chunks = futures_util::stream::iter((0..10).map(|_| {
            Ok::<_, std::io::Error>(hyper::body::Frame::data(bytes::Bytes::from(vec![
                1u8;
                10_000
            ])))
        }));
        let resp = c
            .put(t.url("/upload"))
            .body(reqwest::Body::wrap(http_body_util::StreamBody::new(chunks)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.text().await.unwrap(), "100000");
        let get = c.get(t.url("/upload")).send().await.unwrap();
        assert_eq!(get.status(), 405);
    })
    .await;
}

/// Issue 53: a scenario's `body` may be as large as the config allows, and
/// the server counts it as it streams (it holds no upload); 64 MiB and a
/// chunk, once over the server's old limit, is answered. One request.
#[tokio::test]
async fn an_upload_over_64_mib_is_counted_up_to_the_configs_limit() {
    static CHUNK: [u8; 64 * 1024] = [b'u'; 64 * 1024];
    let t = TestServer::plain();
    let chunks = 1024 + 1;
    let body = futures_util::stream::iter((0..chunks).map(|_| {
        Ok::<_, std::io::Error>(hyper::body::Frame::data(bytes::Bytes::from_static(&CHUNK)))
    }));
    bounded(async {
        let resp = client()
            .put(t.url("/upload"))
            .body(reqwest::Body::wrap(http_body_util::StreamBody::new(body)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let n = (chunks * CHUNK.len()).to_string();
        assert_eq!(resp.text().await.unwrap(), n);
    })
    .await;
}

#[tokio::test]
async fn delay_sha1_and_status() {
    let t = TestServer::plain();
    let c = client();
    bounded(async {
        let start = Instant::now();
        let resp = c.get(t.url("/delay/150")).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.text().await.unwrap(), "ok");
        assert!(start.elapsed() >= Duration::from_millis(150));

        let a = c
            .get(t.url("/sha1"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let b = c
            .get(t.url("/sha1?size=100000"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for h in [&a, &b] {
            assert_eq!(h.len(), 40, "{h}");
            assert!(h
                .bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        }
        assert_ne!(a, b);
        let empty = c.get(t.url("/sha1?size=0")).send().await.unwrap();
        assert_eq!(
            empty.text().await.unwrap(),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        for (code, want) in [
            (200, 200),
            (204, 204),
            (404, 404),
            (503, 503),
            (150, 400),
            (42, 400),
        ] {
            let resp = c
                .get(t.url(&format!("/status/{code}")))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), want, "/status/{code}");
        }
    })
    .await;
}

#[tokio::test]
async fn h2c_prior_knowledge_on_the_plain_port() {
    let t = TestServer::plain();
    let c = reqwest::Client::builder()
        .http2_prior_knowledge()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    bounded(async {
        let resp = c.get(t.url("/bytes/200000")).send().await.unwrap();
        assert_eq!(resp.version(), Version::HTTP_2);
        assert_eq!(resp.content_length(), Some(200_000));
        let body = resp.bytes().await.unwrap();
        assert!(body.len() == 200_000 && is_pattern(&body));
        let up = c
            .put(t.url("/upload"))
            .body(vec![0u8; 300_000])
            .send()
            .await
            .unwrap();
        assert_eq!(up.text().await.unwrap(), "300000");
        // Many concurrent streams on one connection.
        let all =
            futures_util::future::join_all((0..20).map(|_| c.get(t.url("/bytes/22")).send())).await;
        assert!(all.into_iter().all(|r| r.unwrap().status() == 200));
        let s = t.server.counters();
        assert_eq!(s.connections_accepted, 1);
        assert_eq!(s.requests, 22);
    })
    .await;
}

#[tokio::test]
async fn https_with_alpn_h2_and_http11() {
    let t = TestServer::start(ServerOptions::default());
    bounded(async {
        let h2 = reqwest::Client::builder()
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let resp = h2.get(t.https_url("/bytes/22")).send().await.unwrap();
        assert_eq!(resp.version(), Version::HTTP_2, "ALPN picks h2");
        assert_eq!(resp.bytes().await.unwrap().len(), 22);

        let h1 = reqwest::Client::builder()
            .danger_accept_invalid_certs(true)
            .http1_only()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let resp = h1.get(t.https_url("/bytes/100000")).send().await.unwrap();
        assert_eq!(resp.version(), Version::HTTP_11);
        let body = resp.bytes().await.unwrap();
        assert!(body.len() == 100_000 && is_pattern(&body));

        // The certificate is valid for "localhost" for a client that trusts it.
        let cert = reqwest::Certificate::from_pem(t.server.cert_pem().unwrap().as_bytes()).unwrap();
        let trusting = reqwest::Client::builder()
            .add_root_certificate(cert)
            .resolve("localhost", t.https.unwrap())
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let port = t.https.unwrap().port();
        let resp = trusting
            .get(format!("https://localhost:{port}/status/204"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 204);
    })
    .await;
}

#[test]
fn blocking_client_keeps_its_connection() {
    let t = TestServer::plain();
    let c = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    for _ in 0..50 {
        let body = c.get(t.url("/bytes/22")).send().unwrap().bytes().unwrap();
        assert_eq!(&body[..], b"0123456789abcdefghijkl");
    }
    let s = t.server.counters();
    assert_eq!((s.requests, s.connections_accepted), (50, 1));
    assert_eq!(s.requests_per_connection, 50.0);
}

#[tokio::test]
async fn run_refuses_a_tls_listener_without_tls() {
    let server = benchgate::server::Server::new(ServerOptions {
        tls: false,
        ..ServerOptions::default()
    })
    .unwrap();
    let l1 = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let l2 = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let r = benchgate::server::run(server, l1, Some(l2), None, std::future::pending()).await;
    assert!(r.is_err());
}
