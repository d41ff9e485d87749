//! The least a hyper client can cost: the floor that `scripts/bench-engine.sh`
//! compares benchgate's `hyper` driver against.
//!
//! A current-thread tokio runtime, hyper-util's legacy pooled `Client` over a plain
//! `HttpConnector` (TCP_NODELAY, up to `concurrency` idle connections per host),
//! and `concurrency` tasks that each loop "GET, read the body to its end". No
//! histograms, no timeouts, no error classes, no schedule: whatever benchgate's
//! engine costs on top of this loop is its harness overhead.
//!
//! ```text
//! cargo run --release --example bare_hyper_loop -- URL [--concurrency 16] [--duration 5] [--warmup 1]
//! ```
//!
//! After `warmup` seconds it reads `getrusage(RUSAGE_SELF)` and the completion
//! count, again `duration` seconds later, and prints one JSON line:
//! `{"requests":N,"errors":N,"cpu_user_us":N,"cpu_sys_us":N,"elapsed_s":F,"total_requests":N}`
//! (deltas over the measured part; requests completed in it; `total_requests`
//! counts every completion since start, for instruction counts per request of the
//! whole process, e.g. under `valgrind --tool=callgrind`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty};
use hyper::{Request, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

struct Args {
    url: Uri,
    concurrency: usize,
    duration: Duration,
    warmup: Duration,
}

fn parse_args() -> Result<Args, String> {
    let usage = "usage: bare_hyper_loop URL [--concurrency N] [--duration SECS] [--warmup SECS]";
    let mut url = None;
    let mut concurrency = 16;
    let mut duration: f64 = 5.0;
    let mut warmup: f64 = 1.0;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| format!("{name} needs a value; {usage}"))
        };
        match arg.as_str() {
            "--concurrency" | "-c" => {
                concurrency = value("--concurrency")?
                    .parse()
                    .map_err(|e| format!("--concurrency: {e}"))?
            }
            "--duration" | "-d" => {
                duration = value("--duration")?
                    .parse()
                    .map_err(|e| format!("--duration: {e}"))?
            }
            "--warmup" | "-w" => {
                warmup = value("--warmup")?
                    .parse()
                    .map_err(|e| format!("--warmup: {e}"))?
            }
            "--help" | "-h" => return Err(usage.into()),
            _ if url.is_none() && !arg.starts_with('-') => {
                url = Some(
                    arg.parse::<Uri>()
                        .map_err(|e| format!("invalid URL {arg}: {e}"))?,
                )
            }
            _ => return Err(format!("unexpected argument {arg}; {usage}")),
        }
    }
    let url = url.ok_or(usage)?;
    if concurrency == 0
        || !duration.is_finite()
        || duration <= 0.0
        || !warmup.is_finite()
        || warmup < 0.0
    {
        return Err(format!(
            "concurrency and duration must be above 0, warmup 0 or more (finite seconds); {usage}"
        ));
    }
    Ok(Args {
        url,
        concurrency,
        duration: Duration::from_secs_f64(duration),
        warmup: Duration::from_secs_f64(warmup),
    })
}

/// User and system CPU time of this process so far, in microseconds.
fn cpu_us() -> (u64, u64) {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let us = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
    (us(ru.ru_utime), us(ru.ru_stime))
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let out = runtime.block_on(run(args));
    println!("{out}");
}

async fn run(args: Args) -> String {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    let client: Client<HttpConnector, Empty<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(args.concurrency)
        .build(http);

    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::with_capacity(args.concurrency);
    for _ in 0..args.concurrency {
        let (client, url) = (client.clone(), args.url.clone());
        let (done, errors, stop) = (done.clone(), errors.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Relaxed) {
                let req = Request::get(url.clone())
                    .body(Empty::new())
                    .expect("static request");
                let ok = match client.request(req).await {
                    Ok(resp) => {
                        let status_ok = resp.status().is_success();
                        let mut body = resp.into_body();
                        let mut body_ok = true;
                        while let Some(frame) = body.frame().await {
                            if frame.is_err() {
                                body_ok = false;
                                break;
                            }
                        }
                        status_ok && body_ok
                    }
                    Err(_) => false,
                };
                if ok {
                    done.fetch_add(1, Relaxed);
                } else {
                    errors.fetch_add(1, Relaxed);
                }
            }
        }));
    }

    tokio::time::sleep(args.warmup).await;
    let (u0, s0) = cpu_us();
    let (n0, e0, t0) = (done.load(Relaxed), errors.load(Relaxed), Instant::now());
    tokio::time::sleep(args.duration).await;
    let (u1, s1) = cpu_us();
    let (n1, e1, elapsed) = (done.load(Relaxed), errors.load(Relaxed), t0.elapsed());
    stop.store(true, Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    format!(
        "{{\"requests\":{},\"errors\":{},\"cpu_user_us\":{},\"cpu_sys_us\":{},\"elapsed_s\":{:.6},\"total_requests\":{}}}",
        n1 - n0,
        e1 - e0,
        u1 - u0,
        s1 - s0,
        elapsed.as_secs_f64(),
        done.load(Relaxed) + errors.load(Relaxed)
    )
}
