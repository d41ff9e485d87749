//! A GitHub Marketplace listing that can exist (issue 54). Marketplace lists an
//! action from a repository with one action.yml at its root and no workflow
//! files, under a name no other listed action has; this repository has three
//! action.yml and its workflows, so `scripts/action-tree.sh` builds the
//! action-only tree that is listed (the release workflow builds it at each
//! tag). These tests build it and check its rules, install the release binary
//! from it alone (against a local download server, tests/common/release.rs),
//! and check that examples/workflows/ pin the action as `benchgate init` does
//! and that zizmor finds nothing in them once copied into a plain repository
//! (no .github/zizmor.yml), nor in the tree's action.yml, which
//! check-jsonschema validates against GitHub's action schema (the branding's
//! allowed icons and colours). zizmor and check-jsonschema come from the venv
//! of scripts/lint.sh, which the test command installs before the tests; where
//! it does not exist those checks are skipped, saying so.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::release::{target_and_arch, Asset, ReleaseServer};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// GitHub's branding colours (the icons: check-jsonschema's action schema).
const COLORS: &[&str] = &[
    "white",
    "black",
    "yellow",
    "blue",
    "green",
    "orange",
    "red",
    "purple",
    "gray-dark",
];

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The action-only tree, built by scripts/action-tree.sh into a new directory.
fn build_tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let out = Command::new(Path::new(ROOT).join("scripts/action-tree.sh"))
        .arg(&tree)
        .output()
        .expect("scripts/action-tree.sh");
    assert!(out.status.success(), "{}", text(&out));
    (dir, tree)
}

/// Every file below `dir`, relative to it, sorted.
fn files(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).unwrap();
                out.push(rel.to_str().unwrap().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A top-level (or, with `parent`, a second-level) scalar of action.yml, its
/// quotes dropped.
fn field(yaml: &str, parent: Option<&str>, key: &str) -> Option<String> {
    let mut inside = parent.is_none();
    for line in yaml.lines() {
        if !line.starts_with(' ') && !line.starts_with('#') && !line.is_empty() {
            inside = parent.is_none_or(|p| line.trim_end() == format!("{p}:"));
            if parent.is_some() {
                continue;
            }
        }
        let key_line = match parent {
            None => line.strip_prefix(&format!("{key}:")),
            Some(_) if inside => line.trim_start().strip_prefix(&format!("{key}:")),
            Some(_) => None,
        };
        if let Some(value) = key_line {
            return Some(value.trim().trim_matches(['"', '\'']).to_string());
        }
    }
    None
}

#[test]
fn the_action_tree_is_a_listing() {
    let (_dir, tree) = build_tree();
    let all = files(&tree);
    let actions: Vec<&String> = all
        .iter()
        .filter(|f| f.ends_with("action.yml") || f.ends_with("action.yaml"))
        .collect();
    assert_eq!(
        actions,
        ["action.yml"],
        "one action.yml, at the root: {all:?}"
    );
    assert!(
        !all.iter().any(|f| f.starts_with(".github/")),
        "workflow files in the tree: {all:?}"
    );
    for f in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(all.iter().any(|a| a == f), "no {f} in the tree: {all:?}");
    }
    // The listed action is this repository's, as it is.
    let yaml = std::fs::read_to_string(tree.join("action.yml")).unwrap();
    assert_eq!(
        yaml,
        std::fs::read_to_string(Path::new(ROOT).join("action.yml")).unwrap()
    );
    // Every file it runs from its own path is in the tree.
    for (i, rest) in yaml.split("$GITHUB_ACTION_PATH/").enumerate().skip(1) {
        let rel: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
            .collect();
        assert!(
            tree.join(&rel).is_file(),
            "action.yml runs $GITHUB_ACTION_PATH/{rel} (use {i}), not in the tree: {all:?}"
        );
    }

    let name = field(&yaml, None, "name").expect("action.yml: no name");
    let cli = env!("CARGO_PKG_NAME");
    assert!(
        !name.is_empty() && !name.eq_ignore_ascii_case(cli),
        "the listing's name {name:?} must differ from the CLI's ({cli}): a Go benchmark gate's \
         action is listed under that name"
    );
    let author = field(&yaml, None, "author").expect("action.yml: no author");
    assert!(
        !author.is_empty() && !author.eq_ignore_ascii_case(cli) && !author.contains("OWNER"),
        "author {author:?} is a placeholder"
    );
    let description = field(&yaml, None, "description").expect("action.yml: no description");
    assert!(
        !description.is_empty() && description.chars().count() < 125,
        "Marketplace refuses a description of 125 characters or more ({}): {description}",
        description.chars().count()
    );
    let color = field(&yaml, Some("branding"), "color").expect("action.yml: no branding color");
    assert!(
        COLORS.contains(&color.as_str()),
        "branding color {color:?} is not one of {COLORS:?}"
    );
    let icon = field(&yaml, Some("branding"), "icon").expect("action.yml: no branding icon");
    assert!(!icon.is_empty());

    let readme = std::fs::read_to_string(tree.join("README.md")).unwrap();
    assert!(readme.starts_with(&format!("# {name}\n")), "{readme}");
    assert!(readme.contains(&description), "{readme}");
}

#[test]
fn the_action_tree_alone_installs_the_release_binary() {
    let (dir, tree) = build_tree();
    let (target, arch) = target_and_arch();
    let asset = std::sync::Arc::new(Asset::build(VERSION, false));
    let server = ReleaseServer::with(&[(VERSION, &asset)]);
    // What the release workflow's manifest adds to the tree at a tag.
    std::fs::write(
        tree.join("setup/release.txt"),
        format!(
            "version {VERSION}\nrepository owner/benchgate\n{target} {} {}\n",
            asset.archive_sha, asset.binary_sha
        ),
    )
    .unwrap();
    for d in ["tool-cache", "temp", "home"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    // As action.yml's step runs it, in a clean environment.
    let out = Command::new("bash")
        .arg(tree.join("setup/install.sh"))
        .current_dir(dir.path().join("temp"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", dir.path().join("home"))
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_TOOL_CACHE", dir.path().join("tool-cache"))
        .env("RUNNER_TEMP", dir.path().join("temp"))
        .env("GITHUB_OUTPUT", dir.path().join("github_output"))
        .env("GITHUB_PATH", dir.path().join("github_path"))
        .env("BENCHGATE_RELEASE_BASE_URL", &server.base)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(server.hits(), [asset.url_path(VERSION)]);
    let bin = dir
        .path()
        .join(format!("tool-cache/benchgate/{VERSION}/{arch}/benchgate"));
    let outputs = std::fs::read_to_string(dir.path().join("github_output")).unwrap();
    assert!(
        outputs.contains(&format!("path={}\n", bin.display()))
            && outputs.contains(&format!("version={VERSION}\n")),
        "{outputs}"
    );
}

#[test]
fn the_examples_pin_the_action_as_init_does() {
    let pin = format!(
        "uses: {}",
        benchgate::commands::init::workflows::action_ref()
    );
    let mut uses = 0;
    for path in example_workflows() {
        let yaml = std::fs::read_to_string(&path).unwrap();
        for (n, line) in yaml.lines().enumerate() {
            if line.contains("OWNER/benchgate") {
                uses += 1;
                assert_eq!(
                    line.trim_start().trim_start_matches("- "),
                    pin,
                    "{}:{}: pin the action as `benchgate init` does",
                    path.display(),
                    n + 1
                );
            }
        }
    }
    assert!(uses > 0, "no example uses the action");
}

fn example_workflows() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("examples/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml"))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no examples/workflows/*.yml");
    out
}

/// scripts/lint.sh's venv, when it has been installed.
fn lint_venv() -> Option<PathBuf> {
    let out = Command::new(Path::new(ROOT).join("scripts/lint.sh"))
        .arg("--print-venv")
        .output()
        .expect("scripts/lint.sh --print-venv");
    assert!(out.status.success(), "{}", text(&out));
    let venv = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    if venv.join(".installed").is_file() {
        Some(venv)
    } else {
        eprintln!(
            "SKIPPED: no lint venv at {} (scripts/lint.sh installs it; the test command runs it \
             first): zizmor and check-jsonschema not run",
            venv.display()
        );
        None
    }
}

#[test]
fn the_examples_and_the_listed_action_are_lint_clean_in_a_plain_repository() {
    let Some(venv) = lint_venv() else { return };
    let repo = tempfile::tempdir().unwrap();
    let workflows = repo.path().join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    let examples = example_workflows();
    for path in &examples {
        std::fs::copy(path, workflows.join(path.file_name().unwrap())).unwrap();
    }
    let (_dir, tree) = build_tree();
    std::fs::copy(tree.join("action.yml"), repo.path().join("action.yml")).unwrap();

    let out = Command::new(venv.join("bin/zizmor"))
        .args([
            "--offline",
            "--no-config",
            "--no-progress",
            "--color",
            "never",
        ])
        .arg(".")
        .current_dir(repo.path())
        .output()
        .unwrap();
    let report = text(&out);
    assert!(out.status.success(), "zizmor: {report}");
    assert!(
        report.contains("No findings to report"),
        "zizmor: expected no findings: {report}"
    );
    for path in examples
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap())
    {
        assert!(
            report.contains(&format!("completed ./.github/workflows/{path}")),
            "zizmor did not audit {path}: {report}"
        );
    }
    let out = Command::new(venv.join("bin/check-jsonschema"))
        .args(["--builtin-schema", "vendor.github-actions"])
        .arg(tree.join("action.yml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "check-jsonschema: {}", text(&out));
}
