//! Where the process environment is read (issue 33, point 3): at the edges
//! only. The binary's entry, the CLI's subcommands, the action's entry (which
//! reads the whole environment once into a map), the test knobs
//! (`src/knobs.rs`), and the builders of a child's environment, which copy it
//! on purpose. Anywhere else a read hides an input from the options a run is
//! given, so this test fails on a read it does not know, naming the file and
//! line.

use std::path::Path;

use super::{rust_files, ROOT};

/// Files of src/ that may read the environment, and why.
const EDGES: &[(&str, &str)] = &[
    (
        "main.rs",
        "the binary's entry: GITHUB_ACTIONS, once, for the log fence",
    ),
    (
        "commands/mod.rs",
        "`benchgate run` and `calibrate`: the CI's commit (GITHUB_SHA, GITHUB_REF)",
    ),
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

const READS: &[&str] = &["env::var(", "env::var_os(", "env::vars(", "env::vars_os("];

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
        .filter(|(file, _, _)| !EDGES.iter().any(|(f, _)| f == file))
        .map(|(file, n, line)| format!("src/{file}:{n}: {line}"))
        .collect();
    assert!(
        unknown.is_empty(),
        "the environment read away from the edges; read it at the CLI's or the action's entry into the run options (or, for a child's environment, in orchestrate/child_env.rs):\n{}",
        unknown.join("\n")
    );
    for (file, why) in EDGES {
        assert!(
            found.iter().any(|(f, _, _)| f == file),
            "src/{file} ({why}) reads no environment any more: delete it from EDGES"
        );
    }
}
