//! Publishing to CloudWatch with what happened printed: the one path of
//! `benchgate publish cloudwatch` (`commands::cloudwatch`) and the action.

use crate::results::RunResults;

/// Publishes `results` to CloudWatch and prints what happened: the one path
/// of `benchgate publish cloudwatch` and the action. A failure is a warning
/// and exit code 2.
#[cfg(feature = "cloudwatch")]
pub fn publish(
    results: &RunResults,
    settings: crate::config::CloudWatchSettings,
    branch: String,
    retry: crate::retry::RetryPolicy,
) -> anyhow::Result<u8> {
    use crate::publish::cloudwatch::{publish, PublishOptions};
    use anyhow::Context as _;
    let opts = PublishOptions {
        settings,
        branch,
        retry,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let report = runtime.block_on(publish(results, &opts));
    use crate::report::escape::{actions_log, annotation, Level};
    use crate::report::untrusted::for_log;
    // The skipped cells and the summary name the results file's cells.
    for s in &report.skipped {
        crate::stderrln!(
            "{}",
            for_log(&format!("benchgate: cloudwatch: skipped {s}"))
        );
    }
    crate::stdoutln!("{}", for_log(&report.summary()));
    match &report.error {
        None => Ok(0),
        Some(e) => {
            let line = format!("benchgate: warning: publishing to CloudWatch failed: {e}");
            crate::stderrln!("{}", for_log(&line));
            if actions_log() {
                let title = "benchgate CloudWatch publish failed";
                crate::stdoutln!("{}", annotation(Level::Warning, title, &e.to_string()));
            }
            Ok(2)
        }
    }
}

/// Without the `cloudwatch` feature: an error that says how to get it.
#[cfg(not(feature = "cloudwatch"))]
pub fn publish(
    _results: &RunResults,
    _settings: crate::config::CloudWatchSettings,
    _branch: String,
    _retry: crate::retry::RetryPolicy,
) -> anyhow::Result<u8> {
    anyhow::bail!(
        "this benchgate was built without the `cloudwatch` feature; build it with default features (cargo install benchgate) to publish to CloudWatch"
    )
}
