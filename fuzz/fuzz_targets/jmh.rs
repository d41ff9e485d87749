//! A JMH JSON result file as a `jmh` command client's trial reads it. The
//! first line is the benchmark the config names, the rest the file (the
//! corpus that scripts/fuzz.sh builds from fixtures/jmh has that shape).
#![no_main]

use benchgate::orchestrate::jmh;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (name, file) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&b""[..], data),
    };
    let Ok(name) = std::str::from_utf8(name) else {
        return;
    };
    if let Ok(r) = jmh::parse(file, name) {
        if let Some(rps) = r.throughput_rps {
            assert!(rps.is_finite() && rps >= 0.0);
        }
        if let Some(h) = &r.latency {
            let _ = h.summary();
        }
    }
});
