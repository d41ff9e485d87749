//! Counterbalanced order (issue 29, point 4) and the trial's timing fields
//! (point 1), end to end: the mock driver for every client against the real
//! reference server, one process per trial, a few short rounds on loopback.
//! The order is read back from what the run records: each trial's
//! `started_at`. Cells stay in config order in the file.

use crate::common;

use benchgate::results::RunResults;
use common::run_config;

/// `clients` as mock clients of one scenario, `rounds` rounds of a 20 ms
/// warmup and a 60 ms window; `anchor`: with `[run] anchor`.
fn config(clients: &[&str], rounds: u32, anchor: bool) -> String {
    let mut toml = format!(
        "[run]\nrounds = {rounds}\nwarmup = \"20ms\"\nduration = \"60ms\"\npin = false\nanchor = {anchor}\n"
    );
    for c in clients {
        toml += &format!("\n[[client]]\nname = \"{c}\"\nkind = \"hyper\"\n");
    }
    toml += "\n[[scenario]]\nname = \"mocked\"\npath = \"/bytes/22\"\nconcurrency = 2\n";
    toml
}

fn run(clients: &[&str], rounds: u32, anchor: bool) -> RunResults {
    let run = run_config(
        &config(clients, rounds, anchor),
        &["--quiet", "--mock-latencies-us", "300"],
    );
    let results = run.results();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&run.out).unwrap()).unwrap();
    let errors = common::schema_errors(&doc);
    assert!(
        errors.is_empty(),
        "not schema-valid:\n{}",
        errors.join("\n")
    );
    results
}

/// Each round's clients in the order their trials started (`started_at`).
fn orders(r: &RunResults, rounds: u32) -> Vec<Vec<String>> {
    (1..=rounds)
        .map(|round| {
            let mut started: Vec<(&str, &str)> = r
                .results
                .iter()
                .flat_map(|c| c.trials.iter().map(move |t| (t, c.client.as_str())))
                .filter(|(t, _)| t.round == round)
                .map(|(t, client)| {
                    let at = t.started_at.as_deref().expect("every trial has started_at");
                    (at, client)
                })
                .collect();
            started.sort();
            started.into_iter().map(|(_, c)| c.to_string()).collect()
        })
        .collect()
}

#[test]
fn two_clients_alternate_and_every_trial_records_its_start_and_window() {
    let r = run(&["a", "b"], 4, false);
    let clients: Vec<&str> = r.results.iter().map(|c| c.client.as_str()).collect();
    assert_eq!(clients, ["a", "b"], "cells in config order");
    assert_eq!(
        orders(&r, 4),
        [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]],
        "the order alternates by round"
    );
    for cell in &r.results {
        for t in &cell.trials {
            assert!(t.failure.is_none(), "{:?}", t.failure);
            let at = t.started_at.as_deref().unwrap();
            // RFC 3339, UTC, microseconds: 2026-11-30T01:02:03.123456Z.
            assert_eq!(at.len(), 27, "{at}");
            assert!(at.ends_with('Z') && at.as_bytes()[19] == b'.', "{at}");
            // The run's start has whole seconds only.
            assert!(
                at[..19] >= r.started_at[..19],
                "{at} before the run's start"
            );
            assert_eq!(t.window_planned_s, Some(0.06));
            let actual = t.window_actual_s.expect("the driver's actual window");
            assert!(actual > 0.0 && actual < 60.0, "{actual}");
            let server = t.server.as_ref().expect("the reference server's counters");
            assert!(server.window_secs > 0.0);
        }
    }
}

/// Three cells rotate (every pair in both orders every two rounds); the
/// anchor keeps its place, first in every round.
#[test]
fn three_clients_rotate_and_the_anchor_stays_first() {
    let r = run(&["a", "b", "c"], 6, true);
    let clients: Vec<&str> = r.results.iter().map(|c| c.client.as_str()).collect();
    assert_eq!(clients, ["a", "b", "c", "anchor"], "cells in config order");
    let want = [
        ["anchor", "a", "b", "c"],
        ["anchor", "c", "b", "a"],
        ["anchor", "b", "c", "a"],
        ["anchor", "a", "c", "b"],
        ["anchor", "c", "a", "b"],
        ["anchor", "b", "a", "c"],
    ];
    assert_eq!(orders(&r, 6), want);
}
