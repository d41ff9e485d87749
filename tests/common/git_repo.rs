//! A temporary git repository holding a small Python command client, for
//! base vs head: the client at two commits whose committed setting differs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::exe;

pub use super::PY_CLIENT as CLIENT;

/// The suite: the client (with `setup`), and a built-in client that has no
/// base side. CPU per request of a sleeping client is scheduler noise. The
/// scenario is open loop at 200 requests/s, which only the built-in client
/// follows (the Python client paces itself): the tests look at its having no
/// base side, never at its figures, and flat out it took about a quarter of
/// `tests/ci/base_vs_head.rs`'s CPU (86 CPU-s alone, 64 at this rate;
/// docs/measurements.md, 2026-12-04).
pub fn config(compare: &str, setup: &str) -> String {
    format!(
        r#"[run]
# Looks at 8 and 12 rounds, 0.05 / 2 each (6 pairs cannot reach 0.025).
rounds = 8
max_rounds = 12
warmup = "100ms"
duration = "600ms"
pin = false

[[client]]
name = "py"
kind = "command"
command = ["python3", "client.py"]
{setup}

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "get"
path = "/bytes/22"
rate = 200
max_in_flight = 2
clients = ["py", "hyper"]

[gate]
cpu_us_per_request = {{ fail = "+300%" }}
{compare}
"#
    )
}

/// A repository with the client committed, then `change` applied and
/// committed as head.
pub struct Repo {
    root: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl Repo {
    pub fn new(base: &[(&str, &str)], head: &[(&str, &str)]) -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let r = Repo {
            root: tmp.path().to_path_buf(),
            _tmp: Some(tmp),
        };
        r.git(&["init", "-q", "-b", "main"]);
        r.write(&[("client.py", CLIENT)]);
        r.write(base);
        r.commit("base");
        r.write(head);
        r.commit("head");
        r
    }

    /// An empty repository in `dir` (which stays when the value drops).
    pub fn in_dir(dir: &Path) -> Repo {
        let r = Repo {
            root: dir.to_path_buf(),
            _tmp: None,
        };
        r.git(&["init", "-q", "-b", "main"]);
        r
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn write(&self, files: &[(&str, &str)]) {
        for (name, text) in files {
            std::fs::write(self.path().join(name), text).unwrap();
        }
    }

    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    pub fn command(&self, extra: &[&str]) -> Command {
        let mut cmd = Command::new(exe());
        cmd.current_dir(self.path())
            .args(["run", "--quiet", "--config", "benchgate.toml", "--out"])
            .arg(self.results())
            .args(extra);
        cmd
    }

    pub fn run(&self, extra: &[&str]) -> Output {
        self.command(extra).output().unwrap()
    }

    pub fn results(&self) -> PathBuf {
        self.path().join("results.json")
    }

    /// The worktrees git knows of: only the repository itself, once the run
    /// is over.
    pub fn worktrees(&self) -> usize {
        self.git(&["worktree", "list", "--porcelain"])
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count()
    }
}
