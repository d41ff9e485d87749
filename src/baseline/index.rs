//! The index of one branch's baselines, the same for both stores: `index.json`
//! in the branch's directory (`<dir>/<branch>/` locally,
//! `baselines/<branch>/` on the data branch), entries newest first, each naming
//! its results file in that directory. Versioned and strict: a file with another
//! schema name, a version this benchgate does not read, unknown fields, another
//! branch or a file name outside its directory is refused (and so never
//! overwritten).
//!
//! Both stores write version 2. Version 1 is still read, in the layout of the
//! store that wrote it ([`V1Layout`]): the two stores wrote v1 under the same
//! schema name in different layouts, and only the store reading a file knows
//! which one it holds. A v1 index is written back as v2 by the next store.

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::BaselineKey;
use crate::files::json::{self, Breach, Limits};

/// The `schema` field of every index.
pub const INDEX_SCHEMA: &str = "benchgate-baseline-index";
/// The index layout this benchgate writes (and the newest it reads).
pub const INDEX_VERSION: u32 = 2;
/// The oldest layout this benchgate reads.
const OLDEST_VERSION: u32 = 1;

/// Largest index a local store reads (the data branch's files are under 1 MB).
pub const MAX_INDEX_BYTES: u64 = 16 << 20;

/// The limits of an index's JSON, checked before it is read into a
/// `serde_json::Value` (its version decides the layout): an array item of
/// a `Value` takes its 32 bytes twice (a growing `Vec`), an object member a
/// map slot of key and value in a half-full node.
const LIMITS: Limits = Limits {
    depth: 8,
    values: 1_000_000,
    key_bytes: 256,
    text_bytes: 4096,
    items: 100_000,
    item_bytes: 64,
    member_bytes: 160,
    extra_bytes: 64 << 20,
    rules: &[],
};

/// Which store wrote a version 1 index, and so its layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V1Layout {
    /// The data branch ([`super::GitHubStore`]): newest first; every entry has
    /// `bytes` and may have `histograms_stripped`.
    DataBranch,
    /// A local directory ([`super::LocalStore`]): oldest first; entries have
    /// neither `bytes` nor `histograms_stripped`, and a commit may have several.
    LocalDir,
}

/// One branch's stored baselines. Serializes as the current layout
/// (`schema`, `version` [`INDEX_VERSION`], `branch`, `entries`); read it with
/// [`Index::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub branch: String,
    /// Newest first.
    pub entries: Vec<IndexEntry>,
}

/// One stored baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexEntry {
    pub sha: String,
    pub started_at: String,
    pub run_id: String,
    /// The results file, a plain name in the branch's directory.
    pub file: String,
    /// Its size in bytes as written; `None` for an entry a local store wrote
    /// in version 1, which did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The per-cell latency histograms were removed to keep the file under
    /// GitHub's 1 MB Contents API limit; summaries and trials are whole.
    #[serde(default)]
    pub histograms_stripped: bool,
}

/// The file as written: the current schema and version, always.
#[derive(Serialize)]
struct Written<'a> {
    schema: &'a str,
    version: u32,
    branch: &'a str,
    entries: &'a [IndexEntry],
}

/// The file as read, any version; `E` is the entry layout of that version.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Read<E> {
    /// Checked before the layout is chosen.
    #[serde(rename = "schema")]
    _schema: serde::de::IgnoredAny,
    #[serde(rename = "version")]
    _version: serde::de::IgnoredAny,
    branch: String,
    entries: Vec<E>,
}

/// An entry of a version 1 index on the data branch.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DataBranchV1Entry {
    sha: String,
    started_at: String,
    run_id: String,
    file: String,
    bytes: u64,
    #[serde(default)]
    histograms_stripped: bool,
}

/// An entry of a version 1 index in a local directory.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocalV1Entry {
    sha: String,
    started_at: String,
    run_id: String,
    file: String,
}

impl From<DataBranchV1Entry> for IndexEntry {
    fn from(e: DataBranchV1Entry) -> IndexEntry {
        IndexEntry {
            sha: e.sha,
            started_at: e.started_at,
            run_id: e.run_id,
            file: e.file,
            bytes: Some(e.bytes),
            histograms_stripped: e.histograms_stripped,
        }
    }
}

impl From<LocalV1Entry> for IndexEntry {
    fn from(e: LocalV1Entry) -> IndexEntry {
        IndexEntry {
            sha: e.sha,
            started_at: e.started_at,
            run_id: e.run_id,
            file: e.file,
            bytes: None,
            histograms_stripped: false,
        }
    }
}

impl IndexEntry {
    pub fn key(&self, branch: &str) -> BaselineKey {
        BaselineKey {
            branch: branch.to_string(),
            sha: self.sha.clone(),
            started_at: self.started_at.clone(),
            run_id: self.run_id.clone(),
        }
    }
}

impl Serialize for Index {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            schema: INDEX_SCHEMA,
            version: INDEX_VERSION,
            branch: &self.branch,
            entries: &self.entries,
        }
        .serialize(serializer)
    }
}

impl Index {
    pub fn new(branch: &str) -> Index {
        Index {
            branch: branch.to_string(),
            entries: Vec::new(),
        }
    }

    /// Parses and checks the index of `branch`; `source` names the file in
    /// errors, and `v1` says how to read a version 1 file (the layout of the
    /// store reading it).
    pub fn parse(bytes: &[u8], source: &str, branch: &str, v1: V1Layout) -> anyhow::Result<Index> {
        let fix =
            "fix or restore it by hand (benchgate never overwrites a baseline index it cannot read)";
        match json::scan(bytes, &LIMITS) {
            Ok(()) => {}
            Err(Breach::Syntax(e)) => {
                return Err(anyhow::anyhow!("{e}")
                    .context(format!("baseline index {source} is not valid JSON: {fix}")))
            }
            Err(breach) => anyhow::bail!("baseline index {source}: {breach}: {fix}"),
        }
        let value: serde_json::Value = serde_json::from_slice(bytes)
            .with_context(|| format!("baseline index {source} is not valid JSON: {fix}"))?;
        let schema = value.get("schema").and_then(|s| s.as_str());
        let version = value.get("version").and_then(|v| v.as_u64());
        let known = u64::from(OLDEST_VERSION)..=u64::from(INDEX_VERSION);
        let version = match version {
            Some(v) if schema == Some(INDEX_SCHEMA) && known.contains(&v) => v,
            _ => anyhow::bail!(
                "baseline index {source} has schema {schema:?} version {version:?}, but this benchgate reads {INDEX_SCHEMA:?} versions {OLDEST_VERSION} to {INDEX_VERSION}: use the benchgate that wrote it, or {fix}"
            ),
        };
        let layout =
            || format!("baseline index {source} does not match the index layout v{version}: {fix}");
        let (read_branch, entries): (String, Vec<IndexEntry>) = match (version, v1) {
            (1, V1Layout::DataBranch) => {
                let read: Read<DataBranchV1Entry> =
                    serde_json::from_value(value).with_context(layout)?;
                (
                    read.branch,
                    read.entries.into_iter().map(Into::into).collect(),
                )
            }
            (1, V1Layout::LocalDir) => {
                let read: Read<LocalV1Entry> =
                    serde_json::from_value(value).with_context(layout)?;
                // Oldest first in this layout.
                (
                    read.branch,
                    read.entries.into_iter().rev().map(Into::into).collect(),
                )
            }
            _ => {
                let read: Read<IndexEntry> = serde_json::from_value(value).with_context(layout)?;
                (read.branch, read.entries)
            }
        };
        anyhow::ensure!(
            read_branch == branch,
            "baseline index {source} is the index of branch {read_branch:?}, not {branch:?}: {fix}"
        );
        for e in &entries {
            anyhow::ensure!(
                is_plain_file_name(&e.file),
                "baseline index {source} names the file {:?}, which is not a plain file name in its directory: {fix}",
                e.file
            );
        }
        Ok(Index {
            branch: read_branch,
            entries,
        })
    }

    /// Puts `entry` first, replacing any entry of the same commit (the data
    /// branch keeps one per commit), and keeps at most `max_history` entries;
    /// returns the entries dropped off the end.
    pub fn merge(&mut self, entry: IndexEntry, max_history: usize) -> Vec<IndexEntry> {
        self.entries
            .retain(|e| !e.sha.eq_ignore_ascii_case(&entry.sha));
        self.add(entry, max_history)
    }

    /// Puts `entry` first, keeping earlier runs of the same commit (a local
    /// directory keeps every run), and keeps at most `max_history` entries;
    /// returns the entries dropped off the end.
    pub fn add(&mut self, entry: IndexEntry, max_history: usize) -> Vec<IndexEntry> {
        self.entries.insert(0, entry);
        let keep = max_history.max(1);
        if self.entries.len() > keep {
            self.entries.split_off(keep)
        } else {
            Vec::new()
        }
    }

    /// The newest `n` entries, oldest first: the branch's history in the
    /// order it was stored (commit order), as history reads it.
    pub fn newest_oldest_first(&self, n: usize) -> impl Iterator<Item = &IndexEntry> {
        self.entries.iter().take(n).rev()
    }

    /// The newest entry of `sha` (exact), else the newest of the first of
    /// `ancestors` (nearest first) that has one, else with no `ancestors` the
    /// newest entry.
    pub fn find(&self, sha: &str, ancestors: &[String]) -> Option<(&IndexEntry, bool)> {
        let by_sha = |s: &str| self.entries.iter().find(|e| e.sha.eq_ignore_ascii_case(s));
        if let Some(e) = by_sha(sha) {
            return Some((e, true));
        }
        if ancestors.is_empty() {
            return self.entries.first().map(|e| (e, false));
        }
        ancestors.iter().find_map(|a| by_sha(a)).map(|e| (e, false))
    }
}

/// A commit sha as both stores key baselines: 7 to 64 hex digits.
pub fn check_sha(sha: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        (7..=64).contains(&sha.len()) && sha.bytes().all(|b| b.is_ascii_hexdigit()),
        "baseline commit {sha:?} is not a commit sha (7 to 64 hex digits): pass the full sha of the commit measured"
    );
    Ok(())
}

fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
