//! `h1-lean`, the lean HTTP/1.1 generator, end to end on 127.0.0.1: against
//! the reference server (whose request count is the driver's), against raw
//! servers that answer chunked, `Connection: close`, until-close or garbage,
//! against failures (refused, reset, stalled), and in an open loop behind a
//! stalling server (latency from the intended start: coordinated omission
//! corrected). Each trial is bounded by its stop rule; servers stop by themselves.

use crate::common;
use crate::server::support;

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchgate::client::RequestTemplate;
use benchgate::config::{ClientKind, ClientSpec, HttpVersion, Load, Method, Scenario, StopRule};
use benchgate::engine::lean;
use benchgate::engine::{NoHooks, Outcome, TrialPlan};
use support::TestServer;

fn scenario(method: Method, path: &str, body: u64, load: Load, stop: StopRule) -> Scenario {
    Scenario {
        name: "lean".into(),
        method,
        path: path.into(),
        body,
        load,
        warmup: Duration::ZERO,
        stop,
        timeout: Duration::from_secs(5),
        clients: vec![],
    }
}

fn closed(concurrency: u32) -> Load {
    Load::Closed { concurrency }
}

fn spec(pool: Option<u32>) -> ClientSpec {
    ClientSpec {
        name: "lean".into(),
        kind: ClientKind::H1Lean,
        pool,
        http: HttpVersion::Http1,
        tls: false,
        inject_cpu_ns: 0,
        inject_tail: None,
    }
}

fn trial(spec: &ClientSpec, s: &Scenario, base: &str) -> Outcome {
    let request = RequestTemplate::new(s, base);
    lean::run(spec, &request, TrialPlan::of(s), &mut NoHooks).expect("trial runs")
}

// ---- against the reference server -------------------------------------------------

#[test]
fn the_reference_server_counts_every_request_the_driver_counts() {
    let server = TestServer::plain();
    let base = format!("http://{}", server.http);
    let before = server.server.counters().requests;
    // One connection, a request-count stop: nothing is in flight at the end,
    // so the server served exactly what the driver measured.
    let s = scenario(
        Method::Get,
        "/bytes/22",
        0,
        closed(1),
        StopRule::Requests(500),
    );
    let r = trial(&spec(None), &s, &base).recorder.counts;
    assert_eq!((r.ok, r.errors.total()), (500, 0));
    assert_eq!(r.bytes_received, 500 * 22);
    assert_eq!(r.in_flight_at_deadline, 0);
    assert_eq!(server.server.counters().requests - before, 500);

    // Sixteen connections: the server also saw the requests in flight when
    // the n-th completed, or some of them.
    let before = server.server.counters();
    let s = scenario(
        Method::Get,
        "/bytes/1000",
        0,
        closed(16),
        StopRule::Requests(3000),
    );
    let r = trial(&spec(None), &s, &base).recorder.counts;
    let after = server.server.counters();
    assert_eq!((r.ok, r.errors.total()), (3000, 0));
    assert_eq!(r.bytes_received, 3000 * 1000);
    let served = after.requests - before.requests;
    assert!(
        served >= r.ok && served <= r.ok + r.in_flight_at_deadline,
        "server served {served}, driver {} ok + {} in flight",
        r.ok,
        r.in_flight_at_deadline
    );
    assert_eq!(after.connections_accepted - before.connections_accepted, 16);
}

#[test]
fn bodies_head_statuses_and_a_smaller_pool() {
    let server = TestServer::plain();
    let base = format!("http://{}", server.http);
    let before = server.server.counters();
    let put = scenario(
        Method::Put,
        "/upload",
        64 * 1024,
        closed(2),
        StopRule::Requests(200),
    );
    let r = trial(&spec(None), &put, &base).recorder.counts;
    assert_eq!((r.ok, r.errors.total()), (200, 0));
    assert_eq!(r.bytes_sent, 200 * 64 * 1024);
    assert!(server.server.counters().bytes_in - before.bytes_in >= 200 * 64 * 1024);

    // A body larger than the read buffer, streamed by the server.
    let big = scenario(
        Method::Get,
        "/bytes/1048576",
        0,
        closed(2),
        StopRule::Requests(20),
    );
    let r = trial(&spec(None), &big, &base).recorder.counts;
    assert_eq!((r.ok, r.bytes_received), (20, 20 << 20));

    let status = scenario(
        Method::Get,
        "/status/503",
        0,
        closed(2),
        StopRule::Requests(50),
    );
    let r = trial(&spec(None), &status, &base).recorder.counts;
    assert_eq!((r.ok, r.errors.status_5xx), (0, 50));

    // Eight workers on two connections: every request still completes, and
    // the server sees two connections.
    let before = server.server.counters().connections_accepted;
    let pooled = scenario(
        Method::Get,
        "/bytes/22",
        0,
        closed(8),
        StopRule::Requests(400),
    );
    let r = trial(&spec(Some(2)), &pooled, &base).recorder.counts;
    assert_eq!((r.ok, r.errors.total()), (400, 0));
    assert_eq!(server.server.counters().connections_accepted - before, 2);
}

#[test]
fn failures_fall_in_the_other_drivers_classes() {
    let server = TestServer::plain();
    let base = format!("http://{}", server.http);
    let n = StopRule::Requests(20);
    let cut = scenario(
        Method::Get,
        "/fault/close-mid-body?size=100000",
        0,
        closed(1),
        n,
    );
    let r = trial(&spec(None), &cut, &base).recorder.counts;
    assert_eq!((r.ok, r.errors.read), (0, 20), "{:?}", r.errors);

    let reset = scenario(Method::Get, "/fault/reset", 0, closed(1), n);
    let r = trial(&spec(None), &reset, &base).recorder.counts;
    assert_eq!((r.ok, r.errors.read), (0, 20), "{:?}", r.errors);

    let mut stall = scenario(
        Method::Get,
        "/fault/stall?ms=3000",
        0,
        closed(2),
        StopRule::Requests(4),
    );
    stall.timeout = Duration::from_millis(150);
    let started = Instant::now();
    let r = trial(&spec(None), &stall, &base).recorder.counts;
    assert_eq!((r.ok, r.errors.timeout), (0, 4), "{:?}", r.errors);
    assert!(started.elapsed() < Duration::from_secs(2));

    // Nothing listens on a port just released.
    let gone = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let refused = scenario(Method::Get, "/", 0, closed(1), n);
    let r = trial(&spec(None), &refused, &format!("http://{gone}"))
        .recorder
        .counts;
    assert_eq!((r.ok, r.errors.connect), (0, 20), "{:?}", r.errors);
}

// ---- against raw servers -----------------------------------------------------------

/// A reply of a raw server: bytes, and whether the connection closes after them.
struct Reply {
    bytes: Vec<u8>,
    close: bool,
}

/// A raw HTTP/1.1 server on 127.0.0.1: one thread per connection, answering
/// the i-th request (counted over all connections) with `reply(i)`. Requests
/// must carry no body. It stops accepting after 20 s; a connection thread
/// ends at EOF or after 5 s without a request.
struct RawServer {
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
}

fn raw_server(reply: impl Fn(u64) -> Reply + Send + Sync + 'static) -> RawServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let (requests, connections) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (req, conns, reply) = (requests.clone(), connections.clone(), Arc::new(reply));
    std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            conns.fetch_add(1, Ordering::SeqCst);
            let (req, reply) = (req.clone(), reply.clone());
            std::thread::spawn(move || {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut pending = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        let r = reply(req.fetch_add(1, Ordering::SeqCst));
                        if s.write_all(&r.bytes).is_err() || r.close {
                            return;
                        }
                    }
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => pending.extend_from_slice(&buf[..n]),
                    }
                }
            });
        }
    });
    RawServer {
        addr,
        requests,
        connections,
    }
}

/// Four response shapes in turn, with the body bytes each carries.
fn shaped(i: u64) -> (Reply, u64) {
    let (bytes, close, body): (&[u8], bool, u64) = match i % 4 {
        0 => (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
              4;ext=1\r\nhell\r\n7\r\no world\r\n0\r\nX-Trailer: yes\r\n\r\n",
            false,
            11,
        ),
        1 => (
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nabcde",
            true,
            5,
        ),
        2 => (
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz",
            false,
            3,
        ),
        _ => (b"HTTP/1.1 200 OK\r\n\r\nuntil the end", true, 13),
    };
    (
        Reply {
            bytes: bytes.to_vec(),
            close,
        },
        body,
    )
}

#[test]
fn chunked_close_interim_and_until_close_responses() {
    let server = raw_server(|i| shaped(i).0);
    let n = 401;
    let s = scenario(Method::Get, "/", 0, closed(1), StopRule::Requests(n));
    let r = trial(&spec(None), &s, &format!("http://{}", server.addr))
        .recorder
        .counts;
    assert_eq!((r.ok, r.errors.total()), (n, 0), "{:?}", r.errors);
    let body: u64 = (0..n).map(|i| shaped(i).1).sum();
    assert_eq!(r.bytes_received, body);
    assert_eq!(server.requests.load(Ordering::SeqCst), n);
    // A new connection after every closing response but the last one's.
    let closing = (0..n - 1).filter(|i| shaped(*i).0.close).count() as u64;
    assert_eq!(server.connections.load(Ordering::SeqCst), 1 + closing);
}

#[test]
fn head_responses_announce_a_length_and_carry_no_body() {
    let server = raw_server(|_| Reply {
        bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".to_vec(),
        close: false,
    });
    let head = scenario(Method::Head, "/", 0, closed(1), StopRule::Requests(100));
    let r = trial(&spec(None), &head, &format!("http://{}", server.addr))
        .recorder
        .counts;
    assert_eq!(
        (r.ok, r.bytes_received, r.errors.total()),
        (100, 0, 0),
        "{:?}",
        r.errors
    );
    // Every response ended at its head: one connection carried them all.
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn malformed_responses_are_read_errors() {
    let garbage: [&'static [u8]; 3] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: zz\r\n\r\n",
        b"\x00\x01\x02 not http at all\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n",
    ];
    for bytes in garbage {
        let server = raw_server(move |_| Reply {
            bytes: bytes.to_vec(),
            close: false,
        });
        let s = scenario(Method::Get, "/", 0, closed(2), StopRule::Requests(30));
        let r = trial(&spec(None), &s, &format!("http://{}", server.addr))
            .recorder
            .counts;
        assert_eq!((r.ok, r.errors.read), (0, 30), "{bytes:?}: {:?}", r.errors);
    }
}

// ---- open loop: coordinated omission -----------------------------------------------

const PAUSE_AT: Duration = Duration::from_millis(400);
const PAUSE: Duration = Duration::from_millis(300);

#[test]
fn open_loop_charges_a_stall_to_the_requests_scheduled_behind_it() {
    let t0 = Instant::now();
    // Answers at once, except that a response due during the pause waits for its end.
    let server = raw_server(move |_| {
        let since = t0.elapsed();
        if since >= PAUSE_AT && since < PAUSE_AT + PAUSE {
            std::thread::sleep(PAUSE_AT + PAUSE - since);
        }
        Reply {
            bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
            close: false,
        }
    });
    let open = Load::Open {
        rate: 200.0,
        max_in_flight: 1,
    };
    let s = scenario(
        Method::Get,
        "/",
        0,
        open,
        StopRule::Duration(Duration::from_millis(1500)),
    );
    let out = trial(&spec(None), &s, &format!("http://{}", server.addr));
    let r = &out.recorder;
    let corrected = r.latency.summary().unwrap();
    let uncorrected = r.latency_uncorrected.as_ref().unwrap().summary().unwrap();
    eprintln!("corrected {corrected:?}\nuncorrected {uncorrected:?}");
    assert!(uncorrected.max_us >= 200_000, "the stall happened");
    assert!(
        uncorrected.p90_us < 10_000,
        "uncorrected p90 {}",
        uncorrected.p90_us
    );
    // ~60 of ~300 requests were meant to start during the pause and waited.
    assert!(
        corrected.p90_us > 50_000,
        "corrected p90 {}",
        corrected.p90_us
    );
    assert!(corrected.mean_us > 5.0 * uncorrected.mean_us);
    let done = r.counts.ok + r.counts.in_flight_at_deadline;
    assert!((280..=301).contains(&done), "open loop sent {done}");
    assert_eq!(out.elapsed, Duration::from_millis(1500));
}

#[test]
fn open_loop_keeps_its_rate_with_a_fast_server() {
    let server = TestServer::plain();
    let open = Load::Open {
        rate: 2000.0,
        max_in_flight: 4,
    };
    let s = scenario(
        Method::Get,
        "/bytes/22",
        0,
        open,
        StopRule::Duration(Duration::from_millis(500)),
    );
    let r = trial(&spec(None), &s, &format!("http://{}", server.http))
        .recorder
        .counts;
    // 1000 intended starts in the window, all sent: between completions only
    // the timerfd wakes the loop (epoll_wait's own timeout is the next
    // timeout scan, 5 s away). How close each send is to its intended start
    // is not asserted: on a shared machine a preempted loop lags by more
    // than any bound worth checking (alone here: p50 145 µs corrected, 113 µs
    // from the send). Nor is every last start: beside the test command's
    // builds (load 9.6) 989 went out, the rest waiting on the 4 in flight as
    // the window closed; a loop woken only by completions or the 5 s scan
    // stalls as soon as nothing is in flight.
    let sent = r.ok + r.in_flight_at_deadline;
    assert!((950..=1001).contains(&sent), "{sent} sent");
    assert_eq!(r.errors.total(), 0);
}

// ---- through `benchgate run`, driving a server under test --------------------------

#[test]
fn benchgate_run_drives_a_server_under_test_with_it() {
    let toml = format!(
        "[run]\nrounds = 1\nwarmup = \"100ms\"\nduration = \"300ms\"\n\
         [[client]]\nname = \"lean\"\nkind = \"h1-lean\"\n\
         [[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\nconcurrency = 4\n\
         [[server]]\nname = \"sut\"\ncommand = [\"{}\", \"serve\", \"--no-tls\", \"--listen\", \"127.0.0.1:{{port}}\"]\n\
         ready = \"http://127.0.0.1:{{port}}/bytes/1\"\n",
        common::exe()
    );
    let run = common::run_config(&toml, &[]);
    let results = run.results();
    assert_eq!(results.config.clients[0].kind, ClientKind::H1Lean);
    let c = results
        .cell_at("get", "lean", Some("sut"))
        .expect("cell lean @ sut");
    let t = &c.trials[0];
    assert_eq!(t.failure, None);
    let m = t.metrics.as_ref().unwrap();
    assert!(
        m.ok > 0 && m.errors.total() == 0,
        "{} ok, {:?}",
        m.ok,
        m.errors
    );
    assert_eq!(m.bytes_received, m.ok * 22);
    assert!(m.cpu_us_per_request.unwrap() > 0.0);

    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&run.out).unwrap()).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(common::schema_path()).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema: {}", errors.join("\n"));
}
