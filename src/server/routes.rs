//! Routing: request line -> [`Endpoint`], or the 4xx that answers it.
//!
//! Parsing borrows from the request (no allocation). Sizes over `max_body_bytes` are
//! refused with 400; delays and stalls are capped, not refused.

use std::time::Duration;

use http::{Method, StatusCode};

use super::faults::{DEFAULT_CUT_SIZE, MAX_STALL};
use super::ServerOptions;

/// Longest `/delay`.
pub(crate) const MAX_DELAY: Duration = Duration::from_secs(60);
/// Largest and default `/sha1` input.
pub(crate) const MAX_SHA1_SIZE: u64 = 16 << 20;
const DEFAULT_SHA1_SIZE: u64 = 8192;

pub(crate) enum Endpoint {
    Bytes(u64),
    Upload,
    Delay(Duration),
    Sha1(u64),
    Status(StatusCode),
    CloseMidBody(u64),
    Stall(Duration),
    Reset,
    WindowStart,
    WindowStop,
    Counters,
}

/// A request answered with an error status and a short text.
pub(crate) struct Reject {
    pub(crate) status: StatusCode,
    pub(crate) text: &'static str,
    pub(crate) allow: Option<&'static str>,
}

const NOT_FOUND: Reject = reject(StatusCode::NOT_FOUND, "not found\n");

pub(crate) const fn reject(status: StatusCode, text: &'static str) -> Reject {
    Reject {
        status,
        text,
        allow: None,
    }
}

fn require(ok: bool, allow: &'static str) -> Result<(), Reject> {
    if ok {
        Ok(())
    } else {
        Err(Reject {
            status: StatusCode::METHOD_NOT_ALLOWED,
            text: "method not allowed\n",
            allow: Some(allow),
        })
    }
}

fn number(s: &str) -> Result<u64, Reject> {
    s.parse()
        .map_err(|_| reject(StatusCode::BAD_REQUEST, "expected a decimal number\n"))
}

/// The value of `key` in a query string, as a number.
fn query_number(query: Option<&str>, key: &str) -> Result<Option<u64>, Reject> {
    let Some(q) = query else { return Ok(None) };
    for pair in q.split('&') {
        if let Some((k, v)) = pair.split_once('=') {
            if k == key {
                return number(v).map(Some);
            }
        }
    }
    Ok(None)
}

pub(crate) fn route(
    method: &Method,
    path: &str,
    query: Option<&str>,
    opts: &ServerOptions,
) -> Result<Endpoint, Reject> {
    let get = method == Method::GET;
    let too_big = || reject(StatusCode::BAD_REQUEST, "size over max_body_bytes\n");
    if let Some(n) = path.strip_prefix("/bytes/") {
        require(get, "GET")?;
        let n = number(n)?;
        return if n > opts.max_body_bytes {
            Err(too_big())
        } else {
            Ok(Endpoint::Bytes(n))
        };
    }
    if let Some(ms) = path.strip_prefix("/delay/") {
        require(get, "GET")?;
        return Ok(Endpoint::Delay(
            Duration::from_millis(number(ms)?).min(MAX_DELAY),
        ));
    }
    if let Some(code) = path.strip_prefix("/status/") {
        require(get, "GET")?;
        let code = u16::try_from(number(code)?)
            .ok()
            .and_then(|c| StatusCode::from_u16(c).ok());
        return match code {
            Some(code) if code.as_u16() >= 200 => Ok(Endpoint::Status(code)),
            _ => Err(reject(StatusCode::BAD_REQUEST, "status must be 200-999\n")),
        };
    }
    match path {
        "/upload" => {
            require(method == Method::PUT || method == Method::POST, "PUT, POST")?;
            Ok(Endpoint::Upload)
        }
        "/sha1" => {
            require(get, "GET")?;
            let size = query_number(query, "size")?.unwrap_or(DEFAULT_SHA1_SIZE);
            Ok(Endpoint::Sha1(size.min(MAX_SHA1_SIZE)))
        }
        "/fault/close-mid-body" => {
            require(get, "GET")?;
            let n = query_number(query, "size")?.unwrap_or(DEFAULT_CUT_SIZE);
            if n > opts.max_body_bytes {
                return Err(too_big());
            }
            Ok(Endpoint::CloseMidBody(n))
        }
        "/fault/stall" => {
            require(get, "GET")?;
            let ms = query_number(query, "ms")?.map(Duration::from_millis);
            Ok(Endpoint::Stall(ms.unwrap_or(MAX_STALL).min(MAX_STALL)))
        }
        "/fault/reset" => require(get, "GET").map(|_| Endpoint::Reset),
        "/__benchgate/window/start" => {
            require(method == Method::POST, "POST").map(|_| Endpoint::WindowStart)
        }
        "/__benchgate/window/stop" => {
            require(method == Method::POST, "POST").map(|_| Endpoint::WindowStop)
        }
        "/__benchgate/counters" => require(get, "GET").map(|_| Endpoint::Counters),
        _ => Err(NOT_FOUND),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(method: Method, uri: &str) -> Result<Endpoint, Reject> {
        let uri: http::Uri = uri.parse().unwrap();
        route(&method, uri.path(), uri.query(), &ServerOptions::default())
    }

    fn status_of(r: Result<Endpoint, Reject>) -> u16 {
        r.map_or_else(|r| r.status.as_u16(), |_| 200)
    }

    #[test]
    fn routes_and_rejections() {
        assert!(matches!(
            ep(Method::GET, "/bytes/22"),
            Ok(Endpoint::Bytes(22))
        ));
        assert_eq!(status_of(ep(Method::GET, "/bytes/x")), 400);
        let over = format!("/bytes/{}", crate::config::limits::MAX_BODY_BYTES + 1);
        assert_eq!(status_of(ep(Method::GET, &over)), 400);
        assert_eq!(status_of(ep(Method::POST, "/bytes/1")), 405);
        assert_eq!(status_of(ep(Method::GET, "/upload")), 405);
        assert!(matches!(ep(Method::PUT, "/upload"), Ok(Endpoint::Upload)));
        assert!(
            matches!(ep(Method::GET, "/delay/999999"), Ok(Endpoint::Delay(d)) if d == MAX_DELAY)
        );
        assert!(matches!(ep(Method::GET, "/sha1"), Ok(Endpoint::Sha1(8192))));
        assert!(matches!(
            ep(Method::GET, "/sha1?x=1&size=99999999"),
            Ok(Endpoint::Sha1(MAX_SHA1_SIZE))
        ));
        assert_eq!(status_of(ep(Method::GET, "/sha1?size=-1")), 400);
        assert!(matches!(ep(Method::GET, "/status/503"), Ok(Endpoint::Status(s)) if s == 503));
        for bad in [
            "/status/100",
            "/status/199",
            "/status/1000",
            "/status/abc",
            "/status/99",
        ] {
            assert_eq!(status_of(ep(Method::GET, bad)), 400, "{bad}");
        }
        assert!(
            matches!(ep(Method::GET, "/fault/stall"), Ok(Endpoint::Stall(d)) if d == MAX_STALL)
        );
        assert!(matches!(
            ep(Method::GET, "/fault/close-mid-body?size=10"),
            Ok(Endpoint::CloseMidBody(10))
        ));
        assert_eq!(status_of(ep(Method::GET, "/__benchgate/window/start")), 405);
        assert_eq!(status_of(ep(Method::GET, "/nope")), 404);
        assert_eq!(status_of(ep(Method::GET, "/bytes")), 404);
    }
}
