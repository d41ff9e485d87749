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
    crate::pipeline::cloudwatch::publish(&results, settings, branch, retry)
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
