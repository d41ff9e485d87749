//! The baseline store on a data branch (default `benchgate-data`) of the
//! repository, through GitHub's Contents API.
//!
//! Layout: `baselines/<branch>/index.json` ([`super::index`]) and
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
//! Writes: the results file (read as a lookup reads it before the data branch
//! is touched, [`super::check_readable`]), then the index by compare-and-swap
//! (PUT with the sha read; on 409/422 re-read, re-merge, retry with jitter,
//! bounded), then the files dropped from the bounded history are deleted, then
//! the index is read back to check that it holds exactly one entry for the
//! commit, ours, then the data branch's commit history is kept bounded
//! ([`super::rotation`]). A stored
//! file that does not parse or has an unknown schema stops the write with an
//! error naming it; it is never replaced.
//!
//! A 404 (see [`super::github_files`]) means, by case:
//! - lookup, no data branch: nothing stored yet, a neutral result, but said
//!   loudly (a `::warning` naming the branch and the inputs to check), since a
//!   mistyped `data-branch` looks exactly like this;
//! - lookup, a data branch without the branch's index: nothing stored for that
//!   branch yet (a note naming `baseline-branch`);
//! - a results file the index lists, the data branch this run created, the
//!   index this run wrote (its read-back): a replica that lags, read again
//!   under a bounded policy ([`GitHubStore::with_read_back_retries`]), then an
//!   error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;

use super::index::{check_sha, Index, IndexEntry, V1Layout};
use super::rotation::HISTORY_COMMITS;
use super::{BaselineKey, BaselineStore};
use crate::github::target::{connect, GithubTarget};
use crate::github::{GitHub, Repo};
use crate::results::RunResults;
use crate::retry::RetryPolicy;

/// Results files larger than this lose their histograms.
pub const STRIP_ABOVE: usize = 900 * 1024;
/// No file written is larger than this (the Contents API reads up to 1 MB).
const MAX_FILE: usize = 1000 * 1000;

/// Baselines on a data branch (see the module docs).
#[derive(Debug, Clone)]
pub struct GitHubStore {
    pub(super) gh: Arc<GitHub>,
    pub(super) repo: Repo,
    pub(super) data_branch: String,
    conflicts: RetryPolicy,
    /// Reads again on a 404 for what this run wrote or an index lists.
    pub(super) read_back: RetryPolicy,
    /// The data branch restarts past this many commits ([`super::rotation`]).
    pub(super) history_commits: usize,
    /// What lookups said about a missing branch or index, and what the check
    /// of the history after a store did ([`GitHubStore::notes`]).
    notes: Arc<Mutex<Vec<String>>>,
}

impl GitHubStore {
    /// The store on `benchgate-data` of `repo`, retrying a conflicting index
    /// write up to 8 times and a 404 on a read of its own writes up to 6 times
    /// within 10 s, restarting the data branch's history past
    /// [`HISTORY_COMMITS`] commits.
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
            read_back: RetryPolicy {
                max_attempts: 6,
                base: Duration::from_millis(250),
                cap: Duration::from_secs(2),
                deadline: Duration::from_secs(10),
            },
            history_commits: HISTORY_COMMITS,
            notes: Arc::default(),
        }
    }

    /// Another bound on the data branch's history, in commits (at least 1).
    pub fn with_history_commits(mut self, commits: usize) -> GitHubStore {
        self.history_commits = commits.max(1);
        self
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

    /// Another policy for reading again on a 404 (replication lag).
    pub fn with_read_back_retries(mut self, policy: RetryPolicy) -> GitHubStore {
        self.read_back = policy;
        self
    }

    pub fn data_branch(&self) -> &str {
        &self.data_branch
    }

    /// What lookups said about a missing data branch or index, and what the
    /// history check after a store did, oldest first (each is also printed to
    /// stderr when said).
    pub fn recorded_notes(&self) -> Vec<String> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Records a note and prints it to stderr, as a `::warning` with this
    /// title when `warning` is given.
    pub(super) fn say(&self, warning: Option<&str>, text: String) {
        // The workflow command's escaping: the text is one message.
        let escape = |s: &str| {
            s.replace('%', "%25")
                .replace('\r', "%0D")
                .replace('\n', "%0A")
        };
        match warning {
            Some(title) => crate::stderrln!(
                "::warning title={}::{}",
                escape(title).replace(':', "%3A").replace(',', "%2C"),
                escape(&text)
            ),
            None => crate::stderrln!("benchgate: note: {text}"),
        }
        self.notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text);
    }

    /// Says why a lookup of `branch` found no index: no data branch (loudly),
    /// or nothing stored for `branch` in it.
    fn say_nothing_stored(&self, branch: &str) -> anyhow::Result<()> {
        let data = &self.data_branch;
        let repo = &self.repo;
        if self.branch_exists()? {
            let index = format!("{}/index.json", self.dir(branch));
            self.say(None, format!(
                "the data branch {data:?} in {repo} has no baseline of {branch:?} ({index} is absent), so nothing is compared (a neutral result); a run on a push to {branch:?} stores one; if the pushes that store baselines are to another branch, set input `baseline-branch` to it"
            ));
        } else {
            self.say(Some("benchgate: no data branch"), format!(
                "the data branch {data:?} does not exist in {repo} (GitHub answers 404 for it), so no baseline of {branch:?} is stored and nothing is compared (a neutral result). Before the first run on a push to {branch:?} this is expected: that run creates the branch. Otherwise input `data-branch` ({data:?}) is not the branch the push runs store to: set it to that branch (default benchgate-data) and check `baseline-branch`; or the token cannot read {repo}"
            ));
        }
        Ok(())
    }

    /// The branch's index and its sha; `None` when there is none yet.
    fn read_index(&self, branch: &str) -> anyhow::Result<Option<(Index, String)>> {
        let path = format!("{}/index.json", self.dir(branch));
        let Some(remote) = self.read(&path)? else {
            return Ok(None);
        };
        let source = self.describe(&path);
        // Its errors name the file and say it is never replaced.
        let index = Index::parse(&remote.bytes, &source, branch, V1Layout::DataBranch)?;
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
                RunResults::parse_bytes(&old.bytes, &self.describe(path)).with_context(|| {
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
    fn notes(&self) -> Vec<String> {
        self.recorded_notes()
    }

    fn index(&self, branch: &str) -> anyhow::Result<Index> {
        match self.read_index(branch)? {
            Some((index, _)) => Ok(index),
            None => {
                self.say_nothing_stored(branch)?;
                Ok(Index::new(branch))
            }
        }
    }

    /// The results file an index entry of `branch` names (a 404 is read
    /// again: a replica may lag behind the index that lists it).
    fn entry(&self, branch: &str, entry: &IndexEntry) -> anyhow::Result<RunResults> {
        let path = format!("{}/{}", self.dir(branch), entry.file);
        let source = self.describe(&path);
        let listed = format!("{source}, listed in the index,");
        let remote = self.retry_404(&listed, "when read", || self.read(&path))?;
        RunResults::parse_bytes(&remote.bytes, &source)
    }

    fn store(
        &self,
        branch: &str,
        sha: &str,
        results: &RunResults,
        max_history: usize,
    ) -> anyhow::Result<BaselineKey> {
        check_sha(sha)?;
        results.refuse_bad_histograms("the run to store as a baseline")?;
        if branch.is_empty() || max_history == 0 {
            anyhow::bail!("storing a baseline needs a branch name and a history of at least 1");
        }
        let (bytes, stripped) = prepare(results)?;
        let sha = sha.to_ascii_lowercase();
        super::check_readable(results, &bytes, &super::describe(branch, &sha, results))?;
        self.ensure_branch()?;
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
            bytes: Some(bytes.len() as u64),
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
        let (back, _) = self.retry_404(
            &self.describe(&index_path),
            "after this run wrote it",
            || self.read_index(branch),
        )?;
        let ours: Vec<&IndexEntry> = back.entries.iter().filter(|e| e.sha == sha).collect();
        if ours.len() != 1 || ours[0].run_id != results.run_id {
            anyhow::bail!(
                "read back {}: expected exactly one entry for {sha} from run {}, found {}",
                self.describe(&index_path),
                results.run_id,
                ours.len()
            );
        }
        self.keep_history_bounded();
        Ok(entry.key(branch))
    }
}

/// The baseline store on `data_branch` (created when missing), through the
/// Contents API. Bounded history, compare-and-swap writes.
pub fn data_branch_store(
    target: &GithubTarget,
    data_branch: &str,
) -> anyhow::Result<Box<dyn BaselineStore>> {
    let (gh, repo) = connect(target)?;
    Ok(Box::new(
        GitHubStore::new(gh, repo).with_data_branch(data_branch),
    ))
}
