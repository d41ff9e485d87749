//! Where the process environment is read (issue 33, point 3): at the edges
//! only. The CLI's subcommands, the action's entry (which reads the
//! whole environment once into a map), the test knobs (`src/knobs.rs`), and
//! the builders of a child's environment, which copy it on purpose. Anywhere
//! else a read hides an input from the options a run is given, so this test
//! fails on a read it does not know, naming the file and line. The reads still
//! to move to the edges are listed apart, each with where it should come
//! from; the test also fails when one of them is gone, so the list shrinks.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Files of src/ that may read the environment, and why.
const EDGES: &[(&str, &str)] = &[
    ("knobs.rs", "the test knobs, read once at the edge"),
    (
        "action/mod.rs",
        "the action's entry: the environment, once, into a map",
    ),
    (
        "commands/history.rs",
        "`benchgate history`: GITHUB_TOKEN and GITHUB_API_URL",
    ),
    (
        "commands/output.rs",
        "the CLI's outputs: GITHUB_STEP_SUMMARY, NO_COLOR, CI (the progress bar)",
    ),
    (
        "orchestrate/child_env.rs",
        "a child's environment: the parent's, filtered",
    ),
    (
        "action/steps.rs",
        "a step's environment: the parent's, filtered",
    ),
    (
        "action/isolate.rs",
        "the measuring step's environment, without the token",
    ),
    (
        "orchestrate/trial.rs",
        "RUST_BACKTRACE as the driver child inherits it",
    ),
];

/// Reads still away from the edges: (file, variable, where it should come
/// from). Move one into the run options and delete its line here.
const TO_MOVE: &[(&str, &str, &str)] = &[
    ("report/escape.rs", "GITHUB_ACTIONS", "the report options"),
    (
        "pipeline/cloudwatch.rs",
        "GITHUB_ACTIONS",
        "the publish options",
    ),
    (
        "orchestrate/git_info.rs",
        "env::var(k)",
        "the run options (GITHUB_SHA, GITHUB_REF: the git fingerprint)",
    ),
];

const READS: &[&str] = &["env::var(", "env::var_os(", "env::vars(", "env::vars_os("];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every environment read in src/ outside tests: (file under src/, line
/// number, the line).
fn reads() -> Vec<(String, usize, String)> {
    let src = Path::new(ROOT).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.ends_with("tests.rs") || rel.contains("/tests/") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            // A file's unit tests come last, after `#[cfg(test)]`.
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            let code = line.split("//").next().unwrap_or("");
            if READS.iter().any(|r| code.contains(r)) {
                found.push((rel.clone(), i + 1, line.trim().to_string()));
            }
        }
    }
    found
}

#[test]
fn the_environment_is_read_at_the_edges_only() {
    let found = reads();
    let unknown: Vec<String> = found
        .iter()
        .filter(|(file, _, line)| {
            !EDGES.iter().any(|(f, _)| f == file)
                && !TO_MOVE
                    .iter()
                    .any(|(f, var, _)| f == file && line.contains(var))
        })
        .map(|(file, n, line)| format!("src/{file}:{n}: {line}"))
        .collect();
    assert!(
        unknown.is_empty(),
        "the environment read away from the edges; read it at the CLI's or the action's entry into the run options (or, for a child's environment, in orchestrate/child_env.rs):\n{}",
        unknown.join("\n")
    );
    let moved: Vec<String> = TO_MOVE
        .iter()
        .filter(|(f, var, _)| {
            !found
                .iter()
                .any(|(file, _, line)| file == f && line.contains(var))
        })
        .map(|(f, var, _)| format!("src/{f}: {var}"))
        .collect();
    assert!(
        moved.is_empty(),
        "no longer read there: delete these lines from TO_MOVE in tests/env_reads.rs:\n{}",
        moved.join("\n")
    );
    for (file, why) in EDGES {
        assert!(
            found.iter().any(|(f, _, _)| f == file),
            "src/{file} ({why}) reads no environment any more: delete it from EDGES"
        );
    }
}
