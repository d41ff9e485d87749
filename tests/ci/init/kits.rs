//! What each kit holds (issue 54, point 3): plain words in its config, the
//! Gradle classpath recipe, the runtime set up in the workflows, the
//! workflows at the repository's root, the JMH kit, and no pull-request
//! workflow for the built-in clients.

use std::path::Path;
use std::process::Command;

use benchgate::config::Suite;

use super::{git, init, project, text, JMH, KINDS, PR_MAIN};
use crate::common;

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
