//! The action across a matrix (issue 18, point 2), end to end against the
//! fake GitHub REST server: two shard jobs (`mode: shard`, no token, no
//! request to GitHub) and a merge job (`mode: merge`) per event. On a push
//! the merge job stores exactly one baseline holding every scenario; on a
//! pull request it compares with that baseline and writes exactly one
//! comment, also when run as the composite action's three steps. A merge
//! job missing a shard is refused by name and comments nothing.

use crate::common;
use crate::github;

use std::path::PathBuf;

use benchgate::baseline::index::{Index, V1Layout};
use benchgate::results::RunResults;
use common::action_env::{self, ActionEnv, ActionFiles, ActionRun};
use github::fake::{FakeGitHub, REPO};
use github::workflow::{add_bot_token, comments_on, event, open_pull, pr_event, stored_file};
use serde_json::Value;

const TOKEN: &str = "ghs_shardSecretToken7c1d9e2f4a6b8c0d2e4f";
const BASE_SHA: &str = "1111111111111111111111111111111111111111";
const HEAD: &str = "2222222222222222222222222222222222222222";
/// Test knob: the mock driver (see `benchgate::knobs::MOCK_LATENCIES_VAR`).
const MOCK: (&str, &str) = ("BENCHGATE_TEST_MOCK_LATENCIES_US", "2000");
/// Where the merge job's download-artifact puts the shard jobs' artifacts.
const DOWNLOADED: &str = "downloaded";

/// Two scenarios, so two shards of one each; 8 rounds to compare (enough
/// to show an A/A pass on a loaded machine).
const SUITE_RUN: &str = r#"
[run]
rounds = 8
warmup = "50ms"
duration = "150ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1

[[scenario]]
name = "get-1k"
path = "/bytes/1024"
concurrency = 1

"#;

/// The suite, under the mock's A/A gate ([`common::MOCK_AA_GATE`]).
fn suite() -> String {
    format!("{SUITE_RUN}{}", common::MOCK_AA_GATE)
}

struct Runner {
    fake: FakeGitHub,
    env: ActionEnv,
}

impl Runner {
    fn new() -> Runner {
        let fake = FakeGitHub::start();
        add_bot_token(&fake, TOKEN);
        let mut pull = open_pull(42, HEAD, REPO);
        pull["base"]["sha"] = BASE_SHA.into();
        fake.state.lock().unwrap().pulls.push(pull);
        let r = Runner {
            fake,
            env: ActionEnv::new("github/workspace"),
        };
        std::fs::write(r.env.workspace().join("benchgate.toml"), suite()).unwrap();
        r
    }

    /// `benchgate action [--step STEP]` with the environment only.
    fn action(
        &self,
        event: &str,
        payload: &Value,
        step: Option<&str>,
        env: &[(&str, &str)],
    ) -> ActionRun {
        let files = ActionFiles::new(&self.env, "github_output", "step_summary");
        let mut cmd = self.env.command(event, &payload.to_string(), REPO, &files);
        if let Some(step) = step {
            cmd.args(["--step", step]);
        }
        cmd.env("GITHUB_API_URL", &self.fake.url)
            .env("INPUT_CONFIG", "benchgate.toml")
            .env(MOCK.0, MOCK.1);
        let run = action_env::run(cmd, env, &files);
        run.assert_only_masked(TOKEN);
        run
    }

    /// The matrix: shard K/2 for K = 1, 2, each leaving its results where
    /// the merge job's download-artifact would put them; no token, and not
    /// one request to GitHub.
    fn shard_jobs(&self, event: &str, payload: &Value, context: &[(&str, &str)]) {
        self.fake.clear_requests();
        for k in 1..=2 {
            let shard = format!("{k}/2");
            let path = format!("{DOWNLOADED}/benchgate-shard-{k}/benchgate-results.json");
            let mut env = context.to_vec();
            env.extend([
                ("INPUT_MODE", "shard"),
                ("INPUT_SHARD", shard.as_str()),
                ("INPUT_RESULTS-PATH", path.as_str()),
            ]);
            let run = self.action(event, payload, None, &env);
            assert_eq!(run.code(), 0, "{}", run.log());
            assert_eq!(run.expect_output("verdict"), "measured");
            let results =
                RunResults::read(&PathBuf::from(run.expect_output("results-path"))).unwrap();
            let info = results.shard.expect("a shard records its header");
            assert_eq!((info.index, info.count), (Some(k), 2));
            assert_eq!(results.config.scenarios.len(), 1, "one scenario each");
        }
        assert!(
            self.fake.requests().is_empty(),
            "a shard job called GitHub: {:?}",
            self.fake.requests()
        );
    }
}

#[test]
fn two_shard_jobs_and_a_merge_job_store_one_baseline_and_write_one_comment() {
    let r = Runner::new();

    // (a) Push to main: the shards, then the merge job stores the baseline.
    let push = [
        ("GITHUB_REF", "refs/heads/main"),
        ("GITHUB_SHA", BASE_SHA),
        ("GITHUB_RUN_ID", "200"),
    ];
    r.shard_jobs("push", &event("push_main.json"), &push);
    let mut env = push.to_vec();
    env.extend([
        ("INPUT_MODE", "merge"),
        ("INPUT_SHARDS", DOWNLOADED),
        ("INPUT_GITHUB-TOKEN", TOKEN),
    ]);
    let merge = r.action("push", &event("push_main.json"), None, &env);
    assert_eq!(merge.code(), 0, "{}", merge.log());
    assert_eq!(merge.expect_output("verdict"), "no_baseline");
    let index = stored_file(&r.fake, "baselines/main/index.json").expect("no stored index");
    let index = Index::parse(&index, "index.json", "main", V1Layout::DataBranch).unwrap();
    assert_eq!(index.entries.len(), 1, "{index:?}");
    assert_eq!(index.entries[0].sha, BASE_SHA);
    let stored = stored_file(
        &r.fake,
        &format!("baselines/main/{}", index.entries[0].file),
    )
    .unwrap();
    let stored = RunResults::parse_bytes(&stored, "stored").unwrap();
    let mut scenarios: Vec<&str> = stored.results.iter().map(|c| c.scenario.as_str()).collect();
    scenarios.sort();
    assert_eq!(scenarios, ["get-1k", "get-22b"]);
    assert_eq!(stored.shard.as_ref().unwrap().merged.len(), 2);
    assert!(comments_on(&r.fake, 42).is_empty());

    // (b) The pull request: its own shard jobs replace the push's artifacts.
    std::fs::remove_dir_all(r.env.workspace().join(DOWNLOADED)).unwrap();
    let pr_env = [
        ("GITHUB_REF", "refs/pull/42/merge"),
        ("GITHUB_SHA", HEAD),
        ("GITHUB_RUN_ID", "201"),
    ];
    let payload = pr_event("opened", HEAD);
    r.shard_jobs("pull_request", &payload, &pr_env);

    // A merge job missing a shard is refused by name, before any comment.
    let shard_2 = r.env.workspace().join(DOWNLOADED).join("benchgate-shard-2");
    let aside = r.env.workspace().join("aside");
    std::fs::rename(&shard_2, &aside).unwrap();
    let mut env = pr_env.to_vec();
    env.extend([
        ("INPUT_MODE", "merge"),
        ("INPUT_SHARDS", DOWNLOADED),
        ("INPUT_GITHUB-TOKEN", TOKEN),
    ]);
    let refused = r.action("pull_request", &payload, None, &env);
    assert_eq!(refused.code(), 2, "{}", refused.log());
    assert!(
        refused
            .log()
            .contains("shard 2/2 missing: got 1 of 2 shard results"),
        "{}",
        refused.log()
    );
    assert!(comments_on(&r.fake, 42).is_empty());
    std::fs::rename(&aside, &shard_2).unwrap();

    // The merge job as the composite action runs it: lookup and publish
    // with the token, the merge in the measure step without one.
    for step in ["lookup", "measure", "publish"] {
        let env: Vec<_> = env
            .iter()
            .copied()
            .filter(|(k, _)| step != "measure" || *k != "INPUT_GITHUB-TOKEN")
            .collect();
        let run = r.action("pull_request", &payload, Some(step), &env);
        assert_eq!(run.code(), 0, "step {step}: {}", run.log());
        if step == "publish" {
            assert_eq!(run.expect_output("verdict"), "pass", "{}", run.log());
        }
    }
    let comments = comments_on(&r.fake, 42);
    assert_eq!(comments.len(), 1, "{comments:?}");
    let body = &comments[0].2;
    assert!(
        body.contains("get-22b") && body.contains("get-1k"),
        "{body}"
    );
    assert!(
        body.contains("the stored run of commit `111111111111` of main"),
        "{body}"
    );
    assert_eq!(r.fake.count("POST", "/issues/42/comments"), 1);
    let index = stored_file(&r.fake, "baselines/main/index.json").unwrap();
    let index = Index::parse(&index, "index.json", "main", V1Layout::DataBranch).unwrap();
    assert_eq!(index.entries.len(), 1, "a pull request stored a baseline");
}

/// The fork-safe split with shards: the measure workflow's matrix runs
/// `mode: measure` with `shard: K/2` (no token), and the `workflow_run`
/// report merges the downloaded shards (input `shards`), checks every
/// shard's recorded head, and comments once on the fork's pull request.
#[test]
fn the_fork_safe_split_reports_a_sharded_measure_once() {
    const FORK_HEAD: &str = "3333333333333333333333333333333333333333";
    let r = Runner::new();
    {
        let mut pull = open_pull(43, FORK_HEAD, "stranger/app");
        pull["base"]["sha"] = BASE_SHA.into();
        let mut state = r.fake.state.lock().unwrap();
        state.pulls.push(pull);
        state.commit_pulls.insert(FORK_HEAD.into(), vec![43]);
    }
    let measure = [
        ("GITHUB_REF", "refs/pull/43/merge"),
        ("GITHUB_SHA", FORK_HEAD),
        ("GITHUB_RUN_ID", "303"),
    ];
    r.fake.clear_requests();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let path = format!("{DOWNLOADED}/benchgate-measure-{k}/benchgate-results.json");
        let mut env = measure.to_vec();
        env.extend([
            ("INPUT_MODE", "measure"),
            ("INPUT_SHARD", shard.as_str()),
            ("INPUT_RESULTS-PATH", path.as_str()),
        ]);
        let run = r.action("pull_request", &event("pull_request_fork.json"), None, &env);
        assert_eq!(run.code(), 0, "{}", run.log());
        assert_eq!(run.expect_output("verdict"), "measured");
    }
    assert!(r.fake.requests().is_empty(), "a measure job called GitHub");
    let report = r.action(
        "workflow_run",
        &event("workflow_run.json"),
        None,
        &[
            ("GITHUB_REF", "refs/heads/main"),
            ("GITHUB_SHA", BASE_SHA),
            ("GITHUB_RUN_ID", "304"),
            ("INPUT_MODE", "report"),
            ("INPUT_SHARDS", DOWNLOADED),
            ("INPUT_GITHUB-TOKEN", TOKEN),
        ],
    );
    assert_eq!(report.code(), 0, "{}", report.log());
    let comments = comments_on(&r.fake, 43);
    assert_eq!(comments.len(), 1, "{comments:?}");
    let body = &comments[0].2;
    assert!(
        body.contains("get-22b") && body.contains("get-1k"),
        "{body}"
    );
    assert_eq!(
        r.fake.count("PUT", "/contents/"),
        0,
        "report mode wrote the store"
    );
}
