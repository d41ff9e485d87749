//! The container contract: `benchgate action` run exactly as the container
//! runs it: environment only (`INPUT_*` in both spellings, `GITHUB_*` pointing
//! at temporary files, a `/github/workspace`-like directory), recorded event
//! payloads from `fixtures/events/`, and a local baseline store. Checks the
//! files it writes (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, the store), the
//! exit code, and that the token appears nowhere but the `::add-mask::` line.

use crate::common;

use std::path::PathBuf;

use benchgate::baseline::{BaselineStore, LocalStore};
use common::action_env::{self, event_fixture, ActionEnv, ActionFiles, ActionRun, HOSTILE};
use common::exe;

const TOKEN: &str = "ghs_benchgateTestToken0123456789";
const BASE_SHA: &str = "1111111111111111111111111111111111111111";
/// Test knob: the mock driver (see `benchgate::knobs::MOCK_LATENCIES_VAR`).
const MOCK: (&str, &str) = ("BENCHGATE_TEST_MOCK_LATENCIES_US", "2000");

/// A tiny suite: 1 client, 1 scenario, 8 rounds of 200 ms (enough to show
/// an A/A pass on a loaded machine), more within a budget while a comparison
/// made during the run is undecided.
fn suite(inject_cpu_us: u32) -> String {
    format!(
        r#"
[run]
rounds = 8
max_rounds = 16
budget = "60s"
warmup = "50ms"
duration = "200ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"
inject_cpu_us = {inject_cpu_us}

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1

# The mock driver sleeps: its CPU per request is scheduler noise (A/A runs
# measured +50% [+14%, +98%], and [-53%, +234%] under a loaded CI run), so it
# informs and does not gate: a pass could not be shown on it. The injected
# 3 ms of CPU per request is +3000%, and throughput gates it.
{gate}"#,
        gate = common::MOCK_AA_GATE
    )
}

/// A fake runner: workspace, store, output and summary files.
struct Runner {
    env: ActionEnv,
}

impl Runner {
    fn new() -> Runner {
        let r = Runner {
            env: ActionEnv::new("github/workspace"),
        };
        r.config(0);
        r
    }

    fn workspace(&self) -> PathBuf {
        self.env.workspace()
    }

    fn store(&self) -> LocalStore {
        LocalStore::new(self.workspace().join(".baselines"))
    }

    fn config(&self, inject_cpu_us: u32) {
        std::fs::write(
            self.workspace().join("benchgate.toml"),
            suite(inject_cpu_us),
        )
        .unwrap();
    }

    /// Runs `benchgate action` for `event` with `payload` and the given variables.
    fn action(&self, event: &str, payload: &str, git_ref: &str, env: &[(&str, &str)]) -> ActionRun {
        let files = ActionFiles::new(&self.env, "github_output", "step_summary");
        let mut cmd = self.env.command(event, payload, "octo/app", &files);
        cmd.env("GITHUB_REF", git_ref)
            .env("GITHUB_SHA", BASE_SHA)
            .env("GITHUB_RUN_ID", "4242")
            .env("GITHUB_API_URL", "http://127.0.0.1:9")
            .env("INPUT_BASELINE-STORE", "local:.baselines");
        let run = action_env::run(cmd, env, &files);
        run.assert_only_masked(TOKEN);
        assert!(!run.outputs.contains(TOKEN) && !run.summary.contains(TOKEN));
        run
    }
}

/// The lines of `stdout` inside its `::stop-commands::` fences and those
/// outside; panics unless there is a fence and each is opened with a random
/// `benchgate-` token and closed by a line of that same token.
fn fenced(stdout: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    let mut open: Option<String> = None;
    let mut fences = 0;
    for line in stdout.lines() {
        match &open {
            Some(token) if line == format!("::{token}::") => open = None,
            Some(_) => inside.push(line),
            None => match line.strip_prefix("::stop-commands::") {
                Some(token) => {
                    let random = token.strip_prefix("benchgate-").unwrap_or("");
                    assert!(
                        random.len() >= 32 && random.chars().all(|c| c.is_ascii_hexdigit()),
                        "fence token {token:?} is not random"
                    );
                    open = Some(token.to_string());
                    fences += 1;
                }
                None => outside.push(line),
            },
        }
    }
    assert!(open.is_none(), "a fence is never closed:\n{stdout}");
    assert!(fences > 0, "no stop-commands fence:\n{stdout}");
    (inside, outside)
}

fn pr_inputs() -> Vec<(&'static str, &'static str)> {
    vec![
        ("INPUT_GITHUB-TOKEN", TOKEN),
        ("INPUT_COMMENT", "always"),
        MOCK,
    ]
}

/// A push as large as GitHub sends them (issue 53): a 2 MiB commit message,
/// 2,048 commits listing 350 files each, 17 MB in all.
fn large_push() -> String {
    let mut push: serde_json::Value =
        serde_json::from_str(&event_fixture("push_main.json")).unwrap();
    push["head_commit"]["message"] = "m".repeat(2 << 20).into();
    let files: Vec<String> = (0..350)
        .map(|i| format!("src/module{i:03}/file.rs"))
        .collect();
    let commit = serde_json::json!({"id": "1".repeat(40), "message": "m", "modified": files});
    push["commits"] = serde_json::Value::Array(vec![commit; 2048]);
    let text = push.to_string();
    assert!(text.len() > 16_800_000);
    text
}

#[test]
fn push_stores_a_baseline_then_a_pull_request_and_a_schedule_compare_with_it() {
    let r = Runner::new();
    let push = r.action(
        "push",
        &large_push(),
        "refs/heads/main",
        &[("INPUT_GITHUB_TOKEN", TOKEN), MOCK],
    );
    assert_eq!(push.code(), 0, "{}", push.log());
    assert_eq!(r.store().history("main").unwrap().len(), 1);
    assert_eq!(push.output("verdict").as_deref(), Some("no_baseline"));
    assert!(
        push.summary.contains("none stored for main yet"),
        "{}",
        push.summary
    );
    let stdout = String::from_utf8_lossy(&push.output.stdout);
    assert!(stdout.contains("::group::benchgate run") && stdout.contains("::endgroup::"));
    // The run's log (names from the config, the rendered table) is inside a
    // stop-commands fence; outside it, only escaped annotations name them.
    let (inside, outside) = fenced(&stdout);
    assert!(
        inside
            .iter()
            .any(|l| l.contains("get-22b") && l.contains("hyper")),
        "the run's table is not fenced:\n{stdout}"
    );
    for line in outside {
        assert!(
            !(line.contains("get-22b") || line.contains("hyper")) || line.starts_with("::"),
            "unfenced untrusted text {line:?} in\n{stdout}"
        );
    }

    let pr = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
        &pr_inputs(),
    );
    assert_eq!(pr.code(), 0, "{}", pr.log());
    assert_eq!(
        r.store().history("main").unwrap().len(),
        1,
        "a PR run wrote the store"
    );
    assert_eq!(
        pr.output("verdict").as_deref(),
        Some("pass"),
        "{}",
        pr.log()
    );
    assert_eq!(pr.output("regressions").as_deref(), Some("0"));
    assert_eq!(pr.output("comment-url").as_deref(), Some(""));
    let report = PathBuf::from(pr.output("report-path").unwrap());
    assert!(std::fs::read_to_string(report)
        .unwrap()
        .contains("the stored run of commit `111111111111` of main"));
    assert!(pr.summary.contains("benchgate"), "{}", pr.summary);
    assert!(PathBuf::from(pr.output("results-path").unwrap()).exists());
    // The API is unreachable here (GITHUB_API_URL points at a closed port):
    // commenting fails after its bounded retries; that is a warning, the
    // summary has the report, and the exit code is the gate's.
    assert!(String::from_utf8_lossy(&pr.output.stdout)
        .contains("::warning title=benchgate could not comment::"));

    let cron = r.action(
        "schedule",
        &event_fixture("schedule.json"),
        "refs/heads/main",
        &[MOCK],
    );
    assert_eq!(cron.code(), 0, "{}", cron.log());
    assert!(
        cron.summary.contains("the stored run of commit"),
        "{}",
        cron.summary
    );
}

#[test]
fn a_regression_fails_the_gate_unless_fail_on_regression_is_false() {
    let r = Runner::new();
    let push = r.action(
        "push",
        &event_fixture("push_main.json"),
        "refs/heads/main",
        &[],
    );
    assert_eq!(push.code(), 0, "{}", push.log());
    r.config(3000); // the pull request burns 3 ms of CPU per request
    let env = [("INPUT_GITHUB_TOKEN", TOKEN)];
    let pr = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
        &env,
    );
    assert_eq!(pr.code(), 1, "{}", pr.log());
    assert_eq!(pr.output("verdict").as_deref(), Some("fail"));
    assert_ne!(pr.output("regressions").as_deref(), Some("0"));
    let stdout = String::from_utf8_lossy(&pr.output.stdout);
    assert!(
        stdout.contains("::error title=benchgate%3A get-22b / hyper"),
        "{stdout}"
    );

    let env = [
        ("INPUT_GITHUB_TOKEN", TOKEN),
        ("INPUT_FAIL-ON-REGRESSION", "false"),
    ];
    let pr = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
        &env,
    );
    assert_eq!(pr.code(), 0, "{}", pr.log());
    assert_eq!(pr.output("verdict").as_deref(), Some("fail"));
}

#[test]
fn no_baseline_is_a_neutral_pass() {
    let r = Runner::new();
    let pr = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
        &pr_inputs(),
    );
    assert_eq!(pr.code(), 0, "{}", pr.log());
    assert_eq!(pr.output("verdict").as_deref(), Some("no_baseline"));
    assert!(
        pr.summary.contains("none stored for main yet"),
        "{}",
        pr.summary
    );
}

#[test]
fn bad_payloads_and_inputs_exit_2_with_a_clear_message() {
    let r = Runner::new();
    let run = r.action(
        "pull_request",
        &event_fixture("malformed.json"),
        "refs/pull/1/merge",
        &pr_inputs(),
    );
    assert_eq!(run.code(), 2, "{}", run.log());
    assert!(run.log().contains("is not valid JSON"), "{}", run.log());
    let mut payload: serde_json::Value =
        serde_json::from_str(&event_fixture("pull_request.json")).unwrap();
    payload["pull_request"]["head"]["sha"] = "HEAD~1".into();
    let run = r.action(
        "pull_request",
        &payload.to_string(),
        "refs/pull/1/merge",
        &pr_inputs(),
    );
    assert_eq!(run.code(), 2, "{}", run.log());
    assert!(
        run.log()
            .contains("`pull_request.head.sha` is not a commit sha"),
        "{}",
        run.log()
    );
    let run = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "x",
        &[("INPUT_MODE", "nightly"), ("GITHUB_TOKEN", TOKEN)],
    );
    assert_eq!(run.code(), 2, "{}", run.log());
    assert!(
        String::from_utf8_lossy(&run.output.stdout)
            .contains("::error title=benchgate::input `mode`"),
        "{}",
        run.log()
    );
    let run = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "x",
        &[("INPUT_MODE", "push")],
    );
    assert_eq!(run.code(), 2);
    assert!(
        run.log().contains("never write the baseline"),
        "{}",
        run.log()
    );
}

#[test]
fn measure_then_report_refuses_an_artifact_from_another_head() {
    let r = Runner::new();
    // Fork PR, no token at all.
    let m = r.action(
        "pull_request",
        &event_fixture("pull_request_fork.json"),
        "refs/pull/43/merge",
        &[("INPUT_MODE", "measure"), MOCK],
    );
    assert_eq!(m.code(), 0, "{}", m.log());
    assert_eq!(m.output("verdict").as_deref(), Some("measured"));
    let results = PathBuf::from(m.output("results-path").unwrap());
    benchgate::results::RunResults::read(&results).unwrap();
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(results.with_file_name("benchgate-meta.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(meta["head_sha"], "3333333333333333333333333333333333333333");
    // GITHUB_SHA, which the results record as git.sha.
    assert_eq!(meta["measured_sha"], BASE_SHA);
    assert_eq!(meta["pr_number"], 43);
    // The fork's PR title is untrusted and never reaches the log as a command.
    assert!(!String::from_utf8_lossy(&m.output.stdout).contains("::set-output"));

    let mut payload: serde_json::Value =
        serde_json::from_str(&event_fixture("workflow_run.json")).unwrap();
    payload["workflow_run"]["head_sha"] = "4444444444444444444444444444444444444444".into();
    let env = [("INPUT_MODE", "report"), ("INPUT_GITHUB-TOKEN", TOKEN)];
    let rep = r.action(
        "workflow_run",
        &payload.to_string(),
        "refs/heads/main",
        &env,
    );
    assert_eq!(rep.code(), 2, "{}", rep.log());
    assert!(rep.log().contains("refusing to report it"), "{}", rep.log());
    assert!(
        rep.summary.contains("benchgate: report refused")
            && rep.summary.contains("refusing to report it"),
        "{}",
        rep.summary
    );
    payload["workflow_run"]["conclusion"] = "failure".into();
    let rep = r.action(
        "workflow_run",
        &payload.to_string(),
        "refs/heads/main",
        &env,
    );
    assert_eq!(rep.code(), 0, "{}", rep.log());
    assert_eq!(rep.output("verdict").as_deref(), Some("skipped"));
}

/// Issue 30, point 5: report mode refuses an artifact without its
/// `benchgate-meta.json`, and results whose `git.sha` is not the commit the
/// meta says was measured, saying why in the job summary, before it asks
/// GitHub for anything.
#[test]
fn report_refuses_an_artifact_without_its_meta_or_of_another_commit() {
    let r = Runner::new();
    let m = r.action(
        "pull_request",
        &event_fixture("pull_request_fork.json"),
        "refs/pull/43/merge",
        &[("INPUT_MODE", "measure"), MOCK],
    );
    assert_eq!(m.code(), 0, "{}", m.log());
    let results = PathBuf::from(m.output("results-path").unwrap());
    let meta = results.with_file_name("benchgate-meta.json");
    let report = || {
        r.action(
            "workflow_run",
            &event_fixture("workflow_run.json"),
            "refs/heads/main",
            &[("INPUT_MODE", "report"), ("INPUT_GITHUB-TOKEN", TOKEN)],
        )
    };
    // `why` in the log; `said` (no markdown-escaped characters) in the summary.
    let refused = |rep: &ActionRun, why: &str, said: &str| {
        assert_eq!(rep.code(), 2, "{}", rep.log());
        assert!(rep.log().contains(why), "{why:?} not in:\n{}", rep.log());
        assert!(
            rep.summary.contains("benchgate: report refused") && rep.summary.contains(said),
            "{said:?} not in the summary:\n{}",
            rep.summary
        );
    };

    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    // Results the reader refuses (a field over its limit): said in the summary too.
    let mut long = doc.clone();
    long["run_id"] = "7".repeat(5000).into();
    std::fs::write(&results, long.to_string()).unwrap();
    refused(
        &report(),
        "run_id has 5000 bytes, over the limit of 4096",
        "has 5000 bytes, over the limit of 4096",
    );

    doc["git"]["sha"] = "5555555555555555555555555555555555555555".into();
    std::fs::write(&results, doc.to_string()).unwrap();
    refused(
        &report(),
        &format!("the results record commit \"5555555555555555555555555555555555555555\", but {} says the measure run measured \"{BASE_SHA}\": refusing to report them", meta.display()),
        "says the measure run measured",
    );

    std::fs::remove_file(&meta).unwrap();
    refused(
        &report(),
        &format!("{} is missing (or not UTF-8 text)", meta.display()),
        "benchgate-meta.json is missing",
    );
}

/// `[compare]` in the config: the pull request is gated side by side within
/// its own run (base and head builds as two clients, paired by round); no
/// stored baseline is read or needed.
#[test]
fn a_side_by_side_config_gates_the_pull_request_within_its_own_run() {
    let r = Runner::new();
    let config = r#"
[run]
rounds = 6
warmup = "50ms"
duration = "200ms"
pin = false

[[client]]
name = "base"
kind = "hyper"

[[client]]
name = "head"
kind = "hyper"
inject_cpu_us = 3000

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
clients = ["base", "head"]

[compare]
baseline_client = "base"
"#;
    std::fs::write(r.workspace().join("benchgate.toml"), config).unwrap();
    let pr = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
        &[("INPUT_GITHUB_TOKEN", TOKEN)],
    );
    assert_eq!(pr.code(), 1, "{}", pr.log());
    assert_eq!(pr.output("verdict").as_deref(), Some("fail"));
    assert!(pr.summary.contains("side by side"), "{}", pr.summary);
    assert!(pr.summary.contains("head vs base"), "{}", pr.summary);
    assert!(
        !r.workspace().join(".baselines").exists(),
        "a pull request never writes the store"
    );
}

#[test]
fn a_pull_request_whose_every_trial_fails_fails_the_gate_with_an_error_annotation() {
    let r = Runner::new();
    let push = r.action(
        "push",
        &event_fixture("push_main.json"),
        "refs/heads/main",
        &[("INPUT_GITHUB_TOKEN", TOKEN), MOCK],
    );
    assert_eq!(push.code(), 0, "{}", push.log());
    let mut env = pr_inputs();
    env.push(("BENCHGATE_MOCK_FAIL", "panic:the client broke"));
    let pr = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
        &env,
    );
    assert_eq!(pr.code(), 1, "{}", pr.log());
    assert_eq!(
        pr.output("verdict").as_deref(),
        Some("fail"),
        "{}",
        pr.log()
    );
    let stdout = String::from_utf8_lossy(&pr.output.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("::error title=benchgate%3A get-22b / hyper failed::"))
        .unwrap_or_else(|| panic!("no error annotation for the failed cell:\n{}", pr.log()));
    assert!(line.contains("the client broke"), "{line}");
}

/// Issue 17, point 2: an error that quotes untrusted text (an input, a setup
/// log's tail) prints no line that the runner would take for a workflow
/// command, on stdout or stderr.
#[test]
fn errors_quoting_untrusted_text_print_no_workflow_command() {
    let injected = |run: &ActionRun| {
        let out = String::from_utf8_lossy(&run.output.stdout).to_string()
            + &String::from_utf8_lossy(&run.output.stderr);
        out.lines()
            .filter(|l| l.trim_start().starts_with("::warning::injected"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let r = Runner::new();
    let bad_path = "missing.toml\n::warning::injected-by-input";
    let run = r.action(
        "push",
        &event_fixture("push_main.json"),
        "refs/heads/main",
        &[("INPUT_CONFIG", bad_path), MOCK],
    );
    assert_eq!(run.code(), 2, "{}", run.log());
    assert!(run.log().contains("injected-by-input"), "{}", run.log());
    assert_eq!(injected(&run), Vec::<String>::new(), "{}", run.log());

    std::fs::write(
        r.workspace().join("benchgate.toml"),
        r#"
[run]
rounds = 1
warmup = "10ms"
duration = "50ms"

[[client]]
name = "cmd"
kind = "command"
command = ["true"]
setup = ["sh", "-c", "echo '::warning::injected-by-setup'; exit 3"]

[[scenario]]
name = "get"
path = "/bytes/22"
"#,
    )
    .unwrap();
    let run = r.action(
        "push",
        &event_fixture("push_main.json"),
        "refs/heads/main",
        &[],
    );
    // The setup failure stops the run before measuring, once: an error.
    assert_eq!(run.code(), 2, "{}", run.log());
    assert!(run.log().contains("injected-by-setup"), "{}", run.log());
    assert_eq!(injected(&run), Vec::<String>::new(), "{}", run.log());
}

/// Issue 17, point 2: a server under test whose output holds workflow
/// commands, one that exits before it is ready and one that dies while it is
/// measured: the tails of their output that the failures quote are fenced on
/// stdout and indented on stderr; no line of either stream is one of the
/// commands, outside a fence.
#[test]
fn a_server_logging_workflow_commands_prints_none() {
    let r = Runner::new();
    let toml = |s: &str| serde_json::to_string(s).unwrap();
    let log = r#"printf '%s\n' "$1"; printf '%s\n' "$1" >&2"#;
    let fails = format!("{log}; exit 3");
    let dies = format!(
        r#"{log}; exec timeout 0.5 "$0" serve --no-tls --listen 127.0.0.1:$BENCHGATE_SERVER_PORT"#
    );
    let config = format!(
        r#"
[run]
rounds = 2
warmup = "50ms"
duration = "1s"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "get"
path = "/bytes/22"

[[server]]
name = "fails"
command = ["sh", "-c", {fails}, "sh", {hostile}]

[[server]]
name = "dies"
command = ["sh", "-c", {dies}, {exe}, {hostile}]
ready_timeout = "10s"
"#,
        fails = toml(&fails),
        dies = toml(&dies),
        exe = toml(exe()),
        hostile = toml(HOSTILE),
    );
    std::fs::write(r.workspace().join("benchgate.toml"), config).unwrap();
    let run = r.action(
        "push",
        &event_fixture("push_main.json"),
        "refs/heads/main",
        &[MOCK],
    );
    // Every trial failed: the gate fails.
    assert_eq!(run.code(), 1, "{}", run.log());
    let log = run.log();
    for said in [
        "server \"fails\" exited (exit status: 3) before it was ready",
        "server \"dies\" exited (exit status: 124) while it was being measured",
        "server stdout tail",
        "server stderr tail",
        "pwned",
    ] {
        assert!(log.contains(said), "{said:?} missing:\n{log}");
    }
    assert_eq!(run.injected(), Vec::<String>::new(), "{log}");
}

/// Issue 53, point 5: a failing client's output, with terminal control
/// sequences in it (ESC, OSC 8, OSC 52, CR, BEL, C1, bidi), is relayed with
/// every control shown escaped by `benchgate action`: in its progress lines,
/// its run table, its comparison, its annotations and its error, on stdout
/// and stderr alike.
#[test]
fn a_clients_terminal_controls_are_relayed_escaped() {
    let r = Runner::new();
    std::fs::write(r.workspace().join("hostile.txt"), common::CONTROLS).unwrap();
    std::fs::write(
        r.workspace().join("benchgate.toml"),
        r#"
[run]
rounds = 1
warmup = "10ms"
duration = "100ms"

[[client]]
name = "cmd"
kind = "command"
command = ["sh", "-c", "cat hostile.txt; cat hostile.txt >&2; exit 1"]

[[scenario]]
name = "get"
path = "/bytes/22"
"#,
    )
    .unwrap();
    let run = r.action(
        "push",
        &event_fixture("push_main.json"),
        "refs/heads/main",
        &[],
    );
    // Every trial failed: the gate fails.
    assert_eq!(run.code(), 1, "{}", run.log());
    common::assert_no_raw_controls("stdout", &run.output.stdout);
    common::assert_no_raw_controls("stderr", &run.output.stderr);
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    for shown in common::CONTROLS_SHOWN {
        assert!(stderr.contains(shown), "{shown:?} missing:\n{}", run.log());
    }
}
