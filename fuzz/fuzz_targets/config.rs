//! A config file's bytes, through what `benchgate run --config FILE` reads
//! them with (size cap, UTF-8, TOML, validation). A suite that validates must
//! survive the JSON round trip that hands it to each driver process and
//! records it in the results file, and take the command line's overrides.
#![no_main]

use benchgate::config::{Overrides, Suite};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(suite) = Suite::from_bytes(data, "bench.toml") else {
        return;
    };
    let json = serde_json::to_string(&suite).expect("a validated suite serializes");
    let back: Suite = serde_json::from_str(&json).expect("a validated suite reads back");
    assert_eq!(back, suite);
    let _ = suite.with_overrides(&Overrides {
        rounds: Some(3),
        budget: Some("5m".into()),
        no_pin: true,
        scenarios: Vec::new(),
    });
});
