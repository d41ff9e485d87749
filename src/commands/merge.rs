//! `benchgate merge FILES... --out FILE`: the edge of [`results::merge`]:
//! reads every shard's results file (or JMH result files, joined by
//! benchmark, `results::jmh_merge`), merges them, writes one results file and
//! says which shards ran on another kind of runner than shard 1.

use crate::cli::MergeArgs;
use crate::report::untrusted::for_log;
use crate::results::jmh::TrialUnit;
use crate::results::merge;

/// `benchgate merge`.
pub fn merge(args: MergeArgs) -> anyhow::Result<u8> {
    let jmh = match &args.config {
        Some(path) => crate::config::Suite::from_file(path)?.jmh,
        None => Default::default(),
    };
    let merged = merge::read_and_merge(&args.files, TrialUnit::of(&jmh))?;
    merged.write_atomic(&args.out)?;
    let line = format!(
        "benchgate: merged {} {} ({} cells) into {}",
        args.files.len(),
        if merged.jmh.is_some() {
            "JMH result files"
        } else {
            "shards"
        },
        merged.results.len(),
        args.out.display()
    );
    crate::stderrln!("{}", for_log(&line));
    // The notes name the shards' runners, from their results files.
    for note in merge::runner_notes(&merged) {
        crate::stderrln!("{}", for_log(&format!("benchgate: note: {note}")));
    }
    Ok(0)
}
