//! Baseline stores: where the results of the default branch are kept so pull
//! requests can compare against them. One interface, two stores: a local
//! directory (tests, offline use) and a data branch in the repository written
//! through GitHub's Contents API.
//!
//! Contract for every store:
//! - entries are keyed by branch and commit sha ([`index::check_sha`]) in one
//!   index per branch ([`index::Index`], the same for every store); history per
//!   branch is bounded;
//! - `lookup` returns the entry of the exact commit, or the nearest older one
//!   on that branch (and says which, with its age);
//! - a stored file that does not parse, or has an unknown schema, stops a write
//!   with an error and is never replaced (nothing stored is lost or corrupted);
//! - what a store writes is read back as lookups read it before anything is
//!   written ([`check_readable`]): a run no reader accepts is refused, and the
//!   stored baselines stay as they were;
//! - pull-request runs never write.

mod github_files;
pub mod github_store;
pub mod index;
pub mod local;
pub mod rotation;

use serde::{Deserialize, Serialize};

pub use github_store::GitHubStore;
pub use local::LocalStore;

use anyhow::Context as _;

use crate::results::RunResults;
use index::{Index, IndexEntry};

/// One stored baseline's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineKey {
    /// Branch name without `refs/heads/` (e.g. `main`).
    pub branch: String,
    /// Full commit sha the results were measured on.
    pub sha: String,
    /// When the run started (RFC 3339, from the results file).
    pub started_at: String,
    pub run_id: String,
}

/// A baseline found for a comparison.
#[derive(Debug, Clone)]
pub struct FoundBaseline {
    pub key: BaselineKey,
    /// True when `key.sha` is the commit asked for; false when it is the
    /// nearest older entry on the branch.
    pub exact: bool,
    pub results: RunResults,
}

/// One stored run of a branch's history.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub key: BaselineKey,
    pub results: RunResults,
}

/// Where baselines live: one [`Index`] per branch, and the results files
/// it names.
pub trait BaselineStore {
    /// The branch's index; an empty one when none is stored (a store that
    /// knows why says so in [`Self::notes`]).
    fn index(&self, branch: &str) -> anyhow::Result<Index>;

    /// The results of `entry` of `branch`'s index; an error naming the file
    /// when it cannot be read.
    fn entry(&self, branch: &str, entry: &IndexEntry) -> anyhow::Result<RunResults>;

    /// Stores `results` as the baseline of (`branch`, `sha`), keeping at most
    /// `max_history` entries for the branch (oldest dropped first).
    fn store(
        &self,
        branch: &str,
        sha: &str,
        results: &RunResults,
        max_history: usize,
    ) -> anyhow::Result<BaselineKey>;

    /// What lookups found worth telling the reader (a missing data branch,
    /// a missing index), in plain words; empty by default.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The baseline of `sha` on `branch`, or the newest entry of `branch` whose
    /// commit is in `ancestors` (the commits before `sha`, newest first, as far
    /// as the caller knows them); with no `ancestors` given, the newest entry.
    fn lookup(
        &self,
        branch: &str,
        sha: &str,
        ancestors: &[String],
    ) -> anyhow::Result<Option<FoundBaseline>> {
        let index = self.index(branch)?;
        let Some((entry, exact)) = index.find(sha, ancestors) else {
            return Ok(None);
        };
        Ok(Some(FoundBaseline {
            key: entry.key(branch),
            exact,
            results: self.entry(branch, entry)?,
        }))
    }

    /// The branch's entries, newest first (for history charts).
    fn history(&self, branch: &str) -> anyhow::Result<Vec<BaselineKey>> {
        let index = self.index(branch)?;
        Ok(index.entries.iter().map(|e| e.key(branch)).collect())
    }

    /// The results of the branch's newest `last` entries, oldest first (the
    /// order they were stored in: commit order on the branch); empty when
    /// the branch has none. A listed file that cannot be read is an error
    /// naming it.
    fn load_history(&self, branch: &str, last: usize) -> anyhow::Result<Vec<StoredRun>> {
        let index = self.index(branch)?;
        index
            .newest_oldest_first(last)
            .map(|e| {
                Ok(StoredRun {
                    key: e.key(branch),
                    results: self.entry(branch, e)?,
                })
            })
            .collect()
    }
}

/// Reads `bytes`, the results file a store is about to write of `results`
/// as the baseline `what`, as a lookup will read it. Called before anything
/// is written: a run whose file no reader accepts (a figure serialized as
/// `null`, more cells than a results file holds) would break every later
/// lookup on its branch, so it is refused and the stored baselines stay.
/// The run's own values are checked first, so that the error names the field.
fn check_readable(results: &RunResults, bytes: &[u8], what: &str) -> anyhow::Result<()> {
    crate::results::check::check_values(results, what)
        .and_then(|()| RunResults::parse_bytes(bytes, what).map(|_| ()))
        .with_context(|| {
            format!(
                "refusing to store {what}: the file it would be does not read back as a results file; nothing was written and the stored baselines are unchanged (a later run on the branch stores one)"
            )
        })
}

/// How [`check_readable`] names the baseline of (`branch`, `sha`) of `results`.
fn describe(branch: &str, sha: &str, results: &RunResults) -> String {
    let short = sha.get(..7).unwrap_or(sha);
    format!("the baseline of {branch}@{short} (run {})", results.run_id)
}
