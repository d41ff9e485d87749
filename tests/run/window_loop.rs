//! A built-in client's fork over several windows (`[run] windows`; issue
//! 51 point 1, issue 52 point 3): one driver process per trial, its windows
//! opened and closed by the parent, the trial's figures the sums over its
//! windows; recorded in the results file, schema-valid.

use crate::common;

use common::{run_config, schema_path};

#[test]
fn a_forks_figures_are_the_sums_of_its_windows() {
    let toml =
        "[run]\nrounds = 2\nwarmup = \"20ms\"\nduration = \"60ms\"\npin = false\nwindows = 3\n\
                \n[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
                \n[[scenario]]\nname = \"mocked\"\npath = \"/bytes/22\"\nconcurrency = 2\n";
    let run = run_config(toml, &["--quiet", "--mock-latencies-us", "300"]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&run.out).unwrap()).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path()).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "not schema-valid: {errors:?}");
    let results = run.results();
    assert_eq!(results.config.run.windows, 3);
    let trials = &results.results[0].trials;
    assert_eq!(trials.len(), 2);
    for t in trials {
        assert_eq!(t.failure, None);
        let w = t.windows.as_ref().expect("a fork of windows");
        // Starved windows are measured again, never dropped: the count stays.
        assert_eq!(w.count, 3, "{w:?}");
        let planned = t.window_planned_s.unwrap();
        assert!(
            (planned - 0.18).abs() < 1e-9,
            "three windows planned: {planned}"
        );
        let m = t.metrics.as_ref().unwrap();
        let server = t.server.as_ref().unwrap();
        // The mock sends nothing to the server, whose window is still
        // bracketed by the parent around each of the three windows.
        assert!(m.requests > 0);
        // The driver's summed windows (what its counts are over) and the
        // parent's (open to close): the same three windows, up to the lag of
        // the commands on a loaded machine; a window left out reads 1/3.
        let elapsed = t.window_actual_s.unwrap();
        let ratio = m.elapsed_s / elapsed;
        assert!(
            (0.75..1.34).contains(&ratio),
            "{} vs {elapsed}",
            m.elapsed_s
        );
        assert!(
            server.window_secs > 2.0 * 0.06,
            "three windows at the server: {}",
            server.window_secs
        );
        assert!(m.cpu_us_per_request.is_some());
        // Each window's own figures, in order (their trend within the fork):
        // their requests sum to the fork's.
        assert_eq!(w.values.len(), 3, "{w:?}");
        assert_eq!(w.values.iter().map(|v| v.requests).sum::<u64>(), m.requests);
        // Both CPU readings kept, the gated one named; the fork's start-up
        // (its first response, its CPU until the first window) is known.
        assert_eq!(w.gated_cpu, Some(benchgate::results::ForkCpu::Driver));
        assert!(w.driver_cpu_us.is_some_and(|c| c > 0), "{w:?}");
        assert!(w.group_cpu_us.is_some_and(|c| c > 0), "{w:?}");
        assert!(m.startup_ms.is_some_and(|s| s > 0.0), "{m:?}");
        assert!(m.startup_cpu_ms.is_some_and(|s| s > 0.0), "{m:?}");
    }
}

#[test]
fn a_trial_without_the_window_loop_is_one_window() {
    // h1-lean's event loop speaks no window loop, and a request-count stop
    // has no windows to repeat: with `windows = 2` each trial is one window
    // all the same, in its driver as in the parent.
    let toml = "[run]\nrounds = 1\nwarmup = \"20ms\"\npin = false\nwindows = 2\n\
                \n[[client]]\nname = \"lean\"\nkind = \"h1-lean\"\n\
                \n[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
                \n[[scenario]]\nname = \"timed\"\npath = \"/bytes/22\"\nconcurrency = 2\nduration = \"60ms\"\n\
                \n[[scenario]]\nname = \"counted\"\npath = \"/bytes/22\"\nconcurrency = 2\nrequests = 40\n";
    let results = run_config(toml, &["--quiet"]).results();
    let cells: Vec<(&str, bool)> = (results.results.iter())
        .map(|c| (c.client.as_str(), c.trials[0].windows.is_some()))
        .collect();
    for c in &results.results {
        let t = &c.trials[0];
        assert_eq!(t.failure, None, "{}/{}", c.scenario, c.client);
        assert!(t.metrics.as_ref().unwrap().requests > 0);
    }
    // Only hyper's timed trial is a fork.
    let forks: Vec<_> = cells.iter().filter(|(_, fork)| *fork).collect();
    assert_eq!(forks, [&("a", true)], "{cells:?}");
}
