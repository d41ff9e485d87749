//! `benchgate init` (issue 32, point 3; issue 54, point 3), driven as a user
//! runs it: in a temporary directory holding one project's marker file,
//! `benchgate init --workflow` writes a kit whose `benchgate.toml` benchgate's
//! own loader accepts, whose bench/ scripts are executable, whose workflows pin
//! every action by commit and give the benchgate action only inputs that
//! action.yml declares; and it never overwrites: one existing file of the kit
//! and nothing is written. What each kit holds: [`kits`]; the kits run as the
//! next steps say: [`runs`]. scripts/lint.sh checks the written workflows with
//! check-jsonschema, actionlint and zizmor, and the bench/ scripts with
//! shellcheck.

mod kits;
mod runs;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output};

use benchgate::config::{ClientKind, Suite};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn init(dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .arg("init")
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A marker file, the kit's client file (None: the built-in clients), a
/// word bench/build.sh must hold for that build tool, and the workflows
/// `--workflow` writes.
const KINDS: &[(&str, Option<&str>, &str, &[&str])] = &[
    ("pom.xml", Some("bench/QuickStart.java"), "mvn -q", PR_MAIN),
    (
        "build.gradle.kts",
        Some("bench/QuickStart.java"),
        "./gradlew",
        PR_MAIN,
    ),
    (
        "settings.gradle",
        Some("bench/QuickStart.java"),
        "./gradlew",
        PR_MAIN,
    ),
    (
        "pyproject.toml",
        Some("bench/quickstart.py"),
        "benchgate_harness-",
        PR_MAIN,
    ),
    (
        "requirements.txt",
        Some("bench/quickstart.py"),
        "benchgate_harness-",
        PR_MAIN,
    ),
    (
        "package.json",
        Some("bench/quickstart.mjs"),
        "benchgate-harness-",
        PR_MAIN,
    ),
    (JMH, None, "", PR_MAIN),
    (
        "README.md",
        None,
        "",
        &["benchgate-main.yml", "benchgate-nightly.yml"],
    ),
];

const PR_MAIN: &[&str] = &["benchgate-pr.yml", "benchgate-main.yml"];

/// The marker of a Maven JMH module: a pom.xml naming jmh-core ([`project`]).
const JMH: &str = "pom.xml with jmh-core";

/// A project in `dir` whose only file is `marker`, empty; for [`JMH`], a
/// pom.xml as the JMH archetype's has it.
fn project(dir: &Path, marker: &str) {
    let (file, text) = match marker {
        JMH => (
            "pom.xml",
            "<project>\n  <dependencies>\n    <dependency>\n      <groupId>org.openjdk.jmh</groupId>\n      \
             <artifactId>jmh-core</artifactId>\n      <version>1.37</version>\n    </dependency>\n  \
             </dependencies>\n</project>\n",
        ),
        _ => (marker, ""),
    };
    std::fs::write(dir.join(file), text).unwrap();
}

#[test]
fn each_kind_of_project_gets_a_kit_that_benchgate_loads() {
    for &(marker, client_file, build_word, workflows) in KINDS {
        let dir = tempfile::tempdir().unwrap();
        project(dir.path(), marker);
        let out = init(dir.path(), &["--workflow"]);
        assert_eq!(out.status.code(), Some(0), "{marker}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("next:")
                && (stdout.contains("benchgate run") || stdout.contains("benchgate compare")),
            "{marker}: {stdout}"
        );

        let config = dir.path().join("benchgate.toml");
        let suite = Suite::from_file(&config)
            .unwrap_or_else(|e| panic!("{marker}: the written config does not load: {e}"));
        assert!(
            suite.run.budget.is_some() || marker == JMH,
            "{marker}: no [run] budget"
        );
        let commands: Vec<_> = suite
            .clients
            .iter()
            .filter_map(|c| match &c.kind {
                ClientKind::Command(spec) => Some(spec),
                _ => None,
            })
            .collect();
        let mut written: Vec<String> = std::fs::read_dir(dir.path().join(".github/workflows"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        written.sort();
        let mut expected: Vec<String> = workflows.iter().map(|w| w.to_string()).collect();
        expected.sort();
        assert_eq!(written, expected, "{marker}");
        let Some(client_file) = client_file else {
            assert!(commands.is_empty(), "{marker}: {commands:?}");
            assert!(!dir.path().join("bench").exists(), "{marker}: wrote bench/");
            continue;
        };
        // The command and its build are files of the repository, which the
        // base-side twin runs from the base commit's tree.
        assert_eq!(commands.len(), 1, "{marker}: {:?}", suite.clients);
        assert_eq!(commands[0].command, ["sh", "bench/run.sh"], "{marker}");
        assert_eq!(
            commands[0].setup.as_deref(),
            Some(&["sh".to_string(), "bench/build.sh".to_string()][..])
        );
        assert!(
            suite.compare.as_ref().is_some_and(|c| c.base.is_some()),
            "{marker}: no [compare] base = \"git\""
        );
        for script in ["bench/build.sh", "bench/run.sh"] {
            let mode = std::fs::metadata(dir.path().join(script))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(
                mode & 0o111,
                0o111,
                "{marker}: {script} is not executable ({mode:o})"
            );
        }
        assert!(
            dir.path().join(client_file).is_file(),
            "{marker}: no {client_file}"
        );
        let build = std::fs::read_to_string(dir.path().join("bench/build.sh")).unwrap();
        assert!(
            build.contains(build_word),
            "{marker}: bench/build.sh lacks {build_word:?}"
        );
    }
}

#[test]
fn an_existing_file_of_the_kit_is_left_as_it_is_and_nothing_is_written() {
    for existing in [
        "bench/run.sh",
        ".github/workflows/benchgate-main.yml",
        "benchgate.toml",
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pom.xml"), "").unwrap();
        let path = dir.path().join(existing);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mine = b"#!/bin/sh\n# mine, not benchgate's\n\x00\xff";
        std::fs::write(&path, mine).unwrap();

        let out = init(dir.path(), &["--workflow"]);
        assert_eq!(out.status.code(), Some(2), "{existing}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(existing)
                && stderr.contains("never overwrites")
                && stderr.contains("Move it away"),
            "{existing}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            mine,
            "{existing} was changed"
        );
        let mut left: Vec<String> = walk(dir.path());
        left.sort();
        let mut expected = vec!["pom.xml".to_string(), existing.to_string()];
        expected.sort();
        assert_eq!(
            left, expected,
            "init wrote files beside the existing {existing}"
        );
    }
}

#[test]
fn a_missing_directory_is_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = init(&dir.path().join("nope"), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--dir")
            && stderr.contains("nope")
            && stderr.contains("pass the directory"),
        "{stderr}"
    );
}

/// Every file under `dir`, relative, directories left out.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out
}

/// The input names action.yml declares (its `inputs:` map, two-space keys).
fn declared_inputs() -> Vec<String> {
    let action = std::fs::read_to_string(Path::new(ROOT).join("action.yml")).unwrap();
    action
        .lines()
        .skip_while(|l| *l != "inputs:")
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .filter_map(|l| l.strip_prefix("  ")?.strip_suffix(':'))
        .filter(|k| !k.starts_with(' '))
        .map(String::from)
        .collect()
}

/// Every `uses: action@ref # comment` of this repository's own checked
/// workflows, as action and the rest.
fn checked_pins() -> Vec<(String, String)> {
    let mut all = Vec::new();
    for d in ["examples/workflows", ".github/workflows"] {
        for e in std::fs::read_dir(Path::new(ROOT).join(d)).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            for line in text.lines() {
                if let Some(uses) = line.trim_start().strip_prefix("- uses: ") {
                    if let Some((action, pin)) = uses.split_once('@') {
                        all.push((action.to_string(), pin.to_string()));
                    }
                }
            }
        }
    }
    all
}

#[test]
fn the_workflows_pin_every_action_and_use_only_declared_inputs() {
    let inputs = declared_inputs();
    assert!(
        inputs.contains(&"config".to_string()) && inputs.len() > 10,
        "{inputs:?}"
    );
    let pins = checked_pins();
    let version = env!("CARGO_PKG_VERSION");
    for &(marker, _, _, workflows) in KINDS {
        let dir = tempfile::tempdir().unwrap();
        project(dir.path(), marker);
        let out = init(dir.path(), &["--workflow"]);
        assert_eq!(out.status.code(), Some(0), "{marker}: {}", text(&out));
        for name in workflows {
            let yml =
                std::fs::read_to_string(dir.path().join(".github/workflows").join(name)).unwrap();
            assert!(!yml.contains('\t'), "{marker} {name}: a tab");
            let lines: Vec<&str> = yml.lines().collect();
            let mut benchgate_steps = 0;
            for (i, line) in lines.iter().enumerate() {
                let Some(uses) = line.trim_start().strip_prefix("- uses: ") else {
                    continue;
                };
                let (_, reference) = uses
                    .split_once('@')
                    .unwrap_or_else(|| panic!("{name}: {uses}"));
                let sha = &reference[..reference.find(' ').unwrap_or(reference.len())];
                assert!(
                    sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
                    "{marker} {name}: `{uses}` is not pinned to a full commit SHA"
                );
                if !uses.starts_with("OWNER/benchgate@") {
                    // One commit per action: the one this repository's workflows pin.
                    let (action, pin) = uses.split_once('@').unwrap();
                    for (_, other) in pins.iter().filter(|(a, _)| a == action) {
                        assert_eq!(
                            pin, other,
                            "{marker} {name}: {action} is pinned at another commit in this repository's workflows"
                        );
                    }
                    continue;
                }
                benchgate_steps += 1;
                assert!(uses.ends_with(&format!("# v{version}")), "{name}: {uses}");
                assert!(
                    lines[..i]
                        .iter()
                        .rev()
                        .take(6)
                        .any(|l| l.contains("TODO: pin benchgate")),
                    "{name}: no TODO above {uses}"
                );
                // The step's `with:` keys, one level below it.
                let indent = line.len() - line.trim_start().len() + 2;
                let with_keys = lines[i + 1..]
                    .iter()
                    .take_while(|l| {
                        l.len() - l.trim_start().len() >= indent + 2 || l.trim_start() == "with:"
                    })
                    .filter(|l| l.len() - l.trim_start().len() == indent + 2)
                    .filter_map(|l| l.trim_start().split_once(':').map(|(k, _)| k.to_string()));
                let mut n = 0;
                for key in with_keys {
                    n += 1;
                    assert!(
                        inputs.contains(&key),
                        "{marker} {name}: input `{key}` is not declared in action.yml"
                    );
                }
                assert!(n >= 1, "{marker} {name}: the benchgate step has no inputs");
            }
            assert_eq!(benchgate_steps, 1, "{marker} {name}");
        }
    }
}

/// `cmd` succeeded, or the test fails with its output.
fn ok(what: &str, cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}; scripts/install-test-deps.sh installs it"));
    assert!(out.status.success(), "{what}: {}", text(&out));
}

/// Runs git in `dir` as a user would, or fails the test.
fn git(dir: &Path, args: &[&str]) {
    ok(
        &format!("git {args:?}"),
        Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir),
    );
}
