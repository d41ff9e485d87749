//! A fake GitHub REST API on 127.0.0.1:0 (hyper), answering from the recorded
//! payloads in `fixtures/github/` and keeping comments, pull requests and a
//! repository's branches, files and commit history in memory, with GraphQL's
//! `updateRefs` ([`super::fake_git`]). It serves GitHub Enterprise Server's
//! layout too: REST under `/api/v3`, GraphQL at `/api/graphql`. It records every request (method,
//! path and query, headers, body, the status answered) and injects failures on
//! demand ([`Fault`]).
//!
//! Tokens map to [`Account`]s: a personal token (`GET /user` works), a workflow
//! `GITHUB_TOKEN` (`GET /user` is 403, the identity is `github-actions[bot]`) and a
//! fork's read-only token (every write is 403).

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use serde_json::Value;

/// The repository the fake serves.
pub const REPO: &str = "octo-org/bench";

/// Who a token authenticates as.
#[derive(Debug, Clone)]
pub struct Account {
    pub login: String,
    pub kind: String,
    /// `GET /user` answers (a personal token); else 403 as for `GITHUB_TOKEN`.
    pub can_get_user: bool,
    /// Every write is 403 (a pull request from a fork).
    pub read_only: bool,
}

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query.
    pub uri: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The status the fake answered.
    pub status: u16,
}

/// What an injected failure does.
pub enum FaultAction {
    /// Answer this instead of handling the request (nothing applied).
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        fixture: &'static str,
    },
    /// Handle the request, then wait this long before answering.
    ApplyThenDelay(Duration),
    /// Handle the request, then answer this status with a server error body.
    ApplyThenStatus(u16),
    /// Handle the request, then hold the answer until as many requests as the
    /// barrier counts have reached it (forces concurrent callers to overlap).
    ApplyThenMeet(Arc<tokio::sync::Barrier>),
    /// Change the state (another writer), then handle the request.
    Before(Box<dyn FnMut(&mut State) + Send>),
}

/// A failure for the next `times` requests matching `method` and a path that
/// contains `path_contains`.
pub struct Fault {
    pub method: &'static str,
    pub path_contains: String,
    pub times: usize,
    pub action: FaultAction,
}

/// Everything the fake holds.
#[derive(Default)]
pub struct State {
    pub base_url: String,
    pub accounts: HashMap<String, Account>,
    /// (issue number, comment payload), in creation order.
    pub comments: Vec<(u64, Value)>,
    pub next_comment_id: u64,
    /// Issues (not pull requests), in creation order; numbered from 12.
    pub issues: Vec<Value>,
    pub pulls: Vec<Value>,
    /// Commit sha -> numbers of the pull requests containing it.
    pub commit_pulls: HashMap<String, Vec<u64>>,
    /// Branch -> path -> bytes.
    pub branches: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    /// Branch -> the commit it points at ([`super::fake_git`]).
    pub heads: BTreeMap<String, String>,
    /// Commit sha -> commit.
    pub commits: HashMap<String, super::fake_git::FakeCommit>,
    /// Tree sha -> path -> blob sha.
    pub trees: HashMap<String, BTreeMap<String, String>>,
    /// Blob sha -> bytes.
    pub blobs: HashMap<String, Vec<u8>>,
    /// Branch -> the most commits ever reachable from its head.
    pub longest_history: HashMap<String, usize>,
    pub commits_made: u64,
    /// Replication lag: the first this many reads of a file just written
    /// (`GET .../contents/{path}`) or a branch just created
    /// (`GET .../branches/{name}`) answer 404, as a lagging replica would.
    pub replication_lag: usize,
    /// What still lags: `branch:path` or `branch:` -> 404s left to answer.
    pub lagging: HashMap<String, usize>,
    pub requests: Vec<Recorded>,
    pub faults: Vec<Fault>,
}

/// The running fake; stops when dropped.
pub struct FakeGitHub {
    pub url: String,
    pub state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

pub fn fixture(name: &str) -> Value {
    let path = format!("{}/fixtures/github/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

impl FakeGitHub {
    /// Starts the fake with three tokens: `pat-token` (user `benchgate-ci`),
    /// `actions-token` (`github-actions[bot]`) and `fork-token` (read-only bot).
    pub fn start() -> FakeGitHub {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mut state = State {
            base_url: url.clone(),
            next_comment_id: 1_997_366_000,
            issues: Vec::new(),
            ..State::default()
        };
        let bot = |read_only| Account {
            login: "github-actions[bot]".into(),
            kind: "Bot".into(),
            can_get_user: false,
            read_only,
        };
        let pat = Account {
            login: "benchgate-ci".into(),
            kind: "User".into(),
            can_get_user: true,
            read_only: false,
        };
        state.accounts.insert("pat-token".into(), pat);
        state.accounts.insert("actions-token".into(), bot(false));
        state.accounts.insert("fork-token".into(), bot(true));
        let state = Arc::new(Mutex::new(state));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = state.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(serve(listener, shared, stopped));
        });
        FakeGitHub {
            url,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn inject(&self, fault: Fault) {
        self.state.lock().unwrap().faults.push(fault);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    pub fn clear_requests(&self) {
        self.state.lock().unwrap().requests.clear();
    }

    /// Requests of `method` whose path contains `fragment`.
    pub fn count(&self, method: &str, fragment: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.method == method && r.uri.contains(fragment))
            .count()
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    state: Arc<Mutex<State>>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted { Ok(a) => a, Err(_) => continue },
            _ = &mut stopped => return,
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(req, state.clone()));
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

/// An answer: status, extra headers, JSON body (`Null` for none).
pub type Answer = (u16, Vec<(String, String)>, Value);

pub fn answer(status: u16, body: Value) -> Answer {
    (status, Vec::new(), body)
}

pub fn error(status: u16, fixture_name: &str) -> Answer {
    answer(status, fixture(&format!("errors/{fixture_name}.json")))
}

async fn handle(
    req: Request<hyper::body::Incoming>,
    state: Arc<Mutex<State>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().to_string();
    let uri = req.uri().to_string();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("?").to_string()))
        .collect();
    let body = req.into_body().collect().await.unwrap().to_bytes();
    let body = String::from_utf8_lossy(&body).into_owned();
    let (answer, hold) = {
        let mut state = state.lock().unwrap();
        let i = state.requests.len();
        state.requests.push(Recorded {
            method: method.clone(),
            uri: uri.clone(),
            headers: headers.clone(),
            body: body.clone(),
            status: 0,
        });
        let (answer, hold) = respond(&mut state, &method, &uri, &headers, &body);
        state.requests[i].status = answer.0;
        (answer, hold)
    };
    match hold {
        Some(Hold::Delay(delay)) => tokio::time::sleep(delay).await,
        Some(Hold::Meet(barrier)) => {
            barrier.wait().await;
        }
        None => {}
    }
    let (status, extra, json) = answer;
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", "application/json; charset=utf-8")
        .header("x-github-api-version-selected", "2022-11-28");
    for (k, v) in extra {
        builder = builder.header(k, v);
    }
    let bytes = if json.is_null() {
        Bytes::new()
    } else {
        Bytes::from(serde_json::to_vec(&json).unwrap())
    };
    Ok(builder.body(Full::new(bytes)).unwrap())
}

/// What to wait for before sending an answer.
enum Hold {
    Delay(Duration),
    Meet(Arc<tokio::sync::Barrier>),
}

fn respond(
    state: &mut State,
    method: &str,
    uri: &str,
    headers: &[(String, String)],
    body: &str,
) -> (Answer, Option<Hold>) {
    let path = uri.split('?').next().unwrap_or("").to_string();
    let mut after: Option<FaultAction> = None;
    if let Some(i) = state
        .faults
        .iter()
        .position(|f| f.method == method && path.contains(&f.path_contains) && f.times > 0)
    {
        state.faults[i].times -= 1;
        let fault = if state.faults[i].times == 0 {
            Some(state.faults.remove(i).action)
        } else {
            None
        };
        let action = match fault {
            Some(action) => action,
            // Still armed: Respond faults can be reused; others are one-shot.
            None => match &state.faults[i].action {
                FaultAction::Respond {
                    status,
                    headers,
                    fixture: f,
                } => FaultAction::Respond {
                    status: *status,
                    headers: headers.clone(),
                    fixture: f,
                },
                FaultAction::ApplyThenDelay(d) => FaultAction::ApplyThenDelay(*d),
                FaultAction::ApplyThenStatus(s) => FaultAction::ApplyThenStatus(*s),
                FaultAction::ApplyThenMeet(b) => FaultAction::ApplyThenMeet(b.clone()),
                FaultAction::Before(_) => panic!("Before faults fire once (times: 1)"),
            },
        };
        match action {
            FaultAction::Respond {
                status,
                headers,
                fixture: f,
            } => {
                let body = fixture(&format!("errors/{f}.json"));
                return ((status, headers, body), None);
            }
            FaultAction::Before(mut hook) => hook(state),
            other => after = Some(other),
        }
    }
    let token = headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .and_then(|(_, v)| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let account = match token.and_then(|t| state.accounts.get(&t).cloned()) {
        Some(account) => account,
        None => return (error(401, "bad_credentials"), None),
    };
    let body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let prefix = format!("/repos/{REPO}");
    let graphql = path == "/graphql" || path == "/api/graphql";
    // GitHub Enterprise Server serves REST under /api/v3 (and GraphQL beside it).
    let path = path.strip_prefix("/api/v3").unwrap_or(&path).to_string();
    let answer = if graphql {
        match account.read_only {
            true => answer(200, fixture("errors/graphql_forbidden.json")),
            false => super::fake_git::graphql(state, &body),
        }
    } else if path == "/user" {
        if account.can_get_user {
            let mut user = fixture("user.json");
            user["login"] = account.login.clone().into();
            user["type"] = account.kind.clone().into();
            answer(200, user)
        } else {
            error(403, "forbidden_integration")
        }
    } else if let Some(rest) = path.strip_prefix(&prefix) {
        if account.read_only && method != "GET" {
            error(403, "forbidden_integration")
        } else {
            super::fake_issues::route(state, &account, method, rest, uri, &body)
                .or_else(|| super::fake_contents::route(state, &account, method, rest, uri, &body))
                .or_else(|| {
                    super::fake_git::route(state, method, rest.trim_start_matches('/'), uri)
                })
                .unwrap_or_else(|| error(404, "not_found"))
        }
    } else {
        error(404, "not_found")
    };
    match after {
        Some(FaultAction::ApplyThenDelay(d)) => (answer, Some(Hold::Delay(d))),
        Some(FaultAction::ApplyThenMeet(b)) => (answer, Some(Hold::Meet(b))),
        Some(FaultAction::ApplyThenStatus(s)) => (super::fake::error(s, "server_error"), None),
        _ => (answer, None),
    }
}

/// The value of query parameter `name` in `uri`.
pub fn query(uri: &str, name: &str) -> Option<String> {
    let query = uri.split_once('?')?.1;
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| v.to_string())
    })
}

/// Whether a read of `key` (see [`State::lagging`]) answers 404, counting it.
pub fn lags(state: &mut State, key: &str) -> bool {
    match state.lagging.get_mut(key) {
        Some(left) if *left > 0 => {
            *left -= 1;
            true
        }
        _ => false,
    }
}

/// GitHub's timestamp form, from a counter (deterministic and increasing).
pub fn timestamp(n: u64) -> String {
    format!(
        "2025-03-14T{:02}:{:02}:{:02}Z",
        10 + (n / 3600) % 12,
        (n / 60) % 60,
        n % 60
    )
}
