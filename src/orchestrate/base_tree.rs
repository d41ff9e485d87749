//! The base commit's checkout for base vs head (`[compare] base = "git"`,
//! `--compare-base REF`): a git worktree in a temporary directory, added
//! before the run and removed when the [`BaseTree`] is dropped, whichever way
//! the run ends (a failure, or SIGINT/SIGTERM, which the run turns into a
//! normal return with partial results).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;

use crate::config::base_variants::Trees;
use crate::config::Suite;
use crate::plan::ComparisonPlan;

/// A git worktree of the base commit, removed on drop.
#[derive(Debug)]
pub struct BaseTree {
    /// The repository's top level (head), canonical.
    pub repo: PathBuf,
    /// The worktree, canonical.
    pub dir: PathBuf,
    /// The base commit, full SHA.
    pub base_sha: String,
    /// The checked-out commit (head), full SHA.
    pub head_sha: String,
}

/// Runs git in `dir` without hooks; stdout trimmed, or an error with git's
/// own message.
pub(super) fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("running git (base vs head needs git on PATH)")?;
    if !out.status.success() {
        anyhow::bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The repository `start` lies in: its top level, canonical.
pub(super) fn repo_of(start: &Path) -> anyhow::Result<PathBuf> {
    let top = git(start, &["rev-parse", "--show-toplevel"]).with_context(|| {
        format!(
            "base vs head: {} is not inside a git repository; run benchgate in the repository whose code it measures",
            start.display()
        )
    })?;
    std::fs::canonicalize(&top).with_context(|| format!("resolving {top}"))
}

/// `base_ref` as a full commit SHA, or an error that says what to do: commit
/// (no commit yet), compare with HEAD (HEAD^ of a first commit), or fetch it.
pub(super) fn resolve_base(repo: &Path, base_ref: &str) -> anyhow::Result<String> {
    git(
        repo,
        &["rev-parse", "--verify", "--end-of-options", &format!("{base_ref}^{{commit}}")],
    )
    .map_err(|e| {
        if git(repo, &["rev-parse", "--verify", "HEAD^{commit}"]).is_err() {
            return anyhow::anyhow!(
                "base vs head: the repository {} has no commit yet, so no base to measure: \
                 commit your project first (`git add -A && git commit`), then run again",
                repo.display()
            );
        }
        let shallow =
            git(repo, &["rev-parse", "--is-shallow-repository"]).is_ok_and(|s| s == "true");
        // A repository's first commit has no parent to fetch: HEAD^ never exists.
        let first_commit = !shallow
            && base_ref.starts_with("HEAD")
            && git(repo, &["rev-list", "--count", "HEAD"]).is_ok_and(|n| n == "1");
        if first_commit {
            return anyhow::anyhow!(
                "base vs head: the base commit {base_ref:?} does not exist: HEAD is this repository's first commit, which has no parent. \
                 Compare your working tree with it: `benchgate run --compare-base HEAD` (the uncommitted changes against the last commit), \
                 or commit a change on top of it and run again"
            );
        }
        anyhow::anyhow!(
            "base vs head: the base commit {base_ref:?} is not in this clone{}: fetch it (`git fetch --depth=1 origin <sha>`), or with actions/checkout on a pull request set `fetch-depth: 2`, which brings the merge commit's parents ({e})",
            if shallow { " (a shallow clone)" } else { "" }
        )
    })
}

impl BaseTree {
    /// Checks out `base_ref` of the repository `start` lies in.
    pub fn add(start: &Path, base_ref: &str) -> anyhow::Result<BaseTree> {
        let repo = repo_of(start)?;
        let head_sha = git(&repo, &["rev-parse", "--verify", "HEAD^{commit}"])?;
        let base_sha = resolve_base(&repo, base_ref)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("benchgate-base-{}-{nanos:08x}", std::process::id()));
        let dir_arg = dir.display().to_string();
        git(
            &repo,
            &[
                "worktree", "add", "--detach", "--quiet", &dir_arg, &base_sha,
            ],
        )
        .context("base vs head: checking out the base commit")?;
        let mut tree = BaseTree {
            repo,
            dir: dir.clone(),
            base_sha,
            head_sha,
        };
        // Canonical, so paths compare with the repository's (a symlinked /tmp).
        tree.dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        Ok(tree)
    }

    /// The two trees, for [`Suite::with_base_variants`].
    pub fn trees(&self) -> Trees<'_> {
        Trees {
            head: &self.repo,
            base: &self.dir,
        }
    }
}

impl Drop for BaseTree {
    fn drop(&mut self) {
        let dir = self.dir.display().to_string();
        if let Err(e) = git(&self.repo, &["worktree", "remove", "--force", &dir]) {
            let line = format!("benchgate: warning: removing the base checkout: {e:#}");
            crate::stderrln!("{}", crate::report::untrusted::for_log(&line));
        }
        if self.dir.exists() {
            let _ = std::fs::remove_dir_all(&self.dir);
            let _ = git(&self.repo, &["worktree", "prune"]);
        }
    }
}

/// What a run measures under `plan`: for base vs head, the suite with base
/// variants and the base checkout they run from (keep it alive for the
/// run); otherwise the suite as it is. `start`: where the repository is
/// looked for (the config file's directory).
pub fn prepare(
    suite: Suite,
    plan: &ComparisonPlan,
    start: &Path,
) -> anyhow::Result<(Suite, Option<BaseTree>)> {
    let Some(base_ref) = plan.base_ref() else {
        return Ok((suite, None));
    };
    let tree = BaseTree::add(start, base_ref)?;
    let suite = suite.with_base_variants(&tree.trees())?;
    let line = format!(
        "benchgate: base vs head: {} (head) against {} ({base_ref}, checked out in {})",
        short(&tree.head_sha),
        short(&tree.base_sha),
        tree.dir.display()
    );
    crate::stderrln!("{}", crate::report::untrusted::for_log(&line));
    Ok((suite, Some(tree)))
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
