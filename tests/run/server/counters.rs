//! The measurement window as a client sees it through the control endpoints.

use benchgate::server::ServerOptions;

use super::support::*;

#[tokio::test]
async fn window_counts_exactly_what_the_client_sent() {
    let t = TestServer::plain();
    let ctl = client();
    let worker = client();
    bounded(async {
        // Warm-up traffic before the window: must not show up in it.
        worker.get(t.url("/bytes/1000")).send().await.unwrap();
        let started = control(&ctl, &t, "start").await;
        assert!(started.window_open);
        assert_eq!((started.requests, started.bytes_out), (0, 0));

        for _ in 0..10 {
            let b = worker
                .get(t.url("/bytes/22"))
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            assert_eq!(b.len(), 22);
        }
        for _ in 0..2 {
            let r = worker
                .put(t.url("/upload"))
                .body(vec![1u8; 1000])
                .send()
                .await
                .unwrap();
            assert_eq!(r.text().await.unwrap(), "1000");
        }
        worker.get(t.url("/status/404")).send().await.unwrap();
        worker.get(t.url("/status/503")).send().await.unwrap();
        worker.get(t.url("/nowhere")).send().await.unwrap(); // 404, 10 bytes of text
                                                             // Control endpoints are never counted.
        for _ in 0..3 {
            control(&ctl, &t, "counters").await;
        }

        let s = control(&ctl, &t, "stop").await;
        assert!(!s.window_open);
        assert_eq!(s.requests, 15);
        assert_eq!(s.bytes_in, 2000);
        assert_eq!(s.bytes_out, 220 + 2 * 4 + "not found\n".len() as u64);
        assert_eq!((s.status_4xx, s.status_5xx), (2, 1));
        assert_eq!(
            s.connections_accepted, 0,
            "both connections predate the window"
        );
        assert_eq!(
            s.connections_used, 1,
            "only the worker's connection served requests"
        );
        assert_eq!(s.requests_per_connection, 15.0);
        assert_eq!(s.peak_open_connections, 2);
        assert_eq!(s.total_requests, 16);
        assert!(s.window_secs > 0.0);

        let hist = s.decode_hist().unwrap();
        assert_eq!(hist.len(), 15);
        assert_eq!(s.service_time.count, 15);

        // A stopped window does not move; cumulative totals do.
        worker.get(t.url("/bytes/22")).send().await.unwrap();
        let later = control(&ctl, &t, "counters").await;
        assert_eq!(later.requests, 15);
        assert_eq!(later.service_time_hist, s.service_time_hist);
        assert_eq!(later.total_requests, 17);
    })
    .await;
}

#[tokio::test]
async fn keepalive_versus_a_connection_per_request() {
    let t = TestServer::plain();
    let ctl = client();
    bounded(async {
        control(&ctl, &t, "start").await;
        let pooled = client();
        for _ in 0..8 {
            pooled
                .get(t.url("/bytes/22"))
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
        }
        let s = control(&ctl, &t, "stop").await;
        assert_eq!(
            (s.requests, s.connections_accepted, s.connections_used),
            (8, 1, 1)
        );
        assert_eq!(s.requests_per_connection, 8.0);

        control(&ctl, &t, "start").await;
        let fresh = client_without_keepalive();
        for _ in 0..5 {
            fresh
                .get(t.url("/bytes/22"))
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
        }
        let s = control(&ctl, &t, "stop").await;
        assert_eq!(
            (s.requests, s.connections_accepted, s.connections_used),
            (5, 5, 5)
        );
        assert_eq!(s.requests_per_connection, 1.0);
        assert_eq!(s.total_connections_accepted, 7); // control + pooled + 5 fresh
    })
    .await;
}

#[tokio::test]
async fn delay_shows_in_the_service_time() {
    let t = TestServer::plain();
    let ctl = client();
    bounded(async {
        control(&ctl, &t, "start").await;
        let c = client();
        c.get(t.url("/delay/100"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        c.get(t.url("/bytes/22"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let s = control(&ctl, &t, "stop").await;
        let st = &s.service_time;
        assert_eq!(st.count, 2);
        assert!(st.max >= 100_000 && st.max < 150_000, "{st:?}");
        assert!(st.p50 < 10_000, "the /bytes request is fast: {st:?}");
        let hist = s.decode_hist().unwrap();
        assert_eq!(hist.len(), 2);
        assert!(hist.value_at_quantile(1.0) >= 100_000);
    })
    .await;
}

#[tokio::test]
async fn window_control_endpoints_reject_wrong_methods() {
    let t = TestServer::plain();
    let c = client();
    bounded(async {
        let get_start = c
            .get(t.url("/__benchgate/window/start"))
            .send()
            .await
            .unwrap();
        assert_eq!(get_start.status(), 405);
        let post_counters = c.post(t.url("/__benchgate/counters")).send().await.unwrap();
        assert_eq!(post_counters.status(), 405);
    })
    .await;
}

#[tokio::test]
async fn multi_thread_runtime_counts_every_request() {
    let t = TestServer::start_with_threads(
        ServerOptions {
            tls: false,
            ..Default::default()
        },
        3,
    );
    bounded(async {
        let workers = (0..4).map(|_| {
            let c = client();
            let url = t.url("/bytes/100");
            async move {
                for _ in 0..50 {
                    let b = c.get(&url).send().await.unwrap().bytes().await.unwrap();
                    assert_eq!(b.len(), 100);
                }
            }
        });
        futures_util::future::join_all(workers).await;
        let s = t.server.counters();
        assert_eq!(s.requests, 200);
        assert_eq!(s.bytes_out, 20_000);
        assert_eq!((s.connections_accepted, s.connections_used), (4, 4));
        assert_eq!(s.requests_per_connection, 50.0);
        assert_eq!(s.decode_hist().unwrap().len(), 200);
    })
    .await;
}

#[tokio::test]
async fn window_counts_requests_by_http_version_and_alpn() {
    let t = TestServer::start(ServerOptions::default());
    let ctl = client();
    let builder = || {
        reqwest::Client::builder()
            .danger_accept_invalid_certs(true)
            .timeout(std::time::Duration::from_secs(10))
    };
    let h1 = builder().http1_only().build().unwrap();
    let h2c = builder().http2_prior_knowledge().build().unwrap();
    // Over TLS reqwest offers ALPN h2 and http/1.1; http1_only offers http/1.1 only.
    let tls_h2 = builder().build().unwrap();
    bounded(async {
        control(&ctl, &t, "start").await;
        for _ in 0..2 {
            h1.get(t.url("/bytes/22")).send().await.unwrap();
        }
        for _ in 0..3 {
            h2c.get(t.url("/bytes/22")).send().await.unwrap();
        }
        for _ in 0..4 {
            let r = h1.get(t.https_url("/bytes/22")).send().await.unwrap();
            assert_eq!(r.version(), reqwest::Version::HTTP_11);
        }
        for _ in 0..5 {
            let r = tls_h2.get(t.https_url("/bytes/22")).send().await.unwrap();
            assert_eq!(r.version(), reqwest::Version::HTTP_2);
        }
        // TLS without ALPN: an HTTP/1.1 request by hand.
        let tls = benchgate::client::tls::insecure_tls_config();
        assert!(tls.alpn_protocols.is_empty());
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls));
        let tcp = tokio::net::TcpStream::connect(t.https.unwrap())
            .await
            .unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut s = connector.connect(name, tcp).await.unwrap();
        assert_eq!(s.get_ref().1.alpn_protocol(), None);
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        s.write_all(b"GET /bytes/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut resp = Vec::new();
        // The server closes after answering (with or without close_notify).
        let _ = s.read_to_end(&mut resp).await;
        assert!(resp.starts_with(b"HTTP/1.1 200"), "{resp:?}");

        let w = control(&ctl, &t, "stop").await;
        assert_eq!(w.requests, 15);
        assert_eq!((w.requests_http1, w.requests_http2), (2 + 4 + 1, 3 + 5));
        assert_eq!(w.requests_tls, 4 + 5 + 1);
        assert_eq!((w.requests_alpn_h2, w.requests_alpn_http1), (5, 4));
    })
    .await;
}
