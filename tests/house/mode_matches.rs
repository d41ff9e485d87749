//! The comparison mode and the trial schedule are matched exhaustively
//! (issue 50, point 2): outside its own module no file under src/ tests one
//! with `==` or `!=` against a variant, with `matches!`, or with a `let`
//! pattern that names a variant (`if let`, `while let`, `let … else`). What
//! the rest of the code asks of one is a method of its own module, so a new
//! variant is a compile error at each `match` and is missed nowhere else.

use std::path::Path;

use super::layers::code_only;
use super::{rust_files, ROOT};

/// `(the enum's path, its own module)`.
const GUARDED: &[(&str, &str)] = &[
    ("ComparisonMode::", "src/compare/pairing.rs"),
    ("Schedule::", "src/config/mod.rs"),
];

fn is_path_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b':'
}

/// Whether the variant named at `at` (`Enum::Variant`, perhaps in a longer
/// path, perhaps in `Some(…)`) stands beside `==` or `!=`.
fn compared(code: &str, at: usize, name: &str) -> bool {
    let b = code.as_bytes();
    let is_op = |s: &[u8]| s == b"==" || s == b"!=";
    let mut start = at;
    while start > 0 && is_path_char(b[start - 1]) {
        start -= 1;
    }
    let before = code[..start].trim_end();
    let before = before.strip_suffix("Some(").unwrap_or(before).trim_end();
    if before.len() >= 2 && is_op(&before.as_bytes()[before.len() - 2..]) {
        return true;
    }
    let mut end = at + name.len();
    while end < b.len() && is_path_char(b[end]) {
        end += 1;
    }
    let after = code[end..].trim_start();
    let after = after.strip_prefix(')').unwrap_or(after).trim_start();
    after.len() >= 2 && is_op(&after.as_bytes()[..2])
}

/// The text of the parentheses opening at `s[0]`.
fn parenthesized(s: &str) -> &str {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return &s[..=i],
            ')' => depth -= 1,
            _ => {}
        }
    }
    s
}

/// The pattern of the `let` at `s[0]`: up to its `=` (not `==`, `=>`,
/// `!=`, `<=`, `>=`).
fn let_pattern(s: &str) -> &str {
    let b = s.as_bytes();
    for i in 0..b.len() {
        let lone = b[i] == b'='
            && b.get(i + 1).is_none_or(|c| !b"=>".contains(c))
            && (i == 0 || !b"=!<>".contains(&b[i - 1]));
        if lone || b[i] == b';' {
            return &s[..i];
        }
    }
    s
}

/// Every test of `name`'s variants in `code` outside a `match`: `(line, what)`.
fn tests_outside_match(code: &str, name: &str) -> Vec<(usize, &'static str)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let word_at = |at: usize| at == 0 || !is_path_char(code.as_bytes()[at - 1]);
    let mut found = Vec::new();
    for (at, _) in code.match_indices("matches!(") {
        if parenthesized(&code[at + "matches!".len()..]).contains(name) {
            found.push((line_of(at), "matches!"));
        }
    }
    for (at, _) in code.match_indices("let ") {
        if word_at(at) && let_pattern(&code[at + 4..]).contains(name) {
            found.push((line_of(at), "a let pattern"));
        }
    }
    for (at, _) in code.match_indices(name) {
        if compared(code, at, name) {
            found.push((line_of(at), "== or !="));
        }
    }
    found
}

#[test]
fn the_mode_and_the_schedule_are_matched_only() {
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("src"), &mut files);
    files.sort();
    let mut bad = Vec::new();
    for file in files {
        let rel = file.strip_prefix(ROOT).unwrap().display().to_string();
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for (name, home) in GUARDED {
            if rel == *home {
                continue;
            }
            for (line, what) in tests_outside_match(&code, name) {
                bad.push(format!("{rel}:{line}: {what} on {name}…"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "match the comparison mode and the schedule exhaustively (`match`), or ask a method of their own module; never `==`, `matches!` or `if let` elsewhere:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_reader_finds_each_form() {
    let code = "if cmp.mode == crate::compare::ComparisonMode::BaseVsHead {}\n\
        let paired = matches!(self.mode, Some(ComparisonMode::SideBySide | ComparisonMode::BaseVsHead));\n\
        if let Some(ComparisonMode::Baseline) = plan.mode {}\n\
        let Some(ComparisonMode::BaseVsHead) = plan.mode else { return };\n\
        while plan.mode != Some(ComparisonMode::Baseline) {}\n\
        if ComparisonMode::SideBySide == m {}\n\
        let m = ComparisonMode::Baseline;\n\
        match m { ComparisonMode::Baseline => a == b, ComparisonMode::SideBySide => true }\n\
        let x = if a == b { ComparisonMode::Baseline } else { m };\n";
    let found: Vec<_> = tests_outside_match(code, "ComparisonMode::")
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    let mut lines = found.clone();
    lines.sort();
    lines.dedup();
    assert_eq!(lines, [1, 2, 3, 4, 5, 6], "{found:?}");
}
