//! `benchgate publish cloudwatch`.

use anyhow::Context as _;

use crate::cli::CloudWatchArgs;
use crate::config::cloudwatch_limits::{name_problem, NameKind};
use crate::config::Suite;
use crate::results::RunResults;

/// `benchgate publish cloudwatch`. A failure to publish is a warning, a summary
/// line and exit code 2 for this command only: the results file and any gate
/// verdict drawn from it are untouched.
pub fn publish_cloudwatch(args: CloudWatchArgs) -> anyhow::Result<u8> {
    let results = RunResults::read(&args.results)?;
    let mut settings = match &args.config {
        Some(path) => Suite::from_file(path)?.publish,
        None => results.config.publish.clone(),
    }
    .and_then(|p| p.cloudwatch)
    .unwrap_or_default();
    if let Some(ns) = args.namespace {
        if let Some(p) = name_problem(NameKind::Namespace, &ns) {
            anyhow::bail!("--namespace {ns:?}: {p}");
        }
        settings.namespace = ns;
    }
    if let Some(r) = args.region {
        settings.region = Some(r);
    }
    let branch = match args.branch {
        Some(b) => b,
        None => branch_of(results.git.ref_name.as_deref()).with_context(|| {
            format!(
                "{} records no git branch; pass --branch NAME",
                args.results.display()
            )
        })?,
    };
    anyhow::ensure!(
        (1..=20).contains(&args.max_attempts),
        "--max-attempts {}: use a value from 1 to 20",
        args.max_attempts
    );
    let deadline = crate::config::units::parse_duration(&args.retry_deadline)
        .map_err(|e| anyhow::anyhow!("--retry-deadline {:?}: {e}", args.retry_deadline))?;
    let retry = crate::retry::RetryPolicy {
        max_attempts: args.max_attempts,
        base: std::time::Duration::from_millis(args.retry_base_ms.max(1)),
        deadline,
        ..Default::default()
    };
    publish(&results, settings, branch, retry)
}

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
    use crate::report::escape::fence;
    // The skipped cells and the summary name the results file's cells.
    for s in &report.skipped {
        eprintln!("{}", fence(&format!("benchgate: cloudwatch: skipped {s}")));
    }
    println!("{}", fence(&report.summary()));
    match &report.error {
        None => Ok(0),
        Some(e) => {
            let e = fence(&e.to_string()).into_owned();
            eprintln!("benchgate: warning: publishing to CloudWatch failed: {e}");
            if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
                println!("::warning title=benchgate CloudWatch publish failed::{e}");
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

/// The branch name in a git ref: `refs/heads/main` -> `main`.
fn branch_of(ref_name: Option<&str>) -> Option<String> {
    let r = ref_name?;
    let name = r
        .strip_prefix("refs/heads/")
        .or_else(|| r.strip_prefix("refs/tags/"))
        .unwrap_or(r);
    (!name.is_empty()).then(|| name.to_string())
}
