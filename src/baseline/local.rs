//! The local-directory baseline store, for tests and offline use (and the
//! action's `baseline-store: local:<dir>`).
//!
//! Layout: `<dir>/<branch-escaped>/index.json` lists the branch's entries
//! ([`super::index`]; a version 1 index here is oldest first,
//! [`V1Layout::LocalDir`]), and each entry's results document is
//! `<dir>/<branch-escaped>/<file>`; a commit measured twice keeps both runs.
//! Every write goes to a temporary file that is renamed into place, under an
//! exclusive `flock` on `<dir>/<branch-escaped>/.lock`, so a reader or a crash
//! never sees half a file and two writers never lose each other's entry. The
//! index is the commit point: a results file is written first (once its bytes
//! read back as a lookup reads them, [`super::check_readable`]), then the index
//! that names it; files dropped from the bounded history are deleted after the
//! new index is in place.
//!
//! An index or results file that does not parse, or has an unknown schema, is
//! an error naming the file and the fix; it is never rewritten.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::index::{check_sha, Index, IndexEntry, V1Layout, MAX_INDEX_BYTES};
use super::{BaselineKey, BaselineStore};
use crate::files::read_untrusted;
use crate::results::RunResults;

/// A baseline store in a local directory.
#[derive(Debug, Clone)]
pub struct LocalStore {
    dir: PathBuf,
}

impl LocalStore {
    /// A store rooted at `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> LocalStore {
        LocalStore { dir: dir.into() }
    }

    /// The directory holding `branch`'s index and results files.
    pub fn branch_dir(&self, branch: &str) -> anyhow::Result<PathBuf> {
        Ok(self.dir.join(escape_branch(branch)?))
    }

    /// The branch's index; an empty one when the branch has none yet.
    pub fn read_index(&self, branch: &str) -> anyhow::Result<Index> {
        let path = self.branch_dir(branch)?.join("index.json");
        let bytes = match read_untrusted(&path, "baseline index", MAX_INDEX_BYTES) {
            Ok(b) => b,
            Err(e) if e.is_not_found() => return Ok(Index::new(branch)),
            Err(e) => return Err(e.into()),
        };
        Index::parse(
            &bytes,
            &path.display().to_string(),
            branch,
            V1Layout::LocalDir,
        )
    }
}

impl BaselineStore for LocalStore {
    fn index(&self, branch: &str) -> anyhow::Result<Index> {
        self.read_index(branch)
    }

    fn entry(&self, branch: &str, entry: &IndexEntry) -> anyhow::Result<RunResults> {
        let path = self.branch_dir(branch)?.join(&entry.file);
        RunResults::read(&path).with_context(|| {
            format!(
                "baseline {} of branch {branch:?} cannot be used: restore {} or remove its entry from {} by hand (benchgate never rewrites stored baselines)",
                entry.sha,
                path.display(),
                path.with_file_name("index.json").display()
            )
        })
    }

    fn store(
        &self,
        branch: &str,
        sha: &str,
        results: &RunResults,
        max_history: usize,
    ) -> anyhow::Result<BaselineKey> {
        results.refuse_bad_histograms("the run to store as a baseline")?;
        check_sha(sha)?;
        anyhow::ensure!(
            max_history >= 1,
            "baseline history bound {max_history}: keep at least 1 entry per branch"
        );
        let json = serde_json::to_vec_pretty(results).context("serializing the baseline")?;
        super::check_readable(results, &json, &super::describe(branch, sha, results))?;
        let dir = self.branch_dir(branch)?;
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("creating the baseline directory {}", dir.display()))?;
        let _lock = lock(&dir)?;
        let mut index = self.read_index(branch)?;
        let before = index.entries.len();
        let file = unique_file_name(&dir, sha, &results.run_id);
        crate::files::write_atomic(&dir.join(&file), &json)?;
        let entry = IndexEntry {
            sha: sha.to_string(),
            started_at: results.started_at.clone(),
            run_id: results.run_id.clone(),
            file,
            bytes: Some(json.len() as u64),
            histograms_stripped: false,
        };
        let dropped = index.add(entry.clone(), max_history);
        let index_path = dir.join("index.json");
        let json = serde_json::to_vec_pretty(&index).context("serializing the baseline index")?;
        crate::files::write_atomic(&index_path, &json)?;
        for d in &dropped {
            // The new index no longer names it; a leftover file is harmless.
            let _ = std::fs::remove_file(dir.join(&d.file));
        }
        // Read back: exactly the new entry was added (and only the oldest dropped).
        let after = self.read_index(branch)?;
        anyhow::ensure!(
            after.entries.first() == Some(&entry)
                && after.entries.len() == before + 1 - dropped.len(),
            "baseline index {} did not read back as written; another writer may be bypassing the lock",
            index_path.display()
        );
        Ok(entry.key(branch))
    }
}

/// A branch name as one safe directory name: bytes outside `[A-Za-z0-9._-]`,
/// and a leading `.`, are percent-encoded (`feature/x` -> `feature%2Fx`).
pub fn escape_branch(branch: &str) -> anyhow::Result<String> {
    anyhow::ensure!(
        !branch.is_empty(),
        "empty branch name for the baseline store: give a branch such as `main`"
    );
    let mut out = String::with_capacity(branch.len());
    for (i, b) in branch.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0);
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(out)
}

fn unique_file_name(dir: &Path, sha: &str, run_id: &str) -> String {
    let id: String = run_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    let base = format!("{}-{id}", sha.to_ascii_lowercase());
    let mut name = format!("{base}.json");
    let mut n = 1;
    while dir.join(&name).exists() {
        n += 1;
        name = format!("{base}-{n}.json");
    }
    name
}

/// An exclusive lock on the branch directory, released when dropped (and by
/// the kernel if the process dies).
fn lock(dir: &Path) -> anyhow::Result<File> {
    let path = dir.join(".lock");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening the lock file {}", path.display()))?;
    // SAFETY: flock on a file descriptor we own; no memory is involved.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("locking {}", path.display()));
    }
    Ok(f)
}

#[cfg(test)]
#[path = "local_tests.rs"]
mod tests;
