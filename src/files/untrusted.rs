//! Reading a file benchgate does not control (a results file from an
//! artifact, a baseline from the data branch, a config in a pull request, a
//! command client's result file): the one way every such file is opened.
//!
//! `File::open` on a FIFO blocks until a writer appears, forever if none
//! does, before any size check could run; a device reports size 0 and reads
//! without end. So the file is opened non-blocking (a FIFO opens at once
//! then), its type is checked on the open descriptor (no race with a rename),
//! and only a regular file is read, at most `limit + 1` bytes of it (it may
//! grow after the check). On a regular file `O_NONBLOCK` changes nothing.

use std::fmt;
use std::fs::FileType;
use std::io::{self, Read as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// Why an untrusted file was not read.
#[derive(Debug)]
pub enum Refusal {
    /// Opening or reading failed (missing, no permission, ...).
    Io(io::Error),
    /// Not a regular file: `"a FIFO"`, `"a directory"`, ...
    NotAFile(&'static str),
    /// Over the limit: the size it has (`"N"`, or `"more than N"` when it
    /// grew while being read).
    TooBig { size: String, limit: u64 },
}

impl fmt::Display for Refusal {
    /// The reason alone, for callers that name the file their own way.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Io(e) => write!(f, "{e}"),
            Refusal::NotAFile(kind) => write!(f, "it is {kind}, not a file"),
            Refusal::TooBig { size, limit } => {
                write!(f, "it is {size} bytes, over the {limit} byte limit")
            }
        }
    }
}

/// An untrusted file that was not read: which file, what it is to
/// benchgate, and why.
#[derive(Debug)]
pub struct ReadError {
    pub path: PathBuf,
    /// What the file is, for messages: `"results file"`, `"config file"`.
    pub what: &'static str,
    pub refusal: Refusal,
}

impl ReadError {
    /// Whether the file does not exist (some callers treat that as empty).
    pub fn is_not_found(&self) -> bool {
        matches!(&self.refusal, Refusal::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }

    /// Whether the file was over the limit.
    pub fn is_too_big(&self) -> bool {
        matches!(self.refusal, Refusal::TooBig { .. })
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, path) = (self.what, self.path.display());
        match &self.refusal {
            Refusal::Io(e) => write!(f, "cannot read {what} {path}: {e}"),
            Refusal::NotAFile(kind) => write!(
                f,
                "{what} {path} is {kind}, not a file: pass the path of a regular file"
            ),
            Refusal::TooBig { size, limit } => {
                write!(
                    f,
                    "{what} {path} is {size} bytes, over the {limit} byte limit"
                )
            }
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.refusal {
            Refusal::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Reads the untrusted file `path` (`what` names it in errors) of at most
/// `limit` bytes: refused without blocking unless it is a regular file (a
/// symlink is followed to what it names), and refused over the limit.
pub fn read_untrusted(path: &Path, what: &'static str, limit: u64) -> Result<Vec<u8>, ReadError> {
    let refused = |refusal| ReadError {
        path: path.to_path_buf(),
        what,
        refusal,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // A socket cannot be opened at all; say what it is.
            Some(libc::ENXIO) => match std::fs::metadata(path) {
                Ok(m) if !m.is_file() => refused(Refusal::NotAFile(kind(&m.file_type()))),
                _ => refused(Refusal::Io(e)),
            },
            _ => refused(Refusal::Io(e)),
        })?;
    let meta = file.metadata().map_err(|e| refused(Refusal::Io(e)))?;
    if !meta.is_file() {
        return Err(refused(Refusal::NotAFile(kind(&meta.file_type()))));
    }
    let too_big = |size: String| refused(Refusal::TooBig { size, limit });
    if meta.len() > limit {
        return Err(too_big(meta.len().to_string()));
    }
    // Sized to the file, so a read of the whole file never doubles the buffer.
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refused(Refusal::Io(e)))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(format!("more than {limit}")));
    }
    Ok(bytes)
}

/// Longest free text from an untrusted file (a run id, a git ref, a CPU
/// model) printed as one item of a line: the file may hold kilobytes of it.
pub const SHOWN_CHARS: usize = 80;

/// `text` cut to at most `max` characters, ending in `…` when cut: free
/// text from an untrusted file, shortened where it is printed.
pub fn shortened(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some(_) => {
            let keep = text
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(0, |(i, _)| i);
            format!("{}…", &text[..keep]).into()
        }
    }
}

/// What a file that is not a regular file is, for messages.
fn kind(t: &FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn reads_a_regular_file_and_a_symlink_to_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, b"{}").unwrap();
        assert_eq!(read_untrusted(&path, "results file", 2).unwrap(), b"{}");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read_untrusted(&link, "results file", 2).unwrap(), b"{}");
    }

    #[test]
    fn a_fifo_is_refused_at_once_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo.json");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        let e = read_untrusted(&path, "results file", 1 << 20).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(!e.is_not_found() && !e.is_too_big());
        assert_eq!(
            e.to_string(),
            format!(
                "results file {} is a FIFO, not a file: pass the path of a regular file",
                path.display()
            )
        );
    }

    #[test]
    fn devices_directories_and_sockets_are_refused_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let refusal = |p: &Path| {
            read_untrusted(p, "config file", 1 << 20)
                .unwrap_err()
                .refusal
        };
        let kind_of = |p: &Path| match refusal(p) {
            Refusal::NotAFile(k) => k,
            other => panic!("{}: {other}", p.display()),
        };
        assert_eq!(kind_of(Path::new("/dev/zero")), "a character device");
        assert_eq!(kind_of(dir.path()), "a directory");
        let sock = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert_eq!(kind_of(&sock), "a socket");
        // A symlink to a device is the device.
        let link = dir.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert_eq!(kind_of(&link), "a character device");
        assert_eq!(
            refusal(&link).to_string(),
            "it is a character device, not a file"
        );
    }

    #[test]
    fn free_text_is_shortened_to_its_characters() {
        assert_eq!(shortened("abc", 3), "abc");
        assert_eq!(shortened("abcd", 3), "ab…");
        assert_eq!(shortened("ééééé", 4), "ééé…");
        assert_eq!(
            shortened(&"x".repeat(80_000_000), SHOWN_CHARS)
                .chars()
                .count(),
            80
        );
    }

    #[test]
    fn over_the_limit_and_missing_files_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("meta.json");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_untrusted(&path, "meta file", 5).unwrap(), b"12345");
        let e = read_untrusted(&path, "meta file", 4).unwrap_err();
        assert!(e.is_too_big());
        assert_eq!(
            e.to_string(),
            format!(
                "meta file {} is 5 bytes, over the 4 byte limit",
                path.display()
            )
        );
        let e = read_untrusted(&dir.path().join("none"), "meta file", 4).unwrap_err();
        assert!(e.is_not_found(), "{e}");
        assert!(e.to_string().starts_with("cannot read meta file "), "{e}");
    }
}
