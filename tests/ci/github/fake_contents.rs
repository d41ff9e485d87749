//! The fake's branches, Contents API and the Git Data API calls that create a
//! branch or a commit. Blob shas are real git blob shas of the stored bytes, so
//! a stale sha is detected exactly as GitHub does (409 on mismatch, 422 when
//! missing). Every write, delete and seeded file is a commit
//! ([`super::fake_git`]).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;
use sha1::{Digest, Sha1};

use super::fake::{answer, error, fixture, lags, query, Account, Answer, State, REPO};
use super::fake_git::{commit_change, new_commit, set_head, store_blob, store_tree};

pub fn route(
    state: &mut State,
    _account: &Account,
    method: &str,
    rest: &str,
    uri: &str,
    body: &Value,
) -> Option<Answer> {
    let rest = rest.trim_start_matches('/');
    if let Some(branch) = rest.strip_prefix("branches/") {
        let branch = decode(branch);
        if method == "GET" && lags(state, &format!("{branch}:")) {
            return Some(error(404, "branch_not_found"));
        }
        return Some(match state.branches.contains_key(&branch) {
            true if method == "GET" => {
                let mut b = fixture("branch.json");
                b["name"] = branch.clone().into();
                b["commit"]["sha"] = state.heads.get(&branch).cloned().unwrap_or_default().into();
                answer(200, b)
            }
            _ => error(404, "branch_not_found"),
        });
    }
    if let Some(path) = rest.strip_prefix("contents/") {
        let path = decode(path);
        return Some(match method {
            "GET" => {
                let branch = query(uri, "ref").map(|r| decode(&r))?;
                if lags(state, &format!("{branch}:{path}")) {
                    return Some(error(404, "not_found"));
                }
                get_file(state, &path, &branch)
            }
            "PUT" => put_file(state, &path, body),
            "DELETE" => delete_file(state, &path, body),
            _ => return None,
        });
    }
    Some(match (method, rest) {
        ("POST", "git/trees") => {
            let mut files = BTreeMap::new();
            for entry in body["tree"].as_array().cloned().unwrap_or_default() {
                let path = entry["path"].as_str().unwrap_or("").to_string();
                let content = entry["content"].as_str().unwrap_or("").as_bytes();
                files.insert(path, store_blob(state, content));
            }
            let sha = store_tree(state, files);
            let mut tree = fixture("git_tree.json");
            tree["sha"] = sha.into();
            answer(201, tree)
        }
        ("POST", "git/commits") => {
            let tree = body["tree"].as_str().unwrap_or("");
            let parents: Vec<String> = body["parents"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|p| p.as_str().unwrap_or("").to_string())
                .collect();
            if !state.trees.contains_key(tree)
                || parents.iter().any(|p| !state.commits.contains_key(p))
            {
                return Some(error(422, "validation_failed"));
            }
            let message = body["message"].as_str().unwrap_or("");
            let sha = new_commit(state, tree, parents, message);
            answer(201, super::fake_git::git_commit(&sha, &state.commits[&sha]))
        }
        ("POST", "git/refs") => {
            let name = body["ref"].as_str().unwrap_or("");
            let Some(branch) = name.strip_prefix("refs/heads/") else {
                return Some(error(422, "validation_failed"));
            };
            if state.branches.contains_key(branch) {
                return Some(error(422, "reference_exists"));
            }
            let commit = body["sha"].as_str().unwrap_or("").to_string();
            if !state.commits.contains_key(&commit) {
                return Some(error(422, "validation_failed"));
            }
            set_head(state, branch, &commit);
            let lag = state.replication_lag;
            state.lagging.insert(format!("{branch}:"), lag);
            let mut reference = fixture("git_ref.json");
            reference["ref"] = name.into();
            reference["object"]["sha"] = commit.into();
            answer(201, reference)
        }
        _ => return None,
    })
}

/// The git blob sha of `bytes`.
pub fn blob_sha(bytes: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn decode(text: &str) -> String {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 3 <= bytes.len() {
            out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn get_file(state: &State, path: &str, branch: &str) -> Answer {
    let Some(files) = state.branches.get(branch) else {
        return error(404, "no_commit_for_ref");
    };
    let Some(bytes) = files.get(path) else {
        return error(404, "not_found");
    };
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    // GitHub wraps the base64 at 60 characters per line.
    let wrapped: Vec<String> = encoded
        .as_bytes()
        .chunks(60)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let mut file = fixture("contents_file.json");
    let sha = blob_sha(bytes);
    file["name"] = path.rsplit('/').next().unwrap_or(path).into();
    file["path"] = path.into();
    file["sha"] = sha.clone().into();
    file["size"] = bytes.len().into();
    file["content"] = format!("{}\n", wrapped.join("\n")).into();
    file["git_url"] = format!("https://api.github.com/repos/{REPO}/git/blobs/{sha}").into();
    answer(200, file)
}

fn put_file(state: &mut State, path: &str, body: &Value) -> Answer {
    let branch = body["branch"].as_str().unwrap_or("main").to_string();
    let given = body["sha"].as_str().map(str::to_string);
    let content = body["content"].as_str().unwrap_or("");
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(content) else {
        return error(422, "validation_failed");
    };
    let Some(files) = state.branches.get_mut(&branch) else {
        return error(404, "branch_not_found");
    };
    let status = match (files.get(path), given) {
        (Some(_), None) => return error(422, "sha_missing"),
        (Some(old), Some(sha)) if blob_sha(old) != sha => return error(409, "conflict"),
        (None, Some(_)) => return error(409, "conflict"),
        (Some(_), Some(_)) => 200,
        (None, None) => 201,
    };
    let sha = blob_sha(&bytes);
    let size = bytes.len();
    files.insert(path.to_string(), bytes.clone());
    let message = body["message"].as_str().unwrap_or("");
    commit_change(state, &branch, path, Some(&bytes), message);
    let lag = state.replication_lag;
    state.lagging.insert(format!("{branch}:{path}"), lag);
    let mut out = fixture("contents_put.json");
    out["content"]["path"] = path.into();
    out["content"]["name"] = path.rsplit('/').next().unwrap_or(path).into();
    out["content"]["sha"] = sha.into();
    out["content"]["size"] = size.into();
    out["commit"]["message"] = body["message"].clone();
    out["commit"]["sha"] = state.heads[&branch].clone().into();
    answer(status, out)
}

fn delete_file(state: &mut State, path: &str, body: &Value) -> Answer {
    let branch = body["branch"].as_str().unwrap_or("main").to_string();
    let given = body["sha"].as_str().unwrap_or("");
    let Some(files) = state.branches.get_mut(&branch) else {
        return error(404, "branch_not_found");
    };
    match files.get(path) {
        None => error(404, "not_found"),
        Some(old) if blob_sha(old) != given => error(409, "conflict"),
        Some(_) => {
            files.remove(path);
            let message = body["message"].as_str().unwrap_or("");
            commit_change(state, &branch, path, None, message);
            let mut out = fixture("contents_put.json");
            out["content"] = Value::Null;
            out["commit"]["message"] = body["message"].clone();
            out["commit"]["sha"] = state.heads[&branch].clone().into();
            answer(200, out)
        }
    }
}

/// Seeds a file on a branch, as a commit on top of its head (tests).
pub fn seed(state: &mut State, branch: &str, path: &str, bytes: &[u8]) {
    state
        .branches
        .entry(branch.to_string())
        .or_default()
        .insert(path.to_string(), bytes.to_vec());
    commit_change(state, branch, path, Some(bytes), &format!("seed {path}"));
}
