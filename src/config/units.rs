//! Parsers for the units used in `benchgate.toml`: durations (`"300ms"`, `"1.5s"`,
//! `"2m"`) and sizes (`"22"`, `"20KB"`, `"1MiB"`), and their canonical rendering.

use std::time::Duration;

/// Parses a duration string: a non-negative number followed by one of
/// `ns`, `us`, `µs`, `ms`, `s`, `m`, `h`. A bare number is rejected: units are required.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("`{t}` has no unit; write it like \"500ms\", \"3s\" or \"2m\""))?;
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        format!("`{t}` does not start with a number; write it like \"500ms\" or \"3s\"")
    })?;
    let scale_ns: f64 = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        other => {
            return Err(format!(
                "`{t}` has unknown unit `{other}`; use one of ns, us, ms, s, m, h"
            ))
        }
    };
    let ns = value * scale_ns;
    if !ns.is_finite() || ns > 1e9 * 86_400.0 * 365.0 {
        return Err(format!("`{t}` is too large"));
    }
    Ok(Duration::from_nanos(ns.round() as u64))
}

/// Renders a duration in the shortest exact unit: `300ms`, `3s`, `1500us`.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        return "0s".to_string();
    }
    for (unit, scale) in [
        ("h", 3_600_000_000_000u128),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if ns.is_multiple_of(scale) {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// Parses a size: a non-negative integer or decimal with an optional unit
/// `B`, `KB`/`kB` (1000), `MB`, `GB`, `KiB` (1024), `MiB`, `GiB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        format!("`{t}` does not start with a number; write it like \"22\", \"20KB\" or \"1MiB\"")
    })?;
    let scale: f64 = match unit.trim() {
        "" | "B" | "b" => 1.0,
        "KB" | "kB" | "kb" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "`{t}` has unknown size unit `{other}`; use B, KB, MB, GB, KiB, MiB or GiB"
            ))
        }
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes > 1e12 {
        return Err(format!("`{t}` is too large (limit 1 TB)"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("`{t}` is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Serde adapter: a `Duration` as a unit string (`"300ms"`).
pub mod serde_duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

/// Serde adapter: an optional `Duration` as a unit string or null.
pub mod serde_opt_duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&super::format_duration(*d)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| super::parse_duration(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("300ms").unwrap(), Duration::from_millis(300));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert!(parse_duration("3").unwrap_err().contains("no unit"));
        assert!(parse_duration("3 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn durations_round_trip_through_format() {
        for d in ["300ms", "3s", "2m", "1500us", "1h", "7ns"] {
            assert_eq!(format_duration(parse_duration(d).unwrap()), d);
        }
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn sizes_parse_decimal_and_binary_units() {
        assert_eq!(parse_size("22").unwrap(), 22);
        assert_eq!(parse_size("20KB").unwrap(), 20_000);
        assert_eq!(parse_size("1MiB").unwrap(), 1_048_576);
        assert_eq!(parse_size("8 KiB").unwrap(), 8192);
        assert!(parse_size("1.5B").unwrap_err().contains("whole number"));
        assert!(parse_size("1XB").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("lots").is_err());
    }
}
