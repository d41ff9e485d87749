//! Sends a run's metric data to CloudWatch with `PutMetricData` (aws-sdk-cloudwatch
//! 1.99, query protocol; see Cargo.toml for why that version).
//!
//! Credentials and region come from the standard AWS chain (environment, shared
//! profile, web identity token as GitHub OIDC sets it up, container and instance
//! metadata); `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT_URL_CLOUDWATCH`) overrides the
//! endpoint. The SDK's own retries are off: benchgate retries here
//! ([`crate::retry`] for the backoff, [`super::cloudwatch_retry`] for which errors),
//! so the number of attempts and the total time are bounded in one place.

use std::time::{Duration, Instant};

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region};
use aws_sdk_cloudwatch::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_cloudwatch::primitives::DateTime;
use aws_sdk_cloudwatch::types::{Dimension, MetricDatum, StandardUnit};
use aws_smithy_http_client::tls;

use super::cloudwatch_layout::{self, Datum};
use super::cloudwatch_retry::{classify, Retry};
use crate::config::CloudWatchSettings;
use crate::results::RunResults;
use crate::retry::RetryPolicy;

/// What to publish and how hard to try.
#[derive(Debug, Clone)]
pub struct PublishOptions {
    pub settings: CloudWatchSettings,
    /// The `Branch` dimension.
    pub branch: String,
    pub retry: RetryPolicy,
}

/// What a publish did; `error` is set when it stopped short.
#[derive(Debug, Clone, Default)]
pub struct PublishReport {
    pub namespace: String,
    pub region: String,
    /// Data and requests the results made.
    pub data: usize,
    pub requests: usize,
    /// Data and requests CloudWatch accepted.
    pub sent_data: usize,
    pub sent_requests: usize,
    /// Attempts that were retried after throttling or a transient failure.
    pub retries: u32,
    /// Cells that contributed nothing, and why.
    pub skipped: Vec<String>,
    pub error: Option<String>,
}

impl PublishReport {
    /// One line for logs and job summaries.
    pub fn summary(&self) -> String {
        let what = format!(
            "{} of {} metric data in {} of {} requests to namespace {:?} ({})",
            self.sent_data,
            self.data,
            self.sent_requests,
            self.requests,
            self.namespace,
            if self.region.is_empty() {
                "no region"
            } else {
                &self.region
            }
        );
        let retries = match self.retries {
            0 => String::new(),
            n => format!(", {n} retries"),
        };
        match &self.error {
            None => format!("cloudwatch: published {what}{retries}"),
            Some(e) => format!("cloudwatch: FAILED, published {what}{retries}: {e}"),
        }
    }
}

/// Publishes `results`. Errors before the first request (no region, a layout
/// CloudWatch would refuse) and failures while sending both end up in
/// [`PublishReport::error`]; nothing here panics or exits.
pub async fn publish(results: &RunResults, opts: &PublishOptions) -> PublishReport {
    let settings = &opts.settings;
    let mut report = PublishReport {
        namespace: settings.namespace.clone(),
        ..PublishReport::default()
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let layout = match cloudwatch_layout::layout(results, settings, &opts.branch, now) {
        Ok(l) => l,
        Err(e) => {
            report.error = Some(e);
            return report;
        }
    };
    report.skipped = layout.skipped.clone();
    report.data = layout.data.len();
    let batches = cloudwatch_layout::batches(&layout.data, &settings.namespace);
    report.requests = batches.len();

    let client = match client(settings.region.as_deref()).await {
        Ok((client, region)) => {
            report.region = region;
            client
        }
        Err(e) => {
            report.error = Some(e);
            return report;
        }
    };
    for (i, batch) in batches.iter().enumerate() {
        let label = format!("request {} of {}", i + 1, batches.len());
        match send(&client, &settings.namespace, batch, &opts.retry, &label).await {
            Ok(retries) => {
                report.retries += retries;
                report.sent_requests += 1;
                report.sent_data += batch.len();
            }
            Err((retries, e)) => {
                report.retries += retries;
                report.error = Some(format!("{label}: {e}"));
                break;
            }
        }
    }
    report
}

/// The HTTPS client the SDK uses: hyper with rustls on ring (no OpenSSL, no aws-lc).
pub fn http_client() -> aws_sdk_cloudwatch::config::SharedHttpClient {
    aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(
            tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https()
}

/// A CloudWatch client from the standard chain; `region` overrides it.
async fn client(region: Option<&str>) -> Result<(aws_sdk_cloudwatch::Client, String), String> {
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http_client())
        .retry_config(RetryConfig::disabled())
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(5))
                .operation_attempt_timeout(Duration::from_secs(60))
                .build(),
        );
    if let Some(r) = region {
        loader = loader.region(Region::new(r.to_string()));
    }
    let config = loader.load().await;
    let region = config.region().map(|r| r.to_string()).ok_or_else(|| {
        "no AWS region: set region in [publish.cloudwatch], pass --region, or set AWS_REGION"
            .to_string()
    })?;
    Ok((aws_sdk_cloudwatch::Client::new(&config), region))
}

/// Sends one request, retrying per `policy`. Returns the retries made.
async fn send(
    client: &aws_sdk_cloudwatch::Client,
    namespace: &str,
    batch: &[Datum],
    policy: &RetryPolicy,
    label: &str,
) -> Result<u32, (u32, String)> {
    let data: Vec<MetricDatum> = batch.iter().map(sdk_datum).collect();
    let started = Instant::now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let result = client
            .put_metric_data()
            .namespace(namespace)
            .set_metric_data(Some(data.clone()))
            .send()
            .await;
        let err = match result {
            Ok(_) => return Ok(attempts - 1),
            Err(e) => e,
        };
        let (kind, why) = describe(&err);
        let give_up = |why: String| {
            Err((
                attempts - 1,
                format!("{why} (after {attempts} attempt{})", plural(attempts)),
            ))
        };
        if kind == Retry::Never {
            return give_up(why);
        }
        match policy.next_delay(attempts, started.elapsed(), rand::random::<f64>()) {
            Some(wait) => {
                crate::stderrln!(
                    "benchgate: CloudWatch {label}: {why}; retrying in {:.1}s (attempt {} of at most {})",
                    wait.as_secs_f64(),
                    attempts + 1,
                    policy.max_attempts
                );
                tokio::time::sleep(wait).await;
            }
            None => return give_up(why),
        }
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Whether an SDK error is worth retrying, and words for it (never credentials:
/// the SDK's errors do not carry them).
fn describe<E>(err: &SdkError<E, aws_sdk_cloudwatch::config::http::HttpResponse>) -> (Retry, String)
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    match err {
        SdkError::ServiceError(service) => {
            let status = service.raw().status().as_u16();
            let code = service.err().code();
            let message = service.err().message().unwrap_or("");
            let kind = classify(code, Some(status));
            let what = match kind {
                Retry::Throttled => "throttled",
                Retry::Transient => "service unavailable",
                Retry::Never => "rejected",
            };
            (
                kind,
                format!(
                    "{what}: HTTP {status} {} {message}",
                    code.unwrap_or("(no error code)")
                )
                .trim_end()
                .to_string(),
            )
        }
        SdkError::ResponseError(r) => {
            let status = r.raw().status().as_u16();
            (
                classify(None, Some(status)),
                format!(
                    "unreadable response, HTTP {status}: {}",
                    DisplayErrorContext(err)
                ),
            )
        }
        SdkError::TimeoutError(_) => (
            Retry::Transient,
            format!("timed out: {}", DisplayErrorContext(err)),
        ),
        SdkError::DispatchFailure(d) if d.is_io() || d.is_timeout() => (
            Retry::Transient,
            format!("connection failed: {}", DisplayErrorContext(err)),
        ),
        _ => (Retry::Never, DisplayErrorContext(err).to_string()),
    }
}

fn sdk_datum(d: &Datum) -> MetricDatum {
    MetricDatum::builder()
        .metric_name(&d.metric_name)
        .set_dimensions(Some(
            d.dimensions
                .iter()
                .map(|(name, value)| Dimension::builder().name(name).value(value).build())
                .collect(),
        ))
        .timestamp(DateTime::from_secs(d.timestamp))
        .unit(StandardUnit::from(d.unit.as_str()))
        .storage_resolution(d.storage_resolution as i32)
        .set_values(Some(d.values.clone()))
        .set_counts(Some(d.counts.clone()))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::cloudwatch_layout::Unit;

    #[test]
    fn every_unit_is_a_known_standard_unit() {
        for u in [
            Unit::CountPerSecond,
            Unit::BytesPerSecond,
            Unit::Microseconds,
            Unit::Bytes,
            Unit::Count,
            Unit::Percent,
            Unit::None,
        ] {
            assert!(StandardUnit::values().contains(&u.as_str()), "{u:?}");
            assert_eq!(StandardUnit::from(u.as_str()).as_str(), u.as_str());
        }
    }
}
