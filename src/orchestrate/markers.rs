//! Window markers an external program may print on its stdout
//! (`BENCHGATE-WINDOW-OPEN`, `BENCHGATE-WINDOW-CLOSE`, one per line), followed
//! in its captured output file while the trial runs.

use std::fs::File;
use std::path::Path;

/// Optional window markers a program prints on stdout, one per line.
pub const MARK_OPEN: &str = "BENCHGATE-WINDOW-OPEN";
pub const MARK_CLOSE: &str = "BENCHGATE-WINDOW-CLOSE";

/// The acknowledgements benchgate writes on the program's stdin, one line
/// each, once the server's window has opened and once it has closed: a
/// program that waits for them (`BENCHGATE_WINDOW_ACK=stdin`) counts exactly
/// the span the server counts, however late benchgate sees a marker.
pub const ACK_OPENED: &str = "BENCHGATE-WINDOW-OPENED";
pub const ACK_CLOSED: &str = "BENCHGATE-WINDOW-CLOSED";

/// Testing knob (environment): milliseconds benchgate waits after seeing a
/// marker before acting on it, as a loaded machine's scheduler might; the
/// acknowledgements must keep the counts exact anyway (tests/window_ack.rs).
pub const LAG_VAR: &str = "BENCHGATE_TEST_MARKER_LAG_MS";

/// [`LAG_VAR`]'s delay, read once.
fn test_lag() -> Option<std::time::Duration> {
    static LAG: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    *LAG.get_or_init(|| {
        let ms: u64 = std::env::var(LAG_VAR).ok()?.trim().parse().ok()?;
        (ms > 0).then(|| std::time::Duration::from_millis(ms.min(10_000)))
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    Open,
    Close,
}

/// Follows the program's captured stdout for marker lines.
pub(super) struct Markers {
    path: std::path::PathBuf,
    offset: u64,
    partial: Vec<u8>,
    pub(super) opened: bool,
}

impl Markers {
    pub(super) fn new(path: &Path) -> Markers {
        Markers {
            path: path.to_path_buf(),
            offset: 0,
            partial: Vec::new(),
            opened: false,
        }
    }

    /// The next marker written since the last call, if any. Reads at most
    /// 1 MiB per call, so a chatty program costs little.
    pub(super) fn poll(&mut self) -> Option<Mark> {
        use std::io::{Read as _, Seek as _, SeekFrom};
        let mut f = File::open(&self.path).ok()?;
        f.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut buf = Vec::new();
        let n = f.take(1 << 20).read_to_end(&mut buf).ok()?;
        self.offset += n as u64;
        self.partial.extend_from_slice(&buf);
        let mut found = None;
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            match line.trim() {
                MARK_OPEN if !self.opened => {
                    self.opened = true;
                    found.get_or_insert(Mark::Open);
                }
                MARK_CLOSE if self.opened => {
                    found = Some(Mark::Close);
                }
                _ => {}
            }
        }
        if self.partial.len() > 4096 {
            self.partial.clear(); // a line this long is not a marker
        }
        if let (Some(_), Some(lag)) = (found, test_lag()) {
            std::thread::sleep(lag);
        }
        found
    }
}
