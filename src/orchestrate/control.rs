//! A minimal blocking client for the reference server's control port: one
//! `Connection: close` HTTP/1.1 exchange per call over a std `TcpStream`, no
//! runtime, no pool. Used by the parent and by driver processes alike.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{bail, Context as _};

use crate::server::ServerCounters;

/// Largest control answer accepted (a counters document is a few KiB).
const MAX_ANSWER: u64 = 4 << 20;

/// Calls `method path` on the control base URL `http://IP:PORT` and parses the
/// counters it answers.
pub fn call(base_url: &str, method: &str, path: &str) -> anyhow::Result<ServerCounters> {
    let addr = base_url
        .strip_prefix("http://")
        .with_context(|| format!("control URL {base_url:?} does not start with http://"))?
        .trim_end_matches('/');
    let mut stream = TcpStream::connect(addr)
        .with_context(|| format!("connecting to the reference server's control port {addr}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    let _ = stream.set_nodelay(true);
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = Vec::new();
    stream
        .take(MAX_ANSWER)
        .read_to_end(&mut answer)
        .with_context(|| format!("reading the answer to {method} {path}"))?;
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .with_context(|| format!("{method} {path}: the control port answered no HTTP head"))?;
    let head = String::from_utf8_lossy(&answer[..split]);
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if status != "200" {
        bail!("{method} {path}: the control port answered status {status:?}");
    }
    let body = &answer[split + 4..];
    serde_json::from_slice(body).with_context(|| {
        format!("{method} {path}: the control port answered something other than counters")
    })
}

pub fn window_start(base_url: &str) -> anyhow::Result<ServerCounters> {
    call(base_url, "POST", "/__benchgate/window/start")
}

pub fn window_stop(base_url: &str) -> anyhow::Result<ServerCounters> {
    call(base_url, "POST", "/__benchgate/window/stop")
}

pub fn counters(base_url: &str) -> anyhow::Result<ServerCounters> {
    call(base_url, "GET", "/__benchgate/counters")
}
