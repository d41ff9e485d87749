//! The data branch's history stays bounded (issue 17, point 5): past the bound
//! the branch restarts at an orphan commit with the same files, moved by
//! GraphQL's `updateRefs` with `beforeOid` (a compare-and-swap), against the
//! fake GitHub, which keeps every branch's commits and tells what a clone of
//! it fetches.

use crate::github;

use std::sync::Arc;
use std::time::Duration;

use benchgate::baseline::index::{Index, V1Layout};
use benchgate::baseline::rotation::HISTORY_COMMITS;
use benchgate::baseline::{BaselineStore, GitHubStore};
use benchgate::config::Suite;
use benchgate::github::GitHub;
use benchgate::results::RunResults;

use crate::common::synthetic;
use benchgate::retry::RetryPolicy;
use github::client::{config, repo};
use github::fake::{FakeGitHub, Fault, FaultAction, State};
use github::fake_contents::seed;
use github::fake_git::{clone_size, CloneSize};

const DATA: &str = "benchgate-data";
const INDEX: &str = "baselines/main/index.json";

fn sha(n: u32) -> String {
    format!("{n:040x}")
}

fn results(run: &str) -> RunResults {
    let mut suite = Suite::default_suite();
    suite.scenarios.truncate(1);
    let mut r = synthetic::run(suite, 2, |_, _, _| {
        Some(synthetic::metrics(1000.0, 500.0, 20.0))
    });
    r.run_id = run.to_string();
    r
}

/// A store as one run builds it (its own client, so its own mutation
/// budget), on the REST base `api_url`.
fn store_at(fake: &FakeGitHub, api_url: &str) -> GitHubStore {
    let mut config = config(fake, "actions-token");
    config.api_url = api_url.to_string();
    GitHubStore::new(Arc::new(GitHub::new(config).unwrap()), repo()).with_conflict_retries(
        RetryPolicy {
            max_attempts: 30,
            base: Duration::from_millis(2),
            cap: Duration::from_millis(40),
            deadline: Duration::from_secs(30),
        },
    )
}

fn store(fake: &FakeGitHub) -> GitHubStore {
    store_at(fake, &fake.url)
}

fn clone_of_data(fake: &FakeGitHub) -> CloneSize {
    clone_size(&fake.state.lock().unwrap(), DATA)
}

fn head_files(fake: &FakeGitHub) -> Vec<String> {
    let state = fake.state.lock().unwrap();
    state.branches[DATA].keys().cloned().collect()
}

fn head_parents(fake: &FakeGitHub) -> usize {
    let state = fake.state.lock().unwrap();
    state.commits[&state.heads[DATA]].parents.len()
}

fn index(fake: &FakeGitHub) -> Index {
    let state = fake.state.lock().unwrap();
    Index::parse(
        &state.branches[DATA][INDEX],
        INDEX,
        "main",
        V1Layout::DataBranch,
    )
    .unwrap()
}

#[test]
fn two_hundred_stores_by_two_writers_keep_the_history_and_a_clone_bounded() {
    const WRITERS: u32 = 2;
    const STORES_EACH: u32 = 100;
    const ALL: usize = (WRITERS * STORES_EACH) as usize;
    let fake = FakeGitHub::start();
    store(&fake).ensure_branch().unwrap();
    std::thread::scope(|s| {
        for writer in 0..WRITERS {
            let fake = &fake;
            s.spawn(move || {
                for n in 0..STORES_EACH {
                    let id = (writer + 1) * 1000 + n;
                    store(fake)
                        .store("main", &sha(id), &results(&id.to_string()), ALL)
                        .unwrap();
                }
            });
        }
    });
    // No lost write: every entry and its file survived every restart.
    let mut stored: Vec<String> = index(&fake).entries.iter().map(|e| e.sha.clone()).collect();
    stored.sort();
    let mut expected: Vec<String> = (0..WRITERS)
        .flat_map(|w| (0..STORES_EACH).map(move |n| sha((w + 1) * 1000 + n)))
        .collect();
    expected.sort();
    assert_eq!(stored, expected);
    let files = head_files(&fake);
    for sha in &expected {
        assert!(
            files.contains(&format!("baselines/main/{sha}.json")),
            "{sha}"
        );
    }
    // The last store's check follows every write: the history is within the
    // bound. On the way, a check can lose its race to the other writer, whose
    // own check follows: the branch runs over by at most a few stores.
    let clone = clone_of_data(&fake);
    let state = fake.state.lock().unwrap();
    let longest = state.longest_history[DATA];
    let tree_bytes: usize = state.branches[DATA].values().map(Vec::len).sum();
    let largest = state.branches[DATA].values().map(Vec::len).max().unwrap();
    drop(state);
    eprintln!("after {ALL} stores: {clone:?}, longest history {longest}, current files {tree_bytes} bytes (largest {largest})");
    assert!(clone.commits <= HISTORY_COMMITS, "{clone:?}");
    assert!(longest <= 2 * HISTORY_COMMITS, "longest history {longest}");
    // A clone fetches the current files and at most one blob per commit of the
    // bounded history, none larger than the largest current file (the index,
    // which only grows here).
    assert!(
        clone.bytes <= tree_bytes + HISTORY_COMMITS * largest,
        "{clone:?}, current files {tree_bytes} bytes, largest {largest}"
    );
    // Restarts happened through GraphQL on github.com's endpoint.
    assert!(fake.count("POST", "/graphql") > 0);
    assert_eq!(fake.count("POST", "/api/graphql"), 0);
}

/// Another writer's commit on the data branch, made while the rotation's
/// compare-and-swap is on its way.
fn another_writer(state: &mut State) {
    seed(state, DATA, "baselines/dev/other.json", b"{}");
}

#[test]
fn a_rotation_that_loses_the_race_leaves_the_branch_intact() {
    let fake = FakeGitHub::start();
    let bound = 5;
    let store = || store(&fake).with_history_commits(bound);
    // Creation (1 commit) and two stores (2 each): 5 commits, not over.
    for n in 1..=2 {
        store()
            .store("main", &sha(n), &results(&n.to_string()), 100)
            .unwrap();
    }
    assert_eq!(clone_of_data(&fake).commits, 5);
    assert_eq!(fake.count("POST", "/graphql"), 0);
    fake.inject(Fault {
        method: "POST",
        path_contains: "/graphql".into(),
        times: 1,
        action: FaultAction::Before(Box::new(another_writer)),
    });
    let third = store();
    third.store("main", &sha(3), &results("3"), 100).unwrap();
    // Refused: the other writer's commit is the head, on the whole history.
    assert_eq!(clone_of_data(&fake).commits, 8);
    assert_eq!(head_parents(&fake), 1);
    let files = head_files(&fake);
    assert!(files.contains(&"baselines/dev/other.json".to_string()));
    for n in 1..=3 {
        assert!(
            files.contains(&format!("baselines/main/{}.json", sha(n))),
            "{n}"
        );
    }
    let notes = third.notes();
    assert!(
        notes.iter().any(|n| n.contains("another writer moved it")),
        "{notes:?}"
    );
    // The next store restarts the branch, keeping every file.
    let fourth = store();
    fourth.store("main", &sha(4), &results("4"), 100).unwrap();
    assert_eq!(clone_of_data(&fake).commits, 1);
    assert_eq!(head_parents(&fake), 0);
    let mut after = files;
    after.push(format!("baselines/main/{}.json", sha(4)));
    after.sort();
    assert_eq!(head_files(&fake), after);
    let notes = fourth.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("restarts at the orphan commit")),
        "{notes:?}"
    );
    let found = store().lookup("main", &sha(1), &[]).unwrap().unwrap();
    assert_eq!((found.exact, found.results.run_id.as_str()), (true, "1"));
}

#[test]
fn a_refused_rotation_warns_and_never_fails_the_store() {
    let fake = FakeGitHub::start();
    let store = || store(&fake).with_history_commits(2);
    fake.inject(Fault {
        method: "POST",
        path_contains: "/graphql".into(),
        times: 1,
        action: FaultAction::Respond {
            status: 200,
            headers: Vec::new(),
            fixture: "graphql_forbidden",
        },
    });
    let refused = store();
    refused.store("main", &sha(1), &results("1"), 100).unwrap();
    assert_eq!(fake.count("POST", "/graphql"), 1);
    assert_eq!(clone_of_data(&fake).commits, 3, "the history is intact");
    let notes = refused.notes();
    let warning = notes
        .iter()
        .find(|n| n.contains("could not be restarted"))
        .unwrap_or_else(|| panic!("{notes:?}"));
    for needle in [
        "the baseline is stored",
        "FORBIDDEN",
        "`contents: write`",
        "force pushes",
    ] {
        assert!(warning.contains(needle), "{needle}: {warning}");
    }
    // The next store tries again.
    store().store("main", &sha(2), &results("2"), 100).unwrap();
    assert_eq!(clone_of_data(&fake).commits, 1);
}

#[test]
fn on_github_enterprise_server_graphql_is_at_api_graphql() {
    let fake = FakeGitHub::start();
    let ghes = format!("{}/api/v3", fake.url);
    let store = || store_at(&fake, &ghes).with_history_commits(2);
    store().store("main", &sha(1), &results("1"), 100).unwrap();
    let graphql: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.uri.contains("graphql"))
        .map(|r| r.uri)
        .collect();
    assert_eq!(graphql, ["/api/graphql"]);
    assert!(fake
        .requests()
        .iter()
        .filter(|r| !r.uri.contains("graphql"))
        .all(|r| r.uri.starts_with("/api/v3/repos/")));
    assert_eq!(clone_of_data(&fake).commits, 1);
    assert_eq!(head_parents(&fake), 0);
    let found = store().lookup("main", &sha(1), &[]).unwrap().unwrap();
    assert!(found.exact);
}
