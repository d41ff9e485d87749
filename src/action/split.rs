//! The fork-safe split. `measure` runs on `pull_request` with a read-only
//! token (or none): it runs the suite and writes the results plus a small
//! `benchgate-meta.json` for upload as an artifact. `report` runs on
//! `workflow_run` in the base repository's context: it reads the downloaded
//! results (never runs anything from the workspace), finds the pull request
//! through the API by the run's head sha and head repository (never trusting
//! the artifact), skips when the PR's head moved on, compares and comments.
//!
//! Report mode refuses an artifact without its meta file, one measured for
//! another head than the workflow run's, results whose `git.sha` is not
//! the commit the meta says was measured ([`check_artifact`]), and results
//! the reader refuses, with the reason in the job summary. Meta and results come in the same artifact, so
//! this catches accidents (a stale or mixed-up download, a hand-made
//! artifact), not a hostile fork, which can write both to agree.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::event::{PullRequest, WorkflowRun};
use super::flows::Measurement;
use super::github;
use super::outputs::{annotation, command, Level};
use super::report::baseline_note;
use super::Action;
use crate::files::json::{self, Limits};
use crate::pipeline::{Baseline, Where};
use crate::plan::GitBase;
use crate::report::escape::{md_n, truncate_chars};
use crate::results::RunResults;

/// `schema` of the meta file.
pub const META_SCHEMA: &str = "benchgate-meta";

/// What `measure` records next to the results. `report` checks its head sha
/// against the `workflow_run` payload and its measured sha against the
/// results' `git.sha`, and trusts nothing else in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub schema: String,
    /// 2 since `measured_sha`; a version 1 meta (without it) is refused.
    pub version: u32,
    pub repository: String,
    pub event: String,
    pub head_sha: String,
    /// `GITHUB_SHA` of the measure run: the commit it checked out and
    /// measured (a pull request's merge commit), which the results file
    /// records as `git.sha`.
    pub measured_sha: String,
    pub pr_number: Option<u64>,
    pub base_ref: Option<String>,
    pub base_sha: Option<String>,
    pub run_id: String,
}

fn meta_path(results: &Path) -> PathBuf {
    results.with_file_name("benchgate-meta.json")
}

/// Largest `benchgate-meta.json` read (the real one is under 1 KiB): it comes
/// with an untrusted artifact.
pub const MAX_META_BYTES: u64 = 64 * 1024;

/// The meta file's text, size-capped before reading; `None` when it cannot
/// be read as text (missing, say), which [`check_artifact`] refuses. A
/// FIFO, a device or an oversized file is refused here, unread.
fn read_meta(path: &Path) -> anyhow::Result<Option<String>> {
    match crate::files::read_untrusted(path, "meta file", MAX_META_BYTES) {
        Ok(bytes) => Ok(String::from_utf8(bytes).ok()),
        Err(e) if e.is_too_big() => Err(anyhow::anyhow!(
            "{e}: it is not a benchgate meta file; re-run the measure workflow"
        )),
        Err(
            e @ crate::files::ReadError {
                refusal: crate::files::Refusal::NotAFile(_),
                ..
            },
        ) => Err(e.into()),
        Err(_) => Ok(None),
    }
}

/// The limits of a meta file's JSON (a few short strings and numbers).
const META_LIMITS: Limits = Limits {
    depth: 8,
    values: 10_000,
    key_bytes: 256,
    text_bytes: 4096,
    items: 1_000,
    item_bytes: 512,
    member_bytes: 0,
    extra_bytes: 16 << 20,
    rules: &[],
};

/// Parses a `benchgate-meta.json` that came with an artifact and checks that
/// it was measured on `head_sha` (the `workflow_run` payload's head); the rest
/// of it is informational and trusted for nothing.
pub fn check_meta(text: &str, head_sha: &str) -> anyhow::Result<Meta> {
    let unreadable = "benchgate-meta.json next to the results does not parse (a version 1 meta has no measured_sha); re-run the measure workflow with this version of benchgate";
    if let Err(breach) = json::scan(text.as_bytes(), &META_LIMITS) {
        return Err(anyhow::anyhow!("{breach}").context(unreadable));
    }
    let meta: Meta = serde_json::from_str(text).context(unreadable)?;
    anyhow::ensure!(
        meta.head_sha.eq_ignore_ascii_case(head_sha),
        "the artifact was measured on {:?}, but the workflow run's head is {head_sha}: refusing to report it",
        truncate_chars(&meta.head_sha, 64),
    );
    Ok(meta)
}

/// `measure`: run, write the results and the meta file. Needs no token.
pub(super) fn measure(a: &Action, pr: Option<&PullRequest>) -> anyhow::Result<u8> {
    let suite = a.suite()?;
    // What the results file records as `git.sha` (`orchestrate::git_info`).
    let measured_sha = a.ctx.sha.clone().ok_or_else(|| {
        anyhow::anyhow!("mode measure: GITHUB_SHA is not set; run it in GitHub Actions")
    })?;
    let head_sha = pr.map_or_else(|| measured_sha.clone(), |pr| pr.head_sha.clone());
    // No stored baseline here (no token): the plan's extra rounds apply when
    // it compares side by side; `report` compares as planned.
    let git_base = match pr {
        Some(pr) => GitBase::Commit(pr.base_sha.clone()),
        None => GitBase::Stored,
    };
    let lookup = a.lookup(&suite, (false, git_base), Baseline::None)?;
    let (results, signal) = a.run_suite(&suite, &lookup, true)?;
    if let Some(code) = a.cancelled(&results, signal)? {
        return Ok(code);
    }
    let meta = Meta {
        schema: META_SCHEMA.into(),
        version: 2,
        repository: a.ctx.repository.clone(),
        event: a.ctx.event_name.clone(),
        head_sha,
        measured_sha,
        pr_number: pr.map(|p| p.number),
        base_ref: pr.map(|p| p.base_ref.clone()),
        base_sha: pr.map(|p| p.base_sha.clone()),
        run_id: a.ctx.run_id.clone(),
    };
    let path = meta_path(&a.results_path());
    let json = serde_json::to_string_pretty(&meta).context("serializing the meta file")?;
    std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?;
    crate::stderrln!(
        "benchgate: measured; upload {} and {} as an artifact for the report workflow",
        a.results_path().display(),
        path.display()
    );
    a.write_outputs(&[
        ("verdict", "measured".into()),
        ("results-path", a.results_path().display().to_string()),
    ])?;
    Ok(0)
}

/// `report`: compare the downloaded results of a measured run and comment.
pub(super) fn report(a: &Action, run: &WorkflowRun) -> anyhow::Result<u8> {
    if !matches!(run.event.as_str(), "pull_request" | "pull_request_target") {
        return skip(
            a,
            &format!(
                "the measured run was a {} run, not a pull request",
                run.event
            ),
        );
    }
    if run.conclusion.as_deref() != Some("success") {
        return skip(
            a,
            &format!(
                "the measured run concluded {:?}: nothing to report",
                run.conclusion.as_deref().unwrap_or("(not yet)")
            ),
        );
    }
    // A sharded measure's artifacts are merged (input `shards`); results
    // the reader refuses are refused as the artifact's other faults are.
    let (results, files) = match super::shards::downloaded(a) {
        Ok(read) => read,
        Err(e) => return refuse(a, e),
    };
    if let Err(e) = check_artifact(&results, &files, &run.head_sha) {
        return refuse(a, e);
    }
    // The gate comes from this (trusted, default-branch) checkout, never from the artifact.
    let suite = a.suite()?;
    let target = a.github().ok_or_else(|| {
        anyhow::anyhow!("mode report needs input `github-token` (permissions: pull-requests: write, actions: read)")
    })?;
    let head_repo = run.head_repo.as_deref().ok_or_else(|| {
        anyhow::anyhow!("the workflow_run payload has no head_repository (a deleted fork?): nothing to report on")
    })?;
    let resolver = github::pr_resolver(&target)?;
    let Some(pr) = resolver.resolve(head_repo, run.head_branch.as_deref(), &run.head_sha)? else {
        return skip(
            a,
            &format!(
                "no open pull request has head {} of {head_repo}",
                run.head_sha
            ),
        );
    };
    if !pr.head_sha.eq_ignore_ascii_case(&run.head_sha) {
        return skip(
            a,
            &format!(
                "pull request #{} moved on to {}; the run measuring it will report",
                pr.number, pr.head_sha
            ),
        );
    }
    // As the measure step planned it, from this trusted checkout's config:
    // the stored baseline of the base commit, or side by side in the run.
    // No git history here: report mode runs nothing in the workspace.
    let w = Where {
        store: &|| a.store(),
        branch: &pr.base_ref,
        sha: &pr.base_sha,
        ancestors: false,
        informative: false,
    };
    let asked = (false, GitBase::Commit(pr.base_sha.clone()));
    let lookup = a.lookup(&suite, asked, Baseline::Store(w))?;
    let note = if lookup.plan.wants_stored() {
        baseline_note(
            lookup.found.as_ref(),
            &pr.base_ref,
            Some(&pr.base_sha),
            false,
        )
    } else {
        super::flows::side_by_side_note(&lookup.plan, Some(&pr.head_sha))
    };
    let sink = super::flows::comment_sink(a, pr.number, &suite.source);
    let m = Measurement {
        lookup,
        results,
        note,
        branch: pr.base_ref.clone(),
    };
    m.report(Some((sink, pr.head_sha.clone())))?.finish(a)
}

/// Checks every downloaded results file's meta file: present, measured for
/// `head_sha` (the workflow run's head), and measured on the commit that the
/// results (merged, when sharded: the shards share one `git.sha`) record.
fn check_artifact(results: &RunResults, files: &[PathBuf], head_sha: &str) -> anyhow::Result<()> {
    for results_path in files {
        let path = meta_path(results_path);
        let Some(text) = read_meta(&path)? else {
            anyhow::bail!(
                "{} is missing (or not UTF-8 text): the measure step writes it beside {}, and the artifact must hold both (examples/workflows/fork-measure.yml); refusing to report it",
                path.display(),
                results_path.display()
            );
        };
        let meta = check_meta(&text, head_sha)?;
        let recorded = results.git.sha.as_deref().unwrap_or("(none)");
        anyhow::ensure!(
            recorded.eq_ignore_ascii_case(&meta.measured_sha),
            "the results record commit {:?}, but {} says the measure run measured {:?}: refusing to report them",
            truncate_chars(recorded, 64),
            path.display(),
            truncate_chars(&meta.measured_sha, 64),
        );
    }
    Ok(())
}

/// Ends report mode with `why` (exit 2), said in the job summary too: the
/// reader of the pull request's checks sees why nothing was reported.
fn refuse(a: &Action, why: anyhow::Error) -> anyhow::Result<u8> {
    let text = format!(
        "## benchgate: report refused\n\n{}\n",
        md_n(&format!("{why:#}"), 2_000)
    );
    if let Some(p) = &a.ctx.summary_path {
        crate::files::append(p, &text)?;
    }
    Err(why)
}

fn skip(a: &Action, why: &str) -> anyhow::Result<u8> {
    command(&annotation(Level::Notice, "benchgate report skipped", why));
    a.write_outputs(&[("verdict", "skipped".into())])?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_meta_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("benchgate-meta.json");
        assert_eq!(read_meta(&path).unwrap(), None);
        std::fs::write(&path, "{}").unwrap();
        assert_eq!(read_meta(&path).unwrap().as_deref(), Some("{}"));
        std::fs::write(&path, vec![b' '; MAX_META_BYTES as usize + 1]).unwrap();
        let e = read_meta(&path).unwrap_err().to_string();
        assert!(
            e.contains("is 65537 bytes, over the 65536 byte limit"),
            "{e}"
        );
        assert!(e.contains("benchgate-meta.json"), "{e}");
    }

    #[test]
    fn a_fifo_meta_file_is_refused_and_long_text_in_one_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("benchgate-meta.json");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_meta(&path).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "benchgate-meta.json is a FIFO, not a file: pass the path of a regular file"
            ),
            "{e}"
        );
        let head = "2".repeat(40);
        let meta = |sha: &str| {
            format!(
                r#"{{"schema": "benchgate-meta", "version": 2, "repository": "o/r", "event": "pull_request", "head_sha": "{sha}", "measured_sha": "{sha}", "pr_number": 1, "base_ref": "main", "base_sha": null, "run_id": "1"}}"#
            )
        };
        check_meta(&meta(&head), &head).unwrap();
        let e = format!(
            "{:#}",
            check_meta(&meta(&"2".repeat(5000)), &head).unwrap_err()
        );
        assert!(
            e.ends_with("head_sha has 5000 bytes, over the limit of 4096"),
            "{e}"
        );
    }
}
