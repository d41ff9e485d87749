//! docs/action.md's tables of inputs and outputs against action.yml: every
//! input with its default and every output has one row, and no row names
//! anything action.yml does not declare. A user reads the table, GitHub runs
//! the file; this keeps them one.

use std::collections::BTreeMap;
use std::path::Path;

use super::ROOT;

fn read(file: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// A YAML scalar as GitHub reads it: quotes taken off.
fn scalar(value: &str) -> String {
    let v = value.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_string();
        }
    }
    v.to_string()
}

/// The keys of top-level section `section:` of an action file (two-space
/// indented), each with its `default:` (four-space indented), if any.
fn declared(yaml: &str, section: &str) -> BTreeMap<String, Option<String>> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    let header = format!("{section}:");
    for line in yaml
        .lines()
        .skip_while(|l| l.trim_end() != header)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' ') || l.starts_with('#'))
    {
        if let Some(key) = line.strip_prefix("  ").filter(|l| !l.starts_with(' ')) {
            if let Some(name) = key.trim_end().strip_suffix(':') {
                out.insert(name.to_string(), None);
                current = Some(name.to_string());
            }
        } else if let Some(value) = line.strip_prefix("    default:") {
            let name = current.clone().expect("a default before any key");
            out.insert(name, Some(scalar(value)));
        }
    }
    out
}

/// The rows of every table of `markdown` whose first header cell is
/// `first_header`: the first cell's name (in backticks) and the second cell.
fn table(markdown: &str, first_header: &str) -> Vec<(String, String)> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in markdown.lines() {
        if !line.trim_start().starts_with('|') {
            in_table = false;
            continue;
        }
        let c = cells(line);
        if c[0] == first_header {
            in_table = true;
            continue;
        }
        if !in_table || c[0].starts_with(":-") || c[0].starts_with("--") {
            continue;
        }
        let name = c[0].trim_matches('`').to_string();
        rows.push((name, c.get(1).cloned().unwrap_or_default()));
    }
    rows
}

/// What is wrong between the file's declarations and the doc's rows.
/// `with_defaults`: compare the second cell with the default too.
fn problems(
    declared: &BTreeMap<String, Option<String>>,
    rows: &[(String, String)],
    kind: &str,
    with_defaults: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = BTreeMap::new();
    for (name, second) in rows {
        *seen.entry(name.clone()).or_insert(0) += 1;
        match declared.get(name) {
            None => out.push(format!(
                "docs/action.md has a row for {kind} `{name}`, which action.yml does not declare: remove the row"
            )),
            Some(default) if with_defaults => {
                let wanted = format!("`{}`", default.clone().unwrap_or_default())
                    .replace("``", "`\"\"`");
                if *second != wanted {
                    out.push(format!(
                        "docs/action.md: {kind} `{name}` shows default {second}, action.yml has {wanted}: make the row say {wanted}"
                    ));
                }
            }
            Some(_) => {}
        }
    }
    for name in declared.keys() {
        match seen.get(name) {
            None => out.push(format!(
                "docs/action.md has no row for {kind} `{name}` of action.yml: add one (\"## Inputs and outputs\")"
            )),
            Some(n) if *n > 1 => out.push(format!(
                "docs/action.md has {n} rows for {kind} `{name}`: keep one"
            )),
            _ => {}
        }
    }
    out
}

#[test]
fn the_docs_table_has_every_input_with_its_default_and_every_output_of_action_yml() {
    let yaml = read("action.yml");
    let doc = read("docs/action.md");
    let inputs = declared(&yaml, "inputs");
    let outputs = declared(&yaml, "outputs");
    assert!(
        inputs.len() >= 10 && outputs.len() >= 5,
        "{inputs:?} {outputs:?}"
    );
    let mut found = problems(&inputs, &table(&doc, "input"), "input", true);
    found.extend(problems(&outputs, &table(&doc, "output"), "output", false));
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_checker_finds_a_missing_row_a_stray_row_and_a_wrong_default() {
    let yaml = "name: x\ninputs:\n  mode:\n    description: m\n    default: auto\n  \
                branch:\n    description: b\n    default: \"\"\n  flag:\n    default: \"true\"\n\
                outputs:\n  verdict:\n    value: v\n";
    let inputs = declared(yaml, "inputs");
    assert_eq!(
        inputs,
        BTreeMap::from([
            ("mode".into(), Some("auto".into())),
            ("branch".into(), Some(String::new())),
            ("flag".into(), Some("true".into())),
        ])
    );
    let doc = "| input | default | what |\n|:--|:--|:--|\n| `mode` | `auto` | a |\n\
               | `branch` | `\"\"` | b |\n| `flag` | `true` | c |\n";
    assert_eq!(
        problems(&inputs, &table(doc, "input"), "input", true),
        Vec::<String>::new()
    );
    let missing = doc.replace("| `flag` | `true` | c |\n", "");
    let stray = format!("{doc}| `other` | `x` | d |\n");
    let wrong = doc.replace("`auto`", "`always`");
    for (case, text) in [
        ("no row for input `flag`", missing),
        ("`other`", stray),
        ("`mode` shows default `always`", wrong),
    ] {
        let found = problems(&inputs, &table(&text, "input"), "input", true).join("\n");
        assert!(found.contains(case), "{case}: {found}");
    }
}
