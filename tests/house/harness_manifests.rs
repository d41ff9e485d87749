//! The harness packages are registry artifacts (issue 54, point 6): each
//! manifest names the version its library reports, the repository Cargo.toml
//! names, a licence a registry accepts and, for Maven Central, a namespace
//! verifiable from that repository's GitHub owner (`io.github.<owner>`), with
//! the elements Central requires (name, description, url, licences with their
//! URLs, developers, scm). scripts/test-harness.sh builds each artifact as a
//! registry would receive it (the jar, `npm pack`, a wheel).

use std::path::Path;

use super::ROOT;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Cargo.toml's `repository` and its GitHub owner.
fn repository() -> (String, String) {
    let cargo: toml::Value = toml::from_str(&read("Cargo.toml")).unwrap();
    let url = cargo["package"]["repository"].as_str().unwrap().to_string();
    let owner = url
        .strip_prefix("https://github.com/")
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("Cargo.toml's repository is not a GitHub URL: {url}"))
        .to_string();
    (url, owner)
}

/// The text of the first `<tag>…</tag>` after `from` in `xml`.
fn element<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(xml[start..end].trim())
}

/// The string literal assigned to `name` in `text` (`NAME = "x"` or `NAME = 'x'`).
fn assigned(text: &str, name: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains(name) && l.contains('='))?;
    let value = line.split('=').nth(1)?.trim().trim_end_matches(';');
    Some(value.trim_matches(|c| c == '"' || c == '\'').to_string())
}

fn versions() -> Vec<(&'static str, String)> {
    let java = read("harness/java/src/main/java/dev/benchgate/harness/Harness.java");
    let python = read("harness/python/src/benchgate_harness/__init__.py");
    let node: serde_json::Value = serde_json::from_str(&read("harness/node/package.json")).unwrap();
    vec![
        (
            "Harness.VERSION",
            assigned(&java, "String VERSION").unwrap(),
        ),
        (
            "pom.xml",
            element(&read("harness/java/pom.xml"), "version")
                .unwrap()
                .to_string(),
        ),
        ("__version__", assigned(&python, "__version__").unwrap()),
        (
            "package.json",
            node["version"].as_str().unwrap().to_string(),
        ),
    ]
}

#[test]
fn the_three_harnesses_have_one_version() {
    let v = versions();
    assert!(
        v.iter().all(|(_, x)| x == &v[0].1 && !x.is_empty()),
        "the harness packages disagree on their version: {v:?}"
    );
}

#[test]
fn the_pom_has_what_maven_central_requires_in_a_verifiable_namespace() {
    let pom = read("harness/java/pom.xml");
    let (url, owner) = repository();
    let group = element(&pom, "groupId").unwrap();
    assert_eq!(
        group,
        format!("io.github.{}", owner.to_lowercase()),
        "pom.xml's groupId must be the namespace Maven Central verifies from the repository's GitHub owner ({url})"
    );
    assert_eq!(element(&pom, "artifactId"), Some("benchgate-harness"));
    for tag in ["name", "description", "developers", "scm"] {
        assert!(
            element(&pom, tag).is_some_and(|t| !t.is_empty()),
            "pom.xml lacks <{tag}>, which Maven Central requires"
        );
    }
    let project_url = pom[pom.find("</description>").unwrap()..]
        .split("<url>")
        .nth(1)
        .and_then(|s| s.split("</url>").next());
    assert_eq!(
        project_url,
        Some(url.as_str()),
        "pom.xml's <url> is the repository"
    );
    let scm = element(&pom, "scm").unwrap();
    assert!(scm.contains(&url), "pom.xml's <scm> names {url}: {scm}");
    let licenses = element(&pom, "licenses").unwrap();
    for name in ["MIT", "Apache-2.0"] {
        assert!(
            licenses.contains(&format!("<name>{name}</name>")),
            "pom.xml's licences include {name} (the crate's licence): {licenses}"
        );
    }
    assert_eq!(
        licenses.matches("<url>https://").count(),
        2,
        "each licence has its URL: {licenses}"
    );
}

#[test]
fn the_python_and_node_manifests_name_the_repository() {
    let (url, _) = repository();
    let node: serde_json::Value = serde_json::from_str(&read("harness/node/package.json")).unwrap();
    let repo = node["repository"]["url"].as_str().unwrap_or_default();
    assert_eq!(repo, format!("git+{url}.git"), "package.json's repository");
    assert_eq!(node["repository"]["directory"], "harness/node");
    assert_eq!(node["license"], "MIT OR Apache-2.0");
    assert_eq!(
        node["files"],
        serde_json::json!(["src"]),
        "package.json ships src/ only"
    );
    let py: toml::Value = toml::from_str(&read("harness/python/pyproject.toml")).unwrap();
    let project = &py["project"];
    assert_eq!(project["urls"]["Repository"].as_str(), Some(url.as_str()));
    assert_eq!(project["name"].as_str(), Some("benchgate-harness"));
    assert!(project["license"]["text"]
        .as_str()
        .is_some_and(|l| l.contains("MIT")));
}
