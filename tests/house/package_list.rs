//! The published crate holds what a build needs and nothing else (issue 54:
//! `cargo package --list` shipped 546 files, tests and fixtures included):
//! src/, build.rs, Cargo.*, the README, the licences, and every file src/
//! reads with `include_str!`/`include_bytes!`, which must be in it or the
//! published crate does not build.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use super::{rust_files, ROOT};

/// The files src/ includes, relative to the repository root.
fn included_by_src() -> BTreeSet<String> {
    let root = Path::new(ROOT);
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut out = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for macro_call in ["include_str!(\"", "include_bytes!(\""] {
            for rest in text.split(macro_call).skip(1) {
                let rel = &rest[..rest.find('"').unwrap()];
                let path = file.parent().unwrap().join(rel);
                let path = path
                    .canonicalize()
                    .unwrap_or_else(|e| panic!("{}: {macro_call}{rel}: {e}", file.display()));
                let path = path.strip_prefix(root.canonicalize().unwrap()).unwrap();
                out.insert(path.to_str().unwrap().to_string());
            }
        }
    }
    out
}

#[test]
fn the_package_ships_only_what_a_build_needs() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "package",
            "--list",
            "--allow-dirty",
            "--offline",
            "--locked",
        ])
        .current_dir(ROOT)
        .output()
        .expect("cargo package --list");
    assert!(out.status.success(), "cargo package --list: {out:?}");
    let listed: BTreeSet<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();

    let needed = included_by_src();
    assert!(
        needed.iter().any(|f| !f.starts_with("src/")),
        "src/ includes no file from outside it: {needed:?}"
    );
    for f in &needed {
        assert!(
            listed.contains(f),
            "src/ includes {f}, which the package leaves out: add it to Cargo.toml's `include`"
        );
    }
    let fixed = [
        ".cargo_vcs_info.json",
        "Cargo.lock",
        "Cargo.toml",
        "Cargo.toml.orig",
        "build.rs",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
    ];
    let extra: Vec<&String> = listed
        .iter()
        .filter(|f| !f.starts_with("src/") && !fixed.contains(&f.as_str()) && !needed.contains(*f))
        .collect();
    assert!(
        extra.is_empty(),
        "the package ships files no build needs (Cargo.toml's `include`): {extra:?}"
    );
}
