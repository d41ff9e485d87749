//! Publishers: the side effects after a run (docs/cloudwatch.md).
//!
//! - [`crate::config::cloudwatch_limits`]: what `PutMetricData` accepts (names,
//!   values, sizes), read by the config's checks and by the layout.
//! - [`cloudwatch_layout`]: results -> metric data -> requests (pure).
//! - [`cloudwatch_retry`]: which CloudWatch errors to retry (the backoff is
//!   [`crate::retry`]'s).
//! - `cloudwatch` (feature `cloudwatch`): sends the requests with the AWS SDK.
//!
//! Publishing never changes the gate's verdict: `benchgate publish` reads a results
//! file and only reports (exit 2) when the publish fails.

pub mod cloudwatch_layout;
pub mod cloudwatch_retry;

#[cfg(feature = "cloudwatch")]
pub mod cloudwatch;
