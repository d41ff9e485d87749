//! The workflows `benchgate init --workflow` writes, from the templates beside
//! this file: in `.github/workflows/` at the repository's root, where GitHub
//! reads them, with every path in them pointing into the project's directory
//! (`sub`, its path from the root: `working-directory` for the action, the
//! uploaded files).

use super::kit::{fill, KitFile, PLACEHOLDER_SHA, VERSION};

/// What a command client's pull-request workflow does, in its header comment.
pub const BASE_VS_HEAD: &str = "base vs head (`[compare] base = \"git\"`\n\
    # in benchgate.toml): benchgate checks out the PR's base commit beside the\n\
    # merge commit, builds (the client's `setup`) and measures the client at both\n\
    # in this one run, paired by round, and gates head against base.";

/// The pull-request and main-branch workflows: the pull-request check does
/// `pr_what` (its header comment), `setup_steps` set up the client's runtime
/// before benchgate's step; `sub` is the project's directory from the
/// repository's root (`client/`, or empty).
pub fn pull_request_and_main(pr_what: &str, setup_steps: &str, sub: &str) -> Vec<KitFile> {
    let with = with_lines(sub);
    let upload = upload_lines(sub, "benchgate-results.json");
    let values = [
        ("PR_WHAT", pr_what),
        ("SETUP_STEPS", setup_steps),
        ("PIN_TODO", &pin_todo()),
        ("ACTION", &action_ref()),
        ("WITH", &with),
        ("UPLOAD", &upload),
    ];
    vec![
        workflow(
            "benchgate-pr.yml",
            include_str!("templates/pr.yml"),
            &values,
        ),
        workflow(
            "benchgate-main.yml",
            include_str!("templates/main.yml"),
            &values,
        ),
    ]
}

/// The built-in clients' workflows: a baseline on every push to main and a
/// nightly comparison with it, no pull-request check (nightly.yml says why).
pub fn builtin(sub: &str) -> Vec<KitFile> {
    let with = with_lines(sub);
    let values = [
        ("SETUP_STEPS", ""),
        ("PIN_TODO", &pin_todo()),
        ("ACTION", &action_ref()),
        ("WITH", &with),
    ];
    vec![
        workflow(
            "benchgate-main.yml",
            include_str!("templates/main.yml"),
            &values,
        ),
        workflow(
            "benchgate-nightly.yml",
            include_str!("templates/nightly.yml"),
            &values,
        ),
    ]
}

fn workflow(name: &str, template: &str, values: &[(&str, &str)]) -> KitFile {
    KitFile {
        path: format!(".github/workflows/{name}"),
        text: fill(template, values),
        executable: false,
    }
}

/// The benchgate step's `with:` lines up to `config`: the project's directory
/// first when it is not the repository's root.
fn with_lines(sub: &str) -> String {
    let mut out = String::new();
    if let Some(dir) = dir(sub) {
        out.push_str(&format!(
            "          working-directory: {}   # benchgate.toml's directory\n",
            yaml(dir)
        ));
    }
    out.push_str("          config: benchgate.toml\n");
    out
}

/// The upload step's `path:` lines: the results file and the report beside it.
fn upload_lines(sub: &str, results: &str) -> String {
    format!("            {sub}{results}\n            {sub}benchgate-report.md\n")
}

/// `sub` without its trailing `/`; `None` for the repository's root.
fn dir(sub: &str) -> Option<&str> {
    Some(sub.trim_end_matches('/')).filter(|d| !d.is_empty())
}

/// `s` as a YAML scalar: plain when it is only letters, digits and `._/-`,
/// else double-quoted (JSON's escapes are YAML's).
fn yaml(s: &str) -> String {
    let plain = s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._/-".contains(&b));
    if plain && !s.starts_with('-') {
        s.to_string()
    } else {
        serde_json::Value::String(s.to_string()).to_string()
    }
}

/// The benchgate action as the workflows pin it.
pub fn action_ref() -> String {
    format!("OWNER/benchgate@{PLACEHOLDER_SHA} # v{VERSION}")
}

/// The comment above the pinned action: what to replace, and how to find it.
fn pin_todo() -> String {
    format!(
        "      # TODO: pin benchgate. Replace OWNER with the action's owner and the zeros\n\
         \x20     # with the commit its tag v{VERSION} points at: git ls-remote\n\
         \x20     # https://github.com/OWNER/benchgate 'refs/tags/v{VERSION}^{{}}'. Until then\n\
         \x20     # this step fails (no such commit). Before the first release any commit\n\
         \x20     # works, built from source in about 7 minutes (needs Rust on the runner).\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_yaml_scalars() {
        assert_eq!(yaml("client"), "client");
        assert_eq!(yaml("services/http-client_2.x"), "services/http-client_2.x");
        assert_eq!(yaml("my client"), "\"my client\"");
        assert_eq!(yaml("a #b"), "\"a #b\"");
        assert_eq!(yaml("-x"), "\"-x\"");
        assert_eq!(yaml("q\"uote"), "\"q\\\"uote\"");
    }
}
