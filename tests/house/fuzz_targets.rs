//! The weekly fuzz workflow runs every fuzz target (issue 53, "Done when"):
//! .github/workflows/fuzz.yml runs scripts/fuzz.sh without a target, which
//! runs what `cargo fuzz list` names, the `[[bin]]`s of fuzz/Cargo.toml. A
//! file added to fuzz/fuzz_targets/ without its `[[bin]]` would never be
//! built nor run, and one without its case in fuzz.sh's `seed_corpus` would
//! start from an empty corpus. This test holds the three lists equal, and the
//! job's time limit above what its targets take at the default seconds.

use std::collections::BTreeSet;
use std::path::Path;

use super::ROOT;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The `N` of the first line of `text` that starts (trimmed) with `key`, as in
/// `timeout-minutes: 90` or `default: "240"`.
fn number_after(text: &str, key: &str) -> u64 {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no line starting {key:?}"));
    line[key.len()..]
        .trim()
        .trim_matches('"')
        .parse()
        .unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[test]
fn the_weekly_fuzz_workflow_runs_and_seeds_every_target() {
    let files: BTreeSet<String> = std::fs::read_dir(Path::new(ROOT).join("fuzz/fuzz_targets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(!files.is_empty(), "no fuzz/fuzz_targets/*.rs");

    // Each `[[bin]]`: its name, and its path is fuzz_targets/NAME.rs.
    let manifest = read("fuzz/Cargo.toml");
    let mut bins = BTreeSet::new();
    for bin in manifest.split("[[bin]]").skip(1) {
        let value = |key: &str| {
            bin.lines()
                .find_map(|l| l.trim().strip_prefix(key)?.trim().strip_prefix('='))
                .map(|v| v.trim().trim_matches('"').to_string())
                .unwrap_or_else(|| panic!("fuzz/Cargo.toml: a [[bin]] without {key}: {bin}"))
        };
        let name = value("name");
        assert_eq!(
            value("path"),
            format!("fuzz_targets/{name}.rs"),
            "fuzz/Cargo.toml"
        );
        bins.insert(name);
    }
    assert_eq!(
        bins, files,
        "fuzz/Cargo.toml's [[bin]]s (what `cargo fuzz list` and so the weekly workflow run) against fuzz/fuzz_targets/*.rs"
    );

    // fuzz.sh's `seed_corpus`: one case label (`        NAME)` at the line's start) per target.
    let script = read("scripts/fuzz.sh");
    let body = script
        .split_once("seed_corpus() {")
        .and_then(|(_, rest)| rest.split_once("\n}\n"))
        .expect("scripts/fuzz.sh: seed_corpus() { ... }")
        .0;
    let seeded: BTreeSet<String> = body
        .lines()
        .filter_map(|l| l.strip_prefix("        ")?.split_once(')'))
        .map(|(label, _)| label)
        .filter(|l| !l.is_empty() && l.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()))
        .map(str::to_string)
        .collect();
    assert_eq!(
        seeded, files,
        "scripts/fuzz.sh's seed_corpus cases against fuzz/fuzz_targets/*.rs"
    );

    // The workflow runs the script with no target (so every one) in its time limit.
    let workflow = read(".github/workflows/fuzz.yml");
    let runs: Vec<&str> = workflow
        .lines()
        .filter_map(|l| l.trim().strip_prefix("run:"))
        .map(str::trim)
        .collect();
    assert_eq!(
        runs,
        ["./scripts/fuzz.sh"],
        ".github/workflows/fuzz.yml's run steps"
    );
    let seconds = number_after(&workflow, "default:");
    let limit = number_after(&workflow, "timeout-minutes:") * 60;
    let fuzzing = seconds * files.len() as u64;
    assert!(
        fuzzing < limit,
        ".github/workflows/fuzz.yml: {} targets x {seconds} s = {fuzzing} s, over timeout-minutes ({limit} s)",
        files.len()
    );
}
