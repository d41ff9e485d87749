//! The fake's Git history: every branch is a chain of commits (each Contents
//! API write or delete, and each seeded file, is a commit whose parent is the
//! head), trees of blobs, the commit listing, `GET git/commits/{sha}`, the
//! repository (its `node_id`), and GraphQL's `updateRefs` with its
//! `beforeOid` check. [`clone_size`] is what a clone of a branch fetches.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;
use sha1::{Digest, Sha1};

use super::fake::{answer, error, fixture, query, Answer, State};
use super::fake_contents::blob_sha;

/// One commit: its parents, its tree, its message.
#[derive(Debug, Clone)]
pub struct FakeCommit {
    pub parents: Vec<String>,
    pub tree: String,
    pub message: String,
}

/// What a clone of one branch fetches: the commits reachable from its head
/// and the distinct blobs of their trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloneSize {
    pub commits: usize,
    pub blobs: usize,
    /// The blobs' bytes together.
    pub bytes: usize,
}

/// The repository's GraphQL id (`node_id` of `GET /repos/{o}/{r}`).
pub fn repository_id() -> String {
    fixture("repository.json")["node_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn sha1_hex(text: &str) -> String {
    let mut hasher = Sha1::new();
    hasher.update(text.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Stores a tree (path -> blob sha); its sha.
pub fn store_tree(state: &mut State, tree: BTreeMap<String, String>) -> String {
    let listing: String = tree.iter().map(|(p, b)| format!("{p} {b}\n")).collect();
    let sha = sha1_hex(&format!("tree\n{listing}"));
    state.trees.insert(sha.clone(), tree);
    sha
}

/// Stores `bytes` as a blob; its sha.
pub fn store_blob(state: &mut State, bytes: &[u8]) -> String {
    let sha = blob_sha(bytes);
    state.blobs.insert(sha.clone(), bytes.to_vec());
    sha
}

/// Creates a commit (unique, as GitHub's commit times make it); its sha.
pub fn new_commit(state: &mut State, tree: &str, parents: Vec<String>, message: &str) -> String {
    state.commits_made += 1;
    let sha = sha1_hex(&format!(
        "commit {}\ntree {tree}\nparents {}\n{message}",
        state.commits_made,
        parents.join(" ")
    ));
    let commit = FakeCommit {
        parents,
        tree: tree.to_string(),
        message: message.to_string(),
    };
    state.commits.insert(sha.clone(), commit);
    sha
}

/// Commits the change of one file on `branch` (`None`: deleted) on top of
/// its head, as a Contents API write does, and moves the branch there.
pub fn commit_change(
    state: &mut State,
    branch: &str,
    path: &str,
    bytes: Option<&[u8]>,
    message: &str,
) {
    let head = state.heads.get(branch).cloned();
    let mut tree = head
        .as_ref()
        .and_then(|h| state.commits.get(h))
        .and_then(|c| state.trees.get(&c.tree))
        .cloned()
        .unwrap_or_default();
    match bytes {
        Some(bytes) => {
            let blob = store_blob(state, bytes);
            tree.insert(path.to_string(), blob);
        }
        None => {
            tree.remove(path);
        }
    }
    let tree = store_tree(state, tree);
    let commit = new_commit(state, &tree, head.into_iter().collect(), message);
    state.heads.insert(branch.to_string(), commit);
    note_history(state, branch);
}

/// Points `branch` at `commit` and makes its files those of the commit's tree.
pub fn set_head(state: &mut State, branch: &str, commit: &str) {
    let tree = &state.trees[&state.commits[commit].tree];
    let files: BTreeMap<String, Vec<u8>> = tree
        .iter()
        .map(|(path, blob)| (path.clone(), state.blobs[blob].clone()))
        .collect();
    state.branches.insert(branch.to_string(), files);
    state.heads.insert(branch.to_string(), commit.to_string());
    note_history(state, branch);
}

/// Keeps the longest history `branch` ever had ([`State::longest_history`]).
fn note_history(state: &mut State, branch: &str) {
    let length = reachable(state, &state.heads[branch]).len();
    let longest = state.longest_history.entry(branch.to_string()).or_default();
    *longest = (*longest).max(length);
}

/// The commits reachable from `head`, head first (parents breadth first).
pub fn reachable(state: &State, head: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    let mut queue = std::collections::VecDeque::from([head.to_string()]);
    while let Some(sha) = queue.pop_front() {
        let Some(commit) = state.commits.get(&sha) else {
            continue;
        };
        if seen.insert(sha.clone()) {
            order.push(sha);
            queue.extend(commit.parents.iter().cloned());
        }
    }
    order
}

/// What a clone of `branch` fetches ([`CloneSize`]).
pub fn clone_size(state: &State, branch: &str) -> CloneSize {
    let commits = reachable(state, &state.heads[branch]);
    let blobs: HashSet<&String> = commits
        .iter()
        .flat_map(|c| state.trees[&state.commits[c].tree].values())
        .collect();
    CloneSize {
        commits: commits.len(),
        blobs: blobs.len(),
        bytes: blobs.iter().map(|b| state.blobs[*b].len()).sum(),
    }
}

/// `GET /repos/{o}/{r}`, `GET .../commits?sha=`, `GET .../git/commits/{sha}`.
pub fn route(state: &mut State, method: &str, rest: &str, uri: &str) -> Option<Answer> {
    if method != "GET" {
        return None;
    }
    if rest.is_empty() {
        return Some(answer(200, fixture("repository.json")));
    }
    if rest == "commits" {
        return Some(list_commits(state, uri));
    }
    let sha = rest.strip_prefix("git/commits/")?;
    Some(match state.commits.get(sha) {
        Some(commit) => answer(200, git_commit(sha, commit)),
        None => error(404, "not_found"),
    })
}

/// A commit in the shape of `GET git/commits/{sha}`.
pub fn git_commit(sha: &str, commit: &FakeCommit) -> Value {
    let mut out = fixture("git_commit.json");
    out["sha"] = sha.into();
    out["tree"]["sha"] = commit.tree.clone().into();
    out["message"] = commit.message.clone().into();
    out["parents"] = commit
        .parents
        .iter()
        .map(|p| serde_json::json!({ "sha": p }))
        .collect();
    out
}

/// `GET /repos/{o}/{r}/commits?sha=&per_page=&page=`: newest first, with
/// GitHub's `Link` header (`next`, `last`) when more pages follow.
fn list_commits(state: &State, uri: &str) -> Answer {
    let from = query(uri, "sha").map(|s| super::fake_contents::decode(&s));
    let head = match from {
        Some(s) if state.commits.contains_key(&s) => s,
        Some(branch) => match state.heads.get(&branch) {
            Some(head) => head.clone(),
            None => return error(404, "not_found"),
        },
        None => return error(422, "validation_failed"),
    };
    let per_page: usize = query(uri, "per_page").map_or(30, |n| n.parse().unwrap());
    let page: usize = query(uri, "page").map_or(1, |n| n.parse().unwrap());
    let all = reachable(state, &head);
    let items: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|sha| {
            let commit = &state.commits[sha];
            let mut item = fixture("commit_list_item.json");
            item["sha"] = sha.clone().into();
            item["commit"]["message"] = commit.message.clone().into();
            item["commit"]["tree"]["sha"] = commit.tree.clone().into();
            item["parents"] = commit
                .parents
                .iter()
                .map(|p| serde_json::json!({ "sha": p }))
                .collect();
            item
        })
        .collect();
    let last = all.len().div_ceil(per_page).max(1);
    let mut headers = Vec::new();
    if page < last {
        let base = uri.split('?').next().unwrap_or("");
        let link = |n: usize, rel: &str| {
            let url = format!(
                "{}{base}?sha={head}&per_page={per_page}&page={n}",
                state.base_url
            );
            format!("<{url}>; rel=\"{rel}\"")
        };
        headers.push((
            "link".to_string(),
            format!("{}, {}", link(page + 1, "next"), link(last, "last")),
        ));
    }
    (200, headers, Value::Array(items))
}

/// `POST /graphql`: the `updateRefs` mutation, all updates or none, each
/// checked against its `beforeOid`; a non-fast-forward update needs `force`.
/// Failures are HTTP 200 with an `errors` list, as GitHub answers them.
pub fn graphql(state: &mut State, body: &Value) -> Answer {
    let query_text = body["query"].as_str().unwrap_or("");
    assert!(
        query_text.contains("updateRefs(input: $input)"),
        "the fake answers the updateRefs mutation only: {query_text}"
    );
    let input = &body["variables"]["input"];
    if input["repositoryId"].as_str() != Some(repository_id().as_str()) {
        return answer(200, fixture("errors/graphql_not_found.json"));
    }
    let updates = input["refUpdates"].as_array().cloned().unwrap_or_default();
    let mut apply = Vec::new();
    for update in &updates {
        let name = update["name"].as_str().unwrap_or("");
        let Some(branch) = name.strip_prefix("refs/heads/") else {
            return answer(200, fixture("errors/graphql_update_refs_refused.json"));
        };
        let current = state.heads.get(branch).cloned();
        let after = update["afterOid"].as_str().unwrap_or("").to_string();
        let before_matches = match update["beforeOid"].as_str() {
            Some(before) => current.as_deref() == Some(before),
            None => true,
        };
        let fast_forward = match &current {
            Some(current) => reachable(state, &after).contains(current),
            None => true,
        };
        let force = update["force"].as_bool().unwrap_or(false);
        if !before_matches || !state.commits.contains_key(&after) || !(fast_forward || force) {
            return answer(200, fixture("errors/graphql_update_refs_refused.json"));
        }
        apply.push((branch.to_string(), after));
    }
    for (branch, after) in apply {
        set_head(state, &branch, &after);
    }
    answer(200, fixture("graphql_update_refs.json"))
}
