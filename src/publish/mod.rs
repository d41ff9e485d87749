//! Publishers: the side effects after a run (design.md, "CloudWatch").
//!
//! - [`cloudwatch_limits`]: what `PutMetricData` accepts (names, values, sizes).
//! - [`cloudwatch_layout`]: results -> metric data -> requests (pure).
//! - [`retry`]: exponential backoff with full jitter, and which errors to retry.
//! - `cloudwatch` (feature `cloudwatch`): sends the requests with the AWS SDK.
//!
//! Publishing never changes the gate's verdict: `benchgate publish` reads a results
//! file and only reports (exit 2) when the publish fails.

pub mod cloudwatch_layout;
pub mod cloudwatch_limits;
pub mod retry;

#[cfg(feature = "cloudwatch")]
pub mod cloudwatch;
