//! Window markers an external program may print on its stdout
//! (`BENCHGATE-WINDOW-OPEN`, `BENCHGATE-WINDOW-CLOSE`, one per line), found
//! as its captured output is folded while the trial runs; and, when the
//! window loop is offered, its replies ([`super::window_loop`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

use super::window_loop::{parse_reply, Reply};

/// Optional window markers a program prints on stdout, one per line.
pub const MARK_OPEN: &str = "BENCHGATE-WINDOW-OPEN";
pub const MARK_CLOSE: &str = "BENCHGATE-WINDOW-CLOSE";

/// The acknowledgements benchgate writes on the program's stdin, one line
/// each, once the server's window has opened and once it has closed: a
/// program that waits for them (`BENCHGATE_WINDOW_ACK=stdin`) counts exactly
/// the span the server counts, however late benchgate sees a marker.
pub const ACK_OPENED: &str = "BENCHGATE-WINDOW-OPENED";
pub const ACK_CLOSED: &str = "BENCHGATE-WINDOW-CLOSED";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    Open,
    Close,
}

/// A line longer than this is not a marker. A window's result (its
/// histogram in base64, up to 2 MiB) fits.
const MAX_LINE: usize = 3 << 20;
/// What every marker and reply contains: a line without it is not one.
const MARK_TEXT: &str = "BENCHGATE-";
/// Replies read but not yet asked for, at most: a program that prints
/// more is out of step, and says so by the error that takes their place.
const MAX_PENDING: usize = 16;

/// A line the watch found.
#[derive(Debug)]
enum Seen {
    Mark(Mark),
    /// A window-loop reply, or why a line that starts like one is not one.
    Reply(Result<Reply, String>),
}

/// A pair: the watch that the capture of the program's stdout feeds every
/// byte ([`super::capture`]), and the trial's end, which reads the markers
/// the watch found, in order.
/// `replies`: whether the window loop is offered, so that its replies are
/// looked for too.
pub(super) fn channel(replies: bool) -> (Watch, Markers) {
    let (tx, rx) = std::sync::mpsc::channel();
    let state = Arc::new(State {
        wanted: AtomicBool::new(true),
        behind: AtomicBool::new(false),
    });
    let watch = Watch {
        line: Vec::new(),
        overlong: false,
        finder: memchr::memmem::Finder::new(MARK_TEXT),
        tx,
        replies,
        state: Arc::clone(&state),
    };
    let markers = Markers {
        rx,
        state,
        opened: false,
        declared: false,
        pending: VecDeque::new(),
        lag: None,
    };
    (watch, markers)
}

/// What the watch and the trial tell each other besides the markers.
struct State {
    /// Cleared when no marker can matter any more ([`Markers::done`]).
    wanted: AtomicBool,
    /// Set when the watch gave up ([`Watch::fall_behind`]).
    behind: AtomicBool,
}

/// Finds the marker lines in the program's stdout as it is folded: every
/// line, however much the program prints around them.
pub(super) struct Watch {
    /// The line so far (up to [`MAX_LINE`] bytes).
    line: Vec<u8>,
    /// Whether the line so far is longer than [`MAX_LINE`].
    overlong: bool,
    /// Finds [`MARK_TEXT`].
    finder: memchr::memmem::Finder<'static>,
    tx: Sender<Seen>,
    /// Whether window-loop replies are looked for.
    replies: bool,
    state: Arc<State>,
}

impl Watch {
    /// Whether a marker can still matter: reading every byte of a flood
    /// costs about what writing it cost, and is spent only while it does.
    pub(super) fn wanted(&self) -> bool {
        self.state.wanted.load(Ordering::Relaxed)
    }

    /// Gives up: the program wrote faster than it could be read, and what
    /// was not read is skipped, markers and all ([`Markers::behind`]).
    pub(super) fn fall_behind(&self) {
        self.state.behind.store(true, Ordering::Relaxed);
    }

    /// The stream's next bytes. At a line start, the lines before the next
    /// occurrence of [`MARK_TEXT`] cannot be markers and are skipped whole:
    /// a flood costs a search per read, not work per line.
    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.line.is_empty() && !self.overlong {
                let before = match self.finder.find(bytes) {
                    Some(hit) => &bytes[..hit],
                    None => bytes,
                };
                let skip = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
                bytes = &bytes[skip..];
            }
            // The line in progress, to its end if it ends here.
            match memchr::memchr(b'\n', bytes) {
                Some(i) => {
                    self.end_line(&bytes[..=i]);
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.extend_line(bytes);
                    return;
                }
            }
        }
    }

    /// The line in progress goes on with `part` (no line end in it).
    fn extend_line(&mut self, part: &[u8]) {
        if self.overlong {
            return;
        }
        if self.line.len() + part.len() > MAX_LINE {
            self.line.clear();
            self.overlong = true;
        } else {
            self.line.extend_from_slice(part);
        }
    }

    /// The line in progress ends with `end` (its line end included).
    fn end_line(&mut self, end: &[u8]) {
        if !self.overlong && self.line.len() + end.len() <= MAX_LINE {
            if self.line.is_empty() {
                self.check(end);
            } else {
                self.line.extend_from_slice(end);
                self.check(&self.line);
            }
        }
        self.line.clear();
        self.overlong = false;
    }

    fn check(&self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let seen = match text.trim() {
            MARK_OPEN => Seen::Mark(Mark::Open),
            MARK_CLOSE => Seen::Mark(Mark::Close),
            _ if self.replies => match parse_reply(&text) {
                Some(reply) => Seen::Reply(reply),
                None => return,
            },
            _ => return,
        };
        // The trial's end is gone only once the trial is over.
        let _ = self.tx.send(seen);
    }
}

/// The markers the program printed, as the trial reads them.
pub(super) struct Markers {
    rx: Receiver<Seen>,
    state: Arc<State>,
    pub(super) opened: bool,
    /// Whether the program declared the window loop.
    pub(super) declared: bool,
    /// Window-loop replies read and not yet taken ([`Markers::reply`]).
    pending: VecDeque<Result<Reply, String>>,
    /// The test knob [`crate::knobs::MARKER_LAG_VAR`]: a wait after each
    /// marker before acting on it, as a loaded machine's scheduler might.
    lag: Option<Duration>,
}

impl Markers {
    /// Waits `lag` after each marker seen before returning it (the test
    /// knob [`crate::knobs::MARKER_LAG_VAR`]).
    pub(super) fn lagging(mut self, lag: Option<Duration>) -> Markers {
        self.lag = lag;
        self
    }

    /// No marker matters any more (the window closed, or opened without
    /// one): the rest of the stream need not be read.
    pub(super) fn done(&self) {
        self.state.wanted.store(false, Ordering::Relaxed);
    }

    /// Whether the watch gave up, so that a marker may have gone unseen:
    /// the trial cannot trust its window.
    pub(super) fn behind(&self) -> bool {
        self.state.behind.load(Ordering::Relaxed)
    }

    /// The next marker printed since the last call, waiting at most `wait`
    /// for one. An open marker counts once, a close marker only after it.
    pub(super) fn poll(&mut self, wait: Duration) -> Option<Mark> {
        let mut found = None;
        let marks: Vec<Mark> = (self.seen(wait).into_iter())
            .filter_map(|s| self.keep_reply(s))
            .collect();
        for mark in marks {
            match mark {
                Mark::Open if !self.opened => {
                    self.opened = true;
                    found.get_or_insert(Mark::Open);
                }
                Mark::Close if self.opened => {
                    found = Some(Mark::Close);
                }
                _ => {}
            }
        }
        if let (Some(_), Some(lag)) = (found, self.lag) {
            std::thread::sleep(lag);
        }
        found
    }

    /// What the watch saw since the last call, waiting at most `wait` for
    /// the first of it.
    fn seen(&self, wait: Duration) -> Vec<Seen> {
        let first = match self.rx.recv_timeout(wait) {
            Ok(seen) => Some(seen),
            Err(RecvTimeoutError::Timeout) => None,
            // The watch is gone (it gave up): nothing more will come.
            Err(RecvTimeoutError::Disconnected) => {
                std::thread::sleep(wait);
                None
            }
        };
        first.into_iter().chain(self.rx.try_iter()).collect()
    }

    /// A marker as it is; a reply kept for [`Markers::reply`] (a
    /// declaration sets [`Markers::declared`]).
    fn keep_reply(&mut self, seen: Seen) -> Option<Mark> {
        let reply = match seen {
            Seen::Mark(mark) => return Some(mark),
            Seen::Reply(Ok(Reply::Declare)) if !self.declared => {
                self.declared = true;
                return None;
            }
            Seen::Reply(reply) => reply,
        };
        if self.pending.len() < MAX_PENDING {
            self.pending.push_back(reply);
        } else if self.pending.len() == MAX_PENDING {
            self.pending.push_back(Err(format!(
                "the program printed more than {MAX_PENDING} window-loop replies that were not asked for"
            )));
        }
        None
    }

    /// The next window-loop reply (a second declaration included, as one
    /// out of place), waiting at most `wait` for one; the markers of the
    /// one-window protocol read meanwhile are ignored.
    pub(super) fn reply(&mut self, wait: Duration) -> Option<Result<Reply, String>> {
        if let Some(r) = self.pending.pop_front() {
            return Some(r);
        }
        for s in self.seen(wait) {
            self.keep_reply(s);
        }
        let reply = self.pending.pop_front();
        if let (Some(_), Some(lag)) = (&reply, self.lag) {
            std::thread::sleep(lag);
        }
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(chunks: &[&[u8]]) -> Vec<Mark> {
        let (mut watch, markers) = channel(false);
        for c in chunks {
            watch.feed(c);
        }
        drop(watch);
        markers
            .rx
            .iter()
            .filter_map(|s| match s {
                Seen::Mark(m) => Some(m),
                Seen::Reply(_) => None,
            })
            .collect()
    }

    #[test]
    fn window_loop_replies_are_found_when_the_loop_is_offered() {
        let out = b"log\nBENCHGATE-WINDOWS-LOOP\nBENCHGATE-READY\nBENCHGATE-WINDOW-OPEN\nBENCHGATE-WINDOW-RESULT {\"window\":1}\nBENCHGATE-WINDOW-RESULT {oops\nBENCHGATE-READY\n";
        let (mut watch, mut markers) = channel(true);
        for c in out.chunks(5) {
            watch.feed(c);
        }
        assert_eq!(markers.poll(Duration::ZERO), Some(Mark::Open));
        assert!(markers.declared);
        assert_eq!(markers.reply(Duration::ZERO), Some(Ok(Reply::Ready)));
        assert!(matches!(
            markers.reply(Duration::ZERO),
            Some(Ok(Reply::Result { window: 1, .. }))
        ));
        let bad = markers.reply(Duration::ZERO).unwrap().unwrap_err();
        assert!(bad.contains(r#""BENCHGATE-WINDOW-RESULT {oops""#), "{bad}");
        assert_eq!(markers.reply(Duration::ZERO), Some(Ok(Reply::Ready)));
        assert_eq!(markers.reply(Duration::ZERO), None);
        // Not offered: replies are not looked for.
        let (mut watch, mut markers) = channel(false);
        watch.feed(out);
        assert_eq!(markers.poll(Duration::ZERO), Some(Mark::Open));
        assert!(!markers.declared);
        assert_eq!(markers.reply(Duration::ZERO), None);
        // More unasked replies than kept: an error takes the rest's place.
        let (mut watch, mut markers) = channel(true);
        watch.feed(&b"BENCHGATE-READY\n".repeat(40));
        let replies: Vec<_> = std::iter::from_fn(|| markers.reply(Duration::ZERO)).collect();
        assert_eq!(replies.len(), MAX_PENDING + 1);
        assert!(replies[MAX_PENDING]
            .as_ref()
            .unwrap_err()
            .contains("not asked for"));
    }

    #[test]
    fn markers_are_whole_lines_however_they_arrive() {
        let open = b"noise\n  BENCHGATE-WINDOW-OPEN\r\nmore\nBENCHGATE-WINDOW-CLOSE\n";
        assert_eq!(marks(&[open]), [Mark::Open, Mark::Close]);
        // Split anywhere, byte by byte included.
        let bytes: Vec<&[u8]> = open.chunks(1).collect();
        assert_eq!(marks(&bytes), [Mark::Open, Mark::Close]);
        let (a, b) = open.split_at(30);
        assert_eq!(marks(&[a, b]), [Mark::Open, Mark::Close]);
        // Not a line of its own, or no line end yet: no marker.
        assert_eq!(marks(&[b"x BENCHGATE-WINDOW-OPEN\n"]), []);
        assert_eq!(marks(&[b"BENCHGATE-WINDOW-OPEN"]), []);
        // Among many lines, the text twice in one read, split across reads.
        let flood = b"line\n".repeat(10_000);
        let all = [
            &flood[..],
            b"BENCHGATE-WINDOW-OPEN BENCHGATE-WINDOW-\n",
            b"BENCHGATE-WINDOW-OPEN\nBENCHGATE-WINDOW-CLOSE\n",
            &flood,
        ]
        .concat();
        for size in [1, 7, 4096, 65_536, all.len()] {
            let chunks: Vec<&[u8]> = all.chunks(size).collect();
            assert_eq!(marks(&chunks), [Mark::Open, Mark::Close], "reads of {size}");
        }
    }

    #[test]
    fn the_end_of_an_overlong_line_is_not_a_marker() {
        let long = vec![b' '; MAX_LINE + 1];
        let line = [&long[..], b"BENCHGATE-WINDOW-OPEN\n"].concat();
        assert_eq!(marks(&[&line]), []);
        assert_eq!(marks(&[&long, b"BENCHGATE-WINDOW-OPEN\n"]), []);
        let next = [&line[..], b"BENCHGATE-WINDOW-CLOSE\n"].concat();
        assert_eq!(marks(&[&next]), [Mark::Close]);
    }
}
