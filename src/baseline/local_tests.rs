use super::*;
use crate::config::Suite;
use crate::results::synthetic;

fn run(id: &str) -> RunResults {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(1);
    let mut r = synthetic::run(s, 2, |_, _, _| {
        Some(synthetic::metrics(1000.0, 500.0, 20.0))
    });
    r.run_id = id.to_string();
    r
}

fn sha(n: u32) -> String {
    format!("{n:040x}")
}

fn store_n(st: &LocalStore, branch: &str, n: u32, max: usize) {
    for i in 1..=n {
        st.store(branch, &sha(i), &run(&format!("run-{i}")), max)
            .unwrap();
    }
}

#[test]
fn store_then_exact_lookup_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    assert!(st.lookup("main", &sha(1), &[]).unwrap().is_none());
    let key = st.store("main", &sha(1), &run("r1"), 10).unwrap();
    assert_eq!((key.branch.as_str(), key.run_id.as_str()), ("main", "r1"));
    let found = st.lookup("main", &sha(1), &[]).unwrap().unwrap();
    assert!(found.exact);
    assert_eq!(found.results, run("r1"));
    assert_eq!(st.read_index("main").unwrap().entries.len(), 1);
}

#[test]
fn nearest_older_follows_ancestor_order_then_newest() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    store_n(&st, "main", 3, 10);
    // A second run of commit 2: the newer one wins.
    st.store("main", &sha(2), &run("run-2b"), 10).unwrap();
    let anc = vec![sha(9), sha(2), sha(1)];
    let f = st.lookup("main", &sha(10), &anc).unwrap().unwrap();
    assert!(!f.exact);
    assert_eq!(
        (f.key.sha.clone(), f.key.run_id.as_str()),
        (sha(2), "run-2b")
    );
    // Ancestors given but none stored: nothing (never a commit from elsewhere).
    assert!(st.lookup("main", &sha(10), &[sha(7)]).unwrap().is_none());
    // No ancestors known: the newest entry, not exact.
    let f = st.lookup("main", &sha(10), &[]).unwrap().unwrap();
    assert_eq!((f.key.run_id.as_str(), f.exact), ("run-2b", false));
    // Another branch is separate.
    assert!(st.lookup("dev", &sha(1), &[]).unwrap().is_none());
}

#[test]
fn history_is_bounded_and_drops_the_oldest_files() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    store_n(&st, "main", 5, 3);
    let h = st.history("main").unwrap();
    let ids: Vec<&str> = h.iter().map(|k| k.run_id.as_str()).collect();
    assert_eq!(ids, ["run-5", "run-4", "run-3"]);
    let bdir = st.branch_dir("main").unwrap();
    let mut files: Vec<String> = std::fs::read_dir(&bdir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "{files:?}"); // 3 results + index.json
    assert!(st.lookup("main", &sha(1), &[]).unwrap().unwrap().key.sha != sha(1));
}

#[test]
fn load_history_reads_the_newest_runs_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    assert!(st.load_history("main", 10).unwrap().is_empty());
    store_n(&st, "main", 5, 10);
    // A commit measured twice keeps both runs, in the order stored.
    st.store("main", &sha(5), &run("run-5b"), 10).unwrap();
    let ids = |n| -> Vec<String> {
        st.load_history("main", n)
            .unwrap()
            .into_iter()
            .map(|r| {
                assert_eq!(r.key.run_id, r.results.run_id);
                r.key.run_id
            })
            .collect()
    };
    assert_eq!(ids(3), ["run-4", "run-5", "run-5b"]);
    assert_eq!(ids(100).len(), 6);
    assert_eq!(ids(100)[0], "run-1");
    // A listed file that is gone is an error naming it.
    let entry = st.read_index("main").unwrap().entries.remove(1);
    let file = st.branch_dir("main").unwrap().join(&entry.file);
    std::fs::remove_file(&file).unwrap();
    let err = format!("{:#}", st.load_history("main", 3).unwrap_err());
    assert!(err.contains(&file.display().to_string()), "{err}");
}

#[test]
fn branch_names_are_escaped_to_one_directory() {
    assert_eq!(escape_branch("feature/x").unwrap(), "feature%2Fx");
    assert_eq!(escape_branch("..").unwrap(), "%2E.");
    assert_eq!(escape_branch("release-1.2").unwrap(), "release-1.2");
    assert!(escape_branch("").is_err());
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    store_n(&st, "../../etc", 1, 5);
    assert!(dir.path().join("%2E.%2F..%2Fetc/index.json").exists());
}

#[test]
fn a_corrupt_index_stops_the_write_and_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    store_n(&st, "main", 1, 5);
    let path = st.branch_dir("main").unwrap().join("index.json");
    for bad in [
        "{ not json",
        r#"{"schema":"benchgate-baseline-index","version":99,"branch":"main","entries":[]}"#,
        r#"{"schema":"benchgate-baseline-index","version":1,"branch":"main","entries":[{"sha":"ab","started_at":"x","run_id":"r","file":"../x.json"}]}"#,
    ] {
        std::fs::write(&path, bad).unwrap();
        let err = format!(
            "{:#}",
            st.store("main", &sha(2), &run("r2"), 5).unwrap_err()
        );
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("by hand"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
        assert!(st.lookup("main", &sha(1), &[]).is_err());
        assert!(st.history("main").is_err());
    }
}

#[test]
fn a_corrupt_or_future_results_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    store_n(&st, "main", 1, 5);
    let entry = st.read_index("main").unwrap().entries.remove(0);
    let file = st.branch_dir("main").unwrap().join(&entry.file);
    for bad in ["garbage", r#"{"schema_version": 7}"#] {
        std::fs::write(&file, bad).unwrap();
        let err = format!("{:#}", st.lookup("main", &sha(1), &[]).unwrap_err());
        assert!(err.contains(&file.display().to_string()), "{err}");
        assert!(err.contains("restore"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), bad);
    }
}

#[test]
fn bad_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    let err = st.store("main", "HEAD", &run("r"), 5).unwrap_err();
    assert!(err.to_string().contains("not a commit sha"), "{err}");
    let err = st.store("main", "abcdef", &run("r"), 5).unwrap_err();
    assert!(err.to_string().contains("not a commit sha"), "{err}");
    assert!(st.store("main", &sha(1), &run("r"), 0).is_err());
    // A histogram that does not decode is never stored (issue 30, point 2).
    let mut bad = run("r");
    bad.results[0].histogram = Some("AAAAAAAAAAAAAAAA".into());
    let err = st.store("main", &sha(1), &bad, 5).unwrap_err().to_string();
    assert!(err.contains("was refused"), "{err}");
    assert!(st.history("main").unwrap().is_empty());
}

#[test]
fn concurrent_writers_both_survive() {
    let dir = tempfile::tempdir().unwrap();
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let st = LocalStore::new(dir.path());
            std::thread::spawn(move || {
                for i in 0..5 {
                    st.store("main", &sha(t * 100 + i), &run(&format!("t{t}-{i}")), 100)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let st = LocalStore::new(dir.path());
    assert_eq!(st.history("main").unwrap().len(), 20);
}

/// A branch directory as a local store wrote it before index version 2: the
/// index oldest first without `bytes`, commit 2 measured twice.
fn v1_branch(st: &LocalStore) -> std::path::PathBuf {
    let bdir = st.branch_dir("main").unwrap();
    std::fs::create_dir_all(&bdir).unwrap();
    let mut entries = Vec::new();
    for (n, id) in [(1, "run-1"), (2, "run-2"), (2, "run-2b"), (3, "run-3")] {
        let file = format!("{}-{id}.json", sha(n));
        std::fs::write(
            bdir.join(&file),
            serde_json::to_vec_pretty(&run(id)).unwrap(),
        )
        .unwrap();
        entries.push(format!(
            r#"{{"sha":"{}","started_at":"2025-03-14T1{n}:00:00Z","run_id":"{id}","file":"{file}"}}"#,
            sha(n)
        ));
    }
    let index = format!(
        r#"{{"schema":"benchgate-baseline-index","version":1,"branch":"main","entries":[{}]}}"#,
        entries.join(",")
    );
    std::fs::write(bdir.join("index.json"), index).unwrap();
    bdir
}

#[test]
fn a_v1_index_oldest_first_is_read_and_kept_whole_when_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    let bdir = v1_branch(&st);
    let f = st.lookup("main", &sha(9), &[]).unwrap().unwrap();
    assert_eq!((f.key.sha.clone(), f.exact), (sha(3), false), "newest");
    assert_eq!(f.results, run("run-3"));
    let f = st.lookup("main", &sha(2), &[]).unwrap().unwrap();
    assert_eq!((f.key.run_id.as_str(), f.exact), ("run-2b", true));
    assert_eq!(f.results, run("run-2b"));
    let f = st.lookup("main", &sha(1), &[]).unwrap().unwrap();
    assert_eq!((f.key.run_id.as_str(), f.exact), ("run-1", true));
    let ids = |st: &LocalStore| -> Vec<String> {
        st.history("main")
            .unwrap()
            .into_iter()
            .map(|k| k.run_id)
            .collect()
    };
    assert_eq!(ids(&st), ["run-3", "run-2b", "run-2", "run-1"]);
    // The next write keeps every entry, newest first, as version 2.
    st.store("main", &sha(4), &run("run-4"), 10).unwrap();
    assert_eq!(ids(&st), ["run-4", "run-3", "run-2b", "run-2", "run-1"]);
    let text = std::fs::read_to_string(bdir.join("index.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["version"], 2, "{text}");
    assert_eq!(value["entries"][0]["run_id"], "run-4", "{text}");
    let f = st.lookup("main", &sha(2), &[]).unwrap().unwrap();
    assert_eq!(
        (f.key.run_id.as_str(), f.results),
        ("run-2b", run("run-2b"))
    );
    // Bounding the history drops the oldest runs and their files.
    st.store("main", &sha(5), &run("run-5"), 3).unwrap();
    assert_eq!(ids(&st), ["run-5", "run-4", "run-3"]);
    assert!(!bdir.join(format!("{}-run-1.json", sha(1))).exists());
    assert!(bdir.join(format!("{}-run-3.json", sha(3))).exists());
}

#[test]
fn an_index_of_another_branch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    store_n(&st, "main", 1, 5);
    let from = st.branch_dir("main").unwrap().join("index.json");
    let to = st.branch_dir("dev").unwrap();
    std::fs::create_dir_all(&to).unwrap();
    std::fs::copy(&from, to.join("index.json")).unwrap();
    let err = format!("{:#}", st.lookup("dev", &sha(1), &[]).unwrap_err());
    assert!(err.contains("index of branch \"main\""), "{err}");
}

/// `run(id)` with a figure no reader accepts: an infinite throughput in a
/// trial and so in its cell's summary (JSON has no infinity: `null`).
fn poisoned(id: &str) -> RunResults {
    let mut r = run(id);
    let cell = &mut r.results[0];
    cell.trials[0].metrics.as_mut().unwrap().throughput_rps = Some(f64::INFINITY);
    cell.summary = crate::results::summarize(&cell.trials);
    r
}

#[test]
fn a_run_no_reader_accepts_is_refused_and_the_old_baseline_stays() {
    let dir = tempfile::tempdir().unwrap();
    let st = LocalStore::new(dir.path());
    st.store("main", &sha(1), &run("good"), 10).unwrap();
    let files = || {
        let mut names: Vec<_> = std::fs::read_dir(st.branch_dir("main").unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let (before, index) = (files(), st.read_index("main").unwrap());
    // Another commit, and the same one (which would replace the good file).
    for at in [sha(2), sha(1)] {
        let e = format!(
            "{:#}",
            st.store("main", &at, &poisoned("bad"), 10).unwrap_err()
        );
        assert!(
            e.starts_with("refusing to store the baseline of main@0000000 (run bad): the file it would be does not read back as a results file; nothing was written"),
            "{e}"
        );
        assert!(
            e.contains(".trials[0].metrics.throughput_rps is inf"),
            "names the field: {e}"
        );
    }
    assert_eq!(files(), before);
    assert_eq!(st.read_index("main").unwrap(), index);
    let found = st.lookup("main", &sha(2), &[]).unwrap().unwrap();
    assert_eq!((found.key.sha, found.results), (sha(1), run("good")));
}
