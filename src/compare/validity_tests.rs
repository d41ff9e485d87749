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
