//! The harness packages installed as their docs say (issue 32): the install block
//! after each quick start in docs/external-clients.md (the same text in the
//! harness's README) runs as it is, with `sh -eu`, in a new temporary project with
//! `$BENCHGATE` set to this repository; then that project's copy of the quick start
//! runs through `benchgate run` with the block's `command`, and no trial fails.
//! Node also: an install by path (a symlink) runs the same way, and the harness's
//! own `npm test` passes in a copy without node_modules, as in a fresh clone.
//!
//! Needs python3 with venv, node and npm, a JDK and Debian's libhdrhistogram-java
//! (scripts/install-test-deps.sh). The Python install fetches hdrhistogram, and
//! setuptools to build, from PyPI (pip's cache: target/tmp/harness-install-pip-cache);
//! nothing else leaves the machine.

use crate::common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Instant;

use common::{cell, run_config};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One `benchgate run` at a time (the installs overlap; two runs would share 2 cores).
static SERIAL: Mutex<()> = Mutex::new(());

/// A harness: its directory, the quick start (file, code fence language) and the
/// `command` its install block names.
struct Harness {
    dir: &'static str,
    quickstart: &'static str,
    lang: &'static str,
    command: &'static str,
}

const PYTHON: Harness = Harness {
    dir: "harness/python",
    quickstart: "quickstart.py",
    lang: "python",
    command: r#"[".venv/bin/python", "quickstart.py"]"#,
};
const NODE: Harness = Harness {
    dir: "harness/node",
    quickstart: "quickstart.mjs",
    lang: "js",
    command: r#"["node", "quickstart.mjs"]"#,
};
const JAVA: Harness = Harness {
    dir: "harness/java",
    quickstart: "QuickStart.java",
    lang: "java",
    command: r#"["java", "-cp", "classes:lib/*", "QuickStart"]"#,
};

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap()
}

/// The ```sh block right after the quick start in docs/external-clients.md; the
/// harness's README shows it too, and it names the client's `command`.
fn install_block(h: &Harness) -> String {
    let doc = read("docs/external-clients.md");
    let file = format!("{}/examples/{}", h.dir, h.quickstart);
    let opening = format!("```{}\n{}```\n\n```sh\n", h.lang, read(&file));
    let at = doc.find(&opening).unwrap_or_else(|| {
        panic!("docs/external-clients.md: {file} as it is, then its install block (```sh)")
    });
    let rest = &doc[at + opening.len()..];
    let block = &rest[..rest.find("```").unwrap()];
    assert!(
        block.contains(&format!("# benchgate.toml: command = {}\n", h.command)),
        "{file}'s install block names the command {}:\n{block}",
        h.command
    );
    let readme = format!("{}/README.md", h.dir);
    assert!(
        read(&readme).contains(&format!("```sh\n{block}```")),
        "{readme} shows the install block of docs/external-clients.md:\n{block}"
    );
    block.to_string()
}

/// Fails (never skips) when a tool the docs need is missing.
fn require(what: &str, cmd: &mut Command) {
    let ok = cmd.output().is_ok_and(|o| o.status.success());
    assert!(ok, "{what} is missing; run scripts/install-test-deps.sh");
}

fn ok(what: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{what}: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A new project directory (`my-project` in a temporary one: npm takes its name)
/// holding a copy of the harness's quick start.
struct Project(tempfile::TempDir);

impl Project {
    fn new(h: &Harness) -> Project {
        let p = Project(tempfile::tempdir().unwrap());
        std::fs::create_dir(p.path()).unwrap();
        let from = Path::new(ROOT)
            .join(h.dir)
            .join("examples")
            .join(h.quickstart);
        std::fs::copy(from, p.path().join(h.quickstart)).unwrap();
        p
    }

    fn path(&self) -> PathBuf {
        self.0.path().join("my-project")
    }
}

/// Runs a doc's install block with `sh -eu` in `project`, `$BENCHGATE` this repository.
fn install(h: &Harness, project: &Path, env: &[(&str, &OsStr)]) {
    let t = Instant::now();
    let mut sh = Command::new("sh");
    sh.args(["-euc", &install_block(h)])
        .current_dir(project)
        .env("BENCHGATE", ROOT);
    sh.envs(env.iter().copied());
    ok(&format!("{}'s install block", h.dir), sh.output().unwrap());
    eprintln!("{}: installed in {:.1}s", h.dir, t.elapsed().as_secs_f64());
}

/// Each (name, project, command) runs its quick start through `benchgate run`: no
/// failed trial, every measured request answered, a latency histogram.
fn measure(clients: &[(&str, &Path, &str)]) {
    let mut toml = String::from(
        "[run]\nrounds = 1\nwarmup = \"1s\"\nduration = \"1s\"\n\n\
         [[scenario]]\nname = \"closed\"\npath = \"/bytes/22\"\nconcurrency = 2\n",
    );
    for (name, dir, command) in clients {
        toml += &format!(
            "\n[[client]]\nname = {name:?}\nkind = \"command\"\ncwd = {:?}\ncommand = {command}\ntimeout = \"60s\"\n",
            dir.to_str().unwrap()
        );
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = Instant::now();
    let run = run_config(&toml, &[]);
    let r = run.results();
    for (name, ..) in clients {
        let c = cell(&r, "closed", name);
        assert!(!c.trials.is_empty(), "{name}: no trial");
        for t in &c.trials {
            assert_eq!(t.failure, None, "{name}: the trial failed");
            let m = t.metrics.as_ref().unwrap();
            assert!(m.requests >= 50, "{name}: {} requests", m.requests);
            assert_eq!(m.ok, m.requests, "{name}: every request answered 200");
        }
        assert!(c.histogram.is_some(), "{name}: a latency histogram");
    }
    eprintln!("measured in {:.1}s", t.elapsed().as_secs_f64());
}

#[test]
fn python_harness_installs_with_pip_into_a_venv_and_runs() {
    require(
        "python3 with venv and ensurepip (Debian: python3-venv)",
        Command::new("python3").args(["-c", "import venv, ensurepip"]),
    );
    let p = Project::new(&PYTHON);
    // pip's cache outlives the test (where the registry's responses may be cached).
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("harness-install-pip-cache");
    install(&PYTHON, &p.path(), &[("PIP_CACHE_DIR", cache.as_os_str())]);
    measure(&[("python", &p.path(), PYTHON.command)]);
}

/// Nothing from the registry: no audit, no funding or update notices.
const NPM_QUIET: [(&str, &str); 3] = [
    ("npm_config_audit", "false"),
    ("npm_config_fund", "false"),
    ("npm_config_update_notifier", "false"),
];

fn npm() -> Command {
    let mut npm = Command::new("npm");
    npm.envs(NPM_QUIET);
    npm
}

/// A new npm project: package.json from `npm init -y`, its cache beside it.
fn npm_project() -> (Project, tempfile::TempDir) {
    let (p, cache) = (Project::new(&NODE), tempfile::tempdir().unwrap());
    ok(
        "npm init -y",
        npm()
            .args(["init", "-y"])
            .current_dir(p.path())
            .env("npm_config_cache", cache.path())
            .output()
            .unwrap(),
    );
    (p, cache)
}

#[test]
fn node_harness_installs_packed_or_by_path_and_runs() {
    require("node", Command::new("node").arg("--version"));
    require("npm", npm().arg("--version"));
    // As the docs say: npm pack, then npm install of the tarball.
    let (packed, cache) = npm_project();
    let mut env: Vec<(&str, &OsStr)> = NPM_QUIET.map(|(k, v)| (k, OsStr::new(v))).to_vec();
    env.push(("npm_config_cache", cache.path().as_os_str()));
    install(&NODE, &packed.path(), &env);
    let installed = packed.path().join("node_modules/benchgate-harness");
    assert!(
        installed.join("src/index.js").is_file() && !installed.is_symlink(),
        "the tarball installs a copy: {}",
        installed.display()
    );
    // By path: a symlink to harness/node, which runs as the package has no dependencies.
    let (linked, cache) = npm_project();
    let by_path = Path::new(ROOT).join("harness/node");
    ok(
        "npm install <repo>/harness/node",
        npm()
            .arg("install")
            .arg(&by_path)
            .current_dir(linked.path())
            .env("npm_config_cache", cache.path())
            .output()
            .unwrap(),
    );
    let link = linked.path().join("node_modules/benchgate-harness");
    assert!(link.is_symlink(), "by path: a link, {}", link.display());
    measure(&[
        ("node-packed", &packed.path(), NODE.command),
        ("node-by-path", &linked.path(), NODE.command),
    ]);
}

#[test]
fn node_harness_tests_pass_in_a_fresh_clone() {
    require("npm", npm().arg("--version"));
    // harness/node as a clone has it: no node_modules, nothing installed.
    let clone = tempfile::tempdir().unwrap();
    let from = Path::new(ROOT).join("harness/node");
    for entry in ["package.json", "src", "test", "examples"] {
        ok(
            "cp",
            Command::new("cp")
                .arg("-R")
                .arg(from.join(entry))
                .arg(clone.path())
                .output()
                .unwrap(),
        );
    }
    let t = Instant::now();
    let out = ok(
        "npm test in a copy of harness/node",
        npm()
            .arg("test")
            .current_dir(clone.path())
            .output()
            .unwrap(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("# fail 0") && !stdout.contains("# pass 0"),
        "{stdout}"
    );
    eprintln!("npm test: {:.1}s", t.elapsed().as_secs_f64());
}

#[test]
fn java_harness_compiles_with_javac_and_the_jars_named_and_runs() {
    require("a JDK (javac)", Command::new("javac").arg("-version"));
    require(
        "Debian's libhdrhistogram-java (/usr/share/java/hdrhistogram.jar)",
        Command::new("test").args(["-f", "/usr/share/java/hdrhistogram.jar"]),
    );
    let p = Project::new(&JAVA);
    install(&JAVA, &p.path(), &[]);
    measure(&[("java", &p.path(), JAVA.command)]);
}
