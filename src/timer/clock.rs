//! The wall clock as RFC 3339 UTC text (run ids, a run's and a trial's start)
//! and the one parser of such text, with chrono (already in the tree under
//! octocrab).

use chrono::{DateTime, SecondsFormat, Utc};

/// Current time, RFC 3339 UTC: `2026-11-30T01:02:03Z`.
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Current time, RFC 3339 UTC with microseconds: `2026-11-30T01:02:03.123456Z`
/// (a trial's `started_at`).
pub fn now_rfc3339_micros() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Current time, compact: `20261130T010203Z` (a run id's start).
pub fn now_compact() -> String {
    Utc::now().format("%Y%m%dT%H%M%SZ").to_string()
}

/// Unix seconds of an RFC 3339 time (`2026-05-01T12:00:00Z`,
/// `2026-05-01T14:00:00.5+02:00`; fractional seconds dropped); `None` if malformed.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(s).ok().map(|t| t.timestamp())
}

/// Unix microseconds of an RFC 3339 time, fractional seconds kept; `None` if
/// malformed.
pub fn parse_rfc3339_us(s: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_utc_times() {
        let before = Utc::now().timestamp();
        let texts = [now_rfc3339(), now_rfc3339_micros()];
        let after = Utc::now().timestamp();
        for text in texts {
            assert!(text.ends_with('Z'), "{text}");
            let t = parse_rfc3339(&text).unwrap();
            assert!(
                before <= t && t <= after,
                "{text}: {t} not in {before}..={after}"
            );
        }
        let micros = now_rfc3339_micros();
        assert_eq!(
            micros.len(),
            "2026-11-30T01:02:03.123456Z".len(),
            "{micros}"
        );
        let compact = now_compact();
        assert_eq!(compact.len(), "20261130T010203Z".len(), "{compact}");
        assert!(
            compact.as_bytes()[8] == b'T' && compact.ends_with('Z'),
            "{compact}"
        );

        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2026-11-30T01:02:03Z"), Some(1_796_000_523));
        assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some(951_868_800));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00.250Z"), Some(951_782_400));
        assert_eq!(
            parse_rfc3339("2000-03-01T02:00:00.25+02:00"),
            Some(951_868_800)
        );
        assert_eq!(parse_rfc3339("2000-02-29 00:00:00"), None);
        assert_eq!(parse_rfc3339("2000-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
    }
}
