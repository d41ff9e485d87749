//! The composite action's steps on the runner (action.yml): `benchgate action
//! --step lookup`, `--step measure` (no token), `--step publish`, as the
//! composite runs them, one process each, with state passed through files.
//!
//! Checks that the three steps do what `--step all` does (a push stores a
//! baseline; a pull request compares with it and gates), that the process
//! running the benchmarked programs holds no credential, neither in its own
//! environment nor in what its children can read from `/proc/<ppid>/environ`,
//! and that a missing config is refused while `config: builtin` is not.

use crate::common;

use std::path::{Path, PathBuf};

use benchgate::baseline::{BaselineStore, LocalStore};
use common::action_env::{self, event_fixture, ActionEnv, ActionFiles, ActionRun};

const TOKEN: &str = "ghs_benchgateStepsToken0123456789";
const AWS_SECRET: &str = "awsSecretNeverInTheMeasureStep42";
const BASE_SHA: &str = "1111111111111111111111111111111111111111";

/// One command client that records its own environment and its parent's
/// (benchgate's) as `/proc` shows it, then answers as a black box.
fn suite(dump: &Path) -> String {
    format!(
        r#"
[run]
rounds = 2
warmup = "10ms"
duration = "100ms"
pin = false

[[client]]
name = "probe"
kind = "command"
command = ["sh", "-c", "env > '{dump}.self'; tr '\\0' '\\n' < /proc/$PPID/environ > '{dump}.parent'; exec bash '{curl}'"]

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
"#,
        dump = dump.display(),
        curl = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/clients/curl.sh")
            .display()
    )
}

struct Runner {
    env: ActionEnv,
}

impl Runner {
    fn new() -> Runner {
        let r = Runner {
            env: ActionEnv::new("workspace"),
        };
        std::fs::write(
            r.workspace().join("benchgate.toml"),
            suite(&r.dump_prefix()),
        )
        .unwrap();
        r
    }
    fn workspace(&self) -> PathBuf {
        self.env.workspace()
    }
    fn dump_prefix(&self) -> PathBuf {
        self.env.file("env")
    }
    fn store(&self) -> LocalStore {
        LocalStore::new(self.workspace().join(".baselines"))
    }

    /// One step, with the environment a composite step would have: the
    /// runner's `GITHUB_*`, the step's `INPUT_*`, plus `extra` (a job-level
    /// `GITHUB_TOKEN`, say).
    fn step(
        &self,
        step: &str,
        event: &str,
        fixture: &str,
        git_ref: &str,
        extra: &[(&str, &str)],
    ) -> ActionRun {
        let files = ActionFiles::new(&self.env, &format!("output-{step}"), "summary");
        let mut cmd = self
            .env
            .command(event, &event_fixture(fixture), "octo/app", &files);
        cmd.args(["--step", step])
            .env("GITHUB_REF", git_ref)
            .env("GITHUB_SHA", BASE_SHA)
            .env("GITHUB_RUN_ID", "77")
            .env("GITHUB_API_URL", "http://127.0.0.1:9")
            .env("INPUT_BASELINE_STORE", "local:.baselines")
            .env("INPUT_COMMENT", "never");
        if step != "measure" {
            cmd.env("INPUT_GITHUB_TOKEN", TOKEN);
        }
        let run = action_env::run(cmd, extra, &files);
        let all = format!("{}{}", run.log(), run.outputs);
        assert!(!all.contains(AWS_SECRET), "secret printed: {all}");
        run
    }

    /// lookup, measure, publish; each must succeed but the last, whose
    /// exit code is returned with its run.
    fn three_steps(&self, event: &str, fixture: &str, git_ref: &str) -> ActionRun {
        // A job-level GITHUB_TOKEN (and a copy of it under an innocent name)
        // and AWS keys are in every step's environment.
        let job_env = [
            ("GITHUB_TOKEN", TOKEN),
            ("MY_PAT", TOKEN),
            ("AWS_SECRET_ACCESS_KEY", AWS_SECRET),
        ];
        for step in ["lookup", "measure"] {
            let run = self.step(step, event, fixture, git_ref, &job_env);
            assert_eq!(run.code(), 0, "step {step}: {}", run.log());
        }
        self.step("publish", event, fixture, git_ref, &job_env)
    }

    /// What the benchmarked program saw: its environment and benchgate's.
    fn dumped(&self) -> String {
        let p = self.dump_prefix();
        let own = std::fs::read_to_string(p.with_extension("self")).expect("the client ran");
        let parent = std::fs::read_to_string(p.with_extension("parent")).unwrap();
        assert!(own.contains("BENCHGATE_URL="), "{own}");
        assert!(parent.contains("GITHUB_WORKSPACE="), "{parent}");
        format!("{own}\n{parent}")
    }
}

#[test]
fn three_steps_store_a_baseline_then_gate_a_pull_request_with_no_secret_in_the_measuring_process() {
    let r = Runner::new();
    let push = r.three_steps("push", "push_main.json", "refs/heads/main");
    assert_eq!(push.code(), 0, "{}", push.log());
    assert_eq!(
        r.store().history("main").unwrap().len(),
        1,
        "{}",
        push.log()
    );
    assert_eq!(push.output("verdict").as_deref(), Some("no_baseline"));
    let seen = r.dumped();
    for secret in [TOKEN, AWS_SECRET] {
        assert!(
            !seen.contains(secret),
            "the measured program saw a secret:\n{seen}"
        );
    }
    assert!(!seen.contains("GITHUB_TOKEN=") && !seen.contains("AWS_SECRET_ACCESS_KEY="));

    let pr = r.three_steps("pull_request", "pull_request.json", "refs/pull/42/merge");
    assert_eq!(r.store().history("main").unwrap().len(), 1, "a PR stored");
    // 2 rounds against 2 can decide nothing: said as such, never a pass.
    let verdict = pr.output("verdict");
    assert_eq!(verdict.as_deref(), Some("inconclusive"), "{}", pr.log());
    // The publish step compared with the baseline the lookup step found.
    let report = PathBuf::from(pr.output("report-path").unwrap());
    let text = std::fs::read_to_string(report).unwrap();
    assert!(text.contains("`111111111111` of main"), "{text}");
    let seen = r.dumped();
    assert!(
        !seen.contains(TOKEN) && !seen.contains(AWS_SECRET),
        "{seen}"
    );
}

#[test]
fn the_measure_step_refuses_a_token_input_and_publish_needs_the_measured_results() {
    let r = Runner::new();
    let run = r.step(
        "measure",
        "push",
        "push_main.json",
        "refs/heads/main",
        &[("INPUT_GITHUB_TOKEN", TOKEN)],
    );
    // The token input is a credential: benchgate re-executes without it, so
    // the step sees none and runs; the lookup file is missing, though.
    assert_eq!(run.code(), 2, "{}", run.log());
    let err = String::from_utf8_lossy(&run.output.stderr);
    assert!(err.contains("without 1 variable(s)"), "{err}");
    assert!(err.contains("--step lookup"), "{err}");

    let publish = r.step(
        "publish",
        "schedule",
        "schedule.json",
        "refs/heads/main",
        &[],
    );
    assert_eq!(publish.code(), 2, "{}", publish.log());
    assert!(
        String::from_utf8_lossy(&publish.output.stderr).contains("--step lookup"),
        "{}",
        publish.log()
    );
}

#[test]
fn a_missing_config_is_an_error_and_builtin_is_asked_for() {
    let r = Runner::new();
    std::fs::remove_file(r.workspace().join("benchgate.toml")).unwrap();
    let run = r.step("all", "push", "push_main.json", "refs/heads/main", &[]);
    assert_eq!(run.code(), 2, "{}", run.log());
    let err = String::from_utf8_lossy(&run.output.stderr);
    assert!(
        err.contains("benchgate.toml does not exist") && err.contains("config: builtin"),
        "{err}"
    );
    assert!(
        r.store().history("main").unwrap().is_empty(),
        "stored a baseline"
    );

    let run = r.step(
        "lookup",
        "push",
        "push_main.json",
        "refs/heads/main",
        &[("INPUT_CONFIG", "builtin")],
    );
    assert_eq!(run.code(), 0, "{}", run.log());
}

/// The workspace's owner in the container test: an unprivileged user, as the
/// runner's workspace mounted into a container action is.
const RUNNER_UID: u32 = 1001;

/// A command client that records, for every ancestor up to PID 1, whether it
/// could read that process's `/proc/<pid>/environ`, and everything it read.
fn ancestors_suite(dump: &Path, curl: &Path) -> String {
    let script = format!(
        r#"d='{dump}'; id -u > "$d.uid"; : > "$d.seen"; p=$PPID
while [ "$p" -ge 1 ]; do
  if tr '\0' '\n' < /proc/$p/environ >> "$d.seen" 2>/dev/null; then echo "$p read" >> "$d.ancestors"; else echo "$p denied" >> "$d.ancestors"; fi
  [ "$p" -eq 1 ] && break
  p=$(awk '/^PPid:/ {{print $2}}' /proc/$p/status)
done
env >> "$d.seen"
exec bash '{curl}'"#,
        dump = dump.display(),
        curl = curl.display()
    );
    format!(
        r#"
[run]
rounds = 1
warmup = "10ms"
duration = "100ms"
pin = false

[[client]]
name = "probe"
kind = "command"
command = ["sh", "-c", {script:?}]

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
"#
    )
}

/// The container's single step (`benchgate action`, as the image's
/// entrypoint runs it, as root, the workspace owned by the runner's user):
/// the measure step runs as the workspace's owner without the token, and no
/// process the benchmarked program can see, its parents up to PID 1
/// included, shows it the token.
#[test]
fn the_container_step_measures_as_the_workspace_owner_and_no_ancestor_shows_the_token() {
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // The switch needs root, as the container has; CI runs as root.
        eprintln!("skipped: needs root to switch the measuring user");
        return;
    }
    let env = ActionEnv::new("workspace");
    // benchgate and the client's script where the runner's user can reach
    // them (the checkout may sit below a directory only root may enter).
    let bin = env.file("benchgate");
    std::fs::copy(common::exe(), &bin).unwrap();
    let curl = env.file("curl.sh");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/clients/curl.sh"),
        &curl,
    )
    .unwrap();
    let dump = env.workspace().join("dump");
    std::fs::write(
        env.workspace().join("benchgate.toml"),
        ancestors_suite(&dump, &curl),
    )
    .unwrap();
    let files = ActionFiles::new(&env, "output", "summary");
    let template = env.command("push", &event_fixture("push_main.json"), "octo/app", &files);
    let mut cmd = std::process::Command::new(&bin);
    cmd.args(template.get_args())
        .env_clear()
        .current_dir(template.get_current_dir().unwrap());
    for (k, v) in template.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.env("GITHUB_REF", "refs/heads/main")
        .env("GITHUB_SHA", BASE_SHA)
        .env("GITHUB_RUN_ID", "77")
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .env("INPUT_BASELINE_STORE", "local:.baselines")
        .env("INPUT_COMMENT", "never")
        .env("INPUT_GITHUB-TOKEN", TOKEN)
        .env("MY_PAT", TOKEN);
    // The runner's directory as GitHub mounts it: the workspace and the file
    // commands belong to the runner's user.
    std::fs::set_permissions(
        env.dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    for path in [env.workspace(), files.output.clone(), files.summary.clone()] {
        chown_tree(&path, RUNNER_UID);
    }
    let run = action_env::run(cmd, &[], &files);
    assert_eq!(run.code(), 0, "{}", run.log());
    let log = run.log();
    assert!(
        log.contains(&format!("the measure step runs as uid {RUNNER_UID}")),
        "{log}"
    );
    run.assert_only_masked(TOKEN);
    let read = |ext: &str| std::fs::read_to_string(dump.with_extension(ext)).unwrap();
    let seen = read("seen");
    assert!(seen.contains("BENCHGATE_URL="), "{seen}");
    assert!(
        !seen.contains(TOKEN),
        "the benchmarked program read the token:\n{seen}"
    );
    assert_eq!(read("uid").trim(), RUNNER_UID.to_string());
    // It read its parent (the measure step, its own user) and was refused
    // the token holder (root, non-dumpable) and the processes above it.
    let ancestors = read("ancestors");
    let lines: Vec<&str> = ancestors.lines().collect();
    assert!(lines[0].ends_with(" read"), "{ancestors}");
    assert!(lines.iter().any(|l| l.ends_with(" denied")), "{ancestors}");
    let stored = LocalStore::new(env.workspace().join(".baselines"));
    assert_eq!(stored.history("main").unwrap().len(), 1, "{log}");
}

fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), uid);
        }
    }
}

#[test]
fn a_binary_still_open_for_writing_is_run_once_it_is_closed() {
    // The race the container step's test met, made certain: the file is
    // still open for writing when the run starts, and closed 200 ms later.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("busy.sh");
    let mut writer = std::fs::File::create(&script).unwrap();
    std::io::Write::write_all(&mut writer, b"#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let busy = std::process::Command::new(&script).output();
    assert_eq!(
        busy.map(|_| ()).map_err(|e| e.kind()),
        Err(std::io::ErrorKind::ExecutableFileBusy),
        "exec of a file open for writing"
    );
    let closer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(writer);
    });
    let out = action_env::output_when_not_busy(&mut std::process::Command::new(&script));
    closer.join().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
}
