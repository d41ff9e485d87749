//! The workflows `benchgate init --workflow` writes, from the templates beside
//! this file: in `.github/workflows/` at the repository's root, where GitHub
//! reads them, with every path in them pointing into the project's directory
//! (`sub`, its path from the root: `working-directory` for the action, the
//! uploaded files).

use super::kit::{fill, KitFile, PLACEHOLDER_SHA, VERSION};

/// The setup of the JDK, before a JVM kit's steps.
pub const SETUP_JAVA: &str =
    "      - uses: actions/setup-java@b6effb05e454b25005698d916606bdc6ffcbf961 # v5.7.0\n\
    \x20       with:\n\
    \x20         distribution: temurin\n\
    \x20         java-version: \"21\"\n";

/// What a kit's pull-request and main-branch workflows do and read.
struct Flavor {
    /// The examples/workflows/ files they follow (pull request, main).
    after: [&'static str; 2],
    /// What the pull-request check does, in its header comment.
    pr_what: &'static str,
    /// What a push to main does before storing, in its header comment.
    main_what: &'static str,
    /// The results file the action reads (its `results-path`), when not its
    /// default.
    results: Option<&'static str>,
}

const COMMAND: Flavor = Flavor {
    after: ["pr.yml", "main.yml"],
    pr_what: "base vs head (`[compare] base = \"git\"`\n\
        # in benchgate.toml): benchgate checks out the PR's base commit beside the\n\
        # merge commit, builds (the client's `setup`) and measures the client at both\n\
        # in this one run, paired by round, and gates head against base.",
    main_what: "runs the suite\n\
        # and stores the result as that commit's baseline on the benchgate-data branch\n\
        # (created when missing), for history, drift and comparisons with a stored run.",
    results: None,
};

const JMH: Flavor = Flavor {
    after: ["jmh-pr.yml", "jmh-push.yml"],
    pr_what: "the JMH step writes your\n\
        # benchmarks' result file (4 forks: a fork is one measurement, and with fewer\n\
        # benchgate cannot tell a change from noise); benchgate compares it with the\n\
        # file stored for the PR's base commit (benchgate-main.yml stores one on\n\
        # every push to main) and runs nothing itself (benchgate.toml has no client).",
    main_what: "runs your JMH\n\
        # benchmarks and stores their result file as that commit's baseline on the\n\
        # benchgate-data branch (created when missing), for history, drift and\n\
        # comparisons with a stored run.",
    results: Some("jmh.json"),
};

/// A command client's workflows: `setup_steps` set up its runtime before
/// benchgate's step; `sub` is the project's directory from the repository's
/// root (`client/`, or empty).
pub fn command(setup_steps: &str, sub: &str) -> Vec<KitFile> {
    pull_request_and_main(&COMMAND, setup_steps, sub)
}

/// A Maven JMH module's workflows: the JDK, the JMH step writing jmh.json
/// (`-f 4 -rf json`, in the module's directory), then the action reading it.
pub fn jmh(sub: &str) -> Vec<KitFile> {
    let mut steps = format!(
        "{SETUP_JAVA}      - name: JMH   # 4 forks or more (-f 4): fewer decide nothing\n\
         \x20       run: mvn -B package && java -jar target/benchmarks.jar -f 4 -rf json -rff jmh.json\n"
    );
    if let Some(dir) = dir(sub) {
        steps.push_str(&format!("        working-directory: {}\n", yaml(dir)));
    }
    pull_request_and_main(&JMH, &steps, sub)
}

fn pull_request_and_main(flavor: &Flavor, setup_steps: &str, sub: &str) -> Vec<KitFile> {
    let results = flavor.results.unwrap_or("benchgate-results.json");
    let with = with_lines(sub, flavor.results);
    let upload = format!("            {sub}{results}\n            {sub}benchgate-report.md\n");
    let values = [
        ("AFTER_PR", flavor.after[0]),
        ("AFTER_MAIN", flavor.after[1]),
        ("PR_WHAT", flavor.pr_what),
        ("MAIN_WHAT", flavor.main_what),
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
    let with = with_lines(sub, None);
    let values = [
        ("AFTER_MAIN", COMMAND.after[1]),
        ("MAIN_WHAT", COMMAND.main_what),
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

/// The benchgate step's `with:` lines its kit needs: the project's directory
/// when it is not the repository's root, the config, the results file when
/// not the action's default.
fn with_lines(sub: &str, results: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(dir) = dir(sub) {
        out.push_str(&format!(
            "          working-directory: {}   # benchgate.toml's directory\n",
            yaml(dir)
        ));
    }
    out.push_str("          config: benchgate.toml\n");
    if let Some(results) = results {
        out.push_str(&format!(
            "          results-path: {results}   # the file the JMH step wrote\n"
        ));
    }
    out
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
