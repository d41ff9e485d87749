//! `[publish.cloudwatch]`: where and what `benchgate publish cloudwatch` sends.
//!
//! ```toml
//! [publish.cloudwatch]
//! namespace = "Benchgate"            # default
//! region = "eu-west-1"               # default: the AWS chain (AWS_REGION, profile)
//! metrics = ["throughput_rps", "latency_p99_us"]   # default: the gating metrics
//! storage_resolution = 60            # or 1 (high resolution)
//! run_id_dimension = true            # RunId dimension on every datum
//! dimensions = { Team = "sdk", Runner = "ubuntu-24.04" }
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cloudwatch_limits::{name_problem, NameKind, MAX_DIMENSIONS};
use super::error::Problem;
use super::raw::RawCloudWatch;
use crate::metric::metric_def;
use crate::metric::METRICS;

/// Namespace when none is configured.
pub const DEFAULT_NAMESPACE: &str = "Benchgate";
/// Metrics published when none are configured, in registry order: the ones
/// the gate judges, the median latency and the peak RSS (the registry's
/// `cloudwatch.by_default`).
pub fn default_metrics() -> Vec<&'static str> {
    METRICS
        .iter()
        .filter(|d| d.cloudwatch.by_default)
        .map(|d| d.name)
        .collect()
}

/// Dimensions benchgate sets itself; extra dimensions cannot reuse these names.
pub const RESERVED_DIMENSIONS: &[&str] = &["Scenario", "Client", "Branch", "RunId"];

/// `[publish]`: publishers' settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishSettings {
    /// `[publish.cloudwatch]`, when the file has it.
    pub cloudwatch: Option<CloudWatchSettings>,
}

/// `[publish.cloudwatch]` after defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CloudWatchSettings {
    pub namespace: String,
    /// `None`: the AWS chain decides (AWS_REGION, AWS_DEFAULT_REGION, profile).
    pub region: Option<String>,
    /// Extra dimensions on every datum, by name.
    pub dimensions: BTreeMap<String, String>,
    /// Stable metric names to publish, in order.
    pub metrics: Vec<String>,
    /// Seconds: 60 (standard) or 1 (high resolution).
    pub storage_resolution: u32,
    /// Add the `RunId` dimension (one metric series per run).
    pub run_id_dimension: bool,
}

impl Default for CloudWatchSettings {
    fn default() -> Self {
        CloudWatchSettings {
            namespace: DEFAULT_NAMESPACE.to_string(),
            region: None,
            dimensions: BTreeMap::new(),
            metrics: default_metrics().into_iter().map(String::from).collect(),
            storage_resolution: 60,
            run_id_dimension: true,
        }
    }
}

const FIELD: &str = "publish.cloudwatch";

/// Validates `[publish.cloudwatch]`.
pub(super) fn build_cloudwatch(raw: &RawCloudWatch) -> Result<CloudWatchSettings, Problem> {
    let path = |f: &str| format!("{FIELD}.{f}");
    let mut out = CloudWatchSettings::default();
    if let Some(ns) = &raw.namespace {
        if let Some(p) = name_problem(NameKind::Namespace, &ns.value) {
            return Err(Problem::new(
                ns.span.clone(),
                path("namespace"),
                p,
                "use 1 to 255 ASCII characters, like namespace = \"Benchgate\"",
            ));
        }
        out.namespace = ns.value.clone();
    }
    if let Some(r) = &raw.region {
        let ok = !r.value.is_empty()
            && r.value.len() <= 64
            && r.value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !ok {
            return Err(Problem::new(
                r.span.clone(),
                path("region"),
                format!("{:?} is not an AWS region name", r.value),
                "write it like region = \"us-east-1\", or remove it to use AWS_REGION",
            ));
        }
        out.region = Some(r.value.clone());
    }
    if let Some(dims) = &raw.dimensions {
        let limit = MAX_DIMENSIONS - RESERVED_DIMENSIONS.len();
        if dims.value.len() > limit {
            return Err(Problem::new(
                dims.span.clone(),
                path("dimensions"),
                format!(
                    "{} extra dimensions, but CloudWatch allows {MAX_DIMENSIONS} per metric and benchgate uses {}",
                    dims.value.len(),
                    RESERVED_DIMENSIONS.len()
                ),
                format!("keep at most {limit} extra dimensions"),
            ));
        }
        for (name, value) in &dims.value {
            let field = format!("{FIELD}.dimensions.{}", name.value);
            if RESERVED_DIMENSIONS.contains(&name.value.as_str()) {
                return Err(Problem::new(
                    name.span.clone(),
                    field,
                    format!("dimension {:?} is set by benchgate", name.value),
                    format!(
                        "choose another name; {} are reserved",
                        RESERVED_DIMENSIONS.join(", ")
                    ),
                ));
            }
            if let Some(p) = name_problem(NameKind::DimensionName, &name.value) {
                return Err(Problem::new(
                    name.span.clone(),
                    field,
                    p,
                    "use 1 to 255 ASCII characters not starting with ':', like Team = \"sdk\"",
                ));
            }
            if let Some(p) = name_problem(NameKind::DimensionValue, &value.value) {
                return Err(Problem::new(
                    value.span.clone(),
                    field,
                    p,
                    "use 1 to 1024 printable ASCII characters, like Team = \"sdk\"",
                ));
            }
            out.dimensions
                .insert(name.value.clone(), value.value.clone());
        }
    }
    if let Some(metrics) = &raw.metrics {
        if metrics.value.is_empty() {
            return Err(Problem::new(
                metrics.span.clone(),
                path("metrics"),
                "the metric list is empty",
                format!(
                    "name at least one metric, or remove `metrics` for the default ({})",
                    default_metrics().join(", ")
                ),
            ));
        }
        let mut names = Vec::with_capacity(metrics.value.len());
        for (i, m) in metrics.value.iter().enumerate() {
            let field = format!("{FIELD}.metrics[{i}]");
            if metric_def(&m.value).is_none() {
                let known: Vec<&str> = METRICS.iter().map(|d| d.name).collect();
                return Err(Problem::new(
                    m.span.clone(),
                    field,
                    format!("unknown metric {:?}", m.value),
                    format!("use one of: {}", known.join(", ")),
                ));
            }
            if names.contains(&m.value) {
                return Err(Problem::new(
                    m.span.clone(),
                    field,
                    format!("metric {:?} is listed twice", m.value),
                    "list each metric once",
                ));
            }
            names.push(m.value.clone());
        }
        out.metrics = names;
    }
    if let Some(r) = &raw.storage_resolution {
        out.storage_resolution = match r.value {
            1 => 1,
            60 => 60,
            other => {
                return Err(Problem::new(
                    r.span.clone(),
                    path("storage_resolution"),
                    format!("storage resolution {other} is not one CloudWatch offers"),
                    "use storage_resolution = 60 (standard) or 1 (high resolution)",
                ))
            }
        };
    }
    if let Some(b) = &raw.run_id_dimension {
        out.run_id_dimension = b.value;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_metrics_are_known_and_have_units() {
        for m in default_metrics() {
            assert!(metric_def(m).is_some(), "{m}");
        }
        assert_eq!(CloudWatchSettings::default().storage_resolution, 60);
    }
}
