//! How a GitHub answer is treated: success, wait and retry, or give up.
//!
//! GitHub's documented rules ("Rate limits for the REST API", "Best practices for
//! using the REST API"): a rate-limited request gets 403 or 429; with a
//! `retry-after` header, wait that many seconds; else with
//! `x-ratelimit-remaining: 0`, wait until the epoch second in `x-ratelimit-reset`;
//! else wait at least one minute, exponentially longer if it goes on, and fail
//! after a few ([`next_wait`]). A 403 without rate-limit signs is a
//! permission failure and never succeeds on retry; neither does a 422 (validation)
//! or any other 4xx (401 included: bad credentials are an error, not a
//! read-only token). 5xx answers are transient.

use std::time::Duration;

use http::HeaderMap;

use super::config::GitHubConfig;

/// What to do with one HTTP answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Class {
    Success,
    /// Rate limited; `wait` is the server's hint, `None` to back off.
    RateLimited {
        wait: Option<Duration>,
    },
    /// A permission 403: never retried.
    Forbidden,
    /// 5xx: may succeed when sent again.
    Transient,
    /// Any other status: sending it again will not help.
    Fatal,
}

/// Why the next attempt would wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Pause {
    /// A transient failure: exponential backoff with full jitter (`retry`).
    Backoff,
    /// A rate limit with the time to wait (`retry-after`, `x-ratelimit-reset`).
    Told(Duration),
    /// A rate limit that names no time: at least `secondary_limit.base`.
    Untold,
}

impl Pause {
    /// The pause after a rate limit whose hint is `wait`.
    pub(crate) fn rate_limited(wait: Option<Duration>) -> Pause {
        wait.map_or(Pause::Untold, Pause::Told)
    }
}

/// The wait before the next attempt of a call, or `None` to give up: after
/// `attempts` attempts, `untold` of them rate limits that named no time,
/// `elapsed` since the first; `unit` in [0, 1) is the jitter. Every retry fits
/// `config.retry`'s attempts; a told or backoff wait fits its deadline, an
/// untold one `config.secondary_limit`; and the call ends within
/// `config.overall_timeout`.
pub(crate) fn next_wait(
    config: &GitHubConfig,
    pause: Pause,
    attempts: u32,
    untold: u32,
    elapsed: Duration,
    unit: f64,
) -> Option<Duration> {
    let retry = &config.retry;
    let wait = match pause {
        Pause::Backoff => retry.next_delay(attempts, elapsed, unit)?,
        Pause::Told(wait) => {
            (attempts < retry.max_attempts && elapsed + wait <= retry.deadline).then_some(wait)?
        }
        Pause::Untold if attempts >= retry.max_attempts => return None,
        Pause::Untold => config
            .secondary_limit
            .next_delay_at_least(untold, elapsed, unit)?,
    };
    (elapsed + wait < config.overall_timeout).then_some(wait)
}

/// Classifies an answer; `now_epoch` is the current Unix time in seconds.
pub(crate) fn classify(status: u16, headers: &HeaderMap, body: &[u8], now_epoch: u64) -> Class {
    match status {
        200..=299 => Class::Success,
        403 | 429 => match rate_limit_wait(status, headers, body, now_epoch) {
            Some(wait) => Class::RateLimited { wait },
            None => Class::Forbidden,
        },
        500..=599 => Class::Transient,
        _ => Class::Fatal,
    }
}

/// `Some(hint)` when the answer is a rate limit, `None` when it is not.
fn rate_limit_wait(
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
    now_epoch: u64,
) -> Option<Option<Duration>> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(secs) = header("retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Some(Duration::from_secs(secs)));
    }
    if header("x-ratelimit-remaining") == Some("0") {
        let wait = header("x-ratelimit-reset")
            .and_then(|v| v.parse::<u64>().ok())
            .map(|reset| Duration::from_secs(reset.saturating_sub(now_epoch) + 1));
        return Some(wait);
    }
    let message = String::from_utf8_lossy(body).to_ascii_lowercase();
    if status == 429 || message.contains("rate limit") || message.contains("abuse detection") {
        return Some(None);
    }
    None
}

/// GitHub's error `message` (and `errors[].message`), or the start of the body.
pub(crate) fn error_message(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(value) => {
            let mut text = value
                .get("message")
                .and_then(|m| m.as_str())
                .unwrap_or("")
                .to_string();
            if let Some(errors) = value.get("errors").and_then(|e| e.as_array()) {
                for e in errors {
                    if let Some(m) = e.get("message").and_then(|m| m.as_str()) {
                        text.push_str(&format!("; {m}"));
                    } else if let Some(c) = e.get("code").and_then(|c| c.as_str()) {
                        text.push_str(&format!("; {c}"));
                    }
                }
            }
            text
        }
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.trim();
    if text.is_empty() {
        return "(no message)".to_string();
    }
    text.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn retry_after_comes_first() {
        let h = headers(&[
            ("retry-after", "7"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1100"),
        ]);
        let wait = Some(Duration::from_secs(7));
        assert_eq!(classify(403, &h, b"{}", 1000), Class::RateLimited { wait });
    }

    #[test]
    fn reset_epoch_when_remaining_is_zero() {
        let h = headers(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1010"),
        ]);
        let wait = Some(Duration::from_secs(11));
        assert_eq!(classify(403, &h, b"{}", 1000), Class::RateLimited { wait });
        assert_eq!(
            classify(429, &HeaderMap::new(), b"", 0),
            Class::RateLimited { wait: None }
        );
    }

    #[test]
    fn secondary_limit_by_message_permission_otherwise() {
        let body = br#"{"message":"You have exceeded a secondary rate limit."}"#;
        let limited = Class::RateLimited { wait: None };
        assert_eq!(classify(403, &HeaderMap::new(), body, 0), limited);
        let denied = br#"{"message":"Resource not accessible by integration"}"#;
        assert_eq!(
            classify(403, &HeaderMap::new(), denied, 0),
            Class::Forbidden
        );
        // remaining > 0 with a reset header is an ordinary permission failure
        let h = headers(&[
            ("x-ratelimit-remaining", "4999"),
            ("x-ratelimit-reset", "9"),
        ]);
        assert_eq!(classify(403, &h, denied, 0), Class::Forbidden);
    }

    #[test]
    fn validation_and_server_errors() {
        assert_eq!(classify(422, &HeaderMap::new(), b"", 0), Class::Fatal);
        assert_eq!(classify(404, &HeaderMap::new(), b"", 0), Class::Fatal);
        assert_eq!(classify(502, &HeaderMap::new(), b"", 0), Class::Transient);
        assert_eq!(classify(201, &HeaderMap::new(), b"", 0), Class::Success);
    }

    /// Every wait of one call that keeps answering `pause`, in order.
    fn waits(config: &GitHubConfig, pause: Pause, unit: f64) -> Vec<Duration> {
        let (mut out, mut elapsed) = (Vec::new(), Duration::ZERO);
        let untold = u32::from(pause == Pause::Untold);
        for attempts in 1.. {
            let Some(wait) = next_wait(config, pause, attempts, attempts * untold, elapsed, unit)
            else {
                return out;
            };
            out.push(wait);
            elapsed += wait;
        }
        unreachable!()
    }

    #[test]
    fn an_untold_rate_limit_waits_a_minute_then_longer_then_fails() {
        let config = GitHubConfig::new("https://api.github.com", None);
        for unit in [0.0, 0.5, 0.999] {
            let waits = waits(&config, Pause::Untold, unit);
            assert_eq!(waits.len(), 2, "{waits:?}");
            assert!(waits[0] >= Duration::from_secs(60), "{waits:?}");
            assert!(waits[1] >= Duration::from_secs(120), "{waits:?}");
            let total: Duration = waits.iter().sum();
            assert!(total <= config.secondary_limit.deadline, "{total:?}");
        }
        // A transient failure still backs off briefly, a told wait is exact.
        let backoff = waits(&config, Pause::Backoff, 0.999);
        assert!(
            backoff.iter().all(|w| *w <= config.retry.cap),
            "{backoff:?}"
        );
        let seven = Pause::rate_limited(Some(Duration::from_secs(7)));
        assert_eq!(waits(&config, seven, 0.5)[0], Duration::from_secs(7));
        let hour = Pause::Told(Duration::from_secs(3600));
        assert!(waits(&config, hour, 0.5).is_empty(), "beyond the deadline");
    }

    #[test]
    fn every_wait_ends_within_the_overall_timeout() {
        let mut config = GitHubConfig::new("https://api.github.com", None);
        config.overall_timeout = Duration::from_secs(100);
        let waits = waits(&config, Pause::Untold, 0.0);
        assert_eq!(
            waits,
            [Duration::from_secs(60)],
            "120 s more would pass 100 s"
        );
        assert_eq!(
            next_wait(&config, Pause::Untold, 6, 1, Duration::ZERO, 0.0),
            None,
            "retry.max_attempts bounds every kind"
        );
    }

    #[test]
    fn messages_include_validation_details() {
        let body = br#"{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","message":"Body is too long"}]}"#;
        assert_eq!(error_message(body), "Validation Failed; Body is too long");
        assert_eq!(error_message(b""), "(no message)");
    }
}
