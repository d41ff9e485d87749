//! The guard on synthetic runs: a marked trial raises its cell's gating rows.

use super::super::{compare, compare_side_by_side};
use crate::compare::model::{GateOutcome, Tier, Verdict};
use crate::config::gate::{default_gate, InvalidPolicy};
use crate::config::Suite;
use crate::results::synthetic;
use crate::results::validity::InvalidMark;
use crate::results::RunResults;

fn run(rounds: u32) -> RunResults {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(1);
    synthetic::run(s, rounds, |_, _, _| {
        Some(synthetic::metrics(10_000.0, 2000.0, 50.0))
    })
}

/// `run` with round 2 of the first cell marked: 1200 of 2000 req/s.
fn marked(rounds: u32) -> RunResults {
    let mut r = run(rounds);
    r.results[0].trials[1].invalid = vec![InvalidMark::RateShortfall {
        target_rps: 2000.0,
        achieved_rps: 1200.0,
    }];
    r
}

#[test]
fn a_marked_cell_warns_by_default_and_fails_under_the_switch() {
    let (base, cur) = (run(5), marked(5));
    let c = compare(Some(&base), &cur, &default_gate());
    let cell = (&cur.results[0].scenario, &cur.results[0].client);
    let rows: Vec<_> = c
        .metrics
        .iter()
        .filter(|m| (&m.scenario, &m.client) == cell)
        .collect();
    assert!(!rows.is_empty());
    for m in &rows {
        assert_eq!(m.verdict, Verdict::Unchanged, "{m:?}");
        assert_eq!(
            m.invalid,
            ["round 2: open loop reached 1200 of 2000 req/s (60%, under 95%)"]
        );
        assert!(
            m.reason
                .starts_with("invalid trials ([gate] invalid = \"warn\")"),
            "{}",
            m.reason
        );
        let want = if m.gating { Tier::Warn } else { Tier::Pass };
        assert_eq!(m.tier, want, "{}", m.metric);
    }
    assert!(rows.iter().any(|m| m.gating));
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Pass, 0));
    // The other cells are untouched.
    assert!(c
        .metrics
        .iter()
        .filter(|m| (&m.scenario, &m.client) != cell)
        .all(|m| m.invalid.is_empty() && m.tier == Tier::Pass));

    let mut gate = default_gate();
    gate.invalid = InvalidPolicy::Fail;
    let c = compare(Some(&base), &cur, &gate);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    // A marked baseline counts too.
    let c = compare(Some(&cur), &base, &gate);
    assert_eq!(c.exit_code, 1);
    assert!(c.metrics.iter().any(|m| m.invalid[..]
        == ["baseline round 2: open loop reached 1200 of 2000 req/s (60%, under 95%)"]));
}

#[test]
fn side_by_side_counts_marks_on_the_baseline_client() {
    let cur = marked(5);
    let mut gate = default_gate();
    gate.invalid = InvalidPolicy::Fail;
    let (a, b) = (&cur.results[0].client, &cur.results[1].client);
    // The marked client as the baseline of the other one.
    let c = compare_side_by_side(&cur, a, &gate);
    let row = c
        .metrics
        .iter()
        .find(|m| &m.client == b && m.gating)
        .expect("a gating row of the compared client");
    assert_eq!(row.tier, Tier::Fail, "{row:?}");
    assert_eq!(c.exit_code, 1);
}

#[test]
fn a_row_lists_a_few_marks_and_counts_the_rest() {
    let base = run(10);
    let mut cur = run(10);
    for t in &mut cur.results[0].trials {
        t.invalid = vec![InvalidMark::RateShortfall {
            target_rps: 2000.0,
            achieved_rps: 1000.0,
        }];
    }
    let c = compare(Some(&base), &cur, &default_gate());
    let row = c.metrics.iter().find(|m| !m.invalid.is_empty()).unwrap();
    assert_eq!(row.invalid.len(), 5, "{:?}", row.invalid);
    assert_eq!(row.invalid[4], "and 6 more");
}

/// Every trial of the cells of `r` at `cells` starved in every attempt.
fn starve(r: &mut RunResults, cells: &[usize]) {
    for &i in cells {
        for t in &mut r.results[i].trials {
            t.invalid = vec![InvalidMark::Starved {
                reason: "it completed no request in its window".into(),
            }];
        }
    }
}

/// Each gating metric of the cells of `c` named by `client` is inconclusive,
/// its reason saying why nothing was measured.
fn unmeasured(c: &crate::compare::Comparison, client: &str, why: &str) {
    let rows: Vec<_> = c
        .metrics
        .iter()
        .filter(|m| m.client == client && m.gating)
        .collect();
    let names: Vec<_> = rows.iter().map(|m| m.metric.as_str()).collect();
    assert_eq!(
        names,
        [
            "throughput_rps",
            "latency_p99_us",
            "error_rate",
            "cpu_us_per_request"
        ],
        "{c:#?}"
    );
    for m in rows {
        assert_eq!(
            (m.verdict, m.tier),
            (Verdict::Inconclusive, Tier::Warn),
            "{m:?}"
        );
        assert!(m.undecided());
        assert!(
            m.reason.contains("not measured, so not decided: "),
            "{}",
            m.reason
        );
        assert!(m.reason.contains(why), "{}", m.reason);
        assert_eq!(
            m.undecidable.as_deref().map(|u| u.contains(why)),
            Some(true)
        );
        assert!(m.advice.is_none(), "{m:?}");
    }
}

#[test]
fn a_cell_whose_trials_all_starved_is_inconclusive_never_a_pass() {
    let (ok, mut all) = (run(5), run(5));
    starve(&mut all, &[0, 1]);
    let gate = default_gate();
    // Both sides, the current side, the stored baseline's side.
    let cases = [
        (&all, &all, "every trial was starved by the machine (5 of 5), as was every trial of the baseline (5 of 5): get-22b / hyper round 1/5: starved by the machine: it completed no request in its window"),
        (&ok, &all, "every trial was starved by the machine (5 of 5): get-22b / hyper round 1/5"),
        (&all, &ok, "every trial of the baseline was starved by the machine (5 of 5): get-22b / hyper round 1/5"),
    ];
    for (base, cur, why) in cases {
        let c = compare(Some(base), cur, &gate);
        assert_eq!(
            (c.outcome, c.exit_code),
            (GateOutcome::Inconclusive, 0),
            "{why}"
        );
        unmeasured(&c, "hyper", why);
    }
    // One starved cell among measured ones: the run is not a pass either.
    let mut one = run(5);
    starve(&mut one, &[0]);
    let c = compare(Some(&ok), &one, &gate);
    assert_eq!(c.outcome, GateOutcome::Inconclusive);
    unmeasured(
        &c,
        "hyper",
        "every trial was starved by the machine (5 of 5)",
    );
    assert!(c
        .metrics
        .iter()
        .filter(|m| m.client != "hyper")
        .all(|m| m.verdict == Verdict::Unchanged));
    // Its exit code is `[gate] inconclusive`'s.
    let mut strict = default_gate();
    strict.inconclusive = crate::config::gate::InconclusivePolicy::Fail;
    assert_eq!(compare(Some(&ok), &one, &strict).exit_code, 1);
    // A cell partly failed, the rest starved, says so.
    let mut mixed = run(5);
    starve(&mut mixed, &[0]);
    let last = &mut mixed.results[0].trials[4];
    (last.failure, last.invalid) = (Some("synthetic failure".into()), vec![]);
    let c = compare(Some(&ok), &mixed, &gate);
    unmeasured(&c, "hyper", "(4 of 5, the other 1 failed)");
}

#[test]
fn side_by_side_a_starved_side_leaves_the_pair_inconclusive() {
    let gate = default_gate();
    let cases: [(&[usize], &str); 3] = [
        (&[0, 1], "every trial was starved by the machine (5 of 5), as was every trial of the baseline (5 of 5): get-22b / reqwest round 1/5"),
        (&[0], "every trial of the baseline was starved by the machine (5 of 5): get-22b / hyper round 1/5"),
        (&[1], "every trial was starved by the machine (5 of 5): get-22b / reqwest round 1/5"),
    ];
    for (cells, why) in cases {
        let mut r = run(5);
        starve(&mut r, cells);
        let c = compare_side_by_side(&r, "hyper", &gate);
        assert_eq!(
            (c.outcome, c.exit_code),
            (GateOutcome::Inconclusive, 0),
            "{why}"
        );
        unmeasured(&c, "reqwest", why);
    }
    // Each side measured some rounds, never the same one: no pair.
    let mut r = run(5);
    for (cell, rounds) in [(0, 1..=3), (1, 4..=5)] {
        for t in r.results[cell]
            .trials
            .iter_mut()
            .filter(|t| rounds.contains(&t.round))
        {
            t.invalid = vec![InvalidMark::Starved {
                reason: "it completed no request in its window".into(),
            }];
        }
    }
    let c = compare_side_by_side(&r, "hyper", &gate);
    assert_eq!(c.outcome, GateOutcome::Inconclusive);
    unmeasured(&c, "reqwest", "no round has a counted trial of both sides (the baseline's in 2 of 5 rounds, this one's in 3 of 5; the others starved or failed)");
}
