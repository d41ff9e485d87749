//! Raw bytes as an HdrHistogram V2 encoding (plain or DEFLATE), base64-encoded
//! the way a results file or a command client's result file carries it, then
//! decoded as report mode and the command-client reader decode it. A decoded
//! histogram re-encodes and decodes to the same counts.
#![no_main]

use base64::Engine as _;
use benchgate::measure::LatencyHistogram;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = base64::engine::general_purpose::STANDARD.encode(data);
    let Ok(h) = LatencyHistogram::decode(&text) else {
        return;
    };
    let summary = h.summary();
    let again = LatencyHistogram::decode(&h.encode()).expect("benchgate's own encoding decodes");
    assert_eq!(again.len(), h.len());
    assert_eq!(again.summary(), summary);
});
