//! The GitHub client: octocrab for transport (base URL, auth header, hyper +
//! rustls, connect/read/write timeouts), benchgate's policy for retries
//! ([`super::policy`]): octocrab's own retry layer is not compiled in (its
//! `retry` feature is off).
//!
//! Per call: each attempt is bounded by `request_timeout` and the whole call,
//! retries included, by `overall_timeout`. Waits ([`policy::next_wait`]):
//! `retry-after`, then `x-ratelimit-reset`; a rate limit that names no time
//! waits at least a minute, doubling (`secondary_limit`); other failures back
//! off exponentially with full jitter ([`crate::retry::RetryPolicy`]); a wait
//! that does not fit the budget ends the call. Mutating calls (POST, PATCH,
//! PUT, DELETE) are serialized, spaced by `mutation_spacing` (GitHub asks for
//! at least a second between them) and counted: past the run's cap
//! ([`super::config::MutationBudget`]) none is sent. A POST
//! that fails after it was sent is not retried: it returns
//! [`GitHubError::Ambiguous`] and the caller re-lists before posting again.
//!
//! Two things end a call early, whatever it is doing (waiting for an answer,
//! backing off, spacing mutations) ([`super::stop`]): SIGINT/SIGTERM recorded
//! by [`crate::interrupt`] (polled every [`POLL`]; the request
//! in flight is dropped, [`GitHubError::Interrupted`]), and the run's
//! [`TimeBudget`] running out ([`GitHubError::OutOfTime`]).

use std::fmt;
use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use http_body_util::BodyExt as _;
use serde::de::DeserializeOwned;

pub use super::config::{GitHubConfig, Identity, IdentityMode, TimeBudget, Token};
use super::error::GitHubError;
use super::policy::{self, Class, Pause};
pub use super::stop::POLL;
use super::stop::{signalled, Spend};

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
    pub(super) octo: octocrab::Octocrab,
    /// The same transport on the GraphQL endpoint's base ([`super::graphql`]).
    pub(super) graphql_octo: octocrab::Octocrab,
    pub(super) rt: Option<tokio::runtime::Runtime>,
    pub(super) config: GitHubConfig,
    pub(super) base: String,
    pub(super) last_mutation: Mutex<Option<Instant>>,
    pub(super) identity: Mutex<Option<Identity>>,
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
        let octo = transport(&rt, &base, &config)?;
        let graphql_octo = transport(&rt, &super::graphql::graphql_base(&base), &config)?;
        Ok(GitHub {
            octo,
            graphql_octo,
            rt: Some(rt),
            config,
            base,
            last_mutation: Mutex::new(None),
            identity: Mutex::new(None),
        })
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

    /// Sends one REST call under the retry policy; `Ok` only for a 2xx answer.
    pub fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<ApiResponse, GitHubError> {
        self.send_to(Api::Rest, method, path, body)
    }

    /// Sends one call to `api` under the retry policy (the same for both APIs:
    /// budgets, spacing and the mutation cap count every call).
    pub(super) fn send_to(
        &self,
        api: Api,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<ApiResponse, GitHubError> {
        let start = Instant::now();
        // The call's time counts against the run's budget however it ends.
        let _spend = self
            .config
            .time
            .as_ref()
            .map(|budget| Spend { budget, start });
        let mutating = method != Method::GET && method != Method::HEAD;
        let mut last =
            mutating.then(|| self.last_mutation.lock().unwrap_or_else(|e| e.into_inner()));
        let mut attempts = 0u32;
        let mut untold = 0u32;
        let mut last_error = String::new();
        loop {
            self.still_wanted(&method, path, start, &last_error)?;
            if mutating && !self.config.mutations.take() {
                return Err(GitHubError::MutationCap {
                    method: method.to_string(),
                    path: path.to_string(),
                    cap: self.config.mutations.cap(),
                });
            }
            if let Some(Some(at)) = last.as_deref() {
                let since = at.elapsed();
                if since < self.config.mutation_spacing {
                    self.pause(self.config.mutation_spacing - since);
                    self.still_wanted(&method, path, start, &last_error)?;
                }
            }
            let remaining = self.config.overall_timeout.saturating_sub(start.elapsed());
            attempts += 1;
            let timeout = self
                .config
                .request_timeout
                .min(remaining)
                .min(self.time_left(start));
            let outcome = self.block_on(async {
                tokio::select! {
                    outcome = self.attempt(api, &method, path, body, timeout) => Some(outcome),
                    () = signalled() => None,
                }
            });
            if let Some(last) = last.as_deref_mut() {
                *last = Some(Instant::now());
            }
            let Some(outcome) = outcome else {
                return Err(self.interrupted(&method, path));
            };
            if let Err(AttemptError::NotSent(m) | AttemptError::AfterSend(m)) = &outcome {
                // Cut short by the run's budget rather than by `request_timeout`.
                self.still_wanted(&method, path, start, m)?;
            }
            let m = method.to_string();
            let p = path.to_string();
            let (pause, err) = match outcome {
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
                                Pause::Backoff,
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
                            untold += u32::from(wait.is_none());
                            (
                                Pause::rate_limited(wait),
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
                    Pause::Backoff,
                    GitHubError::Transport {
                        method: m,
                        path: p,
                        attempts,
                        message,
                    },
                ),
            };
            let unit: f64 = rand::random();
            let elapsed = start.elapsed();
            let Some(delay) =
                policy::next_wait(&self.config, pause, attempts, untold, elapsed, unit)
            else {
                return Err(err);
            };
            last_error = err.to_string();
            if delay >= self.time_left(start) {
                return Err(self.out_of_time(&method, path, &last_error));
            }
            self.pause(delay);
        }
    }

    /// One request: send, read the whole body, within `timeout`.
    async fn attempt(
        &self,
        api: Api,
        method: &Method,
        path: &str,
        body: Option<&serde_json::Value>,
        timeout: Duration,
    ) -> Result<(StatusCode, HeaderMap, Bytes), AttemptError> {
        let octo = match api {
            Api::Rest => &self.octo,
            Api::GraphQl => &self.graphql_octo,
        };
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

/// Which of GitHub's APIs a call goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Api {
    /// The REST API at `GITHUB_API_URL`.
    Rest,
    /// The GraphQL endpoint derived from it ([`super::graphql::graphql_base`]).
    GraphQl,
}

/// octocrab on `base` (no path rewriting beyond octocrab's own joining of
/// `base`'s path and the request's), with the client's timeouts and token.
fn transport(
    rt: &tokio::runtime::Runtime,
    base: &str,
    config: &GitHubConfig,
) -> Result<octocrab::Octocrab, GitHubError> {
    let _in_rt = rt.enter();
    let mut builder = octocrab::Octocrab::builder()
        .base_uri(base)
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
        .map_err(|e| GitHubError::Invalid(format!("building the client: {e}")))
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
    fn the_debug_form_names_the_url_only() {
        let token = Token::new("ghp_secret123");
        let gh = GitHub::new(GitHubConfig::new("https://api.github.com", Some(token))).unwrap();
        assert_eq!(
            format!("{gh:?}"),
            "GitHub { api_url: \"https://api.github.com\", .. }"
        );
    }

    #[test]
    fn blocks_from_inside_a_runtime_without_panicking() {
        let gh = GitHub::new(GitHubConfig::new("http://127.0.0.1:1", None)).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            assert_eq!(gh.block_on(async { 7 }), 7);
            drop(gh);
        });
    }
}
