//! Response bodies: one-shot buffers and the repeating byte pattern.
//!
//! Every pattern body is sliced from one static buffer (no allocation, whatever the
//! size). Byte `i` of any `/bytes/{n}` body is `PATTERN[i % 64]`, so clients can
//! verify payloads without a copy of the server.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use super::Server;

/// The repeating unit of every pattern body.
pub const PATTERN: &[u8; 64] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_";

/// Largest frame handed to the connection for a pattern body.
pub(crate) const CHUNK: usize = 64 * 1024;

static PATTERN_BUF: [u8; CHUNK] = {
    let mut buf = [0u8; CHUNK];
    let mut i = 0;
    while i < CHUNK {
        buf[i] = PATTERN[i % PATTERN.len()];
        i += 1;
    }
    buf
};

/// `len` (<= CHUNK) bytes of the pattern, starting at pattern offset 0. Because
/// CHUNK is a multiple of the pattern length, consecutive chunks continue the pattern.
fn pattern_chunk(len: usize) -> Bytes {
    Bytes::from_static(&PATTERN_BUF[..len])
}

/// Up to `max` bytes of the pattern starting at body offset `offset` (the
/// lean path writes bodies straight from the static buffer). Empty when `max`
/// is 0; otherwise at least one byte.
pub(crate) fn pattern_from(offset: u64, max: u64) -> &'static [u8] {
    let start = (offset % PATTERN.len() as u64) as usize;
    let len = usize::try_from(max)
        .unwrap_or(usize::MAX)
        .min(CHUNK - start);
    &PATTERN_BUF[start..start + len]
}

/// Errors a response body can end with (deliberate faults only).
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("fault injected: body cut short")]
    CutShort,
}

/// The response body type of every endpoint.
pub struct Payload {
    kind: Kind,
}

enum Kind {
    Once(Option<Bytes>),
    /// Streams `remaining` pattern bytes, counting them as they are handed off; when
    /// `cut` is set the body announced `remaining + cut` bytes and fails after
    /// `remaining`, once the connection had a chance to flush them.
    Stream {
        remaining: u64,
        cut: Option<CutState>,
        server: Arc<Server>,
    },
}

#[derive(Clone, Copy, PartialEq)]
enum CutState {
    /// Still sending; `missing` bytes will never come.
    Sending {
        missing: u64,
    },
    /// Sent what it will send; one Pending lets hyper flush before the error.
    Flushing,
    Failed,
}

impl Payload {
    pub(crate) fn empty() -> Self {
        Payload {
            kind: Kind::Once(None),
        }
    }

    pub(crate) fn from_static(s: &'static [u8]) -> Self {
        Self::bytes(Bytes::from_static(s))
    }

    pub(crate) fn bytes(b: Bytes) -> Self {
        Payload {
            kind: Kind::Once((!b.is_empty()).then_some(b)),
        }
    }

    /// `n` bytes of the pattern. Bodies longer than one chunk stream, and count their
    /// bytes in `bytes_out` as each chunk is handed to the connection.
    pub(crate) fn pattern(n: u64, server: &Arc<Server>) -> Self {
        if n <= CHUNK as u64 {
            Self::bytes(pattern_chunk(n as usize))
        } else {
            Payload {
                kind: Kind::Stream {
                    remaining: n,
                    cut: None,
                    server: server.clone(),
                },
            }
        }
    }

    /// Length of a one-piece body, which the caller counts in `bytes_out` when it
    /// hands the response over (streaming bodies count themselves: 0 here).
    pub(crate) fn one_piece_len(&self) -> u64 {
        match &self.kind {
            Kind::Once(b) => b.as_ref().map_or(0, |b| b.len() as u64),
            Kind::Stream { .. } => 0,
        }
    }

    /// Announces `n` bytes, sends the first half, then fails (the connection closes).
    pub(crate) fn cut_in_half(n: u64, server: &Arc<Server>) -> Self {
        let sent = n / 2;
        Payload {
            kind: Kind::Stream {
                remaining: sent,
                cut: Some(CutState::Sending { missing: n - sent }),
                server: server.clone(),
            },
        }
    }
}

impl Body for Payload {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match &mut self.get_mut().kind {
            Kind::Once(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Stream {
                remaining,
                cut,
                server,
            } => {
                if *remaining > 0 {
                    let len = (*remaining).min(CHUNK as u64);
                    *remaining -= len;
                    server.counters.add_bytes_out(len);
                    return Poll::Ready(Some(Ok(Frame::data(pattern_chunk(len as usize)))));
                }
                match cut {
                    None => Poll::Ready(None),
                    Some(state @ CutState::Sending { .. }) => {
                        *state = CutState::Flushing;
                        cx.waker().wake_by_ref();
                        Poll::Pending
                    }
                    Some(state) => {
                        *state = CutState::Failed;
                        Poll::Ready(Some(Err(BodyError::CutShort)))
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Once(b) => b.is_none(),
            Kind::Stream { remaining, cut, .. } => *remaining == 0 && cut.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Once(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Stream { remaining, cut, .. } => {
                let missing = match cut {
                    Some(CutState::Sending { missing }) => *missing,
                    _ => 0,
                };
                SizeHint::with_exact(remaining + missing)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Server, ServerOptions};
    use http_body_util::BodyExt;

    fn server() -> Arc<Server> {
        Server::new(ServerOptions {
            tls: false,
            ..ServerOptions::default()
        })
        .unwrap()
    }

    fn is_pattern(b: &[u8]) -> bool {
        b.iter().enumerate().all(|(i, &c)| c == PATTERN[i % 64])
    }

    #[tokio::test]
    async fn pattern_bodies_have_the_exact_length_and_content() {
        let s = server();
        for n in [0u64, 1, 22, 64, 65_536, 65_537, 300_000] {
            let body = Payload::pattern(n, &s);
            assert_eq!(body.size_hint().exact(), Some(n));
            let bytes = body.collect().await.unwrap().to_bytes();
            assert_eq!(bytes.len() as u64, n);
            assert!(is_pattern(&bytes), "n = {n}");
        }
        assert_eq!(
            s.counters().bytes_out,
            65_537 + 300_000,
            "streams count themselves"
        );
        assert_eq!(Payload::pattern(22, &s).one_piece_len(), 22);
    }

    #[test]
    fn pattern_slices_continue_the_pattern_from_any_offset() {
        assert!(pattern_from(5, 0).is_empty());
        let mut body = Vec::new();
        while (body.len() as u64) < 200_000 {
            let left = 200_000 - body.len() as u64;
            let piece = pattern_from(
                body.len() as u64,
                left.min(777 + body.len() as u64 % 99_999),
            );
            assert!(!piece.is_empty() && piece.len() as u64 <= left);
            body.extend_from_slice(piece);
        }
        assert_eq!(body.len(), 200_000);
        assert!(is_pattern(&body));
    }

    #[tokio::test]
    async fn cut_body_announces_all_sends_half_then_fails() {
        let s = server();
        let mut body = Payload::cut_in_half(1000, &s);
        assert_eq!(body.size_hint().exact(), Some(1000));
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first.len(), 500);
        assert!(body.frame().await.unwrap().is_err());
        assert_eq!(s.counters().bytes_out, 500);
    }
}
