//! The action on JMH result files (issue 31), run as the container runs it
//! (`tests/common/action_env`): a JMH-only config (no clients) makes the
//! action read `results-path`, the file the team's own JMH step wrote; a push
//! stores it in the local baseline store, `benchgate history` reads it back,
//! and a pull request compares its JMH file with it, the comment naming the
//! benchmark and the JMH unit.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use benchgate::baseline::{BaselineStore, LocalStore};
use common::action_env::{self, event_fixture, ActionEnv, ActionFiles, ActionRun};
use common::jmh::{fixture, write_worse};

const BASE_SHA: &str = "1111111111111111111111111111111111111111";
/// 1 fork of 5 iterations, AverageTime in ms/op, two benchmarks.
const JMH_FILE: &str = "nebula-client-avgt.json";
const BENCHMARK: &str = "org.example.NebulaClient5.executeWithSingleThread";

struct Runner {
    env: ActionEnv,
}

impl Runner {
    fn new(config: &str) -> Runner {
        let r = Runner {
            env: ActionEnv::new("github/workspace"),
        };
        std::fs::write(r.workspace().join("benchgate.toml"), config).unwrap();
        r
    }

    fn workspace(&self) -> PathBuf {
        self.env.workspace()
    }

    /// The JMH step: `file` written where `results-path` points.
    fn jmh_step(&self, file: &std::path::Path) {
        std::fs::copy(file, self.workspace().join("jmh.json")).unwrap();
    }

    fn action(&self, event: &str, payload: &str, git_ref: &str) -> ActionRun {
        self.action_with(event, payload, git_ref, &[])
    }

    fn action_with(
        &self,
        event: &str,
        payload: &str,
        git_ref: &str,
        env: &[(&str, &str)],
    ) -> ActionRun {
        let files = ActionFiles::new(&self.env, "github_output", "step_summary");
        let mut cmd = self.env.command(event, payload, "octo/app", &files);
        cmd.env("GITHUB_REF", git_ref)
            .env("GITHUB_SHA", BASE_SHA)
            .env("GITHUB_RUN_ID", "4242")
            .env("GITHUB_API_URL", "http://127.0.0.1:9")
            .env("INPUT_BASELINE-STORE", "local:.baselines")
            .env("INPUT_RESULTS-PATH", "jmh.json")
            .env("INPUT_COMMENT", "always");
        action_env::run(cmd, env, &files)
    }
}

#[test]
fn a_jmh_file_is_stored_on_push_read_by_history_and_compared_on_a_pull_request() {
    let r = Runner::new("[jmh]\n");
    r.jmh_step(&fixture(JMH_FILE));
    let push = r.action("push", &event_fixture("push_main.json"), "refs/heads/main");
    assert_eq!(push.code(), 0, "{}", push.log());
    assert_eq!(push.output("verdict").as_deref(), Some("no_baseline"));
    let store = LocalStore::new(r.workspace().join(".baselines"));
    let stored = store.history("main").unwrap();
    assert_eq!(stored.len(), 1, "{}", push.log());
    // The stored run is the JMH file's, with this job's commit.
    let found = store.lookup("main", BASE_SHA, &[]).unwrap().unwrap();
    assert!(found.results.jmh.is_some());
    assert_eq!(
        found.results.git.sha.as_deref(),
        Some(BASE_SHA),
        "{}",
        push.log()
    );
    assert!(found.results.cell_at(BENCHMARK, "jmh", None).is_some());

    // `benchgate history` reads the stored JMH-derived run.
    let dir = tempfile::tempdir().unwrap();
    let h = Command::new(common::exe())
        .args(["history", "--store"])
        .arg(r.workspace().join(".baselines"))
        .args(["--branch", "main", "--json"])
        .arg(dir.path().join("history.json"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&h.stdout),
        String::from_utf8_lossy(&h.stderr)
    );
    assert!(h.status.success(), "{text}");
    // Both benchmarks' AverageTime, a series each.
    assert!(
        text.contains("1 stored runs of main") && text.contains("2 series of gating metrics"),
        "{text}"
    );
    let json = std::fs::read_to_string(dir.path().join("history.json")).unwrap();
    assert!(
        json.contains(BENCHMARK) && json.contains("jmh.avgt_ns"),
        "{json}"
    );

    // The pull request's JMH step measured a twice slower head.
    r.jmh_step(&write_worse(dir.path(), JMH_FILE, 2.0));
    let pr = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
    );
    // 1 fork a side decides nothing (neutral exit 0) and says why.
    assert_eq!(pr.code(), 0, "{}", pr.log());
    assert_eq!(pr.output("verdict").as_deref(), Some("inconclusive"));
    let comment = std::fs::read_to_string(pr.output("report-path").unwrap()).unwrap();
    assert!(comment.contains(BENCHMARK), "{comment}");
    assert!(
        comment.contains("ms/op"),
        "the JMH unit is not shown:\n{comment}"
    );
    assert!(
        comment.contains("needs at least 4 forks per side"),
        "{comment}"
    );
    assert!(
        comment.contains("commit `111111111111` of main"),
        "{comment}"
    );
    assert_eq!(
        store.history("main").unwrap().len(),
        1,
        "a PR run wrote the store"
    );
}

#[test]
fn a_jmh_only_config_without_the_file_names_results_path_and_the_fix() {
    let r = Runner::new("[jmh]\n");
    let pr = r.action(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
    );
    assert_eq!(pr.code(), 2, "{}", pr.log());
    let log = pr.log();
    assert!(log.contains("input `results-path`"), "{log}");
    assert!(log.contains("-rf json -rff"), "{log}");
}

/// The shard jobs' JMH files, as download-artifact puts them below `shards/`:
/// the tkrs file's sizes split between two jobs (`sizes` each).
fn shard_jobs(r: &Runner, jobs: &[&[&str]]) {
    let all = common::jmh::read_json(&fixture("tkrs-thrpt-2-forks-gc.json"));
    for (i, sizes) in jobs.iter().enumerate() {
        let kept: Vec<serde_json::Value> = all
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| sizes.contains(&e["params"]["size"].as_str().unwrap()))
            .cloned()
            .collect();
        let dir = r.workspace().join(format!("shards/jmh-{}", i + 1));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("jmh.json"),
            serde_json::Value::Array(kept).to_string(),
        )
        .unwrap();
    }
}

#[test]
fn mode_merge_joins_the_jmh_files_of_shard_jobs_and_refuses_a_cell_twice() {
    let r = Runner::new("[jmh]\n");
    shard_jobs(&r, &[&["10", "100"], &["500"]]);
    let merge = [("INPUT_MODE", "merge"), ("INPUT_SHARDS", "shards")];
    let push = r.action_with(
        "push",
        &event_fixture("push_main.json"),
        "refs/heads/main",
        &merge,
    );
    assert_eq!(push.code(), 0, "{}", push.log());
    let store = LocalStore::new(r.workspace().join(".baselines"));
    let found = store.lookup("main", BASE_SHA, &[]).unwrap().unwrap();
    let mut cells: Vec<&str> = found
        .results
        .results
        .iter()
        .map(|c| c.scenario.as_str())
        .collect();
    cells.sort();
    assert_eq!(
        cells,
        [
            "bench.ArrayAccumulateBench.foldLeftAcc (size=10)",
            "bench.ArrayAccumulateBench.foldLeftAcc (size=100)",
            "bench.ArrayAccumulateBench.foldLeftAcc (size=500)"
        ]
    );
    assert_eq!(found.results.git.sha.as_deref(), Some(BASE_SHA));

    // Two shard jobs that both ran size=100: refused, naming both files.
    std::fs::remove_dir_all(r.workspace().join("shards")).unwrap();
    shard_jobs(&r, &[&["10", "100"], &["100", "500"]]);
    let pr = r.action_with(
        "pull_request",
        &event_fixture("pull_request.json"),
        "refs/pull/42/merge",
        &merge,
    );
    assert_eq!(pr.code(), 2, "{}", pr.log());
    let log = pr.log();
    assert!(
        log.contains("jmh-1/jmh.json") && log.contains("jmh-2/jmh.json"),
        "{log}"
    );
    assert!(
        log.contains("both hold bench.ArrayAccumulateBench.foldLeftAcc (size=100)"),
        "{log}"
    );
}
