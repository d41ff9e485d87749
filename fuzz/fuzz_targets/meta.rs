//! A `benchgate-meta.json` that came with a fork's artifact, as report mode
//! checks it against the `workflow_run` payload's head sha.
#![no_main]

use benchgate::action::check_meta;
use libfuzzer_sys::fuzz_target;

const HEAD: &str = "2222222222222222222222222222222222222222";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(meta) = check_meta(text, HEAD) {
        assert!(meta.head_sha.eq_ignore_ascii_case(HEAD));
    }
});
