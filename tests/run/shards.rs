//! `benchgate run --shard K/N` and `benchgate merge` through the real binary
//! (issue 18, point 1): two shards merged give the cells of one run of the
//! whole suite; a missing shard, a duplicated shard and a shard of another
//! config are refused with their names; a shard measured on another kind of
//! runner is not comparable with a baseline, cell by cell. Mock drivers,
//! loopback only, each run well under 10 s.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchgate::results::RunResults;
use common::exe;

/// Three scenarios of different lengths; `pair` holds two clients (a
/// side-by-side pair, which a shard must keep together).
const SUITE: &str = r#"
[run]
rounds = 2
warmup = "20ms"
requests = 20

[[client]]
name = "a"
kind = "hyper"

[[client]]
name = "b"
kind = "reqwest"

[[scenario]]
name = "pair"
path = "/bytes/22"
concurrency = 2

[[scenario]]
name = "long"
path = "/bytes/22"
concurrency = 2
requests = 60
clients = ["a"]

[[scenario]]
name = "short"
path = "/bytes/22"
concurrency = 1
clients = ["b"]
"#;

const MOCK: &[&str] = &["--mock-latencies-us", "300", "--quiet", "--no-pin"];

fn benchgate(dir: &Path, args: &[&str]) -> Output {
    Command::new(exe())
        .current_dir(dir)
        .args(args)
        .env("CI", "true")
        .output()
        .unwrap()
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn refused(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    stderr(out)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `benchgate run` in `dir` with `extra` arguments, results to `out`.
fn run(dir: &Path, out: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["run", "--config", "benchgate.toml", "--out", out];
    args.extend_from_slice(MOCK);
    args.extend_from_slice(extra);
    ok(&benchgate(dir, &args));
    dir.join(out)
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("benchgate.toml"), SUITE).unwrap();
    dir
}

/// (scenario, client, server, trial count) of every cell.
fn cells(r: &RunResults) -> BTreeSet<(String, String, Option<String>, usize)> {
    r.results
        .iter()
        .map(|c| {
            (
                c.scenario.clone(),
                c.client.clone(),
                c.server.clone(),
                c.trials.iter().filter(|t| t.metrics.is_some()).count(),
            )
        })
        .collect()
}

#[test]
fn two_shards_merged_give_the_cells_of_one_whole_run() {
    let dir = setup();
    let d = dir.path();
    let whole = RunResults::read(&run(d, "whole.json", &[])).unwrap();
    let one = run(d, "s1.json", &["--shard", "1/2"]);
    let two = run(d, "s2.json", &["--shard", "2/2"]);
    let (r1, r2) = (
        RunResults::read(&one).unwrap(),
        RunResults::read(&two).unwrap(),
    );
    common::assert_results_valid(&one);
    // Whole scenarios, balanced by expected time: `pair` (two clients, so
    // twice the trials) alone; `long` and `short` (one client each) together.
    let names = |r: &RunResults| -> Vec<String> {
        r.config.scenarios.iter().map(|s| s.name.clone()).collect()
    };
    let shard = |r: &RunResults| r.shard.clone().expect("a shard records its header");
    assert_eq!((shard(&r1).index, shard(&r1).count), (Some(1), 2));
    assert_eq!(shard(&r1).config_hash, shard(&r2).config_hash);
    let mut split = [names(&r1), names(&r2)];
    split.sort();
    assert_eq!(
        split,
        [
            vec!["long".to_string(), "short".into()],
            vec!["pair".into()]
        ]
    );

    // Any order of files.
    ok(&benchgate(
        d,
        &["merge", "s2.json", "s1.json", "--out", "merged.json"],
    ));
    common::assert_results_valid(&d.join("merged.json"));
    let merged = RunResults::read(&d.join("merged.json")).unwrap();
    assert_eq!(cells(&merged), cells(&whole));
    assert_eq!(
        names(&merged).into_iter().collect::<BTreeSet<_>>(),
        names(&whole).into_iter().collect::<BTreeSet<_>>()
    );
    let info = merged.shard.clone().unwrap();
    assert_eq!(info.index, None);
    assert_eq!(
        info.merged.iter().map(|m| m.index).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(info.merged[1].run_id, r2.run_id);
    assert_eq!(merged.interrupted, None);

    // The merged run compares with the whole run like any run on this machine.
    let out = benchgate(
        d,
        &[
            "compare",
            "--baseline",
            "whole.json",
            "--current",
            "merged.json",
            "--json",
            "cmp.json",
        ],
    );
    assert!(out.status.code() != Some(2), "{}", stderr(&out));
    let cmp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("cmp.json")).unwrap()).unwrap();
    let verdicts: BTreeSet<&str> = cmp["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["verdict"].as_str().unwrap())
        .collect();
    assert!(!verdicts.contains("not_comparable"), "{verdicts:?}");
    assert!(!verdicts.contains("no_baseline"), "{verdicts:?}");
    assert!(!verdicts.is_empty());
}

#[test]
fn a_missing_a_duplicated_and_a_foreign_shard_are_refused_by_name() {
    let dir = setup();
    let d = dir.path();
    run(d, "s1.json", &["--shard", "1/2"]);
    run(d, "s2.json", &["--shard", "2/2"]);
    // Another config: the same suite with another rounds count.
    run(d, "other2.json", &["--shard", "2/2", "--rounds", "3"]);

    let e = refused(&benchgate(d, &["merge", "s1.json", "--out", "m.json"]));
    assert!(
        e.contains("shard 2/2 missing: got 1 of 2 shard results (s1.json)"),
        "{e}"
    );
    let e = refused(&benchgate(
        d,
        &["merge", "s1.json", "s1.json", "s2.json", "--out", "m.json"],
    ));
    assert!(
        e.contains("shard 1/2 is given twice: s1.json and s1.json"),
        "{e}"
    );
    let e = refused(&benchgate(
        d,
        &["merge", "s1.json", "other2.json", "--out", "m.json"],
    ));
    assert!(
        e.contains("other2.json is a shard of another config"),
        "{e}"
    );
    assert!(e.contains("than s1.json"), "{e}");
    let whole = run(d, "whole.json", &[]);
    let e = refused(&benchgate(
        d,
        &["merge", "s1.json", "whole.json", "--out", "m.json"],
    ));
    assert!(e.contains("whole.json is not a shard"), "{e}");
    assert!(
        whole.exists() && !d.join("m.json").exists(),
        "nothing written"
    );

    let e = refused(&benchgate(
        d,
        &["run", "--config", "benchgate.toml", "--shard", "1/4"],
    ));
    assert!(
        e.contains("--shard 1/4: benchgate.toml has 3 scenario(s), so 4 shards would leave some empty; use at most 3 shards"),
        "{e}"
    );
    let e = refused(&benchgate(
        d,
        &["run", "--config", "benchgate.toml", "--shard", "3"],
    ));
    assert!(e.contains("--shard \"3\": give K/N"), "{e}");
}

#[test]
fn a_shard_on_another_kind_of_runner_is_not_comparable_cell_by_cell() {
    let dir = setup();
    let d = dir.path();
    run(d, "whole.json", &[]);
    run(d, "s1.json", &["--shard", "1/2"]);
    let two = run(d, "s2.json", &["--shard", "2/2"]);
    // Shard 2 ran on a runner with another CPU.
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&two).unwrap()).unwrap();
    doc["environment"]["cpu_model"] = "Another CPU".into();
    std::fs::write(&two, serde_json::to_vec(&doc).unwrap()).unwrap();
    let s2 = RunResults::read(&two).unwrap();
    let other: BTreeSet<String> = s2.config.scenarios.iter().map(|s| s.name.clone()).collect();

    let out = benchgate(d, &["merge", "s1.json", "s2.json", "--out", "merged.json"]);
    ok(&out);
    assert!(
        stderr(&out)
            .contains("shard 2 ran on another kind of runner than shard 1 (cpu_model differs"),
        "{}",
        stderr(&out)
    );
    let merged = RunResults::read(&d.join("merged.json")).unwrap();
    let first = merged
        .results
        .iter()
        .find(|c| !other.contains(&c.scenario))
        .unwrap();
    let second = merged
        .results
        .iter()
        .find(|c| other.contains(&c.scenario))
        .unwrap();
    assert_eq!(
        merged.environment_of(&second.scenario).cpu_model,
        "Another CPU"
    );
    assert_ne!(
        merged.environment_of(&first.scenario).cpu_model,
        "Another CPU"
    );

    let out = benchgate(
        d,
        &[
            "compare",
            "--baseline",
            "whole.json",
            "--current",
            "merged.json",
            "--json",
            "cmp.json",
        ],
    );
    assert!(out.status.code() != Some(2), "{}", stderr(&out));
    let cmp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("cmp.json")).unwrap()).unwrap();
    for m in cmp["metrics"].as_array().unwrap() {
        let scenario = m["scenario"].as_str().unwrap();
        let (verdict, reason) = (
            m["verdict"].as_str().unwrap(),
            m["reason"].as_str().unwrap(),
        );
        if other.contains(scenario) {
            assert_eq!(verdict, "not_comparable", "{scenario}: {reason}");
            assert!(
                reason.contains("measured on shard 2's runner: cpu_model differs"),
                "{reason}"
            );
        } else {
            assert_ne!(verdict, "not_comparable", "{scenario}: {reason}");
        }
    }
}
