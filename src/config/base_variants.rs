//! Base vs head (`[compare] base = "git"`, `--compare-base REF`): the suite
//! with a base variant of everything that lives in the repository.
//!
//! A command client or server under test whose working directory lies inside
//! the repository gets a twin named `NAME@base` whose working directory, and
//! every argument and environment value that is a path inside the
//! repository, point into a checkout of the base commit instead. Its `setup`
//! runs there too (build once per side, before the rounds). Built-in clients
//! and servers outside the repository have no variant: they run once, are
//! reported, and gate nothing. Scenarios list each client's variant right after
//! it, so rounds interleave head and base as side-by-side mode does (in a
//! counterbalanced order: head first in one round, base in the next, as
//! `orchestrate::rounds` orders every scenario's cells).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{ClientKind, CommandSpec, ServerCommand, ServerTarget, Suite};

/// The suffix of a base variant's name: `hyper-java@base`.
pub const BASE_SUFFIX: &str = "@base";

/// Where the two sides live: the repository (head, the checkout the config
/// was read from) and a checkout of the base commit.
#[derive(Debug, Clone)]
pub struct Trees<'a> {
    /// The repository's top level, canonical.
    pub head: &'a Path,
    /// The base commit's checkout (a git worktree), canonical.
    pub base: &'a Path,
}

impl Trees<'_> {
    /// `path` inside the head tree, moved to the base tree; `None` when it is
    /// not inside the head tree. Relative paths are taken against `from`.
    fn to_base(&self, path: &str, from: &Path) -> Option<String> {
        let p = Path::new(path);
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            from.join(p)
        };
        let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
        let rel = abs.strip_prefix(self.head).ok()?;
        Some(self.base.join(rel).display().to_string())
    }

    /// An argument or environment value: moved when it is an absolute path
    /// inside the head tree, else unchanged (relative ones follow the cwd).
    fn value(&self, v: &str) -> String {
        if Path::new(v).is_absolute() {
            if let Some(moved) = self.to_base(v, Path::new("/")) {
                return moved;
            }
        }
        v.to_string()
    }

    /// An argv moved to the base tree ([`Trees::value`] of each argument).
    fn argv(&self, argv: &[String]) -> Vec<String> {
        argv.iter().map(|a| self.value(a)).collect()
    }

    /// An environment table moved to the base tree.
    fn env(&self, env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        env.iter()
            .map(|(k, v)| (k.clone(), self.value(v)))
            .collect()
    }

    fn command(&self, cmd: &CommandSpec, cwd: String) -> CommandSpec {
        CommandSpec {
            command: self.argv(&cmd.command),
            setup: cmd.setup.as_deref().map(|s| self.argv(s)),
            cwd,
            env: self.env(&cmd.env),
            pass_env: cmd.pass_env.clone(),
            timeout: cmd.timeout,
            result: cmd.result.clone(),
        }
    }
}

/// The name of `name`'s base variant.
pub fn base_name(name: &str) -> String {
    format!("{name}{BASE_SUFFIX}")
}

impl Suite {
    /// Whether the client `name` is the base variant of another client of
    /// this suite (its name plus [`BASE_SUFFIX`]); meaningful in a suite that
    /// [`Suite::with_base_variants`] made, which refuses a name of the user's
    /// that would pass for one.
    pub fn is_base_variant(&self, name: &str) -> bool {
        name.strip_suffix(BASE_SUFFIX)
            .is_some_and(|head| self.clients.iter().any(|c| c.name == head))
    }

    /// The suite with base variants (see the module). An error when nothing
    /// in it lives in the repository: base vs head would compare nothing.
    pub fn with_base_variants(&self, trees: &Trees<'_>) -> anyhow::Result<Suite> {
        let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let mut out = self.clone();
        let mut variants = Vec::new();
        let taken = |name: &str| {
            self.clients.iter().any(|c| c.name == name)
                || self.servers.iter().any(|s| s.name == name)
        };
        for name in self
            .clients
            .iter()
            .map(|c| &c.name)
            .chain(self.servers.iter().map(|s| &s.name))
        {
            anyhow::ensure!(
                !taken(&base_name(name)),
                "{}: {:?} is the name base vs head gives the base side of {name:?}; rename it",
                self.source,
                base_name(name)
            );
        }
        out.clients.clear();
        for c in &self.clients {
            out.clients.push(c.clone());
            let ClientKind::Command(cmd) = &c.kind else {
                continue;
            };
            let Some(cwd) = trees.to_base(&cmd.cwd, &here) else {
                continue;
            };
            let mut v = c.clone();
            v.name = base_name(&c.name);
            v.kind = ClientKind::Command(trees.command(cmd, cwd));
            out.clients.push(v);
            variants.push(c.name.clone());
        }
        out.servers.clear();
        let mut servers = 0;
        for s in &self.servers {
            out.servers.push(s.clone());
            let ServerTarget::Command(cmd) = &s.target else {
                continue;
            };
            let Some(cwd) = trees.to_base(&cmd.cwd, &here) else {
                continue;
            };
            let moved = ServerCommand {
                command: trees.argv(&cmd.command),
                setup: cmd.setup.as_deref().map(|s| trees.argv(s)),
                env: trees.env(&cmd.env),
                cwd,
                ..cmd.clone()
            };
            let mut v = s.clone();
            v.name = base_name(&s.name);
            v.target = ServerTarget::Command(moved);
            out.servers.push(v);
            servers += 1;
        }
        anyhow::ensure!(
            !variants.is_empty() || servers > 0,
            "{}: base vs head ([compare] base = \"git\" or --compare-base) measures the command clients and servers under test that live in the repository at two commits, but none of them has its cwd inside {}; set `cwd` of a kind = \"command\" client or a [[server]] to a directory of the repository, or compare with a stored baseline",
            self.source,
            trees.head.display()
        );
        for scenario in &mut out.scenarios {
            let mut clients = Vec::new();
            for name in &scenario.clients {
                clients.push(name.clone());
                if variants.contains(name) {
                    clients.push(base_name(name));
                }
            }
            scenario.clients = clients;
        }
        // The twins can take a suite that loaded past the cell limit, or
        // its results file past what a reader holds.
        if let Some(why) = out.too_many_cells() {
            anyhow::bail!(
                "{}: with the base side's twins, {why}; run fewer scenarios (--scenarios) or give them fewer clients (clients = [...])",
                self.source
            );
        }
        if let Some(too_many) = out.too_many_rounds() {
            anyhow::bail!(
                "{}: with the base side's twins, {}; {}",
                self.source,
                too_many.why,
                too_many.fix(out.run.rounds)
            );
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_clients_in_the_repository_get_a_base_twin() {
        let head = tempfile::tempdir().unwrap();
        let base = tempfile::tempdir().unwrap();
        let (h, b) = (
            std::fs::canonicalize(head.path()).unwrap(),
            std::fs::canonicalize(base.path()).unwrap(),
        );
        std::fs::create_dir_all(h.join("client")).unwrap();
        let config = format!(
            r#"
[[client]]
name = "java"
kind = "command"
command = ["{h}/client/run.sh", "--fast", "relative.txt"]
setup = ["make", "-C", "{h}/client"]
cwd = "{h}/client"
env = {{ DATA = "{h}/client/data", OTHER = "/usr/share" }}

[[client]]
name = "outside"
kind = "command"
command = ["true"]
cwd = "/"

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "get"
path = "/bytes/22"
clients = ["java", "outside", "hyper"]
"#,
            h = h.display()
        );
        let suite = Suite::from_toml(&config, "bench.toml").unwrap();
        let trees = Trees { head: &h, base: &b };
        let out = suite.with_base_variants(&trees).unwrap();
        let names: Vec<_> = out.clients.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["java", "java@base", "outside", "hyper"]);
        assert_eq!(
            out.scenarios[0].clients,
            ["java", "java@base", "outside", "hyper"]
        );
        let ClientKind::Command(v) = &out.clients[1].kind else {
            panic!("not a command client")
        };
        let bd = b.display();
        assert_eq!(v.cwd, format!("{bd}/client"));
        assert_eq!(
            v.command,
            [
                format!("{bd}/client/run.sh"),
                "--fast".into(),
                "relative.txt".into()
            ]
        );
        assert_eq!(
            v.setup.as_deref().unwrap(),
            ["make".to_string(), "-C".into(), format!("{bd}/client")]
        );
        assert_eq!(v.env["DATA"], format!("{bd}/client/data"));
        assert_eq!(v.env["OTHER"], "/usr/share");
        // The head side is untouched.
        assert_eq!(out.clients[0], suite.clients[0]);
    }

    /// Issue 53: the twins double the cells; a suite whose results file
    /// the reader took can then make one it would refuse.
    #[test]
    fn twins_past_what_a_results_file_holds_are_refused() {
        let head = tempfile::tempdir().unwrap();
        let h = std::fs::canonicalize(head.path()).unwrap();
        let fit = crate::config::limits::rounds_that_fit(1_000, 1);
        let mut config = format!(
            "[run]\nmax_rounds = {fit}\n[[client]]\nname = \"java\"\nkind = \"command\"\ncommand = [\"true\"]\ncwd = \"{}\"\n",
            h.display()
        );
        for s in 0..1_000 {
            config.push_str(&format!("[[scenario]]\nname = \"s{s}\"\npath = \"/\"\n"));
        }
        let suite = Suite::from_toml(&config, "bench.toml").unwrap();
        let trees = Trees { head: &h, base: &h };
        let e = suite.with_base_variants(&trees).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "bench.toml: with the base side's twins, 2000 cells of up to {fit} rounds make a results file"
            )),
            "{e}"
        );
    }

    #[test]
    fn compare_base_is_git_and_stands_alone() {
        let with = |compare: &str| {
            let text = format!(
                "[[client]]\nname = \"h\"\nkind = \"hyper\"\n\n[[scenario]]\nname = \"a\"\npath = \"/\"\n\n[compare]\n{compare}\n"
            );
            Suite::from_toml(&text, "bench.toml")
        };
        let s = with("base = \"git\"").unwrap();
        assert_eq!(
            s.compare.unwrap().base,
            Some(super::super::CompareBase::Git)
        );
        let e = with("base = \"svn\"").unwrap_err().to_string();
        assert!(e.contains("compare.base: unknown base \"svn\""), "{e}");
        assert!(e.contains("use base = \"git\""), "{e}");
        let e = with("base = \"git\"\nbaseline_client = \"h\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot be combined with baseline_client"), "{e}");
    }

    #[test]
    fn nothing_in_the_repository_is_an_error_that_says_what_base_vs_head_needs() {
        let head = tempfile::tempdir().unwrap();
        let h = std::fs::canonicalize(head.path()).unwrap();
        let suite = Suite::default_suite();
        let trees = Trees { head: &h, base: &h };
        let e = suite.with_base_variants(&trees).unwrap_err().to_string();
        assert!(e.starts_with("built-in default suite: base vs head"), "{e}");
        assert!(
            e.contains("set `cwd` of a kind = \"command\" client"),
            "{e}"
        );
    }
}
