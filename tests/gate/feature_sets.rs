//! Which targets the `cloudwatch` feature changes (issue 33, point 4). The
//! test command lints and builds everything with default features, and without
//! them only the library, the binary and tests/cloudwatch + tests/publish_config
//! (scripts/test.sh): the other test, bench and example targets are the same
//! code either way, as long as none of them names the feature, its crates or
//! the items it gates (`publish::cloudwatch`). This test keeps them so: a
//! target that starts to would compile differently without the feature, and
//! must join the `--no-default-features` build in scripts/test.sh (and the
//! list below).

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The targets scripts/test.sh builds without default features, besides the
/// library and the binary.
const BUILT_WITHOUT_DEFAULT_FEATURES: &[&str] = &[
    "tests/cloudwatch.rs",
    "tests/cloudwatch/",
    "tests/publish_config.rs",
];

/// What marks code that the feature changes.
const MARKS: &[&str] = &[
    "feature = \"cloudwatch\"",
    "publish::cloudwatch",
    "aws_sdk",
    "aws_config",
    "aws_smithy",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A temporary tree holding `files` (path from its root, text).
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// The Rust files under `dirs` of `root`, sorted, each with its path from
/// `root` ('/'-separated).
fn rust_files_under(root: &Path, dirs: &[&str]) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let rel = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, file)
        })
        .collect()
}

/// Every (file, line, mark) in the test, bench and example targets outside
/// the list.
fn marked_outside_the_list(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, file) in rust_files_under(root, &["tests", "benches", "examples"]) {
        if BUILT_WITHOUT_DEFAULT_FEATURES
            .iter()
            .any(|listed| rel == *listed || (listed.ends_with('/') && rel.starts_with(listed)))
        {
            continue;
        }
        if rel == "tests/gate/feature_sets.rs" {
            continue; // this file names the marks
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for mark in MARKS {
                if line.contains(mark) {
                    found.push(format!("{rel}:{}: {mark}", n + 1));
                }
            }
        }
    }
    found
}

#[test]
fn only_the_listed_targets_depend_on_the_cloudwatch_feature() {
    let found = marked_outside_the_list(Path::new(ROOT));
    assert!(
        found.is_empty(),
        "these targets name the cloudwatch feature or what it gates, but scripts/test.sh \
         builds them with default features only; add them to its --no-default-features build \
         and to BUILT_WITHOUT_DEFAULT_FEATURES in tests/gate/feature_sets.rs:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_listed_targets_exist_and_the_check_sees_a_mark() {
    for listed in BUILT_WITHOUT_DEFAULT_FEATURES {
        assert!(
            Path::new(ROOT).join(listed).exists(),
            "{listed} is gone: update the list"
        );
    }
    // The scan finds a mark where there is one (a copy of the tree with one).
    let dir = tree(&[
        (
            "tests/common/aws.rs",
            "use benchgate::publish::cloudwatch::PublishOptions;\n",
        ),
        ("tests/cloudwatch.rs", "#[cfg(feature = \"cloudwatch\")]\n"),
    ]);
    assert_eq!(
        marked_outside_the_list(dir.path()),
        ["tests/common/aws.rs:1: publish::cloudwatch"]
    );
}

/// The `cloudwatch` feature's crates that a test build without default
/// features would not share with the default build: every `dep:` of the
/// feature must be a dev-dependency too, declared once (`workspace = true`)
/// in both tables, so that the build without default features unifies every
/// shared crate's features as the default one does (Cargo.toml, scripts/test.sh).
fn not_shared_with_the_default_build(manifest: &str) -> Vec<String> {
    let manifest: toml::Table = manifest.parse().unwrap();
    let table = |name: &str| manifest.get(name).and_then(|t| t.as_table());
    let feature = manifest["features"]["cloudwatch"].as_array().unwrap();
    let mut missing = Vec::new();
    for dep in feature
        .iter()
        .filter_map(|d| d.as_str()?.strip_prefix("dep:"))
    {
        let declared_once = |t: Option<&toml::Table>| {
            t.and_then(|t| t.get(dep))
                .and_then(|d| d.get("workspace"))
                .and_then(|w| w.as_bool())
                == Some(true)
        };
        let shared = table("workspace")
            .and_then(|w| w.get("dependencies"))
            .and_then(|d| d.get(dep))
            .is_some();
        if !(shared
            && declared_once(table("dependencies"))
            && declared_once(table("dev-dependencies")))
        {
            missing.push(dep.to_string());
        }
    }
    missing
}

#[test]
fn the_build_without_default_features_shares_the_default_builds_crates() {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    assert_eq!(
        not_shared_with_the_default_build(&manifest),
        Vec::<String>::new(),
        "declare these in [workspace.dependencies] and use them with `workspace = true` in \
         [dependencies] (optional) and [dev-dependencies] alike"
    );
    // The check sees a crate that is not a dev-dependency.
    let without = manifest.replacen("\naws-config = { workspace = true }\n", "\n", 1);
    assert_ne!(
        without, manifest,
        "the dev-dependency line moved: update this test"
    );
    assert_eq!(not_shared_with_the_default_build(&without), ["aws-config"]);
}

/// Where src/ makes code depend on the `test-knobs` feature other than
/// through a constant (`cfg!(feature = "test-knobs")`), and whether the
/// feature enables a crate. The test command's build without default
/// features is also the declared Rust's check of the library and binary
/// without them (scripts/test.sh), but it builds them with `test-knobs` on
/// (the tests' dev-dependency on the crate turns it on); that is the code
/// shipped builds compile only while the feature changes a constant.
fn test_knobs_beyond_a_constant(root: &Path, manifest: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, file) in rust_files_under(root, &["src"]) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let marks = line.matches("feature = \"test-knobs\"").count();
            if marks > line.matches("cfg!(feature = \"test-knobs\")").count() {
                found.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    let manifest: toml::Table = manifest.parse().unwrap();
    let enables = manifest["features"]["test-knobs"].as_array().unwrap();
    if !enables.is_empty() {
        found.push(format!("Cargo.toml: test-knobs = {enables:?}"));
    }
    found
}

#[test]
fn the_test_knobs_feature_changes_a_constant_only() {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    assert_eq!(
        test_knobs_beyond_a_constant(Path::new(ROOT), &manifest),
        Vec::<String>::new(),
        "`test-knobs` gates code here: the declared Rust's build without default features \
         (scripts/test.sh) no longer checks what shipped builds compile; read the feature \
         through `TestKnobs::COMPILED` (src/knobs.rs) instead"
    );
    // The check sees an item the feature gates, and a crate it enables.
    let dir = tree(&[(
        "src/knobs.rs",
        "const A: bool = cfg!(feature = \"test-knobs\");\n#[cfg(feature = \"test-knobs\")]\nfn b() {}\n",
    )]);
    let enabling = manifest.replacen("test-knobs = []", "test-knobs = [\"dep:memchr\"]", 1);
    assert_ne!(
        enabling, manifest,
        "Cargo.toml's test-knobs line moved: update this test"
    );
    assert_eq!(
        test_knobs_beyond_a_constant(dir.path(), &enabling),
        [
            "src/knobs.rs:2",
            "Cargo.toml: test-knobs = [String(\"dep:memchr\")]"
        ]
    );
}
