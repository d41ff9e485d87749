//! The request, built once: where it goes and its bytes on the wire.

use std::net::{SocketAddr, ToSocketAddrs as _};

use anyhow::Context as _;
use http::Uri;

use crate::client::RequestTemplate;
use crate::config::Method;

/// Where every request of a trial goes and what it sends.
#[derive(Debug, Clone)]
pub struct WireRequest {
    /// The target, resolved once.
    pub addr: SocketAddr,
    /// Head and body, contiguous: written as they are for every request.
    pub bytes: Box<[u8]>,
    /// Body bytes within `bytes` (what a completed request counts as sent).
    pub body_len: u64,
    /// The method is HEAD (its response has no body).
    pub head: bool,
}

impl WireRequest {
    /// Builds the request of `template`: `http://` URLs only (this driver
    /// speaks no TLS; config validation says so before a trial starts).
    pub fn new(template: &RequestTemplate) -> anyhow::Result<WireRequest> {
        let url = &template.url;
        let uri: Uri = url
            .parse()
            .with_context(|| format!("invalid target URL {url}"))?;
        if uri.scheme_str() != Some("http") {
            anyhow::bail!(
                "target URL {url}: kind = \"h1-lean\" speaks plain http:// only; use kind = \"hyper\" for https"
            );
        }
        let authority = uri
            .authority()
            .with_context(|| format!("target URL {url} has no host"))?;
        let port = authority.port_u16().unwrap_or(80);
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let addr = (host, port)
            .to_socket_addrs()
            .with_context(|| format!("resolving the host of {url}"))?
            .next()
            .with_context(|| format!("the host of {url} resolves to no address"))?;
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let body = &template.body;
        let mut head = format!(
            "{} {path} HTTP/1.1\r\nHost: {}\r\n",
            template.method.as_str(),
            authority.as_str()
        );
        // RFC 9110 8.6: a request whose method defines a meaning for content
        // carries its length, 0 included.
        if !body.is_empty() || matches!(template.method, Method::Post | Method::Put) {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        Ok(WireRequest {
            addr,
            bytes: bytes.into_boxed_slice(),
            body_len: body.len() as u64,
            head: template.method == Method::Head,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn template(method: Method, url: &str, body: &'static [u8]) -> RequestTemplate {
        RequestTemplate {
            method,
            url: url.into(),
            body: Bytes::from_static(body),
        }
    }

    #[test]
    fn get_has_host_and_no_length() {
        let r = WireRequest::new(&template(
            Method::Get,
            "http://127.0.0.1:8080/bytes/22?x=1",
            b"",
        ))
        .unwrap();
        assert_eq!(
            &*r.bytes,
            b"GET /bytes/22?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
        );
        assert_eq!(r.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(r.body_len, 0);
        assert!(!r.head);
    }

    #[test]
    fn put_carries_its_body_after_the_head() {
        let r =
            WireRequest::new(&template(Method::Put, "http://127.0.0.1:1/upload", b"abc")).unwrap();
        assert_eq!(
            &*r.bytes,
            b"PUT /upload HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: 3\r\n\r\nabc"
        );
        assert_eq!(r.body_len, 3);
        let empty = WireRequest::new(&template(Method::Post, "http://127.0.0.1:1/", b"")).unwrap();
        assert!(empty.bytes.ends_with(b"Content-Length: 0\r\n\r\n"));
    }

    #[test]
    fn head_and_ipv6() {
        let r = WireRequest::new(&template(Method::Head, "http://[::1]:9/", b"")).unwrap();
        assert!(r.head);
        assert_eq!(r.addr, "[::1]:9".parse().unwrap());
        assert!(r.bytes.starts_with(b"HEAD / HTTP/1.1\r\nHost: [::1]:9\r\n"));
    }

    #[test]
    fn https_is_refused_with_the_fix() {
        let e = WireRequest::new(&template(Method::Get, "https://127.0.0.1:1/", b""))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("plain http:// only") && e.contains("kind = \"hyper\""),
            "{e}"
        );
    }
}
