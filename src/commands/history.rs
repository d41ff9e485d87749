//! `benchgate history`: the stored baselines of a branch (a local store or
//! the data branch, through the baseline stores), the newest `--last` of
//! them in the order they were stored, and per gating metric and cell their
//! change points ([`crate::compare::drift`]), read by
//! [`crate::pipeline::history::read`] (as the action's nightly flow reads
//! them); the terminal report, `--json` and `--markdown`.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;

use crate::baseline::github_store::data_branch_store;
use crate::baseline::{BaselineStore, LocalStore};
use crate::cli::HistoryArgs;
use crate::github::target::GithubTarget;
use crate::github::target::Secret;
use crate::pipeline::history::{nothing_stored, read};
use crate::report::drift;
use crate::report::markdown;

/// Most stored runs `--last` reads.
pub const MAX_LAST: usize = 10_000;

/// `benchgate history`: exit 0, or 1 with `--fail-on-drift` when a series
/// drifts.
pub fn run(args: HistoryArgs) -> anyhow::Result<u8> {
    let opts = super::changepoints::options(args.detect)?;
    anyhow::ensure!(
        (1..=MAX_LAST).contains(&args.last),
        "--last {}: read from 1 to {MAX_LAST} stored runs (default 100)",
        args.last
    );
    let (store, source) = open_store(&args)?;
    let Some(analysed) = read(store.as_ref(), &source, &args.branch, args.last, opts)? else {
        anyhow::bail!(
            "{} (--branch)",
            nothing_stored(store.as_ref(), &source, &args.branch)
        );
    };
    let view = analysed.view(&args.branch, opts);
    crate::stdout!("{}", crate::report::escape::fence(&drift::terminal(&view)));
    if let Some(path) = &args.json {
        write(path, &drift::json(&view), "--json")?;
    }
    if let Some(path) = &args.markdown {
        write(path, &markdown::render_drift(&view), "--markdown")?;
    }
    let drifts = view.drifting().next().is_some();
    Ok(u8::from(drifts && args.fail_on_drift))
}

fn write(path: &Path, text: &str, flag: &str) -> anyhow::Result<()> {
    crate::files::write_atomic(path, text.as_bytes())
        .with_context(|| format!("{flag} {}: writing the report", path.display()))
}

/// The store of `--store DIR` or `--repository`, and how errors name it.
fn open_store(args: &HistoryArgs) -> anyhow::Result<(Box<dyn BaselineStore>, String)> {
    if let Some(dir) = &args.store {
        anyhow::ensure!(
            dir.is_dir(),
            "--store {}: no such directory; give the directory of a local baseline store (the action's `baseline-store: local:<dir>`), or --repository OWNER/NAME for the data branch",
            dir.display()
        );
        let source = format!("the local store {}", dir.display());
        return Ok((Box::new(LocalStore::new(dir)), source));
    }
    let repository = args
        .repository
        .clone()
        .context("give --store DIR or --repository OWNER/NAME")?;
    let token = std::env::var("GITHUB_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .context("--repository reads the data branch through the GitHub API: set GITHUB_TOKEN to a token that can read the repository's contents")?;
    let api_url = std::env::var("GITHUB_API_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "https://api.github.com".into());
    let target = GithubTarget {
        api_url: api_url.trim_end_matches('/').to_string(),
        repository: repository.clone(),
        token: Secret::new(token),
        run_id: "history".into(),
        timeout: Duration::from_secs(300),
    };
    let source = format!("the data branch {:?} of {repository}", args.data_branch);
    Ok((data_branch_store(&target, &args.data_branch)?, source))
}
