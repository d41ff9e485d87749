//! JMH result files of different benchmarks joined into one run (`benchgate
//! merge`, the action's `mode: merge`): a team that runs its JMH suite in
//! shards (each a subset of the benchmarks, `java -jar benchmarks.jar
//! 'org.example.a.*'`) gates and stores it as one run.
//!
//! A cell (a benchmark with its params) comes from one file only: the same
//! cell in two files is refused, naming both files and the benchmark, as is
//! a benchmark measured in one mode in one file and in another mode in
//! another (a shard run with another `-bm`): the merged run would compare
//! a throughput with a time per operation. The trials of every file are of
//! one kind (`[jmh] iterations_as_trials`, applied when the files are read),
//! and the merged run holds at most [`MAX_CELLS`] cells, as every results
//! file.

use std::collections::HashMap;

use super::check::MAX_CELLS;
use super::jmh::{modes, RUN_ID_PREFIX};
use super::RunResults;

/// The benchmark of a JMH cell name: the name before its params
/// (`org.example.Bench.get (size=10)` -> `org.example.Bench.get`).
fn benchmark(cell: &str) -> &str {
    cell.split_once(" (").map_or(cell, |(b, _)| b)
}

/// Joins JMH runs (each paired with the name errors give its file) into one,
/// in the order given: the first file's header, every file's cells. `runs`
/// holds JMH runs only ([`super::merge::read_and_merge`] sorts them out).
pub fn merge(runs: Vec<(String, RunResults)>) -> anyhow::Result<RunResults> {
    let mut runs = runs.into_iter();
    let (first_name, mut merged) = runs
        .next()
        .ok_or_else(|| anyhow::anyhow!("no JMH result files given"))?;
    // Where each cell and each benchmark's modes came from.
    let mut cells: HashMap<String, String> = merged
        .results
        .iter()
        .map(|c| (c.scenario.clone(), first_name.clone()))
        .collect();
    let mut benchmarks: HashMap<String, (Vec<&'static str>, String)> = HashMap::new();
    let mut note_modes = |run: &RunResults, name: &str| -> anyhow::Result<()> {
        for cell in &run.results {
            let (bench, m) = (benchmark(&cell.scenario), modes(cell));
            match benchmarks.get(bench) {
                Some((theirs, other)) if *theirs != m && other != name => anyhow::bail!(
                    "{name} holds {bench} in JMH mode {}, {other} in mode {}: a benchmark is merged in one mode (-bm) on every shard; run the shards with the same -bm",
                    m.join("+"),
                    theirs.join("+")
                ),
                Some(_) => {}
                None => {
                    benchmarks.insert(bench.to_string(), (m, name.to_string()));
                }
            }
        }
        Ok(())
    };
    note_modes(&merged, &first_name)?;
    let mut names = vec![first_name.clone()];
    for (name, run) in runs {
        if run.jmh.as_ref().map(|o| o.trials) != merged.jmh.as_ref().map(|o| o.trials) {
            anyhow::bail!(
                "{name} and {first_name} hold trials of different kinds: read every JMH file with the same [jmh] iterations_as_trials (one --config)"
            );
        }
        note_modes(&run, &name)?;
        for cell in &run.results {
            if let Some(other) = cells.get(&cell.scenario) {
                anyhow::bail!(
                    "{other} and {name} both hold {}: a benchmark with its params is merged from one file only; give each shard other benchmarks (or pass one of the files)",
                    cell.scenario
                );
            }
            cells.insert(cell.scenario.clone(), name.clone());
        }
        names.push(name);
        if cells.len() > MAX_CELLS {
            anyhow::bail!(
                "{} hold {} cells (a benchmark with its params each), over the limit of {MAX_CELLS} cells a results file may hold; merge fewer files, and gate the rest as a run of their own",
                names.join(", "),
                cells.len()
            );
        }
        if run.started_at < merged.started_at {
            merged.started_at = run.started_at.clone();
        }
        merged.finished_at = merged.finished_at.max(run.finished_at.clone());
        merged.config.scenarios.extend(run.config.scenarios);
        merged.results.extend(run.results);
    }
    merged.config.source = format!("JMH result files {}", names.join(", "));
    debug_assert!(merged.run_id.starts_with(RUN_ID_PREFIX));
    merged.run_id = format!("{}-merged", merged.run_id);
    Ok(merged)
}
