//! How a GitHub answer is treated: success, wait and retry, or give up.
//!
//! GitHub's documented rules ("Rate limits for the REST API", "Best practices for
//! using the REST API"): a rate-limited request gets 403 or 429; with a
//! `retry-after` header, wait that many seconds; else with
//! `x-ratelimit-remaining: 0`, wait until the epoch second in `x-ratelimit-reset`;
//! else wait (we back off exponentially). A 403 without rate-limit signs is a
//! permission failure and never succeeds on retry; neither does a 422 (validation)
//! or any other 4xx (401 included: bad credentials are an error, not a
//! read-only token). 5xx answers are transient.

use std::time::Duration;

use http::HeaderMap;

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

    #[test]
    fn messages_include_validation_details() {
        let body = br#"{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","message":"Body is too long"}]}"#;
        assert_eq!(error_message(body), "Validation Failed; Body is too long");
        assert_eq!(error_message(b""), "(no message)");
    }
}
