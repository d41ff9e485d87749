//! The baseline store on a data branch (default `benchgate-data`) of the
//! repository, through GitHub's Contents API.
//!
//! Layout: `baselines/<branch>/index.json` ([`super::github_index`]) and
//! `baselines/<branch>/<sha>.json` (compact results JSON); `<branch>` is
//! percent-escaped into one directory (`feature/x` -> `feature%2Fx`). Files stay
//! under the API's 1 MB: a results file over [`STRIP_ABOVE`] bytes loses its
//! per-cell histograms, and the index entry says so.
//!
//! A missing data branch is created as an orphan (one commit, a README, no
//! parent) through the Git Data API, not from the default branch: the data
//! branch then holds no workflow files (its commits trigger no `push` workflows)
//! and no source.
//!
//! Writes: the results file, then the index by compare-and-swap (PUT with the
//! sha read; on 409/422 re-read, re-merge, retry with jitter, bounded), then the
//! files dropped from the bounded history are deleted, then the index is read
//! back to check that it holds exactly one entry for the commit, ours. A stored
//! file that does not parse or has an unknown schema stops the write with an
//! error naming it; it is never replaced.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use base64::Engine as _;
use http::Method;
use serde_json::json;

use super::github_index::{Index, IndexEntry};
use super::{BaselineKey, BaselineStore, FoundBaseline};
use crate::github::{encode_component, GitHub, GitHubError, Repo, RetryPolicy};
use crate::results::RunResults;

/// Results files larger than this lose their histograms.
pub const STRIP_ABOVE: usize = 900 * 1024;
/// No file written is larger than this (the Contents API reads up to 1 MB).
const MAX_FILE: usize = 1000 * 1000;
const README: &str = "# benchgate data\n\nBaselines written by benchgate (`baselines/<branch>/`). Do not edit by hand.\n";

/// A file read from the data branch.
struct Remote {
    bytes: Vec<u8>,
    sha: String,
}

/// Baselines on a data branch (see the module docs).
#[derive(Debug, Clone)]
pub struct GitHubStore {
    gh: Arc<GitHub>,
    repo: Repo,
    data_branch: String,
    conflicts: RetryPolicy,
}

impl GitHubStore {
    /// The store on `benchgate-data` of `repo`, retrying a conflicting index
    /// write up to 8 times.
    pub fn new(gh: Arc<GitHub>, repo: Repo) -> GitHubStore {
        GitHubStore {
            gh,
            repo,
            data_branch: "benchgate-data".to_string(),
            conflicts: RetryPolicy {
                max_attempts: 8,
                base: Duration::from_millis(250),
                cap: Duration::from_secs(4),
                deadline: Duration::from_secs(60),
            },
        }
    }

    /// Another data branch.
    pub fn with_data_branch(mut self, name: &str) -> GitHubStore {
        self.data_branch = name.to_string();
        self
    }

    /// Another policy for compare-and-swap conflicts.
    pub fn with_conflict_retries(mut self, policy: RetryPolicy) -> GitHubStore {
        self.conflicts = policy;
        self
    }

    pub fn data_branch(&self) -> &str {
        &self.data_branch
    }

    /// Creates the data branch when missing; `true` when it was created.
    pub fn ensure_branch(&self) -> anyhow::Result<bool> {
        let api = self.repo.api_path();
        let branch_path = format!("{api}/branches/{}", encode_component(&self.data_branch));
        match self.gh.get(&branch_path) {
            Ok(_) => return Ok(false),
            Err(e) if e.status() == Some(404) => {}
            Err(e) => return Err(e).context("checking for the data branch"),
        }
        let context = || format!("creating the data branch {:?}", self.data_branch);
        let tree = json!({ "tree": [{ "path": "README.md", "mode": "100644", "type": "blob", "content": README }] });
        let tree = self
            .post_idempotent(&format!("{api}/git/trees"), &tree)
            .with_context(context)?;
        let commit =
            json!({ "message": "benchgate: create the data branch", "tree": tree, "parents": [] });
        let commit = self
            .post_idempotent(&format!("{api}/git/commits"), &commit)
            .with_context(context)?;
        let reference = json!({ "ref": format!("refs/heads/{}", self.data_branch), "sha": commit });
        match self
            .gh
            .send(Method::POST, &format!("{api}/git/refs"), Some(&reference))
        {
            Ok(_) => Ok(true),
            // Created meanwhile by another writer (422), or maybe by us (ambiguous).
            Err(e) if e.status() == Some(422) || matches!(e, GitHubError::Ambiguous { .. }) => {
                self.gh.get(&branch_path).with_context(context)?;
                Ok(false)
            }
            Err(e) => Err(e).with_context(context),
        }
    }

    /// POSTs a content-addressed Git object (safe to send again); its sha.
    fn post_idempotent(&self, path: &str, body: &serde_json::Value) -> anyhow::Result<String> {
        let response = match self.gh.send(Method::POST, path, Some(body)) {
            Err(GitHubError::Ambiguous { .. }) => self.gh.send(Method::POST, path, Some(body))?,
            other => other?,
        };
        let value: serde_json::Value = response.json(path)?;
        value["sha"]
            .as_str()
            .map(str::to_string)
            .with_context(|| format!("{path}: the answer has no sha"))
    }

    fn dir(&self, branch: &str) -> String {
        format!("baselines/{}", encode_component(branch))
    }

    /// Where a file lives, for messages: `benchgate-data:baselines/main/x.json`.
    fn describe(&self, path: &str) -> String {
        format!("{}:{path} in {}", self.data_branch, self.repo)
    }

    fn contents_path(&self, path: &str) -> String {
        let encoded: Vec<String> = path.split('/').map(encode_component).collect();
        format!("{}/contents/{}", self.repo.api_path(), encoded.join("/"))
    }

    /// Reads a file; `None` when it (or the data branch) does not exist.
    fn read(&self, path: &str) -> anyhow::Result<Option<Remote>> {
        let url = format!(
            "{}?ref={}",
            self.contents_path(path),
            encode_component(&self.data_branch)
        );
        let response = match self.gh.get(&url) {
            Ok(r) => r,
            Err(e) if e.status() == Some(404) => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", self.describe(path))),
        };
        let file: serde_json::Value = response.json(path)?;
        let (Some(content), Some(sha)) = (file["content"].as_str(), file["sha"].as_str()) else {
            anyhow::bail!("{} is not a file", self.describe(path));
        };
        if file["encoding"].as_str() != Some("base64") {
            anyhow::bail!(
                "{} is too large to read through the Contents API",
                self.describe(path)
            );
        }
        let compact: String = content
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(compact)
            .with_context(|| format!("{}: content is not base64", self.describe(path)))?;
        Ok(Some(Remote {
            bytes,
            sha: sha.to_string(),
        }))
    }

    /// Creates (`sha: None`) or replaces (the sha read) a file.
    fn write(
        &self,
        path: &str,
        bytes: &[u8],
        sha: Option<&str>,
        message: &str,
    ) -> Result<(), GitHubError> {
        let mut body = json!({
            "message": message,
            "content": base64::engine::general_purpose::STANDARD.encode(bytes),
            "branch": self.data_branch,
        });
        if let Some(sha) = sha {
            body["sha"] = sha.into();
        }
        self.gh
            .send(Method::PUT, &self.contents_path(path), Some(&body))
            .map(|_| ())
    }

    fn delete(&self, path: &str, sha: &str, message: &str) -> Result<(), GitHubError> {
        let body = json!({ "message": message, "sha": sha, "branch": self.data_branch });
        self.gh
            .send(Method::DELETE, &self.contents_path(path), Some(&body))
            .map(|_| ())
    }

    /// The branch's index and its sha; `None` when there is none yet.
    fn read_index(&self, branch: &str) -> anyhow::Result<Option<(Index, String)>> {
        let path = format!("{}/index.json", self.dir(branch));
        let Some(remote) = self.read(&path)? else {
            return Ok(None);
        };
        let source = self.describe(&path);
        let index = Index::parse(&remote.bytes, &source, branch).with_context(|| {
            format!("refusing to use or replace {source}; repair or remove it by hand")
        })?;
        Ok(Some((index, remote.sha)))
    }

    /// Waits before conflict retry `attempt` (1-based); `false` to give up.
    fn conflict_pause(&self, attempt: u32, started: std::time::Instant) -> bool {
        match self
            .conflicts
            .next_delay(attempt, started.elapsed(), rand::random())
        {
            Some(delay) => {
                std::thread::sleep(delay);
                true
            }
            None => false,
        }
    }

    /// Writes the results file of `sha`, replacing an older one of the same
    /// commit only when that one parses.
    fn write_results(&self, path: &str, bytes: &[u8], message: &str) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let existing = self.read(path)?;
            if let Some(old) = &existing {
                let text = String::from_utf8_lossy(&old.bytes);
                RunResults::parse(&text, &self.describe(path)).with_context(|| {
                    format!(
                        "refusing to replace {}; repair or remove it by hand",
                        self.describe(path)
                    )
                })?;
            }
            match self.write(
                path,
                bytes,
                existing.as_ref().map(|r| r.sha.as_str()),
                message,
            ) {
                Ok(()) => return Ok(()),
                Err(e)
                    if matches!(e.status(), Some(409 | 422))
                        && self.conflict_pause(attempt, started) => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("writing {}", self.describe(path)))
                }
            }
        }
    }
}

/// Compact JSON of `results`, without histograms when it would be too large.
fn prepare(results: &RunResults) -> anyhow::Result<(Vec<u8>, bool)> {
    let bytes = serde_json::to_vec(results).context("serializing results")?;
    if bytes.len() <= STRIP_ABOVE {
        return Ok((bytes, false));
    }
    let mut lean = results.clone();
    for cell in &mut lean.results {
        cell.histogram = None;
        cell.histogram_uncorrected = None;
    }
    let bytes = serde_json::to_vec(&lean).context("serializing results")?;
    if bytes.len() > MAX_FILE {
        anyhow::bail!(
            "the results are {} bytes even without histograms, over the data branch's {MAX_FILE} byte limit; run fewer scenarios or rounds",
            bytes.len()
        );
    }
    Ok((bytes, true))
}

impl BaselineStore for GitHubStore {
    fn lookup(
        &self,
        branch: &str,
        sha: &str,
        ancestors: &[String],
    ) -> anyhow::Result<Option<FoundBaseline>> {
        let Some((index, _)) = self.read_index(branch)? else {
            return Ok(None);
        };
        let Some((entry, exact)) = index.find(sha, ancestors) else {
            return Ok(None);
        };
        let path = format!("{}/{}", self.dir(branch), entry.file);
        let source = self.describe(&path);
        let remote = self
            .read(&path)?
            .with_context(|| format!("the index lists {source}, but it does not exist"))?;
        let results = RunResults::parse(&String::from_utf8_lossy(&remote.bytes), &source)?;
        Ok(Some(FoundBaseline {
            key: entry.key(branch),
            exact,
            results,
        }))
    }

    fn store(
        &self,
        branch: &str,
        sha: &str,
        results: &RunResults,
        max_history: usize,
    ) -> anyhow::Result<BaselineKey> {
        if !(7..=64).contains(&sha.len()) || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
            anyhow::bail!("{sha:?} is not a commit sha; the baseline store is keyed by commit");
        }
        if branch.is_empty() || max_history == 0 {
            anyhow::bail!("storing a baseline needs a branch name and a history of at least 1");
        }
        self.ensure_branch()?;
        let (bytes, stripped) = prepare(results)?;
        let sha = sha.to_ascii_lowercase();
        let short = &sha[..7];
        let message = format!(
            "benchgate: baseline {branch}@{short} (run {})",
            results.run_id
        );
        let file = format!("{sha}.json");
        self.write_results(&format!("{}/{file}", self.dir(branch)), &bytes, &message)?;
        let entry = IndexEntry {
            sha: sha.clone(),
            started_at: results.started_at.clone(),
            run_id: results.run_id.clone(),
            file,
            bytes: bytes.len() as u64,
            histograms_stripped: stripped,
        };
        let index_path = format!("{}/index.json", self.dir(branch));
        let started = std::time::Instant::now();
        let mut attempt = 0;
        let dropped = loop {
            attempt += 1;
            let (mut index, index_sha) = match self.read_index(branch)? {
                Some((index, sha)) => (index, Some(sha)),
                None => (Index::new(branch), None),
            };
            let dropped = index.merge(entry.clone(), max_history);
            let json = serde_json::to_vec_pretty(&index).context("serializing the index")?;
            match self.write(&index_path, &json, index_sha.as_deref(), &message) {
                Ok(()) => break dropped,
                Err(e)
                    if matches!(e.status(), Some(409 | 422))
                        && self.conflict_pause(attempt, started) => {}
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!(
                            "writing {} ({attempt} attempt(s))",
                            self.describe(&index_path)
                        )
                    })
                }
            }
        };
        for old in dropped.iter().filter(|d| d.sha != sha) {
            let path = format!("{}/{}", self.dir(branch), old.file);
            if let Some(remote) = self.read(&path)? {
                let message = format!(
                    "benchgate: drop baseline {branch}@{} (history bound {max_history})",
                    &old.sha
                );
                match self.delete(&path, &remote.sha, &message) {
                    Ok(()) => {}
                    Err(e) if matches!(e.status(), Some(404 | 409)) => {}
                    Err(e) => {
                        return Err(e).with_context(|| format!("deleting {}", self.describe(&path)))
                    }
                }
            }
        }
        let (back, _) = self
            .read_index(branch)?
            .with_context(|| format!("{} vanished after the write", self.describe(&index_path)))?;
        let ours: Vec<&IndexEntry> = back.entries.iter().filter(|e| e.sha == sha).collect();
        if ours.len() != 1 || ours[0].run_id != results.run_id {
            anyhow::bail!(
                "read back {}: expected exactly one entry for {sha} from run {}, found {}",
                self.describe(&index_path),
                results.run_id,
                ours.len()
            );
        }
        Ok(entry.key(branch))
    }

    fn history(&self, branch: &str) -> anyhow::Result<Vec<BaselineKey>> {
        Ok(self
            .read_index(branch)?
            .map(|(index, _)| index.entries.iter().map(|e| e.key(branch)).collect())
            .unwrap_or_default())
    }
}
