use super::*;

/// What reading one response produced.
#[derive(Debug, PartialEq, Eq)]
struct Read {
    status: u16,
    body: u64,
    close: bool,
    /// Bytes after the response's end.
    leftover: usize,
}

/// Feeds `input` in the pieces that `cuts` (ascending offsets) make, the way
/// a connection does: unconsumed bytes stay in front of the next piece. At
/// the end of the input, `eof` says whether the server closed.
fn read(input: &[u8], head_request: bool, cuts: &[usize], eof: bool) -> Result<Read, ParseError> {
    let mut p = ResponseParser::new(head_request);
    let mut pending: Vec<u8> = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain([input.len()].iter()) {
        pending.extend_from_slice(&input[from..to]);
        from = to;
        if p.is_done() {
            continue;
        }
        let used = p.feed(&pending)?;
        assert!(used <= pending.len());
        pending.drain(..used);
    }
    if eof {
        p.eof()?;
    }
    if !p.is_done() {
        return Err(ParseError::Truncated);
    }
    Ok(Read {
        status: p.status(),
        body: p.body_bytes(),
        close: p.must_close(),
        leftover: pending.len(),
    })
}

/// The same response read whole, split once at every offset, and a byte at a time.
fn every_split(input: &[u8], head_request: bool, eof: bool) -> Result<Read, ParseError> {
    let whole = read(input, head_request, &[], eof);
    for cut in 1..input.len() {
        assert_eq!(
            read(input, head_request, &[cut], eof),
            whole,
            "split at {cut}"
        );
    }
    let bytes: Vec<usize> = (1..input.len()).collect();
    assert_eq!(
        read(input, head_request, &bytes, eof),
        whole,
        "byte at a time"
    );
    whole
}

fn ok(status: u16, body: u64, close: bool) -> Result<Read, ParseError> {
    Ok(Read {
        status,
        body,
        close,
        leftover: 0,
    })
}

#[test]
fn content_length_body_at_every_split() {
    let r =
        b"HTTP/1.1 200 OK\r\ncontent-length: 22\r\nContent-Type: x\r\n\r\n0123456789012345678901";
    assert_eq!(every_split(r, false, false), ok(200, 22, false));
}

#[test]
fn chunked_with_extensions_and_trailers_at_every_split() {
    let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
        5;name=value;x\r\nhello\r\n\
        A \t;ext\r\n0123456789\r\n\
        1\r\n!\r\n\
        0;last\r\nTrailer-One: a\r\nTrailer-Two: b\r\n\r\n";
    assert_eq!(every_split(r, false, false), ok(200, 16, false));
}

#[test]
fn chunked_without_trailers_and_upper_hex() {
    let r = b"HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n1F\r\n0123456789012345678901234567890\r\n0\r\n\r\n";
    assert_eq!(every_split(r, false, false), ok(200, 31, false));
}

#[test]
fn body_larger_than_any_read_buffer() {
    let mut r = b"HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n".to_vec();
    r.resize(r.len() + (1 << 20), b'x');
    let cuts: Vec<usize> = (1..r.len()).step_by(8192).collect();
    assert_eq!(read(&r, false, &cuts, false), ok(200, 1 << 20, false));

    let mut c = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n".to_vec();
    c.resize(c.len() + (1 << 20), b'y');
    c.extend_from_slice(b"\r\n0\r\n\r\n");
    let cuts: Vec<usize> = (1..c.len()).step_by(8191).collect();
    assert_eq!(read(&c, false, &cuts, false), ok(200, 1 << 20, false));
}

#[test]
fn interim_responses_are_skipped() {
    let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(every_split(r, false, false), ok(201, 2, false));
}

#[test]
fn bodiless_responses() {
    // HEAD: the length announced is the GET's, no body follows.
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
    assert_eq!(every_split(head, true, false), ok(200, 0, false));
    let no_content = b"HTTP/1.1 204 No Content\r\n\r\n";
    assert_eq!(every_split(no_content, false, false), ok(204, 0, false));
    let not_modified = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n";
    assert_eq!(every_split(not_modified, false, false), ok(304, 0, false));
    let empty = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(every_split(empty, false, false), ok(200, 0, false));
}

#[test]
fn connection_close_and_http10() {
    let close = b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 1\r\n\r\nx";
    assert_eq!(every_split(close, false, false), ok(200, 1, true));
    let old = b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx";
    assert_eq!(every_split(old, false, false), ok(200, 1, true));
    let old_kept = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx";
    assert_eq!(every_split(old_kept, false, false), ok(200, 1, false));
}

#[test]
fn body_until_close() {
    let r = b"HTTP/1.1 200 OK\r\nContent-Type: x\r\n\r\nsome bytes";
    assert_eq!(every_split(r, false, true), ok(200, 10, true));
    // Not chunked last: also until close, and never reused.
    let te = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nabc";
    assert_eq!(every_split(te, false, true), ok(200, 3, true));
}

#[test]
fn transfer_encoding_overrides_content_length_and_closes() {
    let r = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
    assert_eq!(every_split(r, false, false), ok(200, 2, true));
}

#[test]
fn bytes_after_the_response_are_left_over() {
    let r = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200";
    assert_eq!(read(r, false, &[], false).unwrap().leftover, 12);
}

#[test]
fn truncated_bodies_are_errors() {
    let fixed = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234";
    assert_eq!(every_split(fixed, false, true), Err(ParseError::Truncated));
    let chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab";
    assert_eq!(every_split(chunk, false, true), Err(ParseError::Truncated));
    let head = b"HTTP/1.1 200 OK\r\nContent-Le";
    assert_eq!(every_split(head, false, true), Err(ParseError::Truncated));
}

#[test]
fn malformed_inputs_are_errors_at_every_split() {
    let bad: &[(&[u8], &str)] = &[
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
            "Content-Length",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "Content-Length",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\n",
            "Content-Length",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "Content-Length",
        ),
        (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "101"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "head"),
        (b"HTTX/1.1 200 OK\r\n\r\n", "head"),
        (b"\x00\xff\x13garbage garbage\r\n\r\n", "head"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "not hex",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
            "not hex",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1 2\r\nx\r\n0\r\n\r\n",
            "not hex",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n",
            "CRLF",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\rX",
            "LF",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;a\nb\r\n",
            "control",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n",
            "64 bits",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: x\n\r\n",
            "bare LF",
        ),
    ];
    for (input, says) in bad {
        let err = every_split(input, false, false).expect_err(&String::from_utf8_lossy(input));
        assert!(
            err.to_string().contains(says),
            "{:?}: {err}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn oversized_head_and_trailers_are_refused() {
    let mut head = b"HTTP/1.1 200 OK\r\nX-Filler: ".to_vec();
    head.resize(MAX_HEAD_BYTES + 1, b'a');
    assert_eq!(
        read(&head, false, &[], false),
        Err(ParseError::HeadTooLarge)
    );
    let mut trailer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n".to_vec();
    while trailer.len() <= 2 * MAX_HEAD_BYTES {
        trailer.extend_from_slice(b"T: 0123456789012345678901234567890123456789\r\n");
    }
    let err = read(&trailer, false, &[4096], false).unwrap_err();
    assert!(err.to_string().contains("trailer"), "{err}");
}

#[test]
fn random_bytes_never_panic() {
    use rand::{Rng as _, SeedableRng as _};
    const FRAMING: &[u8] = b"0123456789abcdefABCDEF;\r\n \t=xyz";
    let mut rng = rand::rngs::SmallRng::seed_from_u64(19);
    let prefixes: [&[u8]; 3] = [
        b"",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
    ];
    for i in 0..3000 {
        let mut input = prefixes[i % 3].to_vec();
        let n = rng.gen_range(0..64);
        input.extend((0..n).map(|_| {
            let pick: u8 = rng.gen();
            // Mostly framing bytes, so the decoder gets past its first check.
            FRAMING[pick as usize % FRAMING.len()]
        }));
        let cut = rng.gen_range(0..=input.len());
        let _ = read(&input, i % 7 == 0, &[cut], i % 2 == 0);
    }
}

#[test]
fn reset_reads_the_next_response() {
    let mut p = ResponseParser::new(false);
    let r = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
    assert_eq!(p.feed(r), Ok(r.len()));
    assert!(p.is_done());
    p.reset();
    assert!(!p.head_done());
    assert_eq!(p.feed(r), Ok(r.len()));
    assert_eq!((p.status(), p.body_bytes()), (200, 3));
}
