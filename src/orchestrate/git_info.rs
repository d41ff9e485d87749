//! The commit a run measured, for the results file's `git`: read here, at the
//! edge that runs git, so the results model stays a model.

use std::process::Command;

use crate::results::GitInfo;

/// From `GITHUB_SHA`/`GITHUB_REF` when set (CI), else from `git` in the
/// current directory, else empty.
pub fn detect() -> GitInfo {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    GitInfo {
        sha: env("GITHUB_SHA").or_else(|| git(&["rev-parse", "HEAD"])),
        ref_name: env("GITHUB_REF").or_else(|| git(&["symbolic-ref", "-q", "HEAD"])),
    }
}
