//! `[run] schedule = "duet"` (issue 51 point 4): a round's two built-in
//! forks alive at once, their windows opened together, each side against a
//! reference server of its own (on its own half of the CPUs, swapped every
//! round); each side's trial a fork of its windows as in a sequential run;
//! the results file schema-valid.

use crate::common;

use common::run_config;

const DUET: &str = "[run]\nrounds = 2\nwarmup = \"100ms\"\nduration = \"200ms\"\n\
                    windows = 3\nschedule = \"duet\"\n\
                    \n[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
                    \n[[client]]\nname = \"b\"\nkind = \"reqwest\"\n\
                    \n[[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\nconcurrency = 2\n";

#[test]
fn two_forks_open_their_windows_together_each_on_its_own_server() {
    let run = run_config(DUET, &["--quiet"]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&run.out).unwrap())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.output.stderr)));
    let errors = common::schema_errors(&doc);
    assert!(errors.is_empty(), "not schema-valid: {errors:?}");
    assert_eq!(doc["config"]["run"]["schedule"], "duet");
    let results = run.results();
    // (round, window) -> when each side opened it, in µs since the epoch.
    let mut opened = std::collections::BTreeMap::<(u32, usize), Vec<i64>>::new();
    // Windows measured again, by round: a starved window's rerun opens alone.
    let mut reruns = std::collections::BTreeMap::<u32, u32>::new();
    for client in ["a", "b"] {
        let c = common::cell(&results, "get", client);
        assert_eq!(c.trials.len(), 2, "{client}");
        for t in &c.trials {
            assert_eq!(t.failure, None, "{client}");
            let w = t.windows.as_ref().expect("a fork of windows");
            assert_eq!((w.count, w.values.len()), (3, 3), "{w:?}");
            *reruns.entry(t.round).or_default() += w.rerun;
            assert_eq!(w.peer_cpu_us, None, "nothing is frozen: {w:?}");
            for (k, v) in w.values.iter().enumerate() {
                // Its own server: on one server for both, each side's window
                // would read about twice its own requests there.
                assert!(v.requests > 0, "{client}: {v:?}");
                assert!(
                    (v.server_requests as f64) < 1.5 * v.requests as f64,
                    "{client}'s server answered another side too: {v:?}"
                );
                let at = v.opened_at.as_deref().expect("each window's opening");
                let at = chrono::DateTime::parse_from_rfc3339(at).unwrap();
                (opened.entry((t.round, k)).or_default()).push(at.timestamp_micros());
            }
        }
    }
    assert_eq!(opened.len(), 6, "{opened:?}");
    for round in [1, 2] {
        // Together: taking turns would put them a window (200 ms) apart.
        // Each window measured again (alone) moves at most one kept window.
        let apart: Vec<f64> = (0..3)
            .map(|k| {
                let at = &opened[&(round, k)];
                (at[0] - at[1]).abs() as f64 / 1e3
            })
            .filter(|ms| *ms >= 100.0)
            .collect();
        let again = reruns.get(&round).copied().unwrap_or(0);
        assert!(
            apart.len() <= again as usize,
            "round {round}: windows opened {apart:?} ms apart, {again} measured again"
        );
    }
}
