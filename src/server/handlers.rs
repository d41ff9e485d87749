//! Endpoint handlers that do more than pick a body, and the response helpers.

use std::cell::RefCell;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use http::StatusCode;
use http_body_util::BodyExt as _;
use hyper::body::{Body as _, Incoming};
use hyper::{Request, Response};
use rand::rngs::SmallRng;
use rand::{RngCore as _, SeedableRng as _};
use sha1::{Digest as _, Sha1};

use super::body::Payload;
use super::faults::Fault;
use super::routes::{reject, Reject};
use super::Server;

pub(crate) fn respond(status: StatusCode, body: Payload) -> Response<Payload> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp
}

pub(crate) fn rejection(r: Reject) -> Response<Payload> {
    let mut resp = respond(r.status, Payload::from_static(r.text.as_bytes()));
    if let Some(allow) = r.allow {
        resp.headers_mut()
            .insert(ALLOW, HeaderValue::from_static(allow));
    }
    resp
}

pub(crate) fn json(counters: &impl serde::Serialize) -> Response<Payload> {
    let body = serde_json::to_vec(counters).unwrap_or_default();
    let mut resp = respond(StatusCode::OK, Payload::bytes(Bytes::from(body)));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

thread_local! {
    static RNG: RefCell<SmallRng> = RefCell::new(SmallRng::from_entropy());
}

/// Lowercase hex SHA-1 of `size` fresh random bytes.
pub(crate) fn sha1_of_random(size: u64) -> [u8; 40] {
    let mut hasher = Sha1::new();
    let mut buf = [0u8; 8192];
    RNG.with(|rng| {
        let mut rng = rng.borrow_mut();
        let mut left = size;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            rng.fill_bytes(&mut buf[..n]);
            hasher.update(&buf[..n]);
            left -= n as u64;
        }
    });
    let mut hex = [0u8; 40];
    for (i, b) in hasher.finalize().iter().enumerate() {
        hex[2 * i] = b"0123456789abcdef"[(b >> 4) as usize];
        hex[2 * i + 1] = b"0123456789abcdef"[(b & 15) as usize];
    }
    hex
}

pub(crate) async fn upload(
    server: Arc<Server>,
    req: Request<Incoming>,
) -> Result<Response<Payload>, Fault> {
    let max = server.opts.max_body_bytes;
    let too_large = || {
        rejection(reject(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body over max_body_bytes\n",
        ))
    };
    if req.body().size_hint().lower() > max {
        return Ok(too_large());
    }
    let mut body = req.into_body();
    let mut total = 0u64;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.map_err(Fault::RequestBody)?.into_data() {
            let n = data.len() as u64;
            total += n;
            server.counters.add_bytes_in(n);
            if total > max {
                return Ok(too_large());
            }
        }
    }
    Ok(respond(
        StatusCode::OK,
        Payload::bytes(Bytes::from(total.to_string())),
    ))
}

pub(crate) fn panicked() -> Response<Payload> {
    rejection(reject(
        StatusCode::INTERNAL_SERVER_ERROR,
        "handler panicked\n",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_is_lowercase_hex_and_fresh() {
        let (a, b) = (sha1_of_random(8192), sha1_of_random(8192));
        assert!(a
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c)));
        assert_ne!(a, b, "fresh random input each time");
        // SHA-1 of the empty input is well known.
        assert_eq!(
            &sha1_of_random(0),
            b"da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
    }
}
