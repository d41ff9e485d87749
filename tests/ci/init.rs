//! `benchgate init` (issue 32, point 3), driven as a user runs it: in a temporary
//! directory holding one project's marker file, `benchgate init --workflow`
//! writes a kit whose `benchgate.toml` benchgate's own loader accepts, whose
//! bench/ scripts are executable, whose workflows pin every action by commit and
//! give the benchgate action only inputs that action.yml declares; and it never
//! overwrites: one existing file of the kit and nothing is written. The Java and
//! Node kits, their harness put in bench/ as its build.sh says, then build and
//! measure with no failed trial through init's next step, `benchgate run
//! --compare-base HEAD` (needs a JDK, Debian's libhdrhistogram-java, node and
//! npm: scripts/install-test-deps.sh; nothing leaves the machine).
//! scripts/lint.sh checks the written workflows with check-jsonschema,
//! actionlint and zizmor.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output};

use benchgate::config::{ClientKind, Suite};

use crate::common;

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

/// Issue 54, point 3: every kit's config says what its settings do in plain
/// words, without the statistics' jargon (it said "the first planned look
/// (alpha 0.05 / 6) needs 9 or more pairs").
#[test]
fn the_configs_speak_plain_words() {
    for &(marker, _, _, _) in KINDS {
        let dir = tempfile::tempdir().unwrap();
        project(dir.path(), marker);
        assert_eq!(init(dir.path(), &[]).status.code(), Some(0), "{marker}");
        let config = std::fs::read_to_string(dir.path().join("benchgate.toml")).unwrap();
        for jargon in ["alpha", "α", "planned look", "pairs"] {
            assert!(
                !config.contains(jargon),
                "{marker}: {jargon:?} in\n{config}"
            );
        }
        if let Some(rounds) = config.lines().find(|l| l.starts_with("rounds = ")) {
            assert!(rounds.contains('#'), "{marker}: {rounds}");
        }
    }
}

/// `file` (a real JMH result file) with every benchmark's forks taken twice:
/// 4 forks where it has 2, as `-f 4` writes.
fn four_forks(file: &serde_json::Value) -> serde_json::Value {
    let mut out = file.clone();
    for entry in out.as_array_mut().unwrap() {
        let metric = &mut entry["primaryMetric"];
        for key in ["rawData", "rawDataHistogram"] {
            if let Some(forks) = metric.get_mut(key).and_then(|f| f.as_array_mut()) {
                let again = forks.clone();
                forks.extend(again);
            }
        }
    }
    out
}

/// Issue 54, point 3: a pom.xml naming jmh-core gets the JMH kit (it got the
/// HTTP client's), and `--kind jmh` is one: a config with `[jmh]` and `[gate]`
/// only that gates the module's `-rf json` file (a 4-fork file 20% slower
/// fails, the same file passes), and the workflows that run JMH with `-f 4
/// -rf json` and hand the file to the action as in examples/workflows/jmh-*.yml.
#[test]
fn a_jmh_module_gets_the_jmh_kit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    project(p, JMH);
    let out = init(p, &["--workflow"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("found jmh-core in pom.xml: a Maven JMH project")
            && stdout.contains("-f 4 -rf json -rff jmh.json")
            && stdout.contains("benchgate compare --config benchgate.toml"),
        "{stdout}"
    );
    assert!(!p.join("bench").exists(), "{stdout}");
    let suite = Suite::from_file(&p.join("benchgate.toml")).unwrap();
    assert!(suite.clients.is_empty() && suite.scenarios.is_empty());
    assert!(!suite.jmh.iterations_as_trials);

    let base = p.join("base.json");
    let slower = p.join("jmh.json");
    let file = four_forks(&common::jmh::read_json(&common::jmh::fixture(
        "tkrs-thrpt-2-forks-gc.json",
    )));
    std::fs::write(&base, file.to_string()).unwrap();
    std::fs::write(&slower, common::jmh::worse(&file).to_string()).unwrap();
    let compare = |current: &Path| {
        Command::new(env!("CARGO_BIN_EXE_benchgate"))
            .args(["compare", "--config", "benchgate.toml", "--baseline"])
            .arg(&base)
            .arg("--current")
            .arg(current)
            .current_dir(p)
            .output()
            .unwrap()
    };
    let out = compare(&slower);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("jmh.ops_per_s"), "{}", text(&out));
    let out = compare(&base);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    for name in PR_MAIN {
        let yml = std::fs::read_to_string(p.join(".github/workflows").join(name)).unwrap();
        let java = yml.find("- uses: actions/setup-java@").unwrap();
        let jmh = yml
            .find("run: mvn -B package && java -jar target/benchmarks.jar -f 4 -rf json -rff jmh.json\n")
            .unwrap_or_else(|| panic!("{name}: no JMH step:\n{yml}"));
        let action = yml.find("- uses: OWNER/benchgate@").unwrap();
        assert!(java < jmh && jmh < action, "{name}:\n{yml}");
        assert!(
            yml.contains("          results-path: jmh.json   #"),
            "{name}:\n{yml}"
        );
    }
    // --kind jmh in a directory without a pom.xml.
    let empty = tempfile::tempdir().unwrap();
    let out = init(empty.path(), &["--kind", "jmh"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let config = std::fs::read_to_string(empty.path().join("benchgate.toml")).unwrap();
    assert!(config.contains("[jmh]"), "{config}");
}

/// Issue 54, point 3: the built-in clients are the same at every commit, so
/// the empty repository's kit writes no pull-request workflow (it wrote one
/// that could only measure the runner's noise) and says why: a baseline on
/// every push to main and a nightly comparison with it, the runner watched.
#[test]
fn the_built_in_kit_has_no_pull_request_workflow_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let out = init(dir.path(), &["--workflow"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let workflows = dir.path().join(".github/workflows");
    for e in std::fs::read_dir(&workflows).unwrap() {
        let yml = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!yml.contains("pull_request"), "{yml}");
    }
    let nightly = std::fs::read_to_string(workflows.join("benchgate-nightly.yml")).unwrap();
    assert!(
        nightly.contains("  schedule:\n    - cron: ")
            && nightly.contains("same at every commit")
            && nightly.contains("noise"),
        "{nightly}"
    );
    let config = std::fs::read_to_string(dir.path().join("benchgate.toml")).unwrap();
    assert!(
        config.contains("same at every commit") && !config.contains("a pull request compares"),
        "{config}"
    );
}

/// Issue 54, point 3: each command kit's workflows set up its runtime before
/// benchgate builds and runs the client, the Node kit's too (it had no
/// setup-node and ran on whatever Node the runner image has).
#[test]
fn the_workflows_set_up_the_kits_runtime() {
    for (marker, action, version) in [
        ("pom.xml", "actions/setup-java@", "java-version: \"21\""),
        (
            "build.gradle",
            "actions/setup-java@",
            "java-version: \"21\"",
        ),
        (
            "pyproject.toml",
            "actions/setup-python@",
            "python-version: \"3.12\"",
        ),
        (
            "package.json",
            "actions/setup-node@",
            "node-version: \"24\"",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(marker), "").unwrap();
        assert_eq!(init(dir.path(), &["--workflow"]).status.code(), Some(0));
        for name in ["benchgate-pr.yml", "benchgate-main.yml"] {
            let yml =
                std::fs::read_to_string(dir.path().join(".github/workflows").join(name)).unwrap();
            let setup = yml.find(&format!("- uses: {action}"));
            let benchgate = yml.find("- uses: OWNER/benchgate@").unwrap();
            assert!(
                setup.is_some_and(|s| s < benchgate) && yml.contains(version),
                "{marker} {name}: no {action} step before benchgate's:\n{yml}"
            );
        }
    }
}

/// Issue 54, point 3: `--dir client --workflow` in a repository writes the
/// workflows where GitHub reads them, in .github/workflows/ at the
/// repository's root (it wrote client/.github/workflows/), with their paths
/// pointing into client/; the rest of the kit goes into client/.
#[test]
fn the_workflows_of_a_project_in_a_subdirectory_go_to_the_repository_root() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "."]);
    let client = repo.path().join("client");
    std::fs::create_dir(&client).unwrap();
    std::fs::write(client.join("pom.xml"), "").unwrap();
    // --dir as a user gives it: relative to where benchgate runs.
    let out = Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .args(["init", "--dir", "client", "--workflow"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("client/benchgate.toml")
            && stdout.contains(".github/workflows/benchgate-pr.yml")
            && stdout.contains("cd client && benchgate run --compare-base HEAD"),
        "{stdout}"
    );
    assert!(!client.join(".github").exists(), "{stdout}");
    for file in ["benchgate.toml", "bench/build.sh", "bench/run.sh"] {
        assert!(client.join(file).is_file(), "no client/{file}: {stdout}");
    }
    Suite::from_file(&client.join("benchgate.toml")).unwrap();
    for name in ["benchgate-pr.yml", "benchgate-main.yml"] {
        let path = repo.path().join(".github/workflows").join(name);
        let yml = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{stdout}", path.display()));
        assert!(
            yml.contains("          working-directory: client   # ")
                && yml.contains("          config: benchgate.toml\n"),
            "{name}:\n{yml}"
        );
    }
    let pr =
        std::fs::read_to_string(repo.path().join(".github/workflows/benchgate-pr.yml")).unwrap();
    assert!(
        pr.contains(
            "            client/benchgate-results.json\n            client/benchgate-report.md\n"
        ),
        "{pr}"
    );
}

/// Issue 54, point 3: the Gradle kit gives a recipe for the runtime classpath
/// (the project's classes and every dependency's jar), as the Maven kit does
/// with dependency:build-classpath: an init script, so the build is left as it
/// is, and the bench/build.sh line that runs it.
#[test]
fn the_gradle_kit_has_a_runtime_classpath_recipe() {
    for marker in ["build.gradle", "build.gradle.kts", "settings.gradle"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(marker), "").unwrap();
        assert_eq!(init(dir.path(), &[]).status.code(), Some(0), "{marker}");
        let build = std::fs::read_to_string(dir.path().join("bench/build.sh")).unwrap();
        assert!(
            build.contains(
                "#   CP=$(./gradlew -q --init-script bench/classpath.gradle benchgateClasspath)"
            ),
            "{marker}: {build}"
        );
        let script = std::fs::read_to_string(dir.path().join("bench/classpath.gradle"))
            .unwrap_or_else(|e| panic!("{marker}: bench/classpath.gradle: {e}"));
        assert!(
            script.contains("tasks.register('benchgateClasspath')")
                && script.contains("sourceSets.main.runtimeClasspath")
                && script.contains("println classpath.asPath"),
            "{marker}: {script}"
        );
    }
    // The Maven kit has its own recipe and no Gradle file.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pom.xml"), "").unwrap();
    assert_eq!(init(dir.path(), &[]).status.code(), Some(0));
    assert!(!dir.path().join("bench/classpath.gradle").exists());
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

/// One kit measured as its next steps say, at a time (two runs would share 2 cores).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

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

/// The kit for `marker` in a new directory, `prepare`d, committed as the
/// repository's only commit.
fn committed_kit(marker: &str, prepare: impl Fn(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(marker), "").unwrap();
    let out = init(p, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    prepare(p);
    git(p, &["init", "-q", "."]);
    git(p, &["add", "-A"]);
    git(p, &["commit", "-qm", "kit"]);
    dir
}

/// `benchgate run ARGS` in `dir` for one short round of one scenario, in CI
/// (a line per trial), writing `dir`/results.json.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .arg("run")
        .args(args)
        .args([
            "--rounds",
            "1",
            "--budget",
            "1s",
            "--scenario",
            "get-22b-c10",
        ])
        .arg("--out")
        .arg(dir.join("results.json"))
        .current_dir(dir)
        .env("CI", "true")
        .output()
        .unwrap()
}

/// The kit for `marker`, its harness put in bench/ by `prepare`, committed, then
/// `benchgate run --compare-base HEAD` (init's next step) for one short round:
/// both sides (built by `setup` in their own trees) measure with no failed trial.
/// `windows`: how many windows each fork measured (the Java kit's harness
/// speaks the window loop; 0: one window, no loop).
fn kit_measures(marker: &str, client: &str, windows: u32, prepare: impl Fn(&Path)) {
    let dir = committed_kit(marker, prepare);
    let p = dir.path();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let results = p.join("results.json");
    let out = run_in(p, &["--compare-base", "HEAD", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = benchgate::results::RunResults::read(&results).unwrap();
    for name in [client.to_string(), format!("{client}@base")] {
        let c = r
            .cell_at("get-22b-c10", &name, None)
            .unwrap_or_else(|| panic!("no cell {name}"));
        assert!(!c.trials.is_empty(), "{name}: no trial");
        for t in &c.trials {
            assert_eq!(t.failure, None, "{name}: the trial failed");
            assert!(
                t.metrics.as_ref().is_some_and(|m| m.ok > 0),
                "{name}: no request"
            );
            let count = t.windows.as_ref().map_or(0, |w| w.count);
            assert_eq!(count, windows, "{name}: windows of its fork");
        }
    }
}

#[test]
fn the_java_kit_builds_and_measures_at_base_and_head() {
    kit_measures("pom.xml", "java-client", 4, |p| {
        ok(
            "sh harness/java/build.sh (needs a JDK and libhdrhistogram-java)",
            Command::new("sh").arg(Path::new(ROOT).join("harness/java/build.sh")),
        );
        let lib = p.join("bench/lib");
        std::fs::create_dir(&lib).unwrap();
        for jar in [
            Path::new(ROOT).join("harness/java/out/benchgate-harness.jar"),
            Path::new("/usr/share/java/hdrhistogram.jar").to_path_buf(),
        ] {
            std::fs::copy(&jar, lib.join(jar.file_name().unwrap()))
                .unwrap_or_else(|e| panic!("{}: {e}", jar.display()));
        }
    });
}

/// A Java program that already speaks benchgate's protocol without the
/// harness: a black box (no result file) that keeps sending the scenario's
/// GETs for the warmup and the duration, measured from the server's side.
const OWN_CLIENT: &str = r#"import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;

public final class Own {
    public static void main(String[] args) throws Exception {
        long ms = Long.parseLong(System.getenv("BENCHGATE_WARMUP_MS"))
                + Long.parseLong(System.getenv("BENCHGATE_DURATION_MS")) + 500;
        long end = System.nanoTime() + ms * 1_000_000L;
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(System.getenv("BENCHGATE_URL"))).build();
        Thread[] workers = new Thread[Integer.parseInt(System.getenv("BENCHGATE_CONCURRENCY"))];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        client.send(request, BodyHandlers.discarding());
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            workers[i].start();
        }
        for (Thread w : workers) {
            w.join();
        }
    }
}
"#;

/// Issue 54, point 3: the Java kit's path for a program that already speaks
/// the protocol, as bench/run.sh describes it (its main class named there,
/// QuickStart.java deleted), builds and measures with no jar in bench/lib/.
#[test]
fn the_java_kit_runs_a_program_of_its_own_without_the_harness_jars() {
    // Offered the loop, it never declares it: one window per fork.
    kit_measures("pom.xml", "java-client", 0, |p| {
        std::fs::remove_file(p.join("bench/QuickStart.java")).unwrap();
        std::fs::write(p.join("bench/Own.java"), OWN_CLIENT).unwrap();
        let run = p.join("bench/run.sh");
        let text = std::fs::read_to_string(&run).unwrap();
        assert!(text.contains("\nmain=QuickStart\n"), "{text}");
        std::fs::write(&run, text.replace("\nmain=QuickStart\n", "\nmain=Own\n")).unwrap();
        assert!(!p.join("bench/lib").exists());
    });
}

#[test]
fn the_node_kit_builds_and_measures_at_base_and_head() {
    kit_measures("package.json", "node-client", 0, |p| {
        // Node reads the project's package.json when bench/quickstart.mjs imports.
        std::fs::write(
            p.join("package.json"),
            r#"{"name": "app", "version": "1.0.0"}"#,
        )
        .unwrap();
        ok(
            "npm pack of harness/node (needs node and npm)",
            Command::new("npm")
                .args(["pack", "--silent", "--pack-destination"])
                .arg(p.join("bench"))
                .arg(Path::new(ROOT).join("harness/node")),
        );
    });
}

/// Issue 54, point 3: the Java kit run before its harness jars are in bench/lib
/// stops before measuring, with build.sh's message once (it was a failed trial
/// per round and side, exit 1 as if the gate had failed): exit 2, no trial, no
/// results file.
#[test]
fn a_kit_without_its_harness_stops_once_before_measuring() {
    let dir = committed_kit("pom.xml", |_| {});
    let p = dir.path();
    let out = run_in(p, &["--compare-base", "HEAD"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert_eq!(all.matches("bench/build.sh: ").count(), 1, "{all}");
    assert!(
        all.contains("client \"java-client\" cannot run, so nothing was measured"),
        "{all}"
    );
    assert!(!all.contains("round 1/"), "a trial ran: {all}");
    assert!(!p.join("results.json").exists(), "{all}");
}

/// Issue 54, point 3: `benchgate run` in a repository of one commit, where the
/// kit's base (`HEAD^`) cannot exist, says so and gives the command that works
/// there (it said to fetch HEAD^); a repository with no commit says to commit.
#[test]
fn a_repository_of_one_commit_gets_advice_that_works_there() {
    let dir = committed_kit("pom.xml", |_| {});
    let out = run_in(dir.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr.contains("first commit") && stderr.contains("--compare-base HEAD`"),
        "{stderr}"
    );
    assert!(!stderr.contains("fetch"), "{stderr}");

    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("pom.xml"), "").unwrap();
    assert_eq!(init(empty.path(), &[]).status.code(), Some(0));
    git(empty.path(), &["init", "-q", "."]);
    let out = run_in(empty.path(), &["--compare-base", "HEAD"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr.contains("no commit yet") && stderr.contains("git commit"),
        "{stderr}"
    );
}
