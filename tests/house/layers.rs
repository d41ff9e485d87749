//! The crate's layers, held by a test (issue 27). README's "Architecture"
//! table lists the top-level modules of src/ from the edges (top) down to the
//! foundation (bottom); a module may use only modules in rows below its own,
//! and modules that share a row never use each other. This test reads that
//! table, then every `crate::` path in src/ (in `use` lines and in code, not in
//! comments or strings; `super::` chains that climb out of a top-level module
//! count as the `crate::` path they reach), and fails on any import against
//! the order, naming the file, the line and both modules.

use std::collections::BTreeMap;
use std::path::Path;

use super::{rust_files, ROOT};

/// Crate files that belong to no layer: the binary, the module list, and the
/// crate-wide registry test that walks every consumer on purpose.
const OUTSIDE: &[&str] = &["main", "lib", "registry_coverage_tests"];

/// The rows of README's Architecture table, top first: the modules each row
/// names as `src/NAME/` or `src/NAME.rs`.
fn layers_from_readme() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Architecture"))
        .expect("README.md has an '## Architecture' section");
    let mut rows = Vec::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let first = line.split('|').nth(1).unwrap_or("");
        let modules: Vec<String> = first
            .split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|code| code.strip_prefix("src/"))
            .map(|p| p.trim_end_matches('/').trim_end_matches(".rs").to_string())
            .collect();
        if !modules.is_empty() {
            rows.push(modules);
        }
    }
    rows
}

/// `src` with comments, string literals and char literals blanked out
/// (newlines kept, so line numbers stay right).
pub(super) fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[u8]| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, 0usize);
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if rest[0] == b'r'
            && (rest.starts_with(b"r\"") || rest.starts_with(b"r#"))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = 2 + hashes;
            let end = rest[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |p| body + p + close.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'); anything else is a lifetime.
            let end = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(2 + ch)
            };
            match end {
                Some(end) => {
                    blank(&mut out, &rest[..end]);
                    i += end;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The first segment of each path in a `{ ... }` group starting at `s[0]`.
pub(super) fn group_heads(s: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut at_item = true;
    let mut ident = String::new();
    for c in s.chars() {
        if at_item && depth == 1 && (c.is_alphanumeric() || c == '_') {
            ident.push(c);
            continue;
        }
        if !ident.is_empty() {
            heads.push(std::mem::take(&mut ident));
            at_item = false;
        }
        match c {
            '{' => {
                depth += 1;
                at_item = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => at_item = true,
            _ => {}
        }
    }
    if !ident.is_empty() {
        heads.push(ident);
    }
    heads
}

/// Every (line, top-level module) that `code` of the file at `rel` (its path
/// under src/, split into folders) reaches through `crate::` or `super::`.
fn imports(code: &str, rel: &[String]) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let heads = |after: &str| -> Vec<String> {
        if after.starts_with('{') {
            group_heads(after)
        } else {
            vec![ident(after)]
        }
    };
    // The module path of this file: src/a/b.rs -> [a, b]; src/a/mod.rs -> [a].
    let mut module: Vec<String> = rel.to_vec();
    let file = module.pop().unwrap();
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        module.push(stem.to_string());
    }
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    for (p, _) in code.match_indices("crate::") {
        let before = code[..p].chars().last();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            for h in heads(&code[p + "crate::".len()..]) {
                found.push((line_of(p), h));
            }
        }
    }
    let mut from = 0;
    while let Some(q) = code[from..].find("super::") {
        let p = from + q;
        let before = code[..p].chars().last();
        let mut after = &code[p..];
        let mut ups = 0;
        while let Some(a) = after.strip_prefix("super::") {
            ups += 1;
            after = a;
        }
        // From a file's own module, `super` is its parent module.
        if ups == module.len()
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            for h in heads(after) {
                found.push((line_of(p), h));
            }
        }
        from = code.len() - after.len();
    }
    found
}

/// The top-level module a file of src/ belongs to (`src/plan/tests.rs`: plan).
fn top_of(rel: &[String]) -> String {
    rel[0].trim_end_matches(".rs").to_string()
}

/// Every import against the order: `file:line: a imports b (...)`.
fn violations(layers: &[Vec<String>]) -> Vec<String> {
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, row)| row.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let src = Path::new(ROOT).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for path in files {
        let rel: Vec<String> = path
            .strip_prefix(&src)
            .unwrap()
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let top = top_of(&rel);
        if OUTSIDE.contains(&top.as_str()) {
            continue;
        }
        let Some(&own) = rank.get(top.as_str()) else {
            bad.push(format!(
                "src/{}: module `{top}` is in no row of README's Architecture table; add it",
                rel.join("/")
            ));
            continue;
        };
        let code = code_only(&std::fs::read_to_string(&path).unwrap());
        for (line, used) in imports(&code, &rel) {
            if used == top || used == "self" || used.is_empty() {
                continue;
            }
            let Some(&theirs) = rank.get(used.as_str()) else {
                if OUTSIDE.contains(&used.as_str()) {
                    bad.push(format!(
                        "src/{}:{line}: `{top}` imports `{used}`, which belongs to no layer",
                        rel.join("/")
                    ));
                }
                // Otherwise a crate-root item or macro (e.g. `crate::main`): none exist.
                continue;
            };
            if theirs <= own {
                let how = if theirs == own {
                    "its peer in the same row"
                } else {
                    "a module in a row above it"
                };
                bad.push(format!(
                    "src/{}:{line}: `{top}` imports `{used}`, {how} of README's Architecture table",
                    rel.join("/")
                ));
            }
        }
    }
    bad
}

#[test]
fn no_module_imports_against_the_layer_order() {
    let layers = layers_from_readme();
    assert!(
        layers.len() >= 10,
        "README's Architecture table lists {} rows of `src/...` modules: {layers:?}",
        layers.len()
    );
    let bad = violations(&layers);
    assert!(
        bad.is_empty(),
        "imports against the layer order (README, \"Architecture\"):\n{}",
        bad.join("\n")
    );
}

/// The two edges, the action and the CLI's subcommands, share one row, so
/// the rule above keeps either from importing the other (issue 33): what
/// both need lives below them, in `pipeline`.
#[test]
fn the_action_and_the_commands_never_use_each_other() {
    let layers = layers_from_readme();
    let row = |m: &str| layers.iter().position(|r| r.iter().any(|x| x == m));
    assert!(
        row("action").is_some() && row("action") == row("commands"),
        "README's Architecture table must list `src/action/` and `src/commands/` in one row (the edges never use each other); rows: {layers:?}"
    );
    let bad: Vec<String> = violations(&layers)
        .into_iter()
        .filter(|v| {
            v.contains("`action` imports `commands`") || v.contains("`commands` imports `action`")
        })
        .collect();
    assert!(
        bad.is_empty(),
        "the action and the CLI's subcommands import each other; move what both need into src/pipeline/ (or lower):\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_module_of_the_crate_is_in_exactly_one_row() {
    let layers = layers_from_readme();
    let mut seen = BTreeMap::new();
    for (i, row) in layers.iter().enumerate() {
        for m in row {
            assert!(
                seen.insert(m.clone(), i).is_none(),
                "`{m}` is in two rows of README's Architecture table"
            );
            let dir = Path::new(ROOT).join("src").join(m);
            let file = Path::new(ROOT).join("src").join(format!("{m}.rs"));
            assert!(
                dir.is_dir() || file.is_file(),
                "README's Architecture table names src/{m}, which does not exist"
            );
        }
    }
    let lib = std::fs::read_to_string(Path::new(ROOT).join("src/lib.rs")).unwrap();
    for line in code_only(&lib).lines() {
        if let Some(name) = line.trim().strip_prefix("pub mod ") {
            let name = name.trim_end_matches(';');
            assert!(
                seen.contains_key(name),
                "src/lib.rs declares `{name}`, which no row of README's Architecture table lists"
            );
        }
    }
}

/// The reader itself: an upward import is found whichever way it is written,
/// and nothing in a comment or a string counts.
#[test]
fn the_reader_finds_upward_imports_in_every_form() {
    let layers: Vec<Vec<String>> = [vec!["top"], vec!["mid", "peer"], vec!["low"]]
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect();
    let rank = |m: &str| layers.iter().position(|r| r.iter().any(|x| x == m));
    let rel = |p: &str| -> Vec<String> { p.split('/').map(String::from).collect() };
    let up = |code: &str, file: &str| -> Vec<String> {
        let rel = rel(file);
        let top = top_of(&rel);
        imports(&code_only(code), &rel)
            .into_iter()
            .filter(|(_, m)| m != &top && rank(m).is_some() && rank(m) <= rank(&top))
            .map(|(_, m)| m)
            .collect()
    };
    assert_eq!(up("use crate::top::X;", "mid/a.rs"), ["top"]);
    assert_eq!(up("use crate::{low::Y, top::X};", "mid/a.rs"), ["top"]);
    assert_eq!(
        up(
            "use crate::{\n    low,\n    peer::{self, Z},\n};",
            "mid/mod.rs"
        ),
        ["peer"]
    );
    assert_eq!(up("fn f() { crate::top::go() }", "low.rs"), ["top"]);
    assert_eq!(up("use super::super::top::X;", "mid/a.rs"), ["top"]);
    assert_eq!(up("use super::top::X;", "mid/mod.rs"), ["top"]);
    assert!(up("use super::top::X;", "mid/a.rs").is_empty(), "mid::top");
    assert!(up("use super::super::top::X;", "mid/sub/a.rs").is_empty());
    assert!(up("// use crate::top::X;\n/* crate::top */", "low.rs").is_empty());
    assert!(up(
        "let s = \"crate::top::X\"; let r = r#\"crate::top\"#;",
        "low.rs"
    )
    .is_empty());
    assert!(up(
        "fn f<'a>(c: char) -> bool { c == '\"' } use crate::low::A;",
        "mid/a.rs"
    )
    .is_empty());
    assert_eq!(
        up("fn f<'a>(x: &'a str) { crate::top::go(x) }", "low.rs"),
        ["top"]
    );
}
