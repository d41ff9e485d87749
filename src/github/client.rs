//! The GitHub client: octocrab for transport (base URL, auth header, hyper +
//! rustls, connect/read/write timeouts), benchgate's policy for retries
//! ([`super::policy`]): octocrab's own retry layer is not compiled in (its
//! `retry` feature is off).
//!
//! Per call: each attempt is bounded by `request_timeout` and the whole call,
//! retries included, by `overall_timeout`. Waits: `retry-after`, then
//! `x-ratelimit-reset`, else exponential backoff with full jitter
//! ([`RetryPolicy`]); a wait that does not fit the budget ends the call. Mutating
//! calls (POST, PATCH, PUT, DELETE) are serialized and spaced by
//! `mutation_spacing` (GitHub asks for at least a second between them). A POST
//! that fails after it was sent is not retried: it returns
//! [`GitHubError::Ambiguous`] and the caller re-lists before posting again.

use std::fmt;
use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use http_body_util::BodyExt as _;
use serde::de::DeserializeOwned;

use super::error::GitHubError;
use super::policy::{self, Class};
use crate::publish::retry::RetryPolicy;

/// An API token. Its text is reachable only by the client that sends it; Debug
/// prints `Token(***)` and there is no Display.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Wraps a token; surrounding whitespace (a trailing newline from a secret
    /// file) is dropped.
    pub fn new(secret: impl Into<String>) -> Token {
        Token(secret.into().trim().to_string())
    }

    /// `text` with every occurrence of the token replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// Whose comments count as ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityMode {
    /// `GET /user` (a personal access token); on 403/404 (a workflow's
    /// `GITHUB_TOKEN`, an installation token) the given bot login.
    Auto { fallback_bot: String },
    /// This login, no lookup (e.g. a GitHub App's `my-app[bot]`).
    Login(String),
}

impl Default for IdentityMode {
    fn default() -> Self {
        IdentityMode::Auto {
            fallback_bot: "github-actions[bot]".to_string(),
        }
    }
}

/// The authenticated identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub login: String,
    /// GitHub's account type is `Bot`.
    pub is_bot: bool,
}

/// How to reach GitHub and how hard to try.
#[derive(Debug, Clone)]
pub struct GitHubConfig {
    /// `GITHUB_API_URL`, e.g. `https://api.github.com` or `https://ghe.example/api/v3`.
    pub api_url: String,
    pub token: Option<Token>,
    pub connect_timeout: Duration,
    /// One attempt, from sending to the last body byte.
    pub request_timeout: Duration,
    /// One call, all attempts and waits included.
    pub overall_timeout: Duration,
    /// Attempts, backoff, and the time within which a retry may start.
    pub retry: RetryPolicy,
    /// The least time between two mutating calls.
    pub mutation_spacing: Duration,
    pub identity: IdentityMode,
}

impl GitHubConfig {
    /// Production defaults: 10 s connect, 30 s per attempt, 120 s per call, 6
    /// attempts within 90 s, 1 s between mutations.
    pub fn new(api_url: impl Into<String>, token: Option<Token>) -> GitHubConfig {
        GitHubConfig {
            api_url: api_url.into(),
            token,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            overall_timeout: Duration::from_secs(120),
            retry: RetryPolicy {
                max_attempts: 6,
                base: Duration::from_millis(500),
                cap: Duration::from_secs(20),
                deadline: Duration::from_secs(90),
            },
            mutation_spacing: Duration::from_secs(1),
            identity: IdentityMode::default(),
        }
    }
}

/// A successful (2xx) answer.
#[derive(Debug, Clone)]
pub struct ApiResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl ApiResponse {
    /// The body as JSON of type `T`; `what` names it in the error.
    pub fn json<T: DeserializeOwned>(&self, what: &str) -> Result<T, GitHubError> {
        serde_json::from_slice(&self.body)
            .map_err(|e| GitHubError::Invalid(format!("{what}: unexpected answer: {e}")))
    }
}

/// One attempt's failure before a status was read.
enum AttemptError {
    /// Not sent (connection refused, DNS, TLS, connect timeout).
    NotSent(String),
    /// Sent, or maybe sent, then failed or timed out.
    AfterSend(String),
}

/// A GitHub API client (see the module docs). Shareable across threads.
pub struct GitHub {
    octo: octocrab::Octocrab,
    rt: Option<tokio::runtime::Runtime>,
    config: GitHubConfig,
    base: String,
    last_mutation: Mutex<Option<Instant>>,
    identity: Mutex<Option<Identity>>,
}

impl fmt::Debug for GitHub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GitHub")
            .field("api_url", &self.base)
            .finish_non_exhaustive()
    }
}

impl GitHub {
    pub fn new(config: GitHubConfig) -> Result<GitHub, GitHubError> {
        let base = config.api_url.trim().trim_end_matches('/').to_string();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(GitHubError::Invalid(format!(
                "GITHUB_API_URL {base:?} is not an http(s) URL"
            )));
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("benchgate-github")
            .enable_all()
            .build()
            .map_err(|e| GitHubError::Invalid(format!("starting the HTTP runtime: {e}")))?;
        let octo = {
            let _in_rt = rt.enter();
            let mut builder = octocrab::Octocrab::builder()
                .base_uri(base.as_str())
                .map_err(|e| GitHubError::Invalid(format!("GITHUB_API_URL {base:?}: {e}")))?
                .add_header(http::header::ACCEPT, "application/vnd.github+json".into())
                .set_connect_timeout(Some(config.connect_timeout))
                .set_read_timeout(Some(config.request_timeout))
                .set_write_timeout(Some(config.request_timeout));
            if let Some(token) = &config.token {
                builder = builder.personal_token(token.0.clone());
            }
            builder
                .build()
                .map_err(|e| GitHubError::Invalid(format!("building the client: {e}")))?
        };
        Ok(GitHub {
            octo,
            rt: Some(rt),
            config,
            base,
            last_mutation: Mutex::new(None),
            identity: Mutex::new(None),
        })
    }

    pub fn config(&self) -> &GitHubConfig {
        &self.config
    }

    /// Removes the token from a text bound for a log or an error.
    pub fn redact(&self, text: &str) -> String {
        match &self.config.token {
            Some(token) => token.redact(text),
            None => text.to_string(),
        }
    }

    /// GET `path` (relative to the API URL, query included).
    pub fn get(&self, path: &str) -> Result<ApiResponse, GitHubError> {
        self.send(Method::GET, path, None)
    }

    /// Sends one call under the retry policy; `Ok` only for a 2xx answer.
    pub fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<ApiResponse, GitHubError> {
        let start = Instant::now();
        let mutating = method != Method::GET && method != Method::HEAD;
        let mut last =
            mutating.then(|| self.last_mutation.lock().unwrap_or_else(|e| e.into_inner()));
        let mut attempts = 0u32;
        loop {
            if let Some(Some(at)) = last.as_deref() {
                let since = at.elapsed();
                if since < self.config.mutation_spacing {
                    std::thread::sleep(self.config.mutation_spacing - since);
                }
            }
            let remaining = self.config.overall_timeout.saturating_sub(start.elapsed());
            attempts += 1;
            let timeout = self.config.request_timeout.min(remaining);
            let outcome = self.block_on(self.attempt(&method, path, body, timeout));
            if let Some(last) = last.as_deref_mut() {
                *last = Some(Instant::now());
            }
            let m = method.to_string();
            let p = path.to_string();
            let (hint, err) = match outcome {
                Ok((status, headers, bytes)) => {
                    let message = self.redact(&policy::error_message(&bytes));
                    let status_u = status.as_u16();
                    match policy::classify(status_u, &headers, &bytes, now_epoch()) {
                        Class::Success => {
                            return Ok(ApiResponse {
                                status,
                                headers,
                                body: bytes,
                            })
                        }
                        Class::Forbidden => {
                            let (method, path) = (m, p);
                            return Err(GitHubError::Forbidden {
                                method,
                                path,
                                status: status_u,
                                message,
                            });
                        }
                        Class::Fatal => {
                            let (method, path) = (m, p);
                            return Err(GitHubError::Status {
                                method,
                                path,
                                status: status_u,
                                attempts,
                                message,
                            });
                        }
                        Class::Transient if method == Method::POST => {
                            let message = format!("HTTP {status_u}: {message}");
                            return Err(GitHubError::Ambiguous {
                                method: m,
                                path: p,
                                message,
                            });
                        }
                        Class::Transient => {
                            let (method, path) = (m, p);
                            (
                                None,
                                GitHubError::Status {
                                    method,
                                    path,
                                    status: status_u,
                                    attempts,
                                    message,
                                },
                            )
                        }
                        Class::RateLimited { wait } => {
                            let (method, path) = (m, p);
                            (
                                wait,
                                GitHubError::RateLimited {
                                    method,
                                    path,
                                    status: status_u,
                                    attempts,
                                    message,
                                },
                            )
                        }
                    }
                }
                Err(AttemptError::AfterSend(message)) if method == Method::POST => {
                    return Err(GitHubError::Ambiguous {
                        method: m,
                        path: p,
                        message,
                    });
                }
                Err(AttemptError::NotSent(message) | AttemptError::AfterSend(message)) => (
                    None,
                    GitHubError::Transport {
                        method: m,
                        path: p,
                        attempts,
                        message,
                    },
                ),
            };
            let unit: f64 = rand::random();
            let Some(backoff) = self
                .config
                .retry
                .next_delay(attempts, start.elapsed(), unit)
            else {
                return Err(err);
            };
            let delay = hint.unwrap_or(backoff);
            let elapsed = start.elapsed();
            if elapsed + delay > self.config.retry.deadline
                || elapsed + delay >= self.config.overall_timeout
            {
                return Err(err);
            }
            std::thread::sleep(delay);
        }
    }

    /// One request: send, read the whole body, within `timeout`.
    async fn attempt(
        &self,
        method: &Method,
        path: &str,
        body: Option<&serde_json::Value>,
        timeout: Duration,
    ) -> Result<(StatusCode, HeaderMap, Bytes), AttemptError> {
        let octo = &self.octo;
        let exchange = async {
            let uri = path.to_string();
            let response = match *method {
                Method::GET => octo._get(uri).await,
                Method::POST => octo._post(uri, body).await,
                Method::PATCH => octo._patch(uri, body).await,
                Method::PUT => octo._put(uri, body).await,
                Method::DELETE => octo._delete(uri, body).await,
                _ => unreachable!("benchgate sends GET, POST, PATCH, PUT and DELETE only"),
            }
            .map_err(|e| classify_send_error(&e, |t| self.redact(t)))?;
            let (parts, body) = response.into_parts();
            let bytes = body
                .collect()
                .await
                .map_err(|e| {
                    AttemptError::AfterSend(self.redact(&format!("reading the answer: {e}")))
                })?
                .to_bytes();
            Ok((parts.status, parts.headers, bytes))
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(AttemptError::AfterSend(format!(
                "no complete answer within {timeout:?}"
            ))),
        }
    }

    /// Every item of a list endpoint, following `Link: rel="next"` for at most
    /// `max_pages` pages; more pages is an error (the list is not known whole).
    pub fn get_all<T: DeserializeOwned>(
        &self,
        first: &str,
        max_pages: usize,
    ) -> Result<Vec<T>, GitHubError> {
        let mut items = Vec::new();
        let mut next = Some(first.to_string());
        let mut pages = 0;
        while let Some(path) = next.take() {
            if pages == max_pages {
                return Err(GitHubError::Invalid(format!(
                    "{first}: more than {max_pages} pages; refusing to act on a partial list"
                )));
            }
            pages += 1;
            let response = self.get(&path)?;
            let mut page: Vec<T> = response.json(&path)?;
            items.append(&mut page);
            next = next_link(&response.headers)
                .map(|url| self.relative(&url))
                .transpose()?;
        }
        Ok(items)
    }

    /// A URL the API gave (a `Link` header) as a path relative to the API URL;
    /// another host is refused, so the token never goes there.
    fn relative(&self, url: &str) -> Result<String, GitHubError> {
        match url.strip_prefix(&self.base) {
            Some(rest) if rest.starts_with('/') => Ok(rest.to_string()),
            _ => Err(GitHubError::Invalid(format!(
                "the API linked to {url:?}, outside {}; not following it",
                self.base
            ))),
        }
    }

    /// The authenticated identity (looked up once; see [`IdentityMode`]).
    pub fn identity(&self) -> Result<Identity, GitHubError> {
        if let Some(id) = self
            .identity
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Ok(id);
        }
        let id = match &self.config.identity {
            IdentityMode::Login(login) => Identity {
                login: login.clone(),
                is_bot: login.ends_with("[bot]"),
            },
            IdentityMode::Auto { fallback_bot } => match self.get("/user") {
                Ok(response) => {
                    let user: super::comment::User = response.json("GET /user")?;
                    Identity {
                        is_bot: user.kind == "Bot",
                        login: user.login,
                    }
                }
                Err(e) if matches!(e.status(), Some(403 | 404)) => Identity {
                    login: fallback_bot.clone(),
                    is_bot: true,
                },
                Err(e) => return Err(e),
            },
        };
        *self.identity.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.clone());
        Ok(id)
    }

    /// Runs `future` on the client's runtime; from a helper thread when the
    /// caller is already inside a tokio runtime (blocking there would panic).
    fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let rt = self
            .rt
            .as_ref()
            .expect("the runtime lives as long as the client");
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(|| rt.block_on(future))
                    .join()
                    .expect("GitHub request thread panicked")
            })
        } else {
            rt.block_on(future)
        }
    }
}

impl Drop for GitHub {
    fn drop(&mut self) {
        // Dropping a runtime inside another one panics; this never blocks.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Whether a transport error happened before the request left (a connect
/// failure), so that even a POST may be sent again.
fn classify_send_error(e: &octocrab::Error, redact: impl Fn(&str) -> String) -> AttemptError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut text = String::new();
    while let Some(err) = source {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&err.to_string());
        if let Some(legacy) = err.downcast_ref::<hyper_util::client::legacy::Error>() {
            if legacy.is_connect() {
                return AttemptError::NotSent(redact(&format!("cannot connect: {legacy}")));
            }
        }
        source = err.source();
    }
    AttemptError::AfterSend(redact(&text))
}

/// The `rel="next"` URL of a `Link` header (RFC 8288).
pub(crate) fn next_link(headers: &HeaderMap) -> Option<String> {
    let link = headers.get(http::header::LINK)?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        is_next.then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

fn now_epoch() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_never_printed() {
        let token = Token::new("ghp_secret123\n");
        assert_eq!(format!("{token:?}"), "Token(***)");
        assert_eq!(token.redact("Bearer ghp_secret123 x"), "Bearer *** x");
        let config = GitHubConfig::new("http://127.0.0.1:1", Some(token));
        assert!(!format!("{config:?}").contains("ghp_secret123"));
    }

    #[test]
    fn link_header_next() {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::LINK,
            "<https://api.github.com/x?page=1>; rel=\"prev\", <https://api.github.com/x?page=3>; rel=\"next\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            next_link(&h).as_deref(),
            Some("https://api.github.com/x?page=3")
        );
        assert_eq!(next_link(&HeaderMap::new()), None);
    }

    #[test]
    fn links_elsewhere_are_refused() {
        let gh = GitHub::new(GitHubConfig::new("https://ghe.example/api/v3/", None)).unwrap();
        assert_eq!(
            gh.relative("https://ghe.example/api/v3/repos/a/b?page=2")
                .unwrap(),
            "/repos/a/b?page=2"
        );
        assert!(gh.relative("https://evil.example/api/v3/repos").is_err());
        assert!(gh.relative("https://ghe.example/api/v3x/repos").is_err());
    }
}
