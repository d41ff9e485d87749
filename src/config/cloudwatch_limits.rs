//! What CloudWatch's `PutMetricData` accepts, checked before anything is sent.
//!
//! Source: the CloudWatch API reference, `PutMetricData`, `MetricDatum` and
//! `Dimension`: at most 1,000 metric data and 1 MB per request (HTTP POST), 30
//! dimensions and 150 distinct values per datum; values finite and within
//! ±2^360; namespace, metric and dimension names 1 to 255 ASCII characters with a
//! non-space character, no control characters, not starting with `:`; dimension
//! values 1 to 1,024 such characters; namespaces not starting with `AWS/`.
//!
//! The request size is estimated from the AWS query protocol (form encoding) that
//! aws-sdk-cloudwatch 1.99 speaks, as an upper bound: every name and value is
//! counted as if percent-encoded, every index with its widest digit count and every
//! number at ryu's longest output.

/// Most metric data in one `PutMetricData` request.
pub const MAX_DATA_PER_REQUEST: usize = 1_000;
/// Largest `PutMetricData` request body, bytes (1 MB).
pub const MAX_REQUEST_BYTES: usize = 1_000_000;
/// Most dimensions on one datum.
pub const MAX_DIMENSIONS: usize = 30;
/// Most distinct values (with their counts) in one datum.
pub const MAX_VALUES_PER_DATUM: usize = 150;
/// Longest namespace, metric name or dimension name, characters.
pub const MAX_NAME_CHARS: usize = 255;
/// Longest dimension value, characters.
pub const MAX_DIMENSION_VALUE_CHARS: usize = 1_024;
/// Largest magnitude CloudWatch accepts (2^360); the smallest non-zero one is 2^-360.
pub const MAX_MAGNITUDE: f64 = f64::from_bits((1023 + 360) << 52);
const MIN_MAGNITUDE: f64 = f64::from_bits((1023 - 360) << 52);

/// What a checked string is, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    Namespace,
    MetricName,
    DimensionName,
    DimensionValue,
}

impl NameKind {
    fn what(self) -> &'static str {
        match self {
            NameKind::Namespace => "a CloudWatch namespace",
            NameKind::MetricName => "a CloudWatch metric name",
            NameKind::DimensionName => "a CloudWatch dimension name",
            NameKind::DimensionValue => "a CloudWatch dimension value",
        }
    }

    fn max_chars(self) -> usize {
        match self {
            NameKind::DimensionValue => MAX_DIMENSION_VALUE_CHARS,
            _ => MAX_NAME_CHARS,
        }
    }
}

/// Why `s` cannot be used as `kind`, if it cannot.
pub fn name_problem(kind: NameKind, s: &str) -> Option<String> {
    let what = kind.what();
    if s.is_empty() {
        return Some(format!("{what} cannot be empty"));
    }
    if let Some(c) = s.chars().find(|c| !c.is_ascii()) {
        return Some(format!(
            "{what} must be ASCII, but {s:?} contains {c:?} (U+{:04X})",
            c as u32
        ));
    }
    if s.len() > kind.max_chars() {
        return Some(format!(
            "{what} is at most {} characters long, but this one has {}",
            kind.max_chars(),
            s.len()
        ));
    }
    if s.chars().any(|c| c.is_ascii_control()) {
        return Some(format!("{what} cannot contain control characters: {s:?}"));
    }
    if s.trim().is_empty() {
        return Some(format!("{what} needs a character other than spaces"));
    }
    match kind {
        NameKind::DimensionName | NameKind::Namespace if s.starts_with(':') => {
            Some(format!("{what} cannot start with ':': {s:?}"))
        }
        NameKind::Namespace if s.starts_with("AWS/") => Some(format!(
            "{what} cannot start with \"AWS/\" (reserved for AWS services): {s:?}"
        )),
        _ => None,
    }
}

/// Why CloudWatch would refuse `v`, if it would.
pub fn value_problem(v: f64) -> Option<String> {
    if !v.is_finite() {
        Some(format!("{v} is not a finite number"))
    } else if v != 0.0 && !(MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&v.abs()) {
        Some(format!(
            "{v:e} is outside CloudWatch's range of ±2^-360 to ±2^360"
        ))
    } else {
        None
    }
}

/// Upper bound of the bytes a string adds to a form-encoded body.
fn encoded(s: &str) -> usize {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                1
            } else {
                3
            }
        })
        .sum()
}

/// `&MetricData.member.NNNN.` with the widest index (1..=1000).
const DATUM_PREFIX: usize = "&MetricData.member.1000.".len();
/// ryu's longest f64 output.
const NUMBER: usize = 24;
/// `2026-11-30T01:02:03.123Z`, colons percent-encoded.
const TIMESTAMP: usize = 32;

/// Upper bound of the request bytes outside the data: action, version, namespace.
pub fn request_overhead(namespace: &str) -> usize {
    "Action=PutMetricData&Version=2010-08-01&Namespace=".len() + encoded(namespace)
}

/// Upper bound of the bytes one datum adds to a request.
pub fn datum_bytes(
    metric_name: &str,
    dimensions: &[(String, String)],
    unit: &str,
    values: usize,
) -> usize {
    let field = |name: &str, value: usize| DATUM_PREFIX + name.len() + 1 + value;
    let mut n = field("MetricName", encoded(metric_name));
    for (name, value) in dimensions {
        n += field("Dimensions.member.30.Name", encoded(name));
        n += field("Dimensions.member.30.Value", encoded(value));
    }
    n += field("Timestamp", TIMESTAMP);
    n += field("Unit", encoded(unit));
    n += field("StorageResolution", 2);
    n += values * (field("Values.member.150", NUMBER) + field("Counts.member.150", NUMBER));
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_api_reference() {
        use NameKind::*;
        assert_eq!(name_problem(MetricName, "latency_p99_us"), None);
        assert_eq!(name_problem(DimensionValue, "feature/x y"), None);
        assert!(name_problem(MetricName, "").unwrap().contains("empty"));
        assert!(name_problem(DimensionName, "   ")
            .unwrap()
            .contains("spaces"));
        assert!(name_problem(DimensionName, ":x").unwrap().contains("':'"));
        assert_eq!(name_problem(MetricName, ":x"), None);
        assert!(name_problem(DimensionValue, "é").unwrap().contains("ASCII"));
        assert!(name_problem(DimensionValue, "a\tb")
            .unwrap()
            .contains("control"));
        assert!(name_problem(Namespace, "AWS/EC2")
            .unwrap()
            .contains("reserved"));
        assert_eq!(name_problem(DimensionName, &"x".repeat(255)), None);
        assert!(name_problem(DimensionName, &"x".repeat(256))
            .unwrap()
            .contains("at most 255"));
        assert_eq!(name_problem(DimensionValue, &"x".repeat(1024)), None);
        assert!(name_problem(DimensionValue, &"x".repeat(1025)).is_some());
    }

    #[test]
    fn values_must_be_finite_and_in_range() {
        assert_eq!(value_problem(0.0), None);
        assert_eq!(value_problem(-12.5), None);
        assert_eq!(value_problem(2f64.powi(360)), None);
        assert_eq!(value_problem(2f64.powi(-360)), None);
        assert!(value_problem(f64::NAN).unwrap().contains("finite"));
        assert!(value_problem(f64::INFINITY).unwrap().contains("finite"));
        assert!(value_problem(2f64.powi(361)).unwrap().contains("range"));
        assert!(value_problem(2f64.powi(-361)).unwrap().contains("range"));
    }

    #[test]
    fn size_estimate_bounds_a_real_encoding() {
        // The form encoding of one datum written out by hand, at its widest.
        let dims = vec![("Scenario".to_string(), "get 22b/é".to_string())];
        let mut real = String::from("&MetricData.member.1000.MetricName=latency_p99_us");
        real += "&MetricData.member.1000.Dimensions.member.1.Name=Scenario";
        real += "&MetricData.member.1000.Dimensions.member.1.Value=get%2022b%2F%C3%A9";
        real += "&MetricData.member.1000.Timestamp=2026-11-30T01%3A02%3A03Z";
        real += "&MetricData.member.1000.Unit=Microseconds";
        real += "&MetricData.member.1000.StorageResolution=60";
        for k in 1..=150 {
            real += &format!("&MetricData.member.1000.Values.member.{k}=-1.2345678901234567e-100");
            real += &format!("&MetricData.member.1000.Counts.member.{k}=1.0");
        }
        let estimate = datum_bytes("latency_p99_us", &dims, "Microseconds", 150);
        assert!(estimate >= real.len(), "{estimate} < {}", real.len());
        assert!(estimate < real.len() * 2, "{estimate} is far too loose");
    }
}
