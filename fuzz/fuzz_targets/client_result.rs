//! A command client's result file (docs/external-clients.md), as the trial
//! reads it: what is accepted is consistent.
#![no_main]

use benchgate::orchestrate::external;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = external::parse(data) {
        assert_eq!(r.requests, r.ok + r.errors.total());
        assert!(r.elapsed_s.is_finite() && r.elapsed_s > 0.0);
        if let Some(h) = &r.latency {
            assert!(h.len() <= r.requests);
            let _ = h.summary();
        }
    }
});
