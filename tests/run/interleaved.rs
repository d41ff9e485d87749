//! `[run] schedule = "interleaved"` (issue 52 point 2): a round's two
//! built-in forks alive at once, their windows taking turns A B B A A B,
//! the round's first side flipping by round, the side not measuring frozen
//! (its CPU over the other's windows ~0); each side's trial a fork of its
//! windows as in a sequential run; the results file schema-valid.

use crate::common;

use common::run_config;

/// An interleaved run of 2 rounds of 3 windows: clients a (hyper) and b
/// (reqwest) in scenario "get", its last line open for more of the scenario.
const TWO_CLIENTS: &str =
    "[run]\nrounds = 2\nwarmup = \"100ms\"\nduration = \"100ms\"\npin = false\n\
                           windows = 3\nschedule = \"interleaved\"\n\
                           \n[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
                           \n[[client]]\nname = \"b\"\nkind = \"reqwest\"\n\
                           \n[[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\nconcurrency = 2\n";

#[test]
fn two_forks_take_turns_window_by_window_the_idle_one_frozen() {
    let run = run_config(TWO_CLIENTS, &["--quiet"]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&run.out).unwrap())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.output.stderr)));
    let errors = common::schema_errors(&doc);
    assert!(errors.is_empty(), "not schema-valid: {errors:?}");
    assert_eq!(doc["config"]["run"]["schedule"], "interleaved");
    let results = run.results();
    assert_eq!(results.results.len(), 2);
    for t in results.results.iter().flat_map(|c| &c.trials) {
        let w = t.windows.as_ref().expect("a fork of windows");
        assert!(w.group_cpu_us.is_some(), "{w:?}");
    }
    // Window pairs alternate which side goes first; the round's first side
    // flips by round (the counterbalanced order).
    assert_eq!(turns(&results, "get", ["a", "b"]), ["abbaab", "baabba"]);
}

/// The clients of an interleaved run of 2 rounds of 3 windows, one letter a
/// window in the order the windows opened, by round, after checking each of
/// the two cells: 2 trials, none failed, each a fork of 3 windows that
/// measured (requests, CPU per request) while the frozen side ran ~0 (a
/// stopped group runs nothing; a few ms allowed for the stop to land).
pub(crate) fn turns(
    r: &benchgate::results::RunResults,
    scenario: &str,
    clients: [&str; 2],
) -> Vec<String> {
    // (opened_at, client) of every kept window, by round.
    let mut turns: [Vec<(String, String)>; 2] = [vec![], vec![]];
    for client in clients {
        let c = common::cell(r, scenario, client);
        assert_eq!(c.trials.len(), 2, "{client}");
        for t in &c.trials {
            assert_eq!(t.failure, None, "{client}");
            let w = t.windows.as_ref().expect("a fork of windows");
            assert_eq!((w.count, w.values.len()), (3, 3), "{w:?}");
            let m = t.metrics.as_ref().unwrap();
            assert!(m.requests > 0 && m.cpu_us_per_request.is_some(), "{m:?}");
            let peer = w.peer_cpu_us.expect("the frozen side's CPU is read");
            assert!(peer < 20_000, "the frozen side ran {peer} µs: {w:?}");
            // A built-in fork's sum of its group's CPU (a command client's
            // is its gated CPU, in its metrics).
            assert!(w.group_cpu_us.is_none_or(|c| c > peer), "{w:?}");
            for v in &w.values {
                assert!(v.requests > 0, "{client}: {v:?}");
                let at = v.opened_at.clone().expect("each window's opening");
                turns[t.round as usize - 1].push((at, client.to_string()));
            }
        }
    }
    turns
        .into_iter()
        .map(|mut round| {
            round.sort();
            round.into_iter().map(|(_, c)| c).collect()
        })
        .collect()
}

#[test]
fn one_fork_failing_fails_both_trials_of_its_round() {
    // b's driver exits before READY (the mock driver's failure knob): a's
    // fork, fine on its own, is no pair without it.
    let toml = "[run]\nrounds = 1\nwarmup = \"20ms\"\nduration = \"50ms\"\npin = false\n\
                windows = 2\nschedule = \"interleaved\"\n\
                \n[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
                \n[[client]]\nname = \"b\"\nkind = \"reqwest\"\n\
                \n[[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\nconcurrency = 2\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("benchgate.toml"), toml).unwrap();
    let output = std::process::Command::new(common::exe())
        .current_dir(dir.path())
        .args(["run", "--config", "benchgate.toml", "--out", "results.json"])
        .args(["--quiet", "--mock-latencies-us", "100"])
        .env("CI", "true")
        .env(benchgate::knobs::MOCK_FAIL_VAR, "b=exit:3")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let results = benchgate::results::RunResults::read(&dir.path().join("results.json")).unwrap();
    let failure = |client: &str| {
        let cell = common::cell(&results, "get", client);
        assert_eq!(cell.trials.len(), 1, "{client}");
        cell.trials[0].failure.clone().unwrap_or_default()
    };
    assert!(
        failure("b").contains("window loop failed"),
        "{}",
        failure("b")
    );
    assert!(
        failure("a").contains("its partner fork (b) failed"),
        "{}",
        failure("a")
    );
}

/// A run of one client in every scenario (a base-vs-head config run at one
/// commit: on main, nightly) has no second fork to take turns with: its forks
/// run one after another, each of its windows, recorded as sequential (a
/// stored interleaved run is then not comparable), and the run says so.
#[test]
fn one_client_per_scenario_runs_sequential_forks_and_says_so() {
    let run = run_config(&format!("{TWO_CLIENTS}clients = [\"a\"]\n"), &[]);
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert!(
        stderr.contains(
            "its forks run one after another, 3 windows each, recorded as schedule \"sequential\""
        ),
        "{stderr}"
    );
    let results = run.results();
    assert_eq!(
        results.config.run.schedule,
        benchgate::config::Schedule::Sequential
    );
    let c = common::cell(&results, "get", "a");
    assert_eq!(c.trials.len(), 2);
    for t in &c.trials {
        assert_eq!(t.failure, None);
        let w = t.windows.as_ref().expect("a fork of windows");
        assert_eq!((w.count, w.values.len()), (3, 3), "{w:?}");
        assert_eq!(w.peer_cpu_us, None, "no partner fork: {w:?}");
    }
}
