//! The commit a run measured, for the results file's `git`: read here, at the
//! edge that runs git, so the results model stays a model.

use std::process::Command;

use crate::results::GitInfo;

/// What the CI says it checked out (`GITHUB_SHA`, `GITHUB_REF`), from `get`
/// (a variable's value by name): the edge passes its environment, so that
/// nothing below it reads the process's.
pub fn from_ci(get: impl Fn(&str) -> Option<String>) -> GitInfo {
    let get = |k: &str| get(k).filter(|v| !v.is_empty());
    GitInfo {
        sha: get("GITHUB_SHA"),
        ref_name: get("GITHUB_REF"),
    }
}

/// `ci` ([`from_ci`]) where it says, else `git` in the current directory,
/// else empty.
pub fn detect(ci: &GitInfo) -> GitInfo {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    GitInfo {
        sha: ci.sha.clone().or_else(|| git(&["rev-parse", "HEAD"])),
        ref_name: ci
            .ref_name
            .clone()
            .or_else(|| git(&["symbolic-ref", "-q", "HEAD"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ci_says_the_commit_and_git_fills_in_what_it_leaves_out() {
        let env = |k: &str| match k {
            "GITHUB_SHA" => Some("a".repeat(40)),
            "GITHUB_REF" => Some(String::new()),
            _ => None,
        };
        let ci = from_ci(env);
        assert_eq!(ci.sha, Some("a".repeat(40)));
        assert_eq!(ci.ref_name, None, "an empty value says nothing");
        // The CI's word stands; git (this checkout, when there is one) is
        // asked only for the ref.
        let got = detect(&ci);
        assert_eq!(got.sha, ci.sha);
        let git_sha = detect(&GitInfo::default()).sha;
        assert_ne!(git_sha, ci.sha);
    }
}
