use super::*;

fn entry(sha: &str) -> IndexEntry {
    IndexEntry {
        sha: sha.into(),
        started_at: "2025-03-14T10:00:00Z".into(),
        run_id: format!("run-{sha}"),
        file: format!("{sha}.json"),
        bytes: Some(10),
        histograms_stripped: false,
    }
}

fn found(index: &Index, sha: &str, ancestors: &[&str]) -> Option<(String, String, bool)> {
    let ancestors: Vec<String> = ancestors.iter().map(|a| a.to_string()).collect();
    index
        .find(sha, &ancestors)
        .map(|(e, exact)| (e.sha.clone(), e.run_id.clone(), exact))
}

/// A data branch's index as benchgate wrote it before version 2: newest first,
/// `bytes` on every entry, `histograms_stripped` where set.
const DATA_BRANCH_V1: &str = r#"{
  "schema": "benchgate-baseline-index",
  "version": 1,
  "branch": "main",
  "entries": [
    {
      "sha": "cccccccccccccccccccccccccccccccccccccccc",
      "started_at": "2025-03-14T12:00:00Z",
      "run_id": "3003",
      "file": "cccccccccccccccccccccccccccccccccccccccc.json",
      "bytes": 921000,
      "histograms_stripped": true
    },
    {
      "sha": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
      "started_at": "2025-03-14T11:00:00Z",
      "run_id": "2002",
      "file": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.json",
      "bytes": 4100,
      "histograms_stripped": false
    },
    {
      "sha": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "started_at": "2025-03-14T10:00:00Z",
      "run_id": "1001",
      "file": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json",
      "bytes": 4000
    }
  ]
}"#;

/// A local directory's index as benchgate wrote it before version 2: oldest
/// first, no `bytes`, and two runs of commit `2222…` (the later one is newer).
const LOCAL_V1: &str = r#"{
  "schema": "benchgate-baseline-index",
  "version": 1,
  "branch": "feature/x",
  "entries": [
    {
      "sha": "1111111111111111111111111111111111111111",
      "started_at": "2025-03-14T10:00:00Z",
      "run_id": "run-1",
      "file": "1111111111111111111111111111111111111111-run-1.json"
    },
    {
      "sha": "2222222222222222222222222222222222222222",
      "started_at": "2025-03-14T11:00:00Z",
      "run_id": "run-2",
      "file": "2222222222222222222222222222222222222222-run-2.json"
    },
    {
      "sha": "2222222222222222222222222222222222222222",
      "started_at": "2025-03-14T12:00:00Z",
      "run_id": "run-2b",
      "file": "2222222222222222222222222222222222222222-run-2b.json"
    },
    {
      "sha": "3333333333333333333333333333333333333333",
      "started_at": "2025-03-14T13:00:00Z",
      "run_id": "run-3",
      "file": "3333333333333333333333333333333333333333-run-3.json"
    }
  ]
}"#;

#[test]
fn a_data_branch_v1_index_reads_newest_first_as_written() {
    let index = Index::parse(DATA_BRANCH_V1.as_bytes(), "i", "main", V1Layout::DataBranch).unwrap();
    let runs: Vec<&str> = index.entries.iter().map(|e| e.run_id.as_str()).collect();
    assert_eq!(runs, ["3003", "2002", "1001"]);
    let (c, b, a) = ("c".repeat(40), "b".repeat(40), "a".repeat(40));
    assert_eq!(
        found(&index, &b, &[]),
        Some((b.clone(), "2002".into(), true))
    );
    assert_eq!(
        found(&index, "dddddddd", &[]),
        Some((c.clone(), "3003".into(), false)),
        "newest"
    );
    assert_eq!(
        found(&index, "dddddddd", &["eeeeeee", &a, &b]),
        Some((a, "1001".into(), false)),
        "nearest ancestor"
    );
    assert_eq!(index.entries[0].bytes, Some(921000));
    assert!(index.entries[0].histograms_stripped);
    assert!(
        !index.entries[2].histograms_stripped,
        "absent: not stripped"
    );
}

#[test]
fn a_local_v1_index_reads_oldest_first_as_written() {
    let index = Index::parse(LOCAL_V1.as_bytes(), "i", "feature/x", V1Layout::LocalDir).unwrap();
    let runs: Vec<&str> = index.entries.iter().map(|e| e.run_id.as_str()).collect();
    assert_eq!(runs, ["run-3", "run-2b", "run-2", "run-1"], "newest first");
    let (one, two, three) = ("1".repeat(40), "2".repeat(40), "3".repeat(40));
    assert_eq!(
        found(&index, &two, &[]),
        Some((two.clone(), "run-2b".into(), true)),
        "the newer run of the commit"
    );
    assert_eq!(
        found(&index, &one, &[]),
        Some((one.clone(), "run-1".into(), true))
    );
    assert_eq!(
        found(&index, "4444444", &[]),
        Some((three, "run-3".into(), false)),
        "newest"
    );
    assert_eq!(
        found(&index, "4444444", &["5555555", &two, &one]),
        Some((two, "run-2b".into(), false)),
        "nearest ancestor, its newer run"
    );
    assert!(index.entries.iter().all(|e| e.bytes.is_none()));
    assert!(index.entries.iter().all(|e| !e.histograms_stripped));
}

#[test]
fn v1_indexes_are_written_back_as_v2_with_every_entry() {
    for (text, branch, v1) in [
        (DATA_BRANCH_V1, "main", V1Layout::DataBranch),
        (LOCAL_V1, "feature/x", V1Layout::LocalDir),
    ] {
        let index = Index::parse(text.as_bytes(), "i", branch, v1).unwrap();
        let written = serde_json::to_vec_pretty(&index).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(value["schema"], INDEX_SCHEMA);
        assert_eq!(value["version"], 2);
        // Read back as v2 by either store (the v1 layout no longer matters).
        for layout in [V1Layout::DataBranch, V1Layout::LocalDir] {
            assert_eq!(Index::parse(&written, "i", branch, layout).unwrap(), index);
        }
    }
    let local = Index::parse(LOCAL_V1.as_bytes(), "i", "feature/x", V1Layout::LocalDir).unwrap();
    let text = serde_json::to_string(&local).unwrap();
    assert!(!text.contains("\"bytes\""), "no size is invented: {text}");
}

#[test]
fn a_v1_index_in_the_other_stores_layout_is_refused() {
    let err = Index::parse(LOCAL_V1.as_bytes(), "i", "feature/x", V1Layout::DataBranch)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("layout v1") && err.contains("by hand"),
        "{err}"
    );
    let err = Index::parse(DATA_BRANCH_V1.as_bytes(), "i", "main", V1Layout::LocalDir)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("layout v1") && err.contains("by hand"),
        "{err}"
    );
}

#[test]
fn merge_bounds_history_and_replaces_the_same_commit() {
    let mut index = Index::new("main");
    assert!(index.merge(entry("a"), 2).is_empty());
    assert!(index.merge(entry("b"), 2).is_empty());
    let dropped = index.merge(entry("c"), 2);
    assert_eq!(dropped, vec![entry("a")]);
    assert!(index.merge(entry("b"), 2).is_empty());
    let shas: Vec<&str> = index.entries.iter().map(|e| e.sha.as_str()).collect();
    assert_eq!(shas, ["b", "c"]);
}

#[test]
fn add_keeps_earlier_runs_of_the_same_commit_and_bounds_history() {
    let mut index = Index::new("main");
    let mut again = entry("a");
    again.run_id = "again".into();
    assert!(index.add(entry("a"), 2).is_empty());
    assert!(index.add(again.clone(), 2).is_empty());
    assert_eq!(index.entries, [again.clone(), entry("a")]);
    assert_eq!(index.add(entry("b"), 2), [entry("a")]);
    assert_eq!(index.entries, [entry("b"), again]);
}

#[test]
fn find_exact_then_nearest_ancestor() {
    let mut index = Index::new("main");
    for sha in ["a", "b", "c"] {
        index.merge(entry(sha), 10);
    }
    assert_eq!(
        index.find("b", &[]).map(|(e, x)| (e.sha.as_str(), x)),
        Some(("b", true))
    );
    let ancestors = vec!["x".to_string(), "a".to_string(), "b".to_string()];
    assert_eq!(
        index
            .find("z", &ancestors)
            .map(|(e, x)| (e.sha.as_str(), x)),
        Some(("a", false))
    );
    assert_eq!(index.find("z", &[]).map(|(e, _)| e.sha.as_str()), Some("c"));
    assert!(index.find("z", &["y".to_string()]).is_none());
}

#[test]
fn unknown_schemas_and_fields_are_refused() {
    let good = serde_json::to_vec(&Index::new("main")).unwrap();
    for layout in [V1Layout::DataBranch, V1Layout::LocalDir] {
        assert!(Index::parse(&good, "i", "main", layout).is_ok());
        assert!(Index::parse(&good, "i", "dev", layout).is_err());
        for version in ["0", "3", "99", "\"1\"", "null"] {
            let text = format!(
                r#"{{"schema":"benchgate-baseline-index","version":{version},"branch":"main","entries":[]}}"#
            );
            let err = Index::parse(text.as_bytes(), "dir/index.json", "main", layout)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("version")
                    && err.contains("dir/index.json")
                    && err.contains("by hand"),
                "{err}"
            );
        }
        let other = br#"{"schema":"other","version":2,"branch":"main","entries":[]}"#;
        assert!(Index::parse(other, "i", "main", layout).is_err());
        for version in [1, 2] {
            let extra = format!(
                r#"{{"schema":"benchgate-baseline-index","version":{version},"branch":"main","entries":[],"x":1}}"#
            );
            assert!(Index::parse(extra.as_bytes(), "i", "main", layout).is_err());
        }
        assert!(Index::parse(b"{not json", "i", "main", layout).is_err());
    }
    let unknown_entry_field = br#"{"schema":"benchgate-baseline-index","version":2,"branch":"main","entries":[{"sha":"abcdef0","started_at":"t","run_id":"r","file":"f.json","x":1}]}"#;
    assert!(Index::parse(unknown_entry_field, "i", "main", V1Layout::LocalDir).is_err());
}

#[test]
fn file_names_outside_the_branch_directory_are_refused() {
    for file in ["../x.json", "a/b.json", ".hidden", ""] {
        let text = format!(
            r#"{{"schema":"benchgate-baseline-index","version":2,"branch":"main","entries":[{{"sha":"abcdef0","started_at":"t","run_id":"r","file":"{file}"}}]}}"#
        );
        let err = Index::parse(text.as_bytes(), "i", "main", V1Layout::DataBranch)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a plain file name"), "{err}");
    }
}

#[test]
fn a_commit_sha_is_7_to_64_hex_digits() {
    for good in ["abcdef0", "ABCDEF0", &"a".repeat(40), &"0".repeat(64)] {
        assert!(check_sha(good).is_ok(), "{good}");
    }
    for bad in ["", "abcdef", "HEAD", "main", "abcdefg", &"a".repeat(65)] {
        let err = check_sha(bad).unwrap_err().to_string();
        assert!(err.contains("not a commit sha"), "{err}");
    }
}
