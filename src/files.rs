//! Writing files the two ways benchgate does: atomically (whole or not at
//! all: results files, baselines, a rewritten config) and appending (GitHub's
//! step summary and output files, which other steps share); reading the files
//! benchgate does not control ([`untrusted`]) and checking their JSON before
//! it is parsed ([`json`]).

pub mod json;
pub mod untrusted;

pub use untrusted::{read_untrusted, shortened, ReadError, Refusal, SHOWN_CHARS};

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// Writes `bytes` to a temporary file next to `path` (with an existing
/// file's permissions), syncs it and renames it over `path`, so a reader or
/// a crash sees the old file or the new one, never half of one. On failure
/// the temporary file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = temp_path(path);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if let Ok(meta) = std::fs::metadata(path) {
            f.set_permissions(meta.permissions())?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::Error::new(e).context(format!("writing {}", path.display()))
    })
}

/// Appends `text` to `path`, creating it when missing.
pub fn append(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("appending to {}", path.display()))
}

/// `.<name>.tmp-<pid>` in `path`'s directory: the same file system, so the
/// rename is atomic; hidden, and never a name benchgate reads.
fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn replaces_whole_keeps_permissions_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bench.toml");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["bench.toml"]);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be: the rename fails.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), "kept").unwrap();
        let e = write_atomic(&path, b"new").unwrap_err();
        assert!(format!("{e:#}").contains("writing "), "{e:#}");
        assert_eq!(
            std::fs::read_to_string(path.join("inside")).unwrap(),
            "kept"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["taken"], "the temporary file was left behind");
    }

    #[test]
    fn appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        append(&path, "a\n").unwrap();
        append(&path, "b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
    }
}
