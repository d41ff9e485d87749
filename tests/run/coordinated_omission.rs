//! Coordinated omission, shown on a real stalling server: a keep-alive HTTP
//! server on 127.0.0.1 that answers at once except during one 300 ms pause (a
//! "GC pause" that holds every response). A closed loop sends nothing while it
//! waits, so the pause is one slow request among many; an open loop keeps its
//! schedule, and the requests that should have been sent during the pause carry
//! their wait in the corrected histogram.

use std::sync::Arc;
use std::time::{Duration, Instant};

use benchgate::client::{AsyncClient, RequestTemplate};
use benchgate::config::{ClientKind, ClientSpec, HttpVersion, Load, Method, Scenario, StopRule};
use benchgate::engine::{run_async, NoHooks, Outcome, TrialPlan};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const PAUSE_AT: Duration = Duration::from_millis(400);
const PAUSE: Duration = Duration::from_millis(300);

/// Serves `200 ok` on every request, except that a response due during
/// [PAUSE_AT, PAUSE_AT + PAUSE) after `t0` waits for the pause to end.
async fn pausing_server(t0: Instant) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut pending = Vec::new();
                loop {
                    let n = match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        let since = t0.elapsed();
                        if since >= PAUSE_AT && since < PAUSE_AT + PAUSE {
                            tokio::time::sleep(PAUSE_AT + PAUSE - since).await;
                        }
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                        if s.write_all(ok).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

async fn trial(load: Load) -> Outcome {
    let t0 = Instant::now();
    let base = pausing_server(t0).await;
    let scenario = Scenario {
        name: "pause".into(),
        method: Method::Get,
        path: "/".into(),
        body: 0,
        load,
        warmup: Duration::ZERO,
        stop: StopRule::Duration(Duration::from_millis(1500)),
        timeout: Duration::from_secs(5),
        clients: vec![],
    };
    let spec = ClientSpec {
        name: "hyper".into(),
        kind: ClientKind::Hyper,
        pool: Some(1),
        http: HttpVersion::Http1,
        tls: false,
        inject_cpu_ns: 0,
        inject_tail: None,
    };
    let client = AsyncClient::build(&spec, RequestTemplate::new(&scenario, &base), 1).unwrap();
    run_async(Arc::new(client), TrialPlan::of(&scenario), &mut NoHooks).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_charges_the_pause_to_the_requests_behind_it() {
    let closed = trial(Load::Closed { concurrency: 1 }).await;
    let open = trial(Load::Open {
        rate: 200.0,
        max_in_flight: 1,
    })
    .await;

    let closed_lat = closed.recorder.latency.summary().unwrap();
    let corrected = open.recorder.latency.summary().unwrap();
    let uncorrected = open
        .recorder
        .latency_uncorrected
        .as_ref()
        .unwrap()
        .summary()
        .unwrap();
    eprintln!(
        "closed {closed_lat:?}\nopen corrected {corrected:?}\nopen uncorrected {uncorrected:?}"
    );

    // The pause happened, and every loop saw one request wait for most of it.
    assert!(closed_lat.max_us >= 200_000 && uncorrected.max_us >= 200_000);
    // A closed loop hides it: one slow request among thousands.
    assert!(
        closed_lat.p90_us < 10_000,
        "closed p90 {}",
        closed_lat.p90_us
    );
    // Measured from the actual send, the open loop hides it too ...
    assert!(
        uncorrected.p90_us < 10_000,
        "uncorrected p90 {}",
        uncorrected.p90_us
    );
    // ... but from the intended start, the ~60 requests scheduled during the
    // pause (300 ms at 200/s, out of 300) waited up to 300 ms: p90 is tens of ms.
    assert!(
        corrected.p90_us > 50_000,
        "corrected p90 {}",
        corrected.p90_us
    );
    assert!(corrected.mean_us > 5.0 * uncorrected.mean_us);
    // The open loop kept its schedule: ~300 requests in 1.5 s.
    let done = open.recorder.counts.ok + open.recorder.counts.in_flight_at_deadline;
    assert!((280..=301).contains(&done), "open loop sent {done}");
}
