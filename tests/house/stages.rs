//! The edges only present the pipeline's stages (issue 50, point 1): no file
//! under src/action/ or src/commands/ names what the stages do for them,
//! the rounds (`orchestrate::run`) or a comparison (`compare::compare`,
//! `ComparisonPlan::compare`, the informative one's
//! `history::compare_with_stored`): they call `pipeline::lookup`,
//! `pipeline::measure` and `pipeline::judge`.

use std::path::Path;

use super::layers::{code_only, group_heads};
use super::{rust_files, ROOT};

/// `(path, the name that follows it)`: `path` followed by a name, in any
/// form (`path::name`, `path::{.., name, ..}`); an empty name: `path` itself
/// (`.compare(`: a method call).
const FORBIDDEN: &[(&str, &str)] = &[
    ("orchestrate::", "run"),
    ("compare::", "compare"),
    ("history::", "compare_with_stored"),
    ("ComparisonPlan::", "compare"),
    ("ComparisonPlan::", "compare_under"),
    ("compare_with_stored", ""),
    (".compare(", ""),
    (".compare_under(", ""),
];

/// Every forbidden name in `code`: `(line, what)`.
fn named(code: &str) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    for (path, name) in FORBIDDEN {
        for (p, _) in code.match_indices(path) {
            let after = &code[p + path.len()..];
            let names = if after.starts_with('{') {
                group_heads(after)
            } else {
                vec![ident(after)]
            };
            if name.is_empty() || names.iter().any(|n| n == name) {
                found.push((line_of(p), format!("{path}{name}")));
            }
        }
    }
    found
}

fn edge_files() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for edge in ["action", "commands"] {
        rust_files(&Path::new(ROOT).join("src").join(edge), &mut files);
    }
    files.sort();
    files
}

#[test]
fn the_edges_call_the_stages_never_the_rounds_or_a_comparison() {
    let mut bad = Vec::new();
    for file in edge_files() {
        let src = std::fs::read_to_string(&file).unwrap();
        for (line, what) in named(&code_only(&src)) {
            let rel = file.strip_prefix(ROOT).unwrap().display().to_string();
            bad.push(format!("{rel}:{line}: names {what}"));
        }
    }
    assert!(
        bad.is_empty(),
        "the edges present the pipeline's stages (pipeline::lookup, measure, judge); they never measure or compare themselves:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_reader_finds_each_form() {
    let code = "use crate::orchestrate::{self, run};\nlet r = crate::orchestrate::run(&s, &o);\nlet c = plan.compare(&r);\nlet d = compare::compare(None, &r, &g);\nlet e = history::compare_with_stored(f, &r, &g);\nlet ok = orchestrate::RunOptions::default();\nlet ok2 = compare::compare_side_by_side(&r);\n";
    let found: Vec<_> = named(code).into_iter().map(|(l, _)| l).collect();
    let mut lines = found.clone();
    lines.sort();
    lines.dedup();
    assert_eq!(lines, [1, 2, 3, 4, 5], "{found:?}");
}
