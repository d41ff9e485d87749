//! The house's rules, held by tests that read the source: the layers of
//! README's "Architecture" table ([`layers`]), where the process
//! environment may be read ([`env_reads`]), the one list of client kinds
//! ([`client_kinds`]), the edges that only call the pipeline's stages
//! ([`stages`]), the comparison mode and the schedule matched only
//! ([`mode_matches`]), the modes of the scripts the workflows and actions run
//! ([`script_modes`]), build.rs's refusal of a target other than Linux
//! ([`build_script`]), what the published crate holds ([`package_list`]), the harness packages'
//! manifests ([`harness_manifests`]), the fuzz targets the weekly workflow
//! runs and seeds ([`fuzz_targets`]),
//! docs/action.md's table of the action's inputs and outputs against
//! action.yml ([`action_inputs`]) and how benchgate prints ([`prints`]). One
//! test binary for all: each binary costs the test command a link.

use std::path::{Path, PathBuf};

mod action_inputs;
mod build_script;
mod client_kinds;
mod env_reads;
mod fuzz_targets;
mod harness_manifests;
mod layers;
mod mode_matches;
mod package_list;
mod prints;
mod script_modes;
mod stages;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `.rs` file under `dir`, into `out`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
