//! Shards of one suite merged into one results file (`benchgate merge`).
//!
//! `benchgate run --shard K/N` runs whole scenarios (`orchestrate::shard`)
//! and records [`ShardInfo`] in its results: its index, the shard count and
//! the hash of the suite it was cut from. [`merge`] takes the N files of one
//! suite and returns one run: it refuses shards of another config or another
//! benchgate version, a missing and a duplicated shard, naming them. Shards
//! run on different runners, so the merged file keeps every shard's
//! environment and the scenarios it ran ([`MergedShard`]): a cell is
//! comparable with a baseline only when its own runner matches
//! ([`RunResults::environment_of`]), said per cell, never hidden.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Environment, RunResults};

/// Most shards a suite may be cut into (GitHub's matrix allows 256 jobs).
pub const MAX_SHARDS: u32 = 256;

/// How a results file relates to shards of a suite (absent: one whole run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    /// `run --shard K/N`: K (1-based). Absent in a merged file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// N: how many shards the suite was cut into.
    pub count: u32,
    /// SHA-1 of the validated suite (`orchestrate::shard::config_hash`),
    /// before it was cut: shards of one suite share it.
    pub config_hash: String,
    /// A merged file: every shard, by index, with its runner's environment
    /// and the scenarios it ran. Empty in a shard's own file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<MergedShard>,
}

/// One shard of a merged file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergedShard {
    pub index: u32,
    /// The shard's own run id.
    pub run_id: String,
    /// The runner the shard ran on.
    pub environment: Environment,
    /// The scenarios it ran (whole scenarios: every cell of one is here).
    pub scenarios: Vec<String>,
}

impl RunResults {
    /// The environment a cell of `scenario` was measured on: in a merged
    /// file, that of the shard that ran the scenario; otherwise the run's.
    pub fn environment_of(&self, scenario: &str) -> &Environment {
        self.shard
            .iter()
            .flat_map(|s| &s.merged)
            .find(|m| m.scenarios.iter().any(|s| s == scenario))
            .map_or(&self.environment, |m| &m.environment)
    }

    /// The merged shard that ran `scenario` on another runner than the
    /// run's header environment (shard 1's), if any: reports name it.
    pub fn other_runner_shard(&self, scenario: &str) -> Option<u32> {
        let m = self
            .shard
            .iter()
            .flat_map(|s| &s.merged)
            .find(|m| m.scenarios.iter().any(|s| s == scenario))?;
        (m.environment != self.environment).then_some(m.index)
    }
}

/// Merges the results of every shard of one suite; `shards` pairs each file
/// with the name errors give it. The merged run: shard 1's header (run id
/// with `-merged`, git, environment, config), the earliest start and the
/// latest finish, every shard's cells in shard order, the config's scenarios
/// in that same order, and [`ShardInfo::merged`]. A shard stopped by a signal
/// makes the merged run partial (`interrupted`).
pub fn merge(shards: Vec<(String, RunResults)>) -> anyhow::Result<RunResults> {
    anyhow::ensure!(
        !shards.is_empty(),
        "no shard results given: pass every shard's results file (benchgate run --shard K/N writes one)"
    );
    let mut by_index: BTreeMap<u32, (String, RunResults)> = BTreeMap::new();
    let mut first: Option<(String, ShardInfo, String, Option<String>)> = None;
    for (name, run) in shards {
        // A merged file may become the stored baseline: nothing undecodable in it.
        run.refuse_bad_histograms(&name)?;
        let info = run.shard.clone().ok_or_else(|| {
            anyhow::anyhow!(
                "{name} is not a shard: it has no `shard` header; merge only files written by `benchgate run --shard K/N`"
            )
        })?;
        let index = info.index.ok_or_else(|| {
            anyhow::anyhow!(
                "{name} is already a merged file ({} shards); merge the shards' own files instead",
                info.count
            )
        })?;
        let version = run.environment.benchgate_version.clone();
        if let Some((first_name, f, first_version, first_sha)) = &first {
            anyhow::ensure!(
                info.config_hash == f.config_hash,
                "{name} is a shard of another config (hash {}) than {first_name} (hash {}): merge shards of one suite, run with the same config and overrides",
                info.config_hash,
                f.config_hash
            );
            anyhow::ensure!(
                info.count == f.count,
                "{name} is shard {index}/{} but {first_name} is one of {} shards: run every shard with the same --shard K/N count",
                info.count,
                f.count
            );
            anyhow::ensure!(
                version == *first_version,
                "{name} was measured with benchgate {version}, {first_name} with {first_version}: run every shard with the same benchgate version"
            );
            anyhow::ensure!(
                run.git.sha == *first_sha,
                "{name} measured commit {}, {first_name} commit {}: merge shards of one commit",
                run.git.sha.as_deref().unwrap_or("(unknown)"),
                first_sha.as_deref().unwrap_or("(unknown)")
            );
        }
        if first.is_none() {
            first = Some((name.clone(), info.clone(), version, run.git.sha.clone()));
        }
        if let Some((other, _)) = by_index.get(&index) {
            anyhow::bail!(
                "shard {index}/{} is given twice: {other} and {name}; pass each shard's results once",
                info.count
            );
        }
        by_index.insert(index, (name, run));
    }
    let (_, info, _, _) = first.expect("at least one shard was read");
    let missing: Vec<String> = (1..=info.count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{}", info.count))
        .collect();
    anyhow::ensure!(
        missing.is_empty(),
        "shard {} missing: got {} of {} shard results ({}); pass every shard's file (did a matrix job fail or its artifact not download?)",
        missing.join(", "),
        by_index.len(),
        info.count,
        by_index
            .values()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut runs = by_index.into_values().map(|(_, run)| run);
    let mut merged = runs.next().expect("shard 1 is present");
    let mut shards = vec![merged_shard(&merged)];
    for run in runs {
        shards.push(merged_shard(&run));
        if run.started_at < merged.started_at {
            merged.started_at = run.started_at.clone();
        }
        merged.finished_at = match (merged.finished_at.take(), run.finished_at.clone()) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        merged.interrupted = merged.interrupted.take().or(run.interrupted.clone());
        merged.config.scenarios.extend(run.config.scenarios);
        merged.results.extend(run.results);
        merged.budget.extend(run.budget);
    }
    merged.run_id = format!("{}-merged", merged.run_id);
    merged.shard = Some(ShardInfo {
        index: None,
        merged: shards,
        ..info
    });
    Ok(merged)
}

/// Reads the shards' results files (each checked as untrusted input) and
/// merges them; errors name the files. JMH result files (read with
/// `jmh_trials`, `[jmh] iterations_as_trials`) are joined by benchmark
/// ([`super::jmh_merge`]); a mix of JMH and benchgate files is refused.
pub fn read_and_merge(
    files: &[PathBuf],
    jmh_trials: super::jmh::TrialUnit,
) -> anyhow::Result<RunResults> {
    let shards = files
        .iter()
        .map(|path| {
            let run = RunResults::read_as(path, jmh_trials)?;
            Ok((path.display().to_string(), run))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let jmh = shards.iter().find(|(_, r)| r.jmh.is_some());
    let ours = shards.iter().find(|(_, r)| r.jmh.is_none());
    match (jmh, ours) {
        (Some((j, _)), Some((o, _))) => anyhow::bail!(
            "{j} is a JMH result file and {o} a benchgate results file: merge JMH files with JMH files, or benchgate shards with benchgate shards"
        ),
        (Some(_), None) => super::jmh_merge::merge(shards),
        _ => merge(shards),
    }
}

/// One sentence per shard of a merged run that ran on another kind of
/// runner than shard 1 (what makes runs not comparable: CPU model, cores,
/// pinning): its cells are judged on their own runner.
pub fn runner_notes(merged: &RunResults) -> Vec<String> {
    let shards = merged.shard.as_ref().map_or(&[][..], |s| &s.merged[..]);
    shards
        .iter()
        .filter_map(|shard| {
            let diffs = super::profile::environment_differences(&merged.environment, &shard.environment);
            (!diffs.is_empty()).then(|| {
                format!(
                    "shard {} ran on another kind of runner than shard 1 ({}); its scenarios ({}) are compared with a baseline on their own runner's terms, cell by cell",
                    shard.index,
                    diffs.join(", "),
                    shard.scenarios.join(", ")
                )
            })
        })
        .collect()
}

/// The shard header of an untrusted results file: counts in range, at most
/// one merged entry per shard, names bounded. The error names the file and
/// the field.
pub fn check(info: &ShardInfo, source: &str) -> anyhow::Result<()> {
    let corrupt = |what: String| {
        anyhow::anyhow!(
            "{source}: shard.{what}; the file is corrupt or was not written by benchgate: re-run the shard"
        )
    };
    if !(1..=MAX_SHARDS).contains(&info.count) {
        return Err(corrupt(format!(
            "count is {}, not from 1 to {MAX_SHARDS}",
            info.count
        )));
    }
    if let Some(k) = info.index.filter(|k| !(1..=info.count).contains(k)) {
        return Err(corrupt(format!(
            "index is {k}, not from 1 to {}",
            info.count
        )));
    }
    if info.merged.len() > info.count as usize {
        return Err(corrupt(format!(
            "merged lists {} shards, more than count {}",
            info.merged.len(),
            info.count
        )));
    }
    let long = info
        .merged
        .iter()
        .flat_map(|m| &m.scenarios)
        .find(|s| s.len() > super::check::MAX_NAME_BYTES);
    if let Some(name) = long {
        return Err(corrupt(format!(
            "merged names a scenario of {} bytes, over {}",
            name.len(),
            super::check::MAX_NAME_BYTES
        )));
    }
    Ok(())
}

fn merged_shard(run: &RunResults) -> MergedShard {
    MergedShard {
        index: run.shard.as_ref().and_then(|s| s.index).unwrap_or(0),
        run_id: run.run_id.clone(),
        environment: run.environment.clone(),
        scenarios: run
            .config
            .scenarios
            .iter()
            .map(|s| s.name.clone())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Suite;
    use crate::results::synthetic;

    fn header(index: Option<u32>, count: u32) -> ShardInfo {
        ShardInfo {
            index,
            count,
            config_hash: "0".repeat(40),
            merged: Vec::new(),
        }
    }

    /// Shard `index` of 2 of the default suite: its first scenario in shard
    /// 1, the rest in shard 2, on a runner with `cpu`.
    fn shard(index: u32, cpu: &str) -> RunResults {
        let mut run = synthetic::run(Suite::default_suite(), 2, |_, _, _| {
            Some(synthetic::metrics(100.0, 50.0, 10.0))
        });
        let first = run.config.scenarios[0].name.clone();
        let mine = |name: &str| (name == first) == (index == 1);
        run.config.scenarios.retain(|s| mine(&s.name));
        run.results.retain(|c| mine(&c.scenario));
        run.run_id = format!("run-{index}");
        run.environment.cpu_model = cpu.into();
        run.shard = Some(header(Some(index), 2));
        run
    }

    #[test]
    fn an_untrusted_shard_header_is_checked() {
        assert!(check(&header(Some(2), 2), "f.json").is_ok());
        let e = check(&header(Some(3), 2), "f.json")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "f.json: shard.index is 3, not from 1 to 2; the file is corrupt or was not written by benchgate: re-run the shard"
        );
        assert!(check(&header(None, 0), "f.json").is_err());
        assert!(check(&header(None, MAX_SHARDS + 1), "f.json").is_err());
    }

    /// The refusal of merging `a.json` (shard 1 of 2) with `b.json` (shard 2,
    /// changed by `change`).
    fn refusal(change: impl FnOnce(&mut RunResults)) -> String {
        let mut two = shard(2, "EPYC");
        change(&mut two);
        merge(vec![
            ("a.json".into(), shard(1, "EPYC")),
            ("b.json".into(), two),
        ])
        .unwrap_err()
        .to_string()
    }

    #[test]
    fn shards_of_another_benchgate_version_are_refused_with_both_versions() {
        let e = refusal(|r| r.environment.benchgate_version = "0.0.1-other".into());
        let ours = env!("CARGO_PKG_VERSION");
        assert_eq!(
            e,
            format!(
                "b.json was measured with benchgate 0.0.1-other, a.json with {ours}: run every shard with the same benchgate version"
            )
        );
    }

    #[test]
    fn shards_of_another_shard_count_are_refused_with_both_counts() {
        let e = refusal(|r| r.shard = Some(header(Some(2), 3)));
        assert_eq!(
            e,
            "b.json is shard 2/3 but a.json is one of 2 shards: run every shard with the same --shard K/N count"
        );
    }

    #[test]
    fn shards_of_another_commit_are_refused_with_both_commits() {
        let sha = "fedcba9876543210fedcba9876543210fedcba98";
        let e = refusal(|r| r.git.sha = Some(sha.into()));
        assert_eq!(
            e,
            format!(
                "b.json measured commit {sha}, a.json commit 0123456789abcdef0123456789abcdef01234567: merge shards of one commit"
            )
        );
        // A shard that recorded no commit differs from one that did.
        let e = refusal(|r| r.git.sha = None);
        assert!(
            e.starts_with(
                "b.json measured commit (unknown), a.json commit 0123456789abcdef0123456789abcdef01234567"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_merged_run_keeps_each_scenarios_runner() {
        let (one, two) = (shard(1, "EPYC"), shard(2, "Xeon"));
        let merged = merge(vec![("b".into(), two.clone()), ("a".into(), one.clone())]).unwrap();
        assert_eq!(merged.run_id, "run-1-merged");
        assert_eq!(merged.results.len(), one.results.len() + two.results.len());
        assert_eq!(merged.results[0], one.results[0], "shard order");
        let (s1, s2) = (&one.results[0].scenario, &two.results[0].scenario);
        assert_eq!(merged.environment_of(s1).cpu_model, "EPYC");
        assert_eq!(merged.environment_of(s2).cpu_model, "Xeon");
        assert_eq!(merged.other_runner_shard(s1), None);
        assert_eq!(merged.other_runner_shard(s2), Some(2));
        check(merged.shard.as_ref().unwrap(), "merged").unwrap();
        let notes = runner_notes(&merged);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0]
            .starts_with("shard 2 ran on another kind of runner than shard 1 (cpu_model differs"));
        // A merged file is not a shard.
        let e = merge(vec![("m.json".into(), merged)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("m.json is already a merged file"), "{e}");
    }
}
