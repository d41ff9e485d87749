//! A baseline index from the data branch or a local store (anyone who can
//! push to the data branch writes it): `Index::parse`, as either store reads
//! a version 1 file (the first byte picks which). An index that parses names
//! only plain file names in its directory (checked here on its own terms:
//! never a path, never a dot file), is the branch asked for, and reads back
//! as itself once written.
#![no_main]

use benchgate::baseline::index::{Index, V1Layout};
use libfuzzer_sys::fuzz_target;

const BRANCH: &str = "main";

fuzz_target!(|data: &[u8]| {
    let Some((&pick, doc)) = data.split_first() else {
        return;
    };
    let layout = match pick % 2 {
        0 => V1Layout::DataBranch,
        _ => V1Layout::LocalDir,
    };
    let Ok(index) = Index::parse(doc, "index.json", BRANCH, layout) else {
        return;
    };
    assert_eq!(index.branch, BRANCH);
    for e in &index.entries {
        let f = &e.file;
        assert!(
            !f.is_empty() && !f.starts_with('.') && !f.contains(['/', '\\', '\0']),
            "an index entry names {f:?}, not a plain file name"
        );
    }
    let written = serde_json::to_vec(&index).expect("an index serializes");
    let back = Index::parse(&written, "written", BRANCH, layout).expect("a written index reads back");
    assert_eq!(back, index);
});
