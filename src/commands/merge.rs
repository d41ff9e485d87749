//! `benchgate merge FILES... --out FILE`: the edge of [`results::merge`]:
//! reads every shard's results file, merges them, writes one results file and
//! says which shards ran on another kind of runner than shard 1.

use crate::cli::MergeArgs;
use crate::report::escape::fence;
use crate::results::merge;

/// `benchgate merge`.
pub fn merge(args: MergeArgs) -> anyhow::Result<u8> {
    let merged = merge::read_and_merge(&args.files)?;
    merged.write_atomic(&args.out)?;
    let line = format!(
        "benchgate: merged {} shards ({} cells) into {}",
        args.files.len(),
        merged.results.len(),
        args.out.display()
    );
    eprintln!("{}", fence(&line));
    // The notes name the shards' runners, from their results files.
    for note in merge::runner_notes(&merged) {
        eprintln!("{}", fence(&format!("benchgate: note: {note}")));
    }
    Ok(0)
}
