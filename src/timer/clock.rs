//! The wall clock as RFC 3339 UTC text: run ids, a run's and a trial's
//! start. Civil dates from Unix days by Howard Hinnant's algorithm
//! (<https://howardhinnant.github.io/date_algorithms.html>).

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Current time, RFC 3339 UTC.
pub fn now_rfc3339() -> String {
    format_utc(unix_now(), false)
}

/// Current time, RFC 3339 UTC with microseconds: `2026-11-30T01:02:03.123456Z`
/// (a trial's `started_at`).
pub fn now_rfc3339_micros() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format_utc_micros(since)
}

/// [`format_utc`] of a time since the Unix epoch, with its microseconds.
fn format_utc_micros(since_epoch: std::time::Duration) -> String {
    let seconds = format_utc(since_epoch.as_secs(), false);
    let seconds = seconds.strip_suffix('Z').unwrap_or(&seconds);
    format!("{seconds}.{:06}Z", since_epoch.subsec_micros())
}

/// Formats Unix seconds as UTC, `2026-11-30T01:02:03Z` or compact `20261130T010203Z`.
pub fn format_utc(secs: u64, compact: bool) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem / 60 % 60, rem % 60);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    if compact {
        format!("{y:04}{mo:02}{d:02}T{h:02}{m:02}{s:02}Z")
    } else {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_dates() {
        assert_eq!(format_utc(0, false), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(1_796_000_523, false), "2026-11-30T01:02:03Z");
        assert_eq!(format_utc(951_782_400, true), "20000229T000000Z");
        let micros = |s, ns| format_utc_micros(std::time::Duration::new(s, ns));
        assert_eq!(micros(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            micros(1_796_000_523, 4_567_891),
            "2026-11-30T01:02:03.004567Z"
        );
        assert_eq!(micros(59, 999_999_999), "1970-01-01T00:00:59.999999Z");
        // Sorting the text sorts the times (fixed width).
        assert!(micros(9, 0) < micros(10, 0) && micros(10, 1_000) < micros(10, 2_000));
    }
}
