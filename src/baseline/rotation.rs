//! The data branch's history stays bounded. Every Contents API write is a
//! commit, and deleting a file removes it from the tree, not from the history:
//! without a bound, a clone of the data branch (`actions/checkout` with
//! `fetch-depth: 0` fetches every branch) grows with every stored baseline.
//!
//! After each store, the history is checked with one request: the commit
//! listing of the data branch at page `bound + 1` of one commit per page is
//! empty while the history has at most `bound` commits. Past the bound, the
//! branch is restarted: an orphan commit (no parent) with the head's tree,
//! then the ref moved to it by GraphQL's `updateRefs` with `beforeOid` = the
//! head read and `force` (a non-fast-forward update). `beforeOid` makes that a
//! compare-and-swap: a write by another run in between makes GitHub refuse the
//! whole update, so no write is lost; the orphan holds the same files as the
//! head it replaces, so nothing stored is lost either. The older commits are
//! then unreachable from the branch (GitHub collects them in time).
//!
//! A refused update is not retried: the other writer's store checks the history
//! after its own write and rotates then. What happened is read back from the
//! ref, never from the error's wording: the head still at the value read means
//! the update failed (a warning: the token needs `contents: write`, and no
//! ruleset may block force pushes to the data branch); at the orphan, it was
//! applied (an ambiguous answer); elsewhere, another writer won. No failure
//! here fails the store, which has already succeeded.

use anyhow::Context as _;
use serde_json::{json, Value};

use super::github_store::GitHubStore;
use crate::github::encode_component;

/// The default bound on the data branch's history, in commits. A store makes
/// two to three commits (results file, index, the file its bounded index
/// drops), so the branch restarts about every 20 stores and a clone fetches
/// the current files plus at most this many commits' changes.
pub const HISTORY_COMMITS: usize = 60;

/// The compare-and-swap ref update (GitHub GraphQL, `updateRefs`).
const UPDATE_REFS: &str =
    "mutation($input: UpdateRefsInput!) { updateRefs(input: $input) { clientMutationId } }";

/// What a check of the data branch's history did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    /// The history is within the bound: nothing to do.
    Within,
    /// The branch moved from `from` to the orphan commit `to`, same tree.
    Rotated { from: String, to: String },
    /// Another writer moved the branch after `from` was read: left as it is.
    LostRace { from: String },
}

impl GitHubStore {
    /// Checks the data branch's history after a store and restarts it past
    /// the bound (module docs). Says what it did; never fails the store: an
    /// error is a warning.
    pub(super) fn keep_history_bounded(&self) {
        let data = self.data_branch.clone();
        let bound = self.history_commits;
        match self.rotate_if_long() {
            Ok(Rotation::Within) => {}
            Ok(Rotation::Rotated { from, to }) => {
                self.say(None, format!(
                    "the data branch {data:?} had more than {bound} commits: it restarts at the orphan commit {to}, which holds the same files as {from} (nothing stored changed; a clone of the branch stays small)"
                ));
            }
            Ok(Rotation::LostRace { from }) => {
                self.say(None, format!(
                    "the data branch {data:?} has more than {bound} commits, but another writer moved it after {from} was read; left as it is (that writer's store checks its history again)"
                ));
            }
            Err(e) => {
                self.say(Some("benchgate: data branch history not shortened"), format!(
                    "the baseline is stored, but the history of the data branch {data:?} in {} could not be restarted at {bound} commits: {e:#}. The next store tries again; if this repeats, give the token `contents: write` and make sure no ruleset blocks force pushes to {data:?}",
                    self.repo
                ));
            }
        }
    }

    /// Restarts the data branch as an orphan commit with the head's tree when
    /// its history is longer than the bound (module docs).
    pub(super) fn rotate_if_long(&self) -> anyhow::Result<Rotation> {
        let api = self.repo.api_path();
        let bound = self.history_commits;
        let probe = format!(
            "{api}/commits?sha={}&per_page=1&page={}",
            encode_component(&self.data_branch),
            bound + 1
        );
        let beyond: Vec<Value> = self
            .gh
            .get(&probe)
            .and_then(|r| r.json(&probe))
            .with_context(|| {
                format!(
                    "listing the history of the data branch {:?} in {}",
                    self.data_branch, self.repo
                )
            })?;
        if beyond.is_empty() {
            return Ok(Rotation::Within);
        }
        let head = self.head()?;
        let commit_path = format!("{api}/git/commits/{head}");
        let commit: Value = self.gh.get(&commit_path)?.json(&commit_path)?;
        let tree = commit["tree"]["sha"]
            .as_str()
            .with_context(|| format!("{commit_path}: the answer names no tree"))?;
        let repository: Value = self.gh.get(&api)?.json(&api)?;
        let repository_id = repository["node_id"]
            .as_str()
            .with_context(|| format!("{api}: the answer has no node_id"))?;
        let orphan = json!({
            "message": format!("benchgate: restart the data branch's history (over {bound} commits at {head})"),
            "tree": tree,
            "parents": [],
        });
        let orphan = self.post_idempotent(&format!("{api}/git/commits"), &orphan)?;
        let update = json!({ "input": {
            "repositoryId": repository_id,
            "refUpdates": [{
                "name": format!("refs/heads/{}", self.data_branch),
                "beforeOid": head,
                "afterOid": orphan,
                "force": true,
            }],
        }});
        let refused = match self.gh.graphql("updateRefs", UPDATE_REFS, update) {
            Ok(_) => {
                return Ok(Rotation::Rotated {
                    from: head,
                    to: orphan,
                })
            }
            Err(e) => e,
        };
        // What happened is read from the ref (module docs).
        let now = self.head()?;
        if now == orphan {
            Ok(Rotation::Rotated {
                from: head,
                to: orphan,
            })
        } else if now != head {
            Ok(Rotation::LostRace { from: head })
        } else {
            Err(refused).context(format!(
                "moving {} from {head} to the orphan commit {orphan}",
                self.data_branch
            ))
        }
    }

    /// The commit the data branch points at.
    fn head(&self) -> anyhow::Result<String> {
        let path = format!(
            "{}/branches/{}",
            self.repo.api_path(),
            encode_component(&self.data_branch)
        );
        let branch: Value = self
            .gh
            .get(&path)
            .and_then(|r| r.json(&path))
            .with_context(|| {
                format!("reading the head of the data branch {:?}", self.data_branch)
            })?;
        branch["commit"]["sha"]
            .as_str()
            .map(str::to_string)
            .with_context(|| format!("{path}: the answer names no commit"))
    }
}
