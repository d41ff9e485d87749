//! The fake's issues, issue comments and pull requests.

use serde_json::{json, Value};

use super::fake::{answer, error, fixture, query, timestamp, Account, Answer, State, REPO};

/// Handles `rest` (the path after `/repos/{owner}/{repo}`), or `None` when it is
/// not an issues or pulls endpoint.
pub fn route(
    state: &mut State,
    account: &Account,
    method: &str,
    rest: &str,
    uri: &str,
    body: &Value,
) -> Option<Answer> {
    let parts: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    Some(match (method, parts.as_slice()) {
        ("GET", ["issues", n, "comments"]) => list_comments(state, n.parse().ok()?, uri),
        ("POST", ["issues", n, "comments"]) => {
            let text = body["body"].as_str().unwrap_or("").to_string();
            let comment = new_comment(state, n.parse().ok()?, &account.login, &account.kind, &text);
            answer(201, comment)
        }
        ("PATCH", ["issues", "comments", id]) => {
            let id: u64 = id.parse().ok()?;
            let counter = state.next_comment_id;
            match state.comments.iter_mut().find(|(_, c)| c["id"] == id) {
                Some((_, comment)) => {
                    comment["body"] = body["body"].clone();
                    comment["updated_at"] = timestamp(counter + 1800).into();
                    answer(200, comment.clone())
                }
                None => error(404, "not_found"),
            }
        }
        ("DELETE", ["issues", "comments", id]) => {
            let id: u64 = id.parse().ok()?;
            let before = state.comments.len();
            state.comments.retain(|(_, c)| c["id"] != id);
            if state.comments.len() < before {
                answer(204, Value::Null)
            } else {
                error(404, "not_found")
            }
        }
        ("GET", ["issues"]) => {
            let state_wanted = query(uri, "state").unwrap_or_else(|| "open".into());
            let listed: Vec<Value> = state
                .issues
                .iter()
                .filter(|i| state_wanted == "all" || i["state"] == state_wanted.as_str())
                .cloned()
                .collect();
            answer(200, Value::Array(listed))
        }
        ("POST", ["issues"]) => {
            let issue = new_issue(state, &account.login, &account.kind, body);
            answer(201, issue)
        }
        ("PATCH", ["issues", n]) => {
            let n: u64 = n.parse().ok()?;
            match state.issues.iter_mut().find(|i| i["number"] == n) {
                Some(issue) => {
                    for field in ["title", "body", "state", "state_reason"] {
                        if !body[field].is_null() {
                            issue[field] = body[field].clone();
                        }
                    }
                    answer(200, issue.clone())
                }
                None => error(404, "not_found"),
            }
        }
        ("GET", ["pulls", n]) => {
            let n: u64 = n.parse().ok()?;
            match state.pulls.iter().find(|p| p["number"] == n) {
                Some(pull) => answer(200, pull.clone()),
                None => error(404, "not_found"),
            }
        }
        ("GET", ["pulls"]) => {
            let open: Vec<Value> = state
                .pulls
                .iter()
                .filter(|p| p["state"] == "open")
                .cloned()
                .collect();
            answer(200, Value::Array(open))
        }
        ("GET", ["commits", sha, "pulls"]) => {
            let numbers = state.commit_pulls.get(*sha).cloned().unwrap_or_default();
            let pulls: Vec<Value> = state
                .pulls
                .iter()
                .filter(|p| numbers.iter().any(|n| p["number"] == *n))
                .cloned()
                .collect();
            answer(200, Value::Array(pulls))
        }
        _ => return None,
    })
}

/// Adds a comment by `login` on issue `issue` (also used by tests to seed).
pub fn new_comment(state: &mut State, issue: u64, login: &str, kind: &str, text: &str) -> Value {
    state.next_comment_id += 1;
    let id = state.next_comment_id;
    let mut comment = fixture("issue_comment.json");
    comment["id"] = id.into();
    comment["node_id"] = format!("IC_kwDOKpRz6s{id}").into();
    comment["url"] = format!("https://api.github.com/repos/{REPO}/issues/comments/{id}").into();
    comment["html_url"] =
        format!("https://github.com/{REPO}/pull/{issue}#issuecomment-{id}").into();
    comment["issue_url"] = format!("https://api.github.com/repos/{REPO}/issues/{issue}").into();
    comment["user"]["login"] = login.into();
    comment["user"]["type"] = kind.into();
    if kind != "Bot" {
        comment["user"]["id"] = json!(583_1227);
        comment["user"]["html_url"] = format!("https://github.com/{login}").into();
    }
    comment["body"] = text.into();
    comment["created_at"] = timestamp(id - 1_997_366_000).into();
    comment["updated_at"] = comment["created_at"].clone();
    state.comments.push((issue, comment.clone()));
    comment
}

/// Opens an issue by `login` with the request's title and body (also used
/// by tests to seed).
pub fn new_issue(state: &mut State, login: &str, kind: &str, request: &Value) -> Value {
    let number = 12 + state.issues.len() as u64;
    let mut issue = fixture("issue.json");
    issue["number"] = number.into();
    issue["id"] = json!(2_914_753_074 + number);
    issue["url"] = format!("https://api.github.com/repos/{REPO}/issues/{number}").into();
    issue["html_url"] = format!("https://github.com/{REPO}/issues/{number}").into();
    issue["title"] = request["title"].clone();
    issue["body"] = request["body"].clone();
    issue["state"] = "open".into();
    issue["user"]["login"] = login.into();
    issue["user"]["type"] = kind.into();
    state.issues.push(issue.clone());
    issue
}

/// One page (`per_page`, default 30, at most 100) with GitHub's `Link` header.
fn list_comments(state: &State, issue: u64, uri: &str) -> Answer {
    let per_page: usize = query(uri, "per_page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let page: usize = query(uri, "page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1);
    let all: Vec<&Value> = state
        .comments
        .iter()
        .filter(|(i, _)| *i == issue)
        .map(|(_, c)| c)
        .collect();
    let last = all.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|c| (*c).clone())
        .collect();
    let link = |p: usize, rel: &str| {
        format!(
            "<{}/repos/{REPO}/issues/{issue}/comments?per_page={per_page}&page={p}>; rel=\"{rel}\"",
            state.base_url
        )
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(link(page - 1, "prev"));
    }
    if page < last {
        links.push(link(page + 1, "next"));
        links.push(link(last, "last"));
    }
    if page > 1 {
        links.push(link(1, "first"));
    }
    let mut headers = Vec::new();
    if !links.is_empty() {
        headers.push(("link".to_string(), links.join(", ")));
    }
    (200, headers, Value::Array(items))
}
