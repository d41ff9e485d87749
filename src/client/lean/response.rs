//! An incremental HTTP/1.1 response parser that never copies the body.
//!
//! The head is parsed in place by `httparse` (zero-copy: header values are
//! slices of the connection's read buffer); the body is only counted. Framing
//! follows RFC 9112 section 6.3, in its order: a HEAD request, 1xx, 204 and 304
//! responses have no body; a `Transfer-Encoding` ending in `chunked` is
//! chunked (section 7.1: sizes in hex, extensions after `;` skipped, trailer
//! fields read and dropped); any other `Transfer-Encoding`, or no length at
//! all, reads until the server closes; otherwise `Content-Length`, which must
//! be one number (repeats must agree). Interim 1xx responses (100 Continue, 103
//! Early Hints) are skipped; 101 Switching Protocols is an error, since no
//! request asks for an upgrade.
//!
//! The parser is fed whatever bytes arrived, however they were split; it
//! returns how many it consumed. Every malformed input is an error, never a
//! panic (tests below split inputs at every byte boundary).

/// Most header fields a response head may carry.
const MAX_HEADERS: usize = 100;
/// Longest response head (status line and fields), and longest trailer section.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Longest chunk-size line (hex digits, whitespace and extensions).
const MAX_CHUNK_LINE: usize = 4096;

/// Why a response could not be read. Every variant counts as a `read` error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("malformed response head: {0}")]
    Head(String),
    #[error("response head over {} bytes", MAX_HEAD_BYTES)]
    HeadTooLarge,
    #[error("invalid Content-Length")]
    ContentLength,
    #[error("101 Switching Protocols to a request that asked for no upgrade")]
    Upgrade,
    #[error("malformed chunked body: {0}")]
    Chunk(&'static str),
    #[error("the connection closed before the response ended")]
    Truncated,
}

/// How the body of the response being read ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the status line and header fields.
    Head,
    /// A `Content-Length` body: bytes still to come.
    Fixed(u64),
    Chunked(Chunk),
    /// No length: the body ends when the server closes the connection.
    UntilClose,
    Done,
}

/// Where the chunked decoder is (RFC 9112 section 7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Hex digits of a chunk size; `line` counts the line's bytes so far.
    Size { size: u64, digits: u8, line: usize },
    /// After the size: whitespace, then `;` extensions, up to CR. `named`:
    /// a `;` was seen (before it only whitespace may follow the size).
    Extension { size: u64, line: usize, named: bool },
    /// The size line's CR was read; LF next.
    SizeLf { size: u64 },
    /// Data bytes of the current chunk still to come.
    Data(u64),
    /// CR after a chunk's data.
    DataCr,
    /// LF after a chunk's data.
    DataLf,
    /// In the trailer section (after the last chunk): `line` bytes of the
    /// current field line so far (0: at a line start), `total` of all trailers.
    Trailer { line: usize, total: usize },
    /// A trailer line's CR was read; LF next. `empty`: the line was empty,
    /// so the LF ends the message.
    TrailerLf { empty: bool, total: usize },
}

/// One response, parsed as its bytes arrive.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    state: State,
    /// The request was HEAD: the response has no body whatever it announces.
    head_request: bool,
    status: u16,
    body_bytes: u64,
    close: bool,
}

impl ResponseParser {
    /// A parser for the response to a request; `head_request`: it was HEAD.
    pub fn new(head_request: bool) -> ResponseParser {
        ResponseParser {
            state: State::Head,
            head_request,
            status: 0,
            body_bytes: 0,
            close: false,
        }
    }

    /// Ready for the next response on the same connection.
    pub fn reset(&mut self) {
        *self = ResponseParser::new(self.head_request);
    }

    /// The final status (0 until the head is parsed).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Body bytes so far (decoded: chunk framing and trailers not counted).
    pub fn body_bytes(&self) -> u64 {
        self.body_bytes
    }

    /// Whether the final head has been read.
    pub fn head_done(&self) -> bool {
        self.state != State::Head
    }

    /// The connection cannot carry another request after this response
    /// (`Connection: close`, HTTP/1.0 without keep-alive, or a body that ends
    /// with the connection).
    pub fn must_close(&self) -> bool {
        self.close
    }

    /// Whether the response is complete.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Feeds bytes that arrived after those consumed so far. Returns how many
    /// were consumed: all of them while a body is read; none while the head is
    /// incomplete (feed them again with more appended). Bytes left over once
    /// the response is done belong to no request.
    pub fn feed(&mut self, input: &[u8]) -> Result<usize, ParseError> {
        let mut used = 0;
        while used < input.len() {
            let rest = &input[used..];
            used += match self.state {
                State::Done => break,
                State::Head => match self.head(rest)? {
                    Some(n) => n,
                    None => break,
                },
                State::Fixed(left) => {
                    let n = left.min(rest.len() as u64);
                    self.body_bytes += n;
                    self.state = if n == left {
                        State::Done
                    } else {
                        State::Fixed(left - n)
                    };
                    n as usize
                }
                State::UntilClose => {
                    self.body_bytes += rest.len() as u64;
                    rest.len()
                }
                State::Chunked(c) => self.chunked(c, rest)?,
            };
        }
        Ok(used)
    }

    /// The server closed the connection: completes a body that ends there,
    /// or says the response was cut short.
    pub fn eof(&mut self) -> Result<(), ParseError> {
        match self.state {
            State::Done => Ok(()),
            State::UntilClose => {
                self.state = State::Done;
                Ok(())
            }
            _ => Err(ParseError::Truncated),
        }
    }

    /// Parses one head from the start of `input`: its length, or `None`
    /// when it is not complete yet.
    fn head(&mut self, input: &[u8]) -> Result<Option<usize>, ParseError> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let len = match resp.parse(input) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if input.len() >= MAX_HEAD_BYTES => {
                return Err(ParseError::HeadTooLarge)
            }
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(ParseError::Head(e.to_string())),
        };
        let status = resp.code.unwrap_or(0);
        match status {
            101 => return Err(ParseError::Upgrade),
            // An interim response: the final one follows.
            100..=199 => return Ok(Some(len)),
            _ => {}
        }
        self.status = status;
        let framing = Framing::of(resp.version == Some(0), resp.headers)?;
        self.close = framing.close;
        self.state = if self.head_request || status == 204 || status == 304 {
            State::Done
        } else if framing.chunked {
            State::Chunked(Chunk::Size {
                size: 0,
                digits: 0,
                line: 0,
            })
        } else if let Some(0) = framing.length {
            State::Done
        } else if let Some(n) = framing.length {
            State::Fixed(n)
        } else {
            self.close = true;
            State::UntilClose
        };
        Ok(Some(len))
    }

    /// Advances the chunked decoder over `input`; returns the bytes consumed.
    fn chunked(&mut self, mut c: Chunk, input: &[u8]) -> Result<usize, ParseError> {
        let mut i = 0;
        while i < input.len() {
            if let Chunk::Data(left) = c {
                let n = left.min((input.len() - i) as u64);
                self.body_bytes += n;
                i += n as usize;
                c = if n == left {
                    Chunk::DataCr
                } else {
                    Chunk::Data(left - n)
                };
                continue;
            }
            let b = input[i];
            i += 1;
            c = match (c, b) {
                (Chunk::Size { size, digits, line }, _) if b.is_ascii_hexdigit() => {
                    if digits >= 16 {
                        return Err(ParseError::Chunk("chunk size over 64 bits"));
                    }
                    let d = (b as char).to_digit(16).unwrap_or(0) as u64;
                    Chunk::Size {
                        size: (size << 4) | d,
                        digits: digits + 1,
                        line: line + 1,
                    }
                }
                (Chunk::Size { digits: 0, .. }, _) => {
                    return Err(ParseError::Chunk("chunk size is not hex"))
                }
                (Chunk::Size { size, .. } | Chunk::Extension { size, .. }, b'\r') => {
                    Chunk::SizeLf { size }
                }
                (Chunk::Size { size, line, .. }, _) => Chunk::Extension {
                    size,
                    line: line + 1,
                    named: b == b';',
                }
                .checked(b)?,
                (Chunk::Extension { size, line, named }, _) => Chunk::Extension {
                    size,
                    line: line + 1,
                    named: named || b == b';',
                }
                .checked(b)?,
                (Chunk::SizeLf { size: 0 }, b'\n') => Chunk::Trailer { line: 0, total: 0 },
                (Chunk::SizeLf { size }, b'\n') => Chunk::Data(size),
                (Chunk::SizeLf { .. }, _) => {
                    return Err(ParseError::Chunk("CR without LF after a chunk size"))
                }
                (Chunk::DataCr, b'\r') => Chunk::DataLf,
                (Chunk::DataCr, _) => {
                    return Err(ParseError::Chunk("chunk data not followed by CRLF"))
                }
                (Chunk::DataLf, b'\n') => Chunk::Size {
                    size: 0,
                    digits: 0,
                    line: 0,
                },
                (Chunk::DataLf, _) => {
                    return Err(ParseError::Chunk("chunk data not followed by CRLF"))
                }
                (Chunk::Trailer { line, total }, b'\r') => Chunk::TrailerLf {
                    empty: line == 0,
                    total,
                },
                (Chunk::Trailer { line, total }, _) => {
                    if b == b'\n' {
                        return Err(ParseError::Chunk("bare LF in the trailer section"));
                    }
                    if total + 1 > MAX_HEAD_BYTES {
                        return Err(ParseError::Chunk("trailer section too long"));
                    }
                    Chunk::Trailer {
                        line: line + 1,
                        total: total + 1,
                    }
                }
                (Chunk::TrailerLf { empty: true, .. }, b'\n') => {
                    self.state = State::Done;
                    return Ok(i);
                }
                (
                    Chunk::TrailerLf {
                        empty: false,
                        total,
                    },
                    b'\n',
                ) => Chunk::Trailer { line: 0, total },
                (Chunk::TrailerLf { .. }, _) => {
                    return Err(ParseError::Chunk("CR without LF in the trailer section"))
                }
                (Chunk::Data(_), _) => unreachable!("data is consumed above"),
            };
        }
        self.state = State::Chunked(c);
        Ok(i)
    }
}

impl Chunk {
    /// An extension state after reading `b`: refused when `b` may not appear
    /// there or the line grew too long.
    fn checked(self, b: u8) -> Result<Chunk, ParseError> {
        let Chunk::Extension { line, named, .. } = self else {
            return Ok(self);
        };
        if b == b'\n' || (b < b' ' && b != b'\t') || b == 0x7f {
            return Err(ParseError::Chunk("control byte in a chunk-size line"));
        }
        if !named && b != b' ' && b != b'\t' && b != b';' {
            return Err(ParseError::Chunk("chunk size is not hex"));
        }
        if line > MAX_CHUNK_LINE {
            return Err(ParseError::Chunk("chunk-size line too long"));
        }
        Ok(self)
    }
}

/// What a final head's fields say about the body and the connection.
struct Framing {
    chunked: bool,
    length: Option<u64>,
    close: bool,
}

impl Framing {
    fn of(http10: bool, headers: &[httparse::Header<'_>]) -> Result<Framing, ParseError> {
        let mut transfer_encoding: Option<&[u8]> = None;
        let mut length: Option<u64> = None;
        let (mut close, mut keep_alive) = (false, false);
        for h in headers {
            let name = h.name.as_bytes();
            if name.eq_ignore_ascii_case(b"content-length") {
                for part in h.value.split(|&b| b == b',') {
                    let n = parse_length(part.trim_ascii()).ok_or(ParseError::ContentLength)?;
                    if length.is_some_and(|l| l != n) {
                        return Err(ParseError::ContentLength);
                    }
                    length = Some(n);
                }
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                // Several fields form one list; the last coding is what counts.
                transfer_encoding = Some(h.value);
            } else if name.eq_ignore_ascii_case(b"connection") {
                for token in h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                    close |= token.eq_ignore_ascii_case(b"close");
                    keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            }
        }
        let close = close || (http10 && !keep_alive);
        Ok(match transfer_encoding {
            // Transfer-Encoding overrides Content-Length (RFC 9112 6.3, rule 3);
            // the connection is not reused after such a message.
            Some(te) => {
                let last = te
                    .rsplit(|&b| b == b',')
                    .next()
                    .unwrap_or_default()
                    .trim_ascii();
                let chunked = last.eq_ignore_ascii_case(b"chunked");
                Framing {
                    chunked,
                    length: None,
                    close: close || length.is_some() || !chunked,
                }
            }
            None => Framing {
                chunked: false,
                length,
                close,
            },
        })
    }
}

/// A Content-Length value: ASCII digits only.
fn parse_length(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
