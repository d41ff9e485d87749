//! The index of one branch's baselines on the data branch
//! (`baselines/<branch>/index.json`): entries newest first, each naming its
//! results file. Versioned and strict: a file with another schema name, another
//! version or unknown fields is refused (and so never overwritten).

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::BaselineKey;

/// The `schema` field of every index.
pub const INDEX_SCHEMA: &str = "benchgate-baseline-index";
/// The index layout this benchgate reads and writes.
pub const INDEX_VERSION: u32 = 1;

/// One branch's stored baselines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    pub schema: String,
    pub version: u32,
    pub branch: String,
    /// Newest first.
    pub entries: Vec<IndexEntry>,
}

/// One stored baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexEntry {
    pub sha: String,
    pub started_at: String,
    pub run_id: String,
    /// The results file, relative to the branch's directory (`<sha>.json`).
    pub file: String,
    /// Its size in bytes as written.
    pub bytes: u64,
    /// The per-cell latency histograms were removed to keep the file under
    /// GitHub's 1 MB Contents API limit; summaries and trials are whole.
    #[serde(default)]
    pub histograms_stripped: bool,
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

impl Index {
    pub fn new(branch: &str) -> Index {
        Index {
            schema: INDEX_SCHEMA.to_string(),
            version: INDEX_VERSION,
            branch: branch.to_string(),
            entries: Vec::new(),
        }
    }

    /// Parses and checks an index; `source` names the file in errors.
    pub fn parse(bytes: &[u8], source: &str, branch: &str) -> anyhow::Result<Index> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).with_context(|| format!("{source} is not valid JSON"))?;
        let schema = value.get("schema").and_then(|s| s.as_str());
        let version = value.get("version").and_then(|v| v.as_u64());
        if schema != Some(INDEX_SCHEMA) || version != Some(INDEX_VERSION as u64) {
            anyhow::bail!(
                "{source} has schema {schema:?} version {version:?}; this benchgate reads {INDEX_SCHEMA:?} version {INDEX_VERSION}"
            );
        }
        let index: Index = serde_json::from_value(value).with_context(|| {
            format!("{source} does not match the index layout v{INDEX_VERSION}")
        })?;
        if index.branch != branch {
            anyhow::bail!(
                "{source} is the index of branch {:?}, not {branch:?}",
                index.branch
            );
        }
        Ok(index)
    }

    /// Puts `entry` first (replacing an entry of the same commit) and keeps at
    /// most `max_history` entries; returns the entries dropped off the end.
    pub fn merge(&mut self, entry: IndexEntry, max_history: usize) -> Vec<IndexEntry> {
        self.entries
            .retain(|e| !e.sha.eq_ignore_ascii_case(&entry.sha));
        self.entries.insert(0, entry);
        let keep = max_history.max(1);
        if self.entries.len() > keep {
            self.entries.split_off(keep)
        } else {
            Vec::new()
        }
    }

    /// The entry of `sha` (exact), else the first of `ancestors` (nearest first)
    /// that has one, else with no `ancestors` the newest entry.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sha: &str) -> IndexEntry {
        IndexEntry {
            sha: sha.into(),
            started_at: "2025-03-14T10:00:00Z".into(),
            run_id: format!("run-{sha}"),
            file: format!("{sha}.json"),
            bytes: 10,
            histograms_stripped: false,
        }
    }

    #[test]
    fn merge_bounds_history_and_replaces_the_same_commit() {
        let mut index = Index::new("main");
        assert!(index.merge(entry("a"), 2).is_empty());
        assert!(index.merge(entry("b"), 2).is_empty());
        let dropped = index.merge(entry("c"), 2);
        assert_eq!(dropped, vec![entry("a")]);
        assert!(index.merge(entry("b"), 2).is_empty());
        let shas: Vec<&str> = index.entries.iter().map(|e| e.sha.as_str()).collect();
        assert_eq!(shas, ["b", "c"]);
    }

    #[test]
    fn find_exact_then_nearest_ancestor() {
        let mut index = Index::new("main");
        for sha in ["a", "b", "c"] {
            index.merge(entry(sha), 10);
        }
        assert_eq!(
            index.find("b", &[]).map(|(e, x)| (e.sha.as_str(), x)),
            Some(("b", true))
        );
        let ancestors = vec!["x".to_string(), "a".to_string(), "b".to_string()];
        assert_eq!(
            index
                .find("z", &ancestors)
                .map(|(e, x)| (e.sha.as_str(), x)),
            Some(("a", false))
        );
        assert_eq!(index.find("z", &[]).map(|(e, _)| e.sha.as_str()), Some("c"));
        assert!(index.find("z", &["y".to_string()]).is_none());
    }

    #[test]
    fn unknown_schemas_and_fields_are_refused() {
        let good = serde_json::to_vec(&Index::new("main")).unwrap();
        assert!(Index::parse(&good, "i", "main").is_ok());
        assert!(Index::parse(&good, "i", "dev").is_err());
        let v2 =
            br#"{"schema":"benchgate-baseline-index","version":2,"branch":"main","entries":[]}"#;
        assert!(Index::parse(v2, "i", "main")
            .unwrap_err()
            .to_string()
            .contains("version"));
        let extra = br#"{"schema":"benchgate-baseline-index","version":1,"branch":"main","entries":[],"x":1}"#;
        assert!(Index::parse(extra, "i", "main").is_err());
        assert!(Index::parse(b"{not json", "i", "main").is_err());
    }
}
