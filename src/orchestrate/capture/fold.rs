//! What is kept of one output stream: its first [`HEAD_BYTES`], its last
//! [`TAIL_BYTES`] and how many bytes it had in all. The start of a program's
//! output says how it started (its version, a usage error), the end how it
//! ended (a panic, the last request); the middle of a flood is counted, not
//! kept, so neither memory nor disk grows with it.

use std::collections::VecDeque;

/// Bytes kept from the start of a stream.
pub const HEAD_BYTES: usize = 64 << 10;
/// Bytes kept from the end of a stream.
pub const TAIL_BYTES: usize = 256 << 10;
/// How far from a cut a line break is looked for: a kept part starts and ends
/// with whole lines unless a line is longer than this.
const LINE_SNAP: usize = 4096;

/// A stream folded as it is read: head, tail and count.
#[derive(Debug, Default)]
pub struct Fold {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Fold {
    /// Adds the stream's next bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = HEAD_BYTES - self.head.len();
        let (head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(head);
        if rest.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - TAIL_BYTES..]);
        } else {
            let over = (self.tail.len() + rest.len()).saturating_sub(TAIL_BYTES);
            self.tail.drain(..over);
            self.tail.extend(rest);
        }
    }

    /// Counts the stream's next `n` bytes without keeping them: what was
    /// kept as the tail no longer ends the stream, so it goes.
    pub fn skip(&mut self, n: u64) {
        debug_assert!(self.head_is_full());
        self.total += n;
        self.tail.clear();
    }

    /// Whether further bytes can only go to the tail.
    pub fn head_is_full(&self) -> bool {
        self.head.len() == HEAD_BYTES
    }

    /// What is kept, cut at line breaks where something was left out.
    pub fn output(&self) -> Output {
        let mut head = self.head.clone();
        let mut tail: Vec<u8> = self.tail.iter().copied().collect();
        let kept = (head.len() + tail.len()) as u64;
        if kept < self.total {
            head.truncate(head.len() - partial_last_line(&head));
            tail.drain(..partial_first_line(&tail));
        }
        let omitted = self.total - (head.len() + tail.len()) as u64;
        Output {
            head,
            tail,
            omitted,
        }
    }
}

/// Bytes after the last line break, if one is within [`LINE_SNAP`] of the end.
fn partial_last_line(bytes: &[u8]) -> usize {
    let from = bytes.len().saturating_sub(LINE_SNAP);
    memchr::memrchr(b'\n', &bytes[from..]).map_or(0, |i| bytes.len() - (from + i + 1))
}

/// Bytes up to the first line break, if one is within [`LINE_SNAP`] of the start.
fn partial_first_line(bytes: &[u8]) -> usize {
    let within = &bytes[..bytes.len().min(LINE_SNAP)];
    memchr::memchr(b'\n', within).map_or(0, |i| i + 1)
}

/// A stream's kept output: head, then `omitted` bytes left out, then tail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    head: Vec<u8>,
    tail: Vec<u8>,
    omitted: u64,
}

impl Output {
    /// How many bytes the stream had in all.
    pub fn total(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.omitted
    }

    /// Everything kept, as text: the head, a line saying how much was left
    /// out (if anything was), the tail.
    pub fn text(&self) -> String {
        if self.omitted == 0 {
            return String::from_utf8_lossy(&[&self.head[..], &self.tail[..]].concat())
                .into_owned();
        }
        let head = String::from_utf8_lossy(&self.head);
        let newline = if head.is_empty() || head.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        format!(
            "{head}{newline}{}\n{}",
            omission(self.omitted),
            String::from_utf8_lossy(&self.tail)
        )
    }

    /// The last `n` bytes or so (from a line start), trimmed, after a line
    /// saying how much came before them: what a failure reason quotes.
    pub fn excerpt(&self, n: usize) -> String {
        let (bytes, before) = if self.omitted == 0 {
            ([&self.head[..], &self.tail[..]].concat(), 0)
        } else {
            (self.tail.clone(), self.head.len() as u64 + self.omitted)
        };
        let mut cut = bytes.len().saturating_sub(n);
        if cut > 0 {
            cut += partial_first_line(&bytes[cut..]);
        }
        let text = String::from_utf8_lossy(&bytes[cut..]).trim().to_string();
        match before + cut as u64 {
            0 => text,
            left => format!("{}\n{text}", omission(left)),
        }
    }
}

/// The line that stands for `n` bytes left out.
fn omission(n: u64) -> String {
    format!(
        "… {} omitted ({n} bytes) …",
        crate::report::format::bytes(n as f64)
    )
}

#[cfg(test)]
impl Output {
    /// What is kept of `bytes`.
    pub fn of(bytes: &[u8]) -> Output {
        let mut fold = Fold::default();
        fold.push(bytes);
        fold.output()
    }

    /// The kept parts, for checking them byte for byte.
    pub fn parts(&self) -> (&[u8], &[u8]) {
        (&self.head, &self.tail)
    }

    /// Bytes left out between head and tail.
    pub fn omitted(&self) -> u64 {
        self.omitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(chunks: &[&[u8]]) -> Output {
        let mut f = Fold::default();
        for c in chunks {
            f.push(c);
        }
        f.output()
    }

    #[test]
    fn a_short_stream_is_kept_whole() {
        let o = folded(&[b"one\n", b"two", b"\nthree"]);
        assert_eq!(o.text(), "one\ntwo\nthree");
        assert_eq!((o.total(), o.omitted()), (13, 0));
        assert_eq!(o.excerpt(2048), "one\ntwo\nthree");
        // Up to head and tail together, nothing is left out.
        let exact = vec![b'x'; HEAD_BYTES + TAIL_BYTES];
        let o = folded(&[&exact]);
        assert_eq!((o.omitted(), o.text().len()), (0, exact.len()));
    }

    #[test]
    fn a_long_stream_keeps_whole_lines_of_its_head_and_tail() {
        // Lines of 10 bytes, "000000000\n" up: 1 MB in chunks of odd sizes.
        let all: Vec<u8> = (0..100_000)
            .flat_map(|i| format!("{i:09}\n").into_bytes())
            .collect();
        let mut f = Fold::default();
        for c in all.chunks(7_777) {
            f.push(c);
        }
        let o = f.output();
        let (head, tail) = o.parts();
        assert_eq!(head, &all[..HEAD_BYTES / 10 * 10]);
        assert_eq!(tail, &all[all.len() - TAIL_BYTES / 10 * 10..]);
        assert_eq!(o.total(), all.len() as u64);
        assert_eq!(o.omitted(), (all.len() - head.len() - tail.len()) as u64);
        let text = o.text();
        let line = format!(
            "\n… {} omitted ({} bytes) …\n",
            crate::report::format::bytes(o.omitted() as f64),
            o.omitted()
        );
        assert!(text.contains(&line), "{line}");
        assert!(text.starts_with("000000000\n") && text.ends_with("000099999\n"));
        // The excerpt: the last whole lines within 2048 bytes, all before counted.
        let e = o.excerpt(2048);
        let (first, rest) = e.split_once('\n').unwrap();
        let before = all.len() - 2040;
        let size = crate::report::format::bytes(before as f64);
        assert_eq!(first, format!("… {size} omitted ({before} bytes) …"));
        assert!(rest.starts_with("000099796\n") && rest.ends_with("000099999"));
    }

    #[test]
    fn skipped_bytes_are_counted_and_end_the_old_tail() {
        let mut f = Fold::default();
        f.push(&vec![b'h'; HEAD_BYTES]);
        f.push(b"old tail\n");
        f.skip(1 << 30);
        f.push(b"x\nnew tail\n");
        let o = f.output();
        assert_eq!(o.parts().1, b"new tail\n");
        assert_eq!(o.total(), HEAD_BYTES as u64 + 9 + (1 << 30) + 11);
        assert!(o
            .text()
            .contains("… 1.0GiB omitted (1073741835 bytes) …\nnew tail"));
    }

    #[test]
    fn a_line_longer_than_the_snap_is_cut_where_it_must() {
        let o = folded(&[&vec![b'a'; 1 << 20], b"\nend\n"]);
        let (head, tail) = o.parts();
        assert_eq!((head.len(), tail.len()), (HEAD_BYTES, TAIL_BYTES));
        // The head's line goes on: the omission starts a line of its own.
        assert!(o.text().contains("aaa\n… "));
    }
}
