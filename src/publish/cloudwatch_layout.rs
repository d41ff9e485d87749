//! A run's results as CloudWatch metric data, and the data split into requests.
//! Pure: no SDK, no I/O, so the layout and the limits are tested without a server.
//!
//! Layout: one datum per (scenario, client, metric) with the dimensions
//! `Scenario`, `Client` (and `Server`, for a server under test), `Branch`,
//! `RunId` (unless turned off) and the configured extra ones; its values are the metric's value in each successful trial that
//! measured it (identical values listed once, with their count), so CloudWatch's
//! statistics (average, min, max, percentiles, sample count) are over trials. The
//! timestamp is the run's start. Nothing is derived: a trial that did not measure
//! a metric adds no value, and a cell without any adds no datum.

use crate::config::CloudWatchSettings;
use crate::metric::metric_def;
use crate::results::RunResults;
use crate::timer::clock::parse_rfc3339;

use crate::config::cloudwatch_limits::{self as limits, NameKind};

/// How long ago a timestamp may be for CloudWatch to accept it (two weeks).
pub const MAX_AGE_SECS: i64 = 14 * 86_400;
/// How far in the future a timestamp may be (two hours).
pub const MAX_AHEAD_SECS: i64 = 2 * 3_600;

/// The CloudWatch unit of each published metric (the registry's).
pub use crate::metric::registry::CloudWatchUnit as Unit;

/// The unit a metric is published in and the factor from benchgate's unit to it
/// (the registry's `cloudwatch`; only `error_rate`, a ratio, is scaled: x100 to
/// a percentage). `None`: no such metric.
pub fn unit_of(metric: &str) -> Option<(Unit, f64)> {
    metric_def(metric).map(|d| (d.cloudwatch.unit, d.cloudwatch.factor))
}

/// One `MetricDatum`.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    pub metric_name: String,
    /// In the order sent: Scenario, Client, Branch, RunId, then the extra ones.
    pub dimensions: Vec<(String, String)>,
    pub unit: Unit,
    /// Unix seconds of the run's start.
    pub timestamp: i64,
    /// 1 (high resolution) or 60.
    pub storage_resolution: u32,
    /// Distinct values, at most [`limits::MAX_VALUES_PER_DATUM`].
    pub values: Vec<f64>,
    /// How many trials had each value.
    pub counts: Vec<f64>,
}

impl Datum {
    /// Upper bound of the bytes this datum adds to a request.
    pub fn encoded_bytes(&self) -> usize {
        limits::datum_bytes(
            &self.metric_name,
            &self.dimensions,
            self.unit.as_str(),
            self.values.len(),
        )
    }

    /// Trials this datum stands for.
    #[cfg(test)]
    fn samples(&self) -> f64 {
        self.counts.iter().sum()
    }
}

/// What to publish, with what is left out and why.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    pub data: Vec<Datum>,
    /// `scenario/client: reason` for each cell that contributes nothing.
    pub skipped: Vec<String>,
}

/// The data for `results`, or why it cannot be published (nothing is sent then).
/// `branch` is the `Branch` dimension; `now` (Unix seconds) checks the timestamp
/// against CloudWatch's window.
pub fn layout(
    results: &RunResults,
    settings: &CloudWatchSettings,
    branch: &str,
    now: i64,
) -> Result<Layout, String> {
    let timestamp = parse_rfc3339(&results.started_at).ok_or_else(|| {
        format!(
            "started_at {:?} is not an RFC 3339 time",
            results.started_at
        )
    })?;
    if timestamp < now - MAX_AGE_SECS || timestamp > now + MAX_AHEAD_SECS {
        return Err(format!(
            "the run started at {}, but CloudWatch accepts data from the last two weeks (and up to two hours ahead) only; publish fresh results",
            results.started_at
        ));
    }
    let mut fixed = vec![("Branch".to_string(), branch.to_string())];
    if settings.run_id_dimension {
        fixed.push(("RunId".to_string(), results.run_id.clone()));
    }
    fixed.extend(settings.dimensions.clone());
    let mut problems = Vec::new();
    // Scenario and Client, and Server with servers under test.
    let per_cell = 2 + usize::from(results.has_servers());
    if fixed.len() + per_cell > limits::MAX_DIMENSIONS {
        problems.push(format!(
            "{} dimensions, CloudWatch allows {}",
            fixed.len() + per_cell,
            limits::MAX_DIMENSIONS
        ));
    }
    if let Some(p) = limits::name_problem(NameKind::Namespace, &settings.namespace) {
        problems.push(format!("namespace: {p}"));
    }
    check_dimensions(&fixed, &mut problems);
    let mut out = Layout::default();
    for cell in &results.results {
        let mut dimensions = vec![
            ("Scenario".to_string(), cell.scenario.clone()),
            ("Client".to_string(), cell.client.clone()),
        ];
        if let Some(server) = &cell.server {
            dimensions.push(("Server".to_string(), server.clone()));
        }
        check_dimensions(&dimensions, &mut problems);
        dimensions.extend(fixed.iter().cloned());
        let trials: Vec<_> = cell
            .trials
            .iter()
            .filter(|t| t.failure.is_none())
            .filter_map(|t| t.metrics.as_ref().map(|m| (t.round, m)))
            .collect();
        if trials.is_empty() {
            out.skipped.push(format!(
                "{}/{}: no successful trial",
                cell.scenario, cell.client
            ));
            continue;
        }
        for metric in &settings.metrics {
            let Some((unit, scale)) = unit_of(metric) else {
                problems.push(format!("metric {metric:?} has no CloudWatch unit"));
                continue;
            };
            let mut values: Vec<(f64, f64)> = Vec::new();
            for (round, m) in &trials {
                let Some(raw) = m.get(metric) else { continue };
                let v = raw * scale;
                if let Some(p) = limits::value_problem(v) {
                    problems.push(format!(
                        "{}/{} {metric} round {round}: {p}",
                        cell.scenario, cell.client
                    ));
                    continue;
                }
                match values.iter_mut().find(|(x, _)| x.to_bits() == v.to_bits()) {
                    Some((_, n)) => *n += 1.0,
                    None => values.push((v, 1.0)),
                }
            }
            for chunk in values.chunks(limits::MAX_VALUES_PER_DATUM) {
                out.data.push(Datum {
                    metric_name: metric.clone(),
                    dimensions: dimensions.clone(),
                    unit,
                    timestamp,
                    storage_resolution: settings.storage_resolution,
                    values: chunk.iter().map(|(v, _)| *v).collect(),
                    counts: chunk.iter().map(|(_, n)| *n).collect(),
                });
            }
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        problems.sort();
        problems.dedup();
        Err(format!(
            "refusing to publish, CloudWatch would reject: {}",
            problems.join("; ")
        ))
    }
}

fn check_dimensions(dimensions: &[(String, String)], problems: &mut Vec<String>) {
    for (name, value) in dimensions {
        if let Some(p) = limits::name_problem(NameKind::DimensionName, name)
            .or_else(|| limits::name_problem(NameKind::DimensionValue, value))
        {
            problems.push(format!("dimension {name}: {p}"));
        }
    }
}

/// Splits data into requests: at most 1,000 data and 1 MB each, in order.
pub fn batches<'a>(data: &'a [Datum], namespace: &str) -> Vec<&'a [Datum]> {
    let budget = limits::MAX_REQUEST_BYTES - limits::request_overhead(namespace);
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, d) in data.iter().enumerate() {
        let b = d.encoded_bytes();
        if i > start && (i - start == limits::MAX_DATA_PER_REQUEST || bytes + b > budget) {
            out.push(&data[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += b;
    }
    if start < data.len() {
        out.push(&data[start..]);
    }
    out
}

#[cfg(test)]
#[path = "cloudwatch_layout_tests.rs"]
mod tests;
