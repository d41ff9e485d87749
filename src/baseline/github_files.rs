//! The data branch's file layer for [`GitHubStore`]: Contents API reads and
//! compare-and-swap writes of single files, and the creation of the branch as an
//! orphan through the Git Data API (trees, commits, refs).
//!
//! A 404 is not always "absent". A Contents API read answers 404 both for a
//! missing file and for a missing branch ([`GitHubStore::branch_exists`] tells
//! them apart), and GitHub's replicas may answer 404 for a moment for what was
//! just written: reads of what this run wrote (or an index lists) go through
//! [`GitHubStore::retry_404`], bounded in reads and time.

use std::time::Instant;

use anyhow::Context as _;
use base64::Engine as _;
use http::Method;
use serde_json::json;

use super::github_store::GitHubStore;
use crate::github::{encode_component, GitHubError};

const README: &str = "# benchgate data\n\nBaselines written by benchgate (`baselines/<branch>/`). Do not edit by hand.\n";

/// A file read from the data branch, with the blob sha a write must name.
pub(super) struct Remote {
    pub bytes: Vec<u8>,
    pub sha: String,
}

impl GitHubStore {
    /// Creates the data branch when missing; `true` when it was created.
    pub fn ensure_branch(&self) -> anyhow::Result<bool> {
        let api = self.repo.api_path();
        if self.branch_exists()? {
            return Ok(false);
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
        let created = match self
            .gh
            .send(Method::POST, &format!("{api}/git/refs"), Some(&reference))
        {
            Ok(_) => true,
            // Created meanwhile by another writer (422), or maybe by us (ambiguous).
            Err(e) if e.status() == Some(422) || matches!(e, GitHubError::Ambiguous { .. }) => {
                false
            }
            Err(e) => return Err(e).with_context(context),
        };
        // Just created: a replica may not know it yet.
        let what = format!("the data branch {:?} in {}", self.data_branch, self.repo);
        self.retry_404(&what, "after it was created", || {
            Ok(self.branch_exists()?.then_some(()))
        })?;
        Ok(created)
    }

    /// Whether the data branch exists: `GET /branches/{name}` answers 404 when
    /// it does not (and for a repository the token cannot see).
    pub fn branch_exists(&self) -> anyhow::Result<bool> {
        let api = self.repo.api_path();
        let branch_path = format!("{api}/branches/{}", encode_component(&self.data_branch));
        match self.gh.get(&branch_path) {
            Ok(_) => Ok(true),
            Err(e) if e.status() == Some(404) => Ok(false),
            Err(e) => Err(e).with_context(|| {
                format!(
                    "checking for the data branch {:?} in {}",
                    self.data_branch, self.repo
                )
            }),
        }
    }

    /// Calls `read` until it finds `what` (it answers `None` on a 404), under
    /// the read-back policy: for what this run just wrote, or what an index
    /// lists, a 404 is a replica that lags, never "absent". Gives up with an
    /// error naming `what` once the policy's reads or time run out.
    pub(super) fn retry_404<T>(
        &self,
        what: &str,
        since: &str,
        mut read: impl FnMut() -> anyhow::Result<Option<T>>,
    ) -> anyhow::Result<T> {
        let started = Instant::now();
        let mut attempts = 0;
        loop {
            attempts += 1;
            if let Some(found) = read()? {
                return Ok(found);
            }
            let next = self
                .read_back
                .next_delay(attempts, started.elapsed(), rand::random());
            let Some(delay) = next else {
                anyhow::bail!(
                    "{what} is still missing (HTTP 404) {since}: {attempts} read(s) over {:.1} s; GitHub's replicas may lag behind, or another writer removed it: run the job again",
                    started.elapsed().as_secs_f64()
                );
            };
            std::thread::sleep(delay);
        }
    }

    /// POSTs a content-addressed Git object (safe to send again); its sha.
    pub(super) fn post_idempotent(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> anyhow::Result<String> {
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

    pub(super) fn dir(&self, branch: &str) -> String {
        format!("baselines/{}", encode_component(branch))
    }

    /// Where a file lives, for messages: `benchgate-data:baselines/main/x.json`.
    pub(super) fn describe(&self, path: &str) -> String {
        format!("{}:{path} in {}", self.data_branch, self.repo)
    }

    pub(super) fn contents_path(&self, path: &str) -> String {
        let encoded: Vec<String> = path.split('/').map(encode_component).collect();
        format!("{}/contents/{}", self.repo.api_path(), encoded.join("/"))
    }

    /// Reads a file; `None` on a 404: it, or the data branch, does not exist
    /// (or a replica does not have it yet).
    pub(super) fn read(&self, path: &str) -> anyhow::Result<Option<Remote>> {
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
    pub(super) fn write(
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

    pub(super) fn delete(&self, path: &str, sha: &str, message: &str) -> Result<(), GitHubError> {
        let body = json!({ "message": message, "sha": sha, "branch": self.data_branch });
        self.gh
            .send(Method::DELETE, &self.contents_path(path), Some(&body))
            .map(|_| ())
    }
}
