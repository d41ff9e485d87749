//! The result file an external client may write (docs/external-clients.md).
//!
//! Untrusted input: size bounded, version checked, every number range-checked,
//! counts consistent, latency either an HdrHistogram in the standard compressed
//! encoding (base64) or a plain list of microseconds. Any problem rejects the
//! file with a message naming the field and what was expected.

use serde::Deserialize;

use crate::measure::{ErrorCounts, LatencyHistogram};

/// Largest result file read.
pub const MAX_RESULT_BYTES: u64 = 64 * 1024 * 1024;
/// Latency list entries accepted (a list this long is 100+ MB of JSON anyway).
const MAX_LATENCIES: usize = 10_000_000;

/// A validated result file.
#[derive(Debug, Clone)]
pub struct ExternalResult {
    pub requests: u64,
    pub ok: u64,
    pub errors: ErrorCounts,
    pub elapsed_s: f64,
    pub latency: Option<LatencyHistogram>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResult {
    benchgate_result: serde_json::Value,
    requests: serde_json::Value,
    ok: serde_json::Value,
    #[serde(default)]
    errors: Option<serde_json::Map<String, serde_json::Value>>,
    elapsed_s: serde_json::Value,
    #[serde(default)]
    latency_histogram: Option<String>,
    #[serde(default)]
    latency_us: Option<Vec<serde_json::Value>>,
}

fn count(v: &serde_json::Value, field: &str) -> Result<u64, String> {
    v.as_u64().ok_or_else(|| {
        format!(
            "`{field}` must be a non-negative integer, found {}",
            shorten(v)
        )
    })
}

/// A JSON value for an error message, cut to 40 characters.
pub(super) fn shorten(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// Parses and validates a result file's bytes.
pub fn parse(bytes: &[u8]) -> Result<ExternalResult, String> {
    if bytes.len() as u64 > MAX_RESULT_BYTES {
        return Err(format!(
            "the result file is {} bytes, over the {MAX_RESULT_BYTES} byte limit; write a latency_histogram instead of a latency_us list",
            bytes.len()
        ));
    }
    let raw: RawResult = serde_json::from_slice(bytes).map_err(|e| {
        format!("the result file is not a benchgate result (JSON object with benchgate_result, requests, ok, elapsed_s and latency): {e}")
    })?;
    match raw.benchgate_result.as_u64() {
        Some(1) => {}
        _ => {
            return Err(format!(
                "`benchgate_result` is {}, but this benchgate reads version 1; write \"benchgate_result\": 1",
                shorten(&raw.benchgate_result)
            ))
        }
    }
    let requests = count(&raw.requests, "requests")?;
    let ok = count(&raw.ok, "ok")?;
    let mut errors = ErrorCounts::default();
    if let Some(map) = &raw.errors {
        for (k, v) in map {
            let n = count(v, &format!("errors.{k}"))?;
            let slot = match k.as_str() {
                "connect" => &mut errors.connect,
                "timeout" => &mut errors.timeout,
                "read" => &mut errors.read,
                "write" => &mut errors.write,
                "status_4xx" => &mut errors.status_4xx,
                "status_5xx" => &mut errors.status_5xx,
                other => {
                    return Err(format!(
                        "`errors.{other}` is not an error class; use connect, timeout, read, write, status_4xx or status_5xx"
                    ))
                }
            };
            *slot = n;
        }
    }
    if ok.checked_add(errors.total()) != Some(requests) {
        return Err(format!(
            "`requests` ({requests}) must equal `ok` ({ok}) plus the errors ({}); count every completed request once",
            errors.total()
        ));
    }
    let elapsed_s = raw
        .elapsed_s
        .as_f64()
        .filter(|e| e.is_finite() && *e > 0.0 && *e < 86_400.0 * 7.0)
        .ok_or_else(|| {
            format!(
                "`elapsed_s` must be a positive number of seconds (the measured window), found {}",
                shorten(&raw.elapsed_s)
            )
        })?;
    let latency = match (raw.latency_histogram, raw.latency_us) {
        (Some(_), Some(_)) => {
            return Err("the result file has both `latency_histogram` and `latency_us`; write one".into())
        }
        (Some(h), None) => Some(
            LatencyHistogram::decode(&h)
                .map_err(|e| format!("`latency_histogram`: {e}; write base64 of HdrHistogram's encodeIntoCompressedByteBuffer"))?,
        ),
        (None, Some(list)) => {
            if list.len() > MAX_LATENCIES {
                return Err(format!(
                    "`latency_us` has {} entries, over the {MAX_LATENCIES} limit; write a latency_histogram instead",
                    list.len()
                ));
            }
            let mut h = LatencyHistogram::new();
            for (i, v) in list.iter().enumerate() {
                let us = v.as_u64().filter(|us| *us <= 3_600_000_000).ok_or_else(|| {
                    format!(
                        "`latency_us[{i}]` must be an integer number of microseconds from 0 to 3600000000, found {}",
                        shorten(v)
                    )
                })?;
                h.record_us(us);
            }
            Some(h)
        }
        (None, None) => None,
    };
    if let Some(h) = &latency {
        if h.len() > requests {
            return Err(format!(
                "the latency data holds {} values but only {requests} requests completed; record one latency per successful request",
                h.len()
            ));
        }
    }
    Ok(ExternalResult {
        requests,
        ok,
        errors,
        elapsed_s,
        latency: latency.filter(|h| !h.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text.as_bytes()).unwrap_err()
    }

    #[test]
    fn accepts_a_latency_list() {
        let r = parse(br#"{"benchgate_result":1,"requests":4,"ok":3,"errors":{"status_5xx":1},"elapsed_s":2.0,"latency_us":[100,200,300]}"#).unwrap();
        assert_eq!((r.requests, r.ok, r.errors.status_5xx), (4, 3, 1));
        let h = r.latency.unwrap();
        assert_eq!(h.len(), 3);
        assert_eq!(h.summary().unwrap().max_us, 300);
    }

    #[test]
    fn accepts_a_histogram() {
        let mut h = LatencyHistogram::new();
        h.record_us(1500);
        h.record_us(2500);
        let text = format!(
            r#"{{"benchgate_result":1,"requests":2,"ok":2,"elapsed_s":1.5,"latency_histogram":"{}"}}"#,
            h.encode()
        );
        let r = parse(text.as_bytes()).unwrap();
        assert_eq!(r.latency.unwrap().len(), 2);
    }

    #[test]
    fn rejects_hostile_and_malformed_files() {
        assert!(err("not json").contains("not a benchgate result"));
        assert!(
            err(r#"{"benchgate_result":2,"requests":1,"ok":1,"elapsed_s":1}"#)
                .contains("version 1")
        );
        assert!(
            err(r#"{"benchgate_result":1,"requests":-1,"ok":1,"elapsed_s":1}"#)
                .contains("`requests` must be a non-negative integer")
        );
        assert!(
            err(r#"{"benchgate_result":1,"requests":1,"ok":1,"elapsed_s":0}"#)
                .contains("`elapsed_s`")
        );
        assert!(
            err(r#"{"benchgate_result":1,"requests":1,"ok":1,"elapsed_s":"NaN"}"#)
                .contains("`elapsed_s`")
        );
        assert!(
            err(r#"{"benchgate_result":1,"requests":5,"ok":1,"elapsed_s":1}"#)
                .contains("must equal `ok`")
        );
        assert!(err(
            r#"{"benchgate_result":1,"requests":1,"ok":1,"elapsed_s":1,"errors":{"boom":1}}"#
        )
        .contains("not an error class"));
        assert!(err(
            r#"{"benchgate_result":1,"requests":1,"ok":1,"elapsed_s":1,"latency_us":[-5]}"#
        )
        .contains("latency_us[0]"));
        assert!(err(
            r#"{"benchgate_result":1,"requests":1,"ok":1,"elapsed_s":1,"latency_us":[1,2]}"#
        )
        .contains("one latency per successful request"));
        assert!(err(
            r#"{"benchgate_result":1,"requests":1,"ok":1,"elapsed_s":1,"latency_histogram":"%%%"}"#
        )
        .contains("latency_histogram"));
        assert!(
            err(r#"{"benchgate_result":1,"requests":1,"ok":1,"elapsed_s":1,"extra":true}"#)
                .contains("unknown field")
        );
        assert!(err(r#"{"benchgate_result":1,"requests":1,"ok":1,"elapsed_s":1,"latency_us":[1],"latency_histogram":"x"}"#).contains("both"));
        let huge = vec![b' '; (MAX_RESULT_BYTES + 1) as usize];
        assert!(parse(&huge).unwrap_err().contains("byte limit"));
    }
}
