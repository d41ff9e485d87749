//! Helpers for the CloudWatch tests: a moto server, a real results file, the
//! benchgate binary run against an endpoint, an SDK client to read back, and a
//! fake CloudWatch that answers what a test scripts.

#![allow(dead_code)]

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use aws_sdk_cloudwatch::config::{BehaviorVersion, Credentials, Region};
use benchgate::results::RunResults;

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_benchgate")
}

/// The moto server the tests use: `BENCHGATE_TEST_MOTO_URL` (scripts/test.sh
/// starts one), else scripts/moto-server.py started here with python3. Never a
/// silent skip: without either the tests fail and say how to get moto.
pub fn moto_url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("BENCHGATE_TEST_MOTO_URL") {
            if !url.is_empty() {
                wait_ready(&url);
                return url;
            }
        }
        start_moto()
    })
    .clone()
}

fn start_moto() -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/moto-server.py");
    let found = Command::new("python3").args([script, "--help"]).output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "the CloudWatch tests need moto's server: run ./scripts/test.sh (it installs moto[server] and starts it), or `pip install 'moto[server]==5.2.1'` for python3, or set BENCHGATE_TEST_MOTO_URL"
    );
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    // The child must outlive every test thread and die with this process: start
    // it from a thread that never ends, with a parent-death signal.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::os::unix::process::CommandExt as _;
        let mut cmd = Command::new("python3");
        cmd.args([script, "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: prctl is async-signal-safe; it only sets this child's death signal.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd.spawn().expect("starting scripts/moto-server.py");
        tx.send(()).unwrap();
        let _child = child;
        loop {
            std::thread::park();
        }
    });
    rx.recv().unwrap();
    let url = format!("http://127.0.0.1:{port}");
    wait_ready(&url);
    url
}

fn wait_ready(url: &str) {
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap_or_else(|_| panic!("BENCHGATE_TEST_MOTO_URL {url:?} is not http://IP:PORT"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(
            Instant::now() < deadline,
            "moto at {url} did not accept connections within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A namespace of its own for each test, so tests sharing one moto never mix.
pub fn namespace(test: &str) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "BenchgateTest/{test}/{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A real results file: `benchgate run` with the mock driver (no sockets), 3
/// rounds, every 10th request a 503, and `extra` appended to the config.
pub fn mock_results(dir: &Path, extra: &str) -> PathBuf {
    let toml = format!(
        r#"
[run]
rounds = 3
warmup = "20ms"
requests = 40

[[client]]
name = "hyper"
kind = "hyper"

[[client]]
name = "reqwest"
kind = "reqwest"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 2

{extra}
"#
    );
    let config = dir.join("benchgate.toml");
    std::fs::write(&config, toml).unwrap();
    let out = dir.join("results.json");
    let output = Command::new(exe())
        .args(["run", "-q", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .args([
            "--mock-latencies-us",
            "300,700,1500",
            "--mock-error-every",
            "10",
        ])
        .env("CI", "true")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "benchgate run failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// `results` with `cells` cells: copies of the first one under new scenario names.
pub fn widen(results: &RunResults, cells: usize) -> RunResults {
    let mut r = results.clone();
    let first = r.results[0].clone();
    r.results = (0..cells)
        .map(|i| {
            let mut c = first.clone();
            c.scenario = format!("s{i:04}");
            c
        })
        .collect();
    r
}

/// `benchgate publish cloudwatch --results FILE ARGS` against `endpoint`, with
/// dummy credentials and nothing from this machine's AWS setup.
pub fn publish(results: &Path, endpoint: &str, args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new(exe())
        .args(["publish", "cloudwatch", "--results"])
        .arg(results)
        .args(args)
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing-secret")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_CONFIG_FILE", "/nonexistent/benchgate-test")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/benchgate-test")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_ROLE_ARN")
        .env_remove("AWS_WEB_IDENTITY_TOKEN_FILE")
        .env_remove("AWS_ENDPOINT_URL_CLOUDWATCH")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    (output, started.elapsed())
}

pub fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// An SDK client for reading back from `endpoint`.
pub fn client(endpoint: &str) -> aws_sdk_cloudwatch::Client {
    let config = aws_sdk_cloudwatch::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(
            "testing",
            "testing-secret",
            None,
            None,
            "test",
        ))
        .endpoint_url(endpoint)
        .http_client(benchgate::publish::cloudwatch::http_client())
        .build();
    aws_sdk_cloudwatch::Client::from_conf(config)
}

/// One request the fake endpoint received, body decompressed.
#[derive(Debug, Clone)]
pub struct Received {
    pub body: String,
    pub gzip: bool,
    pub wire_bytes: usize,
}

impl Received {
    /// Number of metric data in a PutMetricData body.
    pub fn data(&self) -> usize {
        self.body.matches(".MetricName=").count()
    }
}

/// What the fake endpoint answers: HTTP status and body.
pub type Answer = (u16, String);

pub fn ok_answer() -> Answer {
    (
        200,
        r#"<PutMetricDataResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/"><ResponseMetadata><RequestId>fake-ok</RequestId></ResponseMetadata></PutMetricDataResponse>"#.into(),
    )
}

pub fn error_answer(status: u16, kind: &str, code: &str, message: &str) -> Answer {
    (
        status,
        format!(
            r#"<ErrorResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/"><Error><Type>{kind}</Type><Code>{code}</Code><Message>{message}</Message></Error><RequestId>fake-err</RequestId></ErrorResponse>"#
        ),
    )
}

/// A fake CloudWatch on 127.0.0.1: answers `script` in order, then `then`
/// forever, and records every request.
pub struct Fake {
    pub url: String,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl Fake {
    pub fn start(script: Vec<Answer>, then: Answer) -> Fake {
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let script = Arc::new(Mutex::new(std::collections::VecDeque::from(script)));
        std::thread::spawn(move || {
            runtime().block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        continue;
                    };
                    let (log, script, then) = (log.clone(), script.clone(), then.clone());
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req| {
                            let (log, script, then) = (log.clone(), script.clone(), then.clone());
                            async move { answer(req, &log, &script, then).await }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        });
        Fake { url, received }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    log: &Mutex<Vec<Received>>,
    script: &Mutex<std::collections::VecDeque<Answer>>,
    then: Answer,
) -> Result<hyper::Response<http_body_util::Full<bytes::Bytes>>, std::convert::Infallible> {
    use http_body_util::BodyExt as _;
    let gzip = req
        .headers()
        .get("content-encoding")
        .is_some_and(|v| v == "gzip");
    let wire = req.into_body().collect().await.unwrap().to_bytes();
    let body = if gzip {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&wire[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8_lossy(&wire).into_owned()
    };
    log.lock().unwrap().push(Received {
        body,
        gzip,
        wire_bytes: wire.len(),
    });
    let (status, body) = script.lock().unwrap().pop_front().unwrap_or(then);
    Ok(hyper::Response::builder()
        .status(status)
        .header("content-type", "text/xml")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap())
}
