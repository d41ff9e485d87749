//! The data-branch baseline store against the fake GitHub server (issue 5):
//! branch creation, compare-and-swap with concurrent writers, bounded history,
//! corrupt files never replaced, read-back, exact vs nearest-older lookup.

use crate::github;

use std::sync::Arc;
use std::time::Duration;

use benchgate::baseline::index::{Index, IndexEntry, V1Layout};
use benchgate::baseline::{BaselineStore, GitHubStore};
use benchgate::config::Suite;
use benchgate::results::RunResults;

use crate::common::synthetic;
use benchgate::retry::RetryPolicy;
use github::client::{client, repo};
use github::fake::{FakeGitHub, Fault, FaultAction, State};
use github::fake_contents::seed;

const DATA: &str = "benchgate-data";
const INDEX: &str = "baselines/main/index.json";

fn sha(n: u32) -> String {
    format!("{n:040x}").replace('0', "a")
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

fn store(fake: &FakeGitHub) -> GitHubStore {
    let gh = Arc::new(client(fake, "actions-token"));
    GitHubStore::new(gh, repo()).with_conflict_retries(RetryPolicy {
        max_attempts: 8,
        base: Duration::from_millis(5),
        cap: Duration::from_millis(50),
        deadline: Duration::from_secs(10),
    })
}

fn file(fake: &FakeGitHub, path: &str) -> Option<Vec<u8>> {
    fake.state
        .lock()
        .unwrap()
        .branches
        .get(DATA)?
        .get(path)
        .cloned()
}

fn index(fake: &FakeGitHub) -> Index {
    Index::parse(
        &file(fake, INDEX).expect("index"),
        INDEX,
        "main",
        V1Layout::DataBranch,
    )
    .unwrap()
}

fn shas(index: &Index) -> Vec<String> {
    index.entries.iter().map(|e| e.sha.clone()).collect()
}

#[test]
fn creates_the_data_branch_as_an_orphan_when_missing() {
    let fake = FakeGitHub::start();
    let store = store(&fake);
    let key = store.store("main", &sha(1), &results("1001"), 100).unwrap();
    assert_eq!((key.branch.as_str(), key.run_id.as_str()), ("main", "1001"));
    assert!(file(&fake, "README.md").is_some());
    let commit = fake
        .requests()
        .into_iter()
        .find(|r| r.uri.ends_with("/git/commits"))
        .unwrap();
    assert!(commit.body.contains("\"parents\":[]"), "{}", commit.body);
    store.store("main", &sha(2), &results("1002"), 100).unwrap();
    assert_eq!(fake.count("POST", "/git/refs"), 1);
    let stored = file(&fake, &format!("baselines/main/{}.json", sha(1))).unwrap();
    assert!(!stored.contains(&b'\n'), "results are stored compact");
    assert_eq!(shas(&index(&fake)), [sha(2), sha(1)]);
}

#[test]
fn lookup_exact_nearest_older_and_newest() {
    let fake = FakeGitHub::start();
    let store = store(&fake);
    assert!(
        store.lookup("main", &sha(1), &[]).unwrap().is_none(),
        "no data branch yet"
    );
    store.store("main", &sha(1), &results("1"), 100).unwrap();
    store.store("main", &sha(2), &results("2"), 100).unwrap();
    let exact = store.lookup("main", &sha(1), &[]).unwrap().unwrap();
    assert!(exact.exact);
    assert_eq!(exact.results.run_id, "1");
    let ancestors = vec![sha(9), sha(1), sha(2)];
    let nearest = store.lookup("main", &sha(3), &ancestors).unwrap().unwrap();
    assert!(!nearest.exact);
    assert_eq!(nearest.key.sha, sha(1));
    let newest = store.lookup("main", &sha(3), &[]).unwrap().unwrap();
    assert_eq!(newest.key.sha, sha(2));
    assert!(store.lookup("main", &sha(3), &[sha(8)]).unwrap().is_none());
    assert!(store.lookup("dev", &sha(1), &[]).unwrap().is_none());
    let history: Vec<String> = store
        .history("main")
        .unwrap()
        .into_iter()
        .map(|k| k.run_id)
        .collect();
    assert_eq!(history, ["2", "1"]);
    // The results of the newest runs, oldest first (`benchgate history`).
    let loaded: Vec<String> = store
        .load_history("main", 10)
        .unwrap()
        .into_iter()
        .map(|r| {
            assert_eq!(r.key.run_id, r.results.run_id);
            r.key.run_id
        })
        .collect();
    assert_eq!(loaded, ["1", "2"]);
    assert_eq!(store.load_history("main", 1).unwrap()[0].key.run_id, "2");
    assert!(store.load_history("dev", 10).unwrap().is_empty());
}

/// Another writer's index entry and file, as if it had won the race.
fn other_writer(state: &mut State) {
    let entry = IndexEntry {
        sha: sha(77),
        started_at: "2025-03-14T09:00:00Z".into(),
        run_id: "777".into(),
        file: format!("{}.json", sha(77)),
        bytes: Some(10),
        histograms_stripped: false,
    };
    let mut index = match state.branches.get(DATA).and_then(|b| b.get(INDEX)) {
        Some(bytes) => Index::parse(bytes, INDEX, "main", V1Layout::DataBranch).unwrap(),
        None => Index::new("main"),
    };
    index.merge(entry, 100);
    let results = serde_json::to_vec(&results("777")).unwrap();
    seed(
        state,
        DATA,
        &format!("baselines/main/{}.json", sha(77)),
        &results,
    );
    seed(state, DATA, INDEX, &serde_json::to_vec(&index).unwrap());
}

#[test]
fn a_conflicting_index_write_is_re_read_merged_and_retried() {
    let fake = FakeGitHub::start();
    let store = store(&fake);
    store.store("main", &sha(1), &results("1"), 100).unwrap();
    fake.inject(Fault {
        method: "PUT",
        path_contains: "index.json".into(),
        times: 1,
        action: FaultAction::Before(Box::new(other_writer)),
    });
    store.store("main", &sha(2), &results("2"), 100).unwrap();
    assert_eq!(shas(&index(&fake)), [sha(2), sha(77), sha(1)]);
    assert_eq!(fake.count("PUT", "index.json"), 3, "1 + conflict + retry");
}

#[test]
fn two_concurrent_writers_both_survive() {
    let fake = FakeGitHub::start();
    store(&fake)
        .store("main", &sha(1), &results("1"), 100)
        .unwrap();
    // Both writers read the index before either writes it: the fake holds
    // each read's answer until the other's has arrived, so one write must
    // conflict and be retried.
    fake.inject(Fault {
        method: "GET",
        path_contains: "index.json".into(),
        times: 2,
        action: FaultAction::ApplyThenMeet(Arc::new(tokio::sync::Barrier::new(2))),
    });
    fake.clear_requests();
    std::thread::scope(|s| {
        for n in [2, 3] {
            let store = store(&fake);
            s.spawn(move || {
                store
                    .store("main", &sha(n), &results(&n.to_string()), 100)
                    .unwrap()
            });
        }
    });
    let mut got = shas(&index(&fake));
    got.sort();
    assert_eq!(got, [sha(1), sha(2), sha(3)]);
    let index_writes: Vec<u16> = fake
        .requests()
        .iter()
        .filter(|r| r.method != "GET" && r.uri.contains("index.json"))
        .map(|r| r.status)
        .collect();
    assert!(
        index_writes.iter().any(|s| matches!(s, 409 | 422)),
        "no write conflicted: {index_writes:?}"
    );
}

#[test]
fn history_is_bounded_and_dropped_files_deleted() {
    let fake = FakeGitHub::start();
    let store = store(&fake);
    for n in 1..=5 {
        store
            .store("main", &sha(n), &results(&n.to_string()), 3)
            .unwrap();
    }
    assert_eq!(shas(&index(&fake)), [sha(5), sha(4), sha(3)]);
    for n in 1..=5 {
        let present = file(&fake, &format!("baselines/main/{}.json", sha(n))).is_some();
        assert_eq!(present, n >= 3, "file of entry {n}");
    }
}

#[test]
fn the_same_commit_twice_keeps_exactly_one_entry() {
    let fake = FakeGitHub::start();
    let store = store(&fake);
    store.store("main", &sha(1), &results("1"), 100).unwrap();
    store.store("main", &sha(1), &results("2"), 100).unwrap();
    let index = index(&fake);
    assert_eq!(index.entries.len(), 1);
    assert_eq!(index.entries[0].run_id, "2");
}

#[test]
fn a_corrupt_or_unknown_index_stops_the_write_and_is_never_replaced() {
    let corrupt: [&[u8]; 2] = [
        b"{\"schema\":\"benchgate-baseline-index\",\"version\":1,\"entr",
        br#"{"schema":"benchgate-baseline-index","version":9,"branch":"main","entries":[]}"#,
    ];
    for bytes in corrupt {
        let fake = FakeGitHub::start();
        {
            let mut state = fake.state.lock().unwrap();
            seed(&mut state, DATA, "README.md", b"data");
            seed(&mut state, DATA, INDEX, bytes);
        }
        let err = store(&fake)
            .store("main", &sha(1), &results("1"), 100)
            .unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains(INDEX) && text.contains("by hand"), "{text}");
        assert_eq!(file(&fake, INDEX).unwrap(), bytes);
        assert_eq!(fake.count("PUT", "index.json"), 0);
        assert!(store(&fake).lookup("main", &sha(1), &[]).is_err());
    }
}

#[test]
fn a_corrupt_results_file_of_the_same_commit_is_never_replaced() {
    let fake = FakeGitHub::start();
    let path = format!("baselines/main/{}.json", sha(1));
    {
        let mut state = fake.state.lock().unwrap();
        seed(&mut state, DATA, "README.md", b"data");
        seed(&mut state, DATA, &path, b"garbage");
    }
    let err = store(&fake)
        .store("main", &sha(1), &results("1"), 100)
        .unwrap_err();
    assert!(format!("{err:#}").contains(&path), "{err:#}");
    assert_eq!(file(&fake, &path).unwrap(), b"garbage");
}

#[test]
fn oversized_results_lose_their_histograms_and_say_so() {
    let fake = FakeGitHub::start();
    // Real histograms (the store refuses undecodable ones), on enough cells
    // that the file passes the data branch's size limit.
    let mut h = benchgate::measure::LatencyHistogram::new();
    let mut x: u64 = 1;
    for _ in 0..200_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        h.record_us(1 + (x >> 33) % 3_000_000_000);
    }
    let encoded = h.encode();
    let mut big = results("1");
    let template = big.results[0].clone();
    let copies = 1 + 1_000_000 / encoded.len();
    big.results = (0..copies)
        .map(|i| {
            let mut c = template.clone();
            c.scenario = format!("s{i}");
            c.histogram = Some(encoded.clone());
            c
        })
        .collect();
    store(&fake).store("main", &sha(1), &big, 100).unwrap();
    let index = index(&fake);
    assert!(index.entries[0].histograms_stripped);
    assert!(index.entries[0].bytes.unwrap() < 900 * 1024);
    let found = store(&fake).lookup("main", &sha(1), &[]).unwrap().unwrap();
    assert!(found.results.results.iter().all(|c| c.histogram.is_none()));
}

#[test]
fn branch_names_and_the_data_branch_are_escaped_and_configurable() {
    let fake = FakeGitHub::start();
    let store = store(&fake).with_data_branch("perf-data");
    store
        .store("feature/x", &sha(1), &results("1"), 100)
        .unwrap();
    let state = fake.state.lock().unwrap();
    let files: Vec<&String> = state.branches["perf-data"].keys().collect();
    assert!(
        files
            .iter()
            .any(|f| f.as_str() == "baselines/feature%2Fx/index.json"),
        "{files:?}"
    );
    drop(state);
    assert!(
        store
            .lookup("feature/x", &sha(1), &[])
            .unwrap()
            .unwrap()
            .exact
    );
}

/// A data branch as benchgate wrote it before index version 2: the index newest
/// first, `bytes` on every entry.
fn seed_v1(fake: &FakeGitHub) {
    let mut state = fake.state.lock().unwrap();
    seed(&mut state, DATA, "README.md", b"data");
    let mut entries = Vec::new();
    for n in [3, 2, 1] {
        let file = format!("{}.json", sha(n));
        let bytes = serde_json::to_vec(&results(&n.to_string())).unwrap();
        entries.push(format!(
            r#"{{"sha":"{}","started_at":"2025-03-14T1{n}:00:00Z","run_id":"{n}","file":"{file}","bytes":{},"histograms_stripped":false}}"#,
            sha(n),
            bytes.len()
        ));
        seed(&mut state, DATA, &format!("baselines/main/{file}"), &bytes);
    }
    let index = format!(
        r#"{{"schema":"benchgate-baseline-index","version":1,"branch":"main","entries":[{}]}}"#,
        entries.join(",")
    );
    seed(&mut state, DATA, INDEX, index.as_bytes());
}

#[test]
fn a_v1_index_newest_first_is_read_and_kept_whole_when_written_again() {
    let fake = FakeGitHub::start();
    seed_v1(&fake);
    let store = store(&fake);
    let newest = store.lookup("main", &sha(9), &[]).unwrap().unwrap();
    assert_eq!((newest.key.sha.clone(), newest.exact), (sha(3), false));
    assert_eq!(newest.results.run_id, "3");
    let exact = store.lookup("main", &sha(2), &[]).unwrap().unwrap();
    assert_eq!((exact.key.sha.clone(), exact.exact), (sha(2), true));
    assert_eq!(exact.results.run_id, "2");
    let nearest = store
        .lookup("main", &sha(9), &[sha(8), sha(1)])
        .unwrap()
        .unwrap();
    assert_eq!((nearest.key.sha, nearest.exact), (sha(1), false));
    // The next write keeps every entry, newest first, as version 2.
    store.store("main", &sha(4), &results("4"), 100).unwrap();
    assert_eq!(shas(&index(&fake)), [sha(4), sha(3), sha(2), sha(1)]);
    let written: serde_json::Value = serde_json::from_slice(&file(&fake, INDEX).unwrap()).unwrap();
    assert_eq!(written["version"], 2);
    assert!(written["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["bytes"].as_u64().is_some()));
    let exact = store.lookup("main", &sha(2), &[]).unwrap().unwrap();
    assert_eq!((exact.results.run_id.as_str(), exact.exact), ("2", true));
}

#[test]
fn a_short_or_symbolic_commit_is_refused_before_any_write() {
    let fake = FakeGitHub::start();
    for bad in ["HEAD", "abcdef", "main"] {
        let err = store(&fake)
            .store("main", bad, &results("1"), 100)
            .unwrap_err();
        assert!(err.to_string().contains("not a commit sha"), "{err}");
    }
    assert_eq!(fake.count("PUT", ""), 0);
    assert_eq!(fake.count("POST", ""), 0);
}

/// A store whose reads of its own writes give up fast: 4 reads within 2 s.
fn impatient(fake: &FakeGitHub, reads: u32, within: Duration) -> GitHubStore {
    store(fake).with_read_back_retries(RetryPolicy {
        max_attempts: reads,
        base: Duration::from_millis(5),
        cap: Duration::from_millis(20),
        deadline: within,
    })
}

fn lag(fake: &FakeGitHub, reads: usize) {
    fake.state.lock().unwrap().replication_lag = reads;
}

/// 404s the fake still has to answer for `key` (`branch:path`), if it lagged.
fn lag_left(fake: &FakeGitHub, key: &str) -> Option<usize> {
    fake.state.lock().unwrap().lagging.get(key).copied()
}

#[test]
fn reads_of_this_runs_own_writes_survive_replication_lag() {
    let fake = FakeGitHub::start();
    lag(&fake, 3);
    let store = impatient(&fake, 6, Duration::from_secs(10));
    // The data branch just created, then the index just written, answer 404
    // three times each before the read-back sees them.
    store.store("main", &sha(1), &results("1"), 100).unwrap();
    assert_eq!(lag_left(&fake, &format!("{DATA}:")), Some(0));
    assert_eq!(lag_left(&fake, &format!("{DATA}:{INDEX}")), Some(0));
    store.store("main", &sha(2), &results("2"), 100).unwrap();
    assert_eq!(shas(&index(&fake)), [sha(2), sha(1)]);
    // A results file the index lists is read again too.
    let results_key = format!("{DATA}:baselines/main/{}.json", sha(1));
    assert_eq!(lag_left(&fake, &results_key), Some(3));
    let found = store.lookup("main", &sha(1), &[]).unwrap().unwrap();
    assert_eq!((found.exact, found.results.run_id.as_str()), (true, "1"));
    assert_eq!(lag_left(&fake, &results_key), Some(0));
}

#[test]
fn a_read_back_that_keeps_answering_404_gives_up_within_its_bounds() {
    let fake = FakeGitHub::start();
    store(&fake)
        .store("main", &sha(1), &results("1"), 100)
        .unwrap();
    lag(&fake, usize::MAX);
    // Bounded by reads: the CAS read, then exactly 4 read-back reads.
    fake.clear_requests();
    let err = impatient(&fake, 4, Duration::from_secs(30))
        .store("main", &sha(2), &results("2"), 100)
        .unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.contains(INDEX) && text.contains("404") && text.contains("4 read(s)"),
        "{text}"
    );
    assert_eq!(fake.count("GET", "index.json"), 1 + 4);
    // Bounded by time: unlimited reads stop at the deadline (the index's
    // earlier lag is over; the next write's starts).
    fake.state.lock().unwrap().lagging.clear();
    let started = std::time::Instant::now();
    let err = impatient(&fake, u32::MAX, Duration::from_millis(300))
        .store("main", &sha(3), &results("3"), 100)
        .unwrap_err();
    assert!(
        format!("{err:#}").contains("after this run wrote it"),
        "{err:#}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_missing_data_branch_is_said_loudly_and_told_apart_from_a_missing_index() {
    let fake = FakeGitHub::start();
    let mistyped = store(&fake).with_data_branch("benchgate-dta");
    store(&fake)
        .store("main", &sha(1), &results("1"), 100)
        .unwrap();
    // A data branch that does not exist: neutral, and the note names it and the fix.
    assert!(mistyped.lookup("main", &sha(1), &[]).unwrap().is_none());
    let notes = mistyped.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    for needle in [
        "\"benchgate-dta\" does not exist",
        "`data-branch`",
        "`baseline-branch`",
    ] {
        assert!(notes[0].contains(needle), "{needle}: {}", notes[0]);
    }
    assert_eq!(
        fake.count("POST", "/git/refs"),
        1,
        "a lookup created a branch"
    );
    // The data branch exists, the branch's index does not: a quieter note.
    let existing = store(&fake);
    assert!(existing.lookup("dev", &sha(1), &[]).unwrap().is_none());
    let notes = existing.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("baselines/dev/index.json is absent"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("`baseline-branch`"), "{}", notes[0]);
    assert!(!notes[0].contains("does not exist"), "{}", notes[0]);
    // Found: nothing to say.
    assert!(existing.lookup("main", &sha(1), &[]).unwrap().is_some());
    assert_eq!(existing.notes().len(), 1);
}

/// Issue 53: a run whose file no reader accepts (an infinite figure, which
/// JSON writes as `null`) was stored, and every later lookup on the branch
/// failed. It is refused before the data branch is touched, for another
/// commit and for the same one; the old baseline stays.
#[test]
fn a_run_no_reader_accepts_is_never_stored_and_the_old_baseline_stays() {
    let fake = FakeGitHub::start();
    let good = results("1");
    store(&fake).store("main", &sha(1), &good, 100).unwrap();
    let (index_before, writes) = (file(&fake, INDEX).unwrap(), fake.count("PUT", ""));
    let mut bad = results("2");
    let cell = &mut bad.results[0];
    cell.trials[0].metrics.as_mut().unwrap().throughput_rps = Some(f64::INFINITY);
    cell.summary = benchgate::results::summarize(&cell.trials);
    for at in [sha(2), sha(1)] {
        let e = format!(
            "{:#}",
            store(&fake).store("main", &at, &bad, 100).unwrap_err()
        );
        assert!(
            e.starts_with("refusing to store the baseline of main@aaaaaaa (run 2): the file it would be does not read back as a results file; nothing was written"),
            "{e}"
        );
        assert!(
            e.contains(".trials[0].metrics.throughput_rps is inf"),
            "{e}"
        );
    }
    assert_eq!(fake.count("PUT", ""), writes, "nothing written");
    assert_eq!(file(&fake, INDEX).unwrap(), index_before);
    let found = store(&fake).lookup("main", &sha(3), &[]).unwrap().unwrap();
    assert_eq!((found.key.sha, found.results), (sha(1), good));
}
