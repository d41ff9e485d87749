//! The action across a matrix (issue 18, point 2). A shard job (`mode:
//! shard`, input `shard: K/N`) runs its share of the suite like `measure`
//! and leaves the results for `actions/upload-artifact`; the merge job
//! (`mode: merge`, input `shards`: where `actions/download-artifact` put
//! them) merges them here instead of running anything, then compares,
//! comments once, gates and stores as its event says (`flows`). The
//! fork-safe `report` reads a sharded measure's artifacts the same way.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::config::Suite;
use crate::orchestrate::shard::config_hash;
use crate::results::jmh::TrialUnit;
use crate::results::{merge, RunResults};

use super::outputs::{annotation, command, Level};
use super::Action;

/// How deep below input `shards` results files are looked for
/// (download-artifact puts each artifact in its own directory).
const MAX_DEPTH: usize = 4;

/// Most files looked at below input `shards` (a matrix has at most 256 jobs).
const MAX_FILES: usize = 4096;

impl Action {
    /// The shard jobs' results files: every file below input `shards` named
    /// as `results-path` is (the shard jobs' own `results-path`), sorted,
    /// except this job's own results file.
    pub(crate) fn shard_files(&self) -> anyhow::Result<Vec<PathBuf>> {
        let Some(dir) = &self.inputs.shards else {
            return Ok(Vec::new());
        };
        let dir = self.workdir.join(dir);
        anyhow::ensure!(
            dir.is_dir(),
            "input `shards`: {} is not a directory; give the `path` actions/download-artifact downloaded the shard jobs' results to",
            dir.display()
        );
        let own = self.results_path();
        let name = own
            .file_name()
            .context("input `results-path` has no file name")?
            .to_os_string();
        let mut found = Vec::new();
        let mut seen = 0;
        let mut stack = vec![(dir.clone(), 0)];
        while let Some((d, depth)) = stack.pop() {
            let entries = std::fs::read_dir(&d)
                .with_context(|| format!("input `shards`: reading {}", d.display()))?;
            for entry in entries {
                let entry =
                    entry.with_context(|| format!("input `shards`: reading {}", d.display()))?;
                seen += 1;
                anyhow::ensure!(
                    seen <= MAX_FILES,
                    "input `shards`: {} holds over {MAX_FILES} files; give the directory of the shard jobs' artifacts only",
                    dir.display()
                );
                let path = entry.path();
                let kind = entry.file_type()?;
                if kind.is_dir() && depth < MAX_DEPTH {
                    stack.push((path, depth + 1));
                } else if kind.is_file()
                    && path.file_name() == Some(name.as_os_str())
                    && path != own
                {
                    found.push(path);
                }
            }
        }
        found.sort();
        anyhow::ensure!(
            !found.is_empty(),
            "input `shards`: no file named {:?} below {}; download every shard job's artifact there (actions/download-artifact with `pattern:` and `path:`) and give the shard jobs the same `results-path` as this job",
            name.to_string_lossy(),
            dir.display()
        );
        Ok(found)
    }

    /// The merge job's results: the shards below input `shards`, merged
    /// ([`merge::merge`] refuses a missing, duplicated or foreign shard),
    /// cut from this job's `suite` (the same config hash), none of them
    /// partial; written to `results-path`. Shards on another kind of runner
    /// are said as notices (their cells are judged per cell).
    pub(crate) fn merged_shards(&self, suite: &Suite) -> anyhow::Result<RunResults> {
        let files = self.shard_files()?;
        let merged = merge::read_and_merge(&files, TrialUnit::of(&suite.jmh))?;
        // JMH result files carry no config: nothing to check them against.
        if let Some(info) = merged.shard.as_ref().filter(|_| merged.jmh.is_none()) {
            let ours = config_hash(suite);
            anyhow::ensure!(
                info.config_hash == ours,
            "input `shards`: the shards were cut from another config (hash {}) than this job's {} (hash {ours}): run the shard jobs and the merge job on the same commit with the same `config`",
                info.config_hash,
                suite.source
            );
        }
        if let Some(signal) = &merged.interrupted {
            anyhow::bail!(
                "input `shards`: a shard job was stopped by {signal}: its results are partial; nothing is compared, stored or commented; re-run the failed shard jobs"
            );
        }
        for note in merge::runner_notes(&merged) {
            command(&annotation(Level::Notice, "benchgate shards", &note));
        }
        let out = self.results_path();
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("input `results-path`: creating {}", dir.display()))?;
        }
        merged.write_atomic(&out)?;
        crate::stderrln!(
            "benchgate: merged {} shards ({} cells) into {}",
            files.len(),
            merged.results.len(),
            out.display()
        );
        Ok(merged)
    }
}

/// What `report` compares, and the files it came from (each with its meta
/// file beside it): the shards below input `shards` merged (a sharded
/// measure), else `results-path`.
pub(crate) fn downloaded(a: &Action) -> anyhow::Result<(RunResults, Vec<PathBuf>)> {
    if a.inputs.shards.is_some() {
        let files = a.shard_files()?;
        let trials = TrialUnit::of(&a.suite()?.jmh);
        return Ok((merge::read_and_merge(&files, trials)?, files));
    }
    let path = a.results_path();
    let results = RunResults::read_as(&path, TrialUnit::of(&a.suite()?.jmh)).with_context(|| {
        "input `results-path`: download the measure run's artifact first (actions/download-artifact with `run-id: ${{ github.event.workflow_run.id }}`)"
    })?;
    crate::report::escape::warn_refused_histograms(&results, &path.display().to_string());
    Ok((results, vec![path]))
}
