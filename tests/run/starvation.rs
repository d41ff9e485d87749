//! Issue 29, point 2: every trial records what the machine withheld from it
//! in its window, read from /proc: the client's run delay (a built-in driver
//! reads its own threads; a command client's process group is read by the
//! parent at its markers), its share of the window, its involuntary context
//! switches, the reference server's run delay and the host's steal; n/a on a
//! kernel without them, never an error.

use crate::common;

use std::path::Path;

use benchgate::results::{CellResult, Trial};
use common::{cell, run_config, schema_path, PY_CLIENT};

fn config(dir: &Path) -> String {
    format!(
        r#"[run]
rounds = 2
warmup = "50ms"
duration = "150ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[client]]
name = "python"
kind = "command"
command = ["python3", "client.py"]
cwd = {:?}

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 2
"#,
        dir.display().to_string()
    )
}

/// A trial's starvation figures are there and plausible (with `schedstat`
/// on this kernel; all absent without).
fn check(c: &CellResult, t: &Trial, schedstat: bool) {
    let who = format!("{} round {}", c.client, t.round);
    assert_eq!(t.failure, None, "{who}");
    let m = t.metrics.as_ref().unwrap();
    let server_ns = t.server.as_ref().unwrap().run_delay_ns;
    if !schedstat {
        assert_eq!((m.run_delay_ms, m.run_delay_share), (None, None), "{who}");
        assert_eq!((m.server_run_delay_ms, server_ns), (None, None), "{who}");
        return;
    }
    let delay_ms = m
        .run_delay_ms
        .unwrap_or_else(|| panic!("{who}: no run delay"));
    let share = m.run_delay_share.unwrap();
    assert!(
        delay_ms >= 0.0 && share >= 0.0 && share.is_finite(),
        "{who}: {m:?}"
    );
    // The share is the delay over the window it was read in (the parent's
    // or the driver's window, give or take its wake-ups).
    let window = t.window_actual_s.unwrap();
    let delay_s = delay_ms / 1e3;
    assert!(
        (share * window - delay_s).abs() <= 0.5 * delay_s + 1e-6,
        "{who}: share {share} of a {window} s window, delay {delay_s} s"
    );
    assert!(m.involuntary_context_switches.is_some(), "{who}: {m:?}");
    // The server's, in its counters (ns) and as a metric (ms).
    let server_ns = server_ns.unwrap_or_else(|| panic!("{who}: no server run delay"));
    assert_eq!(m.server_run_delay_ms, Some(server_ns as f64 / 1e6), "{who}");
    if let Some(steal) = m.host_steal_ms {
        assert!(steal >= 0.0 && steal.is_finite(), "{who}: {steal}");
    }
}

#[test]
fn every_trial_records_the_starvation_in_its_window() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("client.py"), PY_CLIENT).unwrap();
    let run = run_config(&config(dir.path()), &[]);
    let r = run.results();
    let schedstat = Path::new("/proc/self/schedstat").exists();
    for client in ["hyper", "python"] {
        let c = cell(&r, "get", client);
        assert_eq!(c.trials.len(), 2, "{client}");
        for t in &c.trials {
            check(c, t, schedstat);
        }
        // Medians across trials, like the other resource figures.
        if schedstat {
            for metric in [
                "run_delay_ms",
                "run_delay_share",
                "involuntary_context_switches",
                "server_run_delay_ms",
            ] {
                assert!(c.summary.contains_key(metric), "{client}: {metric}");
            }
        }
    }
    // The results file, with them, matches its schema.
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&run.out).unwrap()).unwrap();
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(schema_path()).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "not valid:\n{}", errors.join("\n"));
}
