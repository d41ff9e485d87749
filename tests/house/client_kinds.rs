//! One list of client kinds (issue 50, point 2): `ClientKind::BUILT_IN`
//! (src/config/mod.rs). The config's messages are written from it; the
//! results schema's kind enum and the configuration reference's `kind` line
//! are checked against it here, and src/ may not write the kinds out by hand
//! again (a message that lists three or more of them in quotes), where a new built-in
//! client would leave them stale without a test noticing.

use std::path::Path;

use benchgate::config::ClientKind;

use super::{rust_files, ROOT};

fn built_in() -> Vec<&'static str> {
    ClientKind::BUILT_IN.iter().map(ClientKind::name).collect()
}

#[test]
fn the_results_schema_lists_the_built_in_kinds() {
    let path = Path::new(ROOT).join("schema/results.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let kinds: Vec<&str> = schema["$defs"]["client"]["properties"]["kind"]["oneOf"][0]["enum"]
        .as_array()
        .expect("schema/results.schema.json: $defs.client.properties.kind.oneOf[0].enum")
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        built_in(),
        "schema/results.schema.json's client kind enum is not ClientKind::BUILT_IN: write the same names in the same order"
    );
}

#[test]
fn the_configuration_reference_lists_the_built_in_kinds() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("docs/configuration.md")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("kind = \"hyper\""))
        .expect("docs/configuration.md: the [[client]] example's kind line");
    let listed = line.split('#').nth(1).unwrap_or("");
    for kind in built_in() {
        assert!(
            listed.split(['|', '(']).any(|k| k.trim() == kind),
            "docs/configuration.md's kind line does not list {kind:?}: {line}"
        );
    }
}

/// Non-test lines of src/ that write three or more built-in kinds in quotes
/// inside a string (`\"hyper\", \"reqwest\" or \"h1-lean\"`): "src/file:line: text".
/// Two are a comparison of kinds (`use kind = \"hyper\" for https`), not a list.
fn hand_written_lists(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let quoted: Vec<String> = built_in().iter().map(|k| format!("\\\"{k}\\\"")).collect();
    let mut found = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(src)
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
            if quoted.iter().filter(|q| line.contains(q.as_str())).count() >= 3 {
                found.push(format!("src/{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn src_lists_the_client_kinds_once() {
    let found = hand_written_lists(&Path::new(ROOT).join("src"));
    assert!(
        found.is_empty(),
        "client kinds written out by hand: write the list from ClientKind::BUILT_IN (config::validate's `built_in_kinds`), which a new built-in client extends:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_hand_written_list_is_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("config")).unwrap();
    std::fs::write(
        dir.path().join("config/validate.rs"),
        "const A: &str = \"kind = \\\"hyper\\\" or \\\"reqwest\\\"\";\n\
         const B: &str = \"\\\"hyper\\\", \\\"reqwest\\\" or \\\"h1-lean\\\"\";\n\
         #[cfg(test)]\nconst C: &str = \"\\\"hyper\\\", \\\"reqwest\\\" or \\\"h1-lean\\\"\";\n",
    )
    .unwrap();
    assert_eq!(
        hand_written_lists(dir.path()),
        ["src/config/validate.rs:2: const B: &str = \"\\\"hyper\\\", \\\"reqwest\\\" or \\\"h1-lean\\\"\";"]
    );
}
