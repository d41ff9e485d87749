//! The budget's stopping rule on synthetic series: rounds without a clock
//! (each takes a given time), and at each look the rows a comparison would
//! give, from a function of the round.

use super::*;
use crate::compare::stats;
use crate::config::gate::{MetricGate, Threshold};
use crate::metric::Direction;

const S: Duration = Duration::from_secs(1);

/// A test without granularity: every planned look can decide
/// (`LookPlan::new` drops the others; `compare::looks` tests that).
fn any(_: u32) -> f64 {
    0.0
}

fn spend(share: Duration, compares: bool) -> Spend {
    Spend::new(
        "get",
        share,
        (4, 300),
        LookPlan::new(4, 300, 0.05, any),
        compares,
    )
}

/// A gating row of `metric` at `n` pairs: `change` with its interval `[lo,
/// hi]` at 96% against a fail threshold of +10%, judged `verdict` (an
/// undecided one gets the advice the comparison would give it).
fn row(
    metric: &str,
    n: u32,
    verdict: Verdict,
    (change, lo, hi): (f64, f64, f64),
) -> MetricComparison {
    let se = stats::interval_se(lo, hi, 0.96).unwrap();
    let tier = match verdict {
        Verdict::Regressed => Tier::Fail,
        Verdict::Inconclusive => Tier::Warn,
        _ => Tier::Pass,
    };
    let mut m = MetricComparison {
        scenario: "get".into(),
        client: "head".into(),
        baseline_client: "base".into(),
        server: None,
        baseline_server: None,
        metric: metric.into(),
        direction: Direction::LowerIsBetter,
        baseline: vec![10.0; n as usize],
        current: vec![10.0 * (1.0 + change); n as usize],
        baseline_median: Some(10.0),
        current_median: Some(10.0 * (1.0 + change)),
        change: Some(change),
        ci_low: Some(lo),
        ci_high: Some(hi),
        confidence: Some(0.96),
        p_value: Some(0.01),
        mde: Some(stats::mde_of_se(se, 0.05)),
        verdict,
        tier,
        gating: true,
        reason: String::new(),
        invalid: vec![],
        lacking: vec![],
        advice: None,
        undecidable: None,
        decided_at: None,
        stopped_at: None,
    };
    let gate = MetricGate {
        metric: metric.into(),
        fail: Some(Threshold {
            relative: 0.10,
            absolute: None,
        }),
        warn: None,
        gating: true,
    };
    m.advice = advice::advise(&m, &gate, true, 0.05, 300);
    m
}

/// Within the threshold: +1% [-2%, +4%].
fn within(metric: &str, n: u32) -> MetricComparison {
    row(metric, n, Verdict::Unchanged, (0.01, -0.02, 0.04))
}

/// Undecided and decidable: +5% [0%, +12%] against +10% (the gap 5%, one
/// SE 2.9%, the upper end 7% from the estimate: within reach at any count).
fn open(metric: &str, n: u32) -> MetricComparison {
    row(metric, n, Verdict::Inconclusive, (0.05, 0.0, 0.12))
}

/// Undecided and wide: +5% [-45%, +55%] against +10%: the upper end 50% from
/// the estimate, the gap 5% and one SE 24%; at `n` rounds it can be decided
/// from 50% * sqrt(n / N) <= 29%, N >= 2.9 n.
fn wide(metric: &str, n: u32) -> MetricComparison {
    row(metric, n, Verdict::Inconclusive, (0.05, -0.45, 0.55))
}

/// Regressed beyond +10%: +30% [+20%, +40%].
fn regressed(metric: &str, n: u32) -> MetricComparison {
    row(metric, n, Verdict::Regressed, (0.30, 0.20, 0.40))
}

/// Runs rounds of `round_time` each; at each look the rows are
/// `rows(round)`.
fn simulate(s: &mut Spend, round_time: Duration, rows: impl Fn(u32) -> Vec<MetricComparison>) {
    let mut round = 0;
    loop {
        round += 1;
        match s.after_at(round, round_time * round) {
            Next::Round => continue,
            Next::Look(_) => {
                if !s.looked(&rows(round), true) {
                    break;
                }
            }
            Next::Stop => break,
        }
    }
}

/// Open until round `decided_at`, within the threshold from then on.
fn decided_at(decided_at: u32) -> impl Fn(u32) -> Vec<MetricComparison> {
    move |n| {
        vec![if n < decided_at {
            open("cpu", n)
        } else {
            within("cpu", n)
        }]
    }
}

fn look_rounds(r: &ScenarioBudget) -> Vec<u32> {
    r.looks.iter().map(|l| l.round).collect()
}

fn decided_rounds(r: &ScenarioBudget) -> Vec<(&str, u32)> {
    r.decided
        .iter()
        .map(|d| (d.metric.as_str(), d.round))
        .collect()
}

#[test]
fn a_decided_comparison_stops_at_the_first_look() {
    let mut s = spend(100 * S, true);
    simulate(&mut s, S, decided_at(1));
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (4, Stop::Decided));
    assert_eq!(r.looks.len(), 1);
    assert!(
        (r.looks[0].alpha - 0.05 / 8.0).abs() < 1e-12,
        "{:?}",
        r.looks
    );
    assert_eq!(decided_rounds(&r), [("cpu", 4)]);
    assert!((r.decided[0].alpha - 0.05 / 8.0).abs() < 1e-12);
}

#[test]
fn an_undecided_one_runs_to_the_next_planned_look_until_decided() {
    let mut s = spend(100 * S, true);
    simulate(&mut s, S, decided_at(10));
    let r = s.finish();
    // Looks at 4, 8 (undecided), 16 (decided).
    assert_eq!((r.rounds, r.stopped), (16, Stop::Decided));
    assert_eq!(look_rounds(&r), [4, 8, 16]);
    assert_eq!(decided_rounds(&r), [("cpu", 16)]);
}

#[test]
fn the_budget_ends_with_a_last_look_spending_the_rest() {
    // 30 s for rounds of 1 s: planned looks at 4, 8, 16 (32 would be
    // next), and after round 30 another would end past 30 s: a last look.
    let mut s = spend(30 * S, true);
    simulate(&mut s, S, decided_at(u32::MAX));
    let r = s.finish();
    assert_eq!(r.stopped, Stop::Budget);
    assert_eq!(r.rounds, 30);
    assert_eq!(look_rounds(&r), [4, 8, 16, 30]);
    let spent: f64 = r.looks.iter().map(|l| l.alpha).sum();
    assert!((spent - 0.05).abs() < 1e-12, "{spent}");
    assert!(r.elapsed_s >= 0.0);
    assert!(r.decided.is_empty() && r.undecidable.is_empty(), "{r:?}");
}

#[test]
fn configured_rounds_always_run_and_nothing_compared_means_no_look() {
    // A share shorter than one round: the 4 rounds still run, then the
    // one look takes all the alpha.
    let mut s = spend(Duration::from_millis(1), true);
    simulate(&mut s, S, decided_at(u32::MAX));
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (4, Stop::Budget));
    assert_eq!(r.looks.len(), 1);
    assert!((r.looks[0].alpha - 0.05).abs() < 1e-12);
    // What they took is recorded, for the report to say it overran.
    assert_eq!(r.rounds_s, Some(4.0));
    let mut s = spend(100 * S, false);
    simulate(&mut s, S, decided_at(u32::MAX));
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (4, Stop::NothingToCompare));
    assert!(r.looks.is_empty());
    assert_eq!(r.rounds_s, Some(4.0));
    // Rounds beyond them are not counted in it; none run yet: absent.
    let mut s = spend(100 * S, true);
    simulate(&mut s, S, decided_at(10));
    assert_eq!(s.finish().rounds_s, Some(4.0));
    assert_eq!(spend(S, true).finish().rounds_s, None);
}

#[test]
fn max_rounds_stops_even_with_time_left() {
    let mut s = Spend::new(
        "get",
        1000 * S,
        (4, 10),
        LookPlan::new(4, 10, 0.05, any),
        true,
    );
    simulate(&mut s, S, decided_at(u32::MAX));
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (10, Stop::MaxRounds));
    assert_eq!(look_rounds(&r), [4, 8, 10]);
}

/// A metric decided at a look stays decided: later looks, taken for another
/// metric, neither re-test it nor let it keep the rounds going, even when
/// their rows read it undecided.
#[test]
fn a_decision_is_final_at_its_look() {
    let mut s = spend(100 * S, true);
    simulate(&mut s, S, |n| {
        let cpu = if n == 4 {
            within("cpu", n)
        } else {
            open("cpu", n)
        };
        let rps = if n < 16 {
            open("rps", n)
        } else {
            within("rps", n)
        };
        vec![cpu, rps]
    });
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (16, Stop::Decided));
    assert_eq!(decided_rounds(&r), [("cpu", 4), ("rps", 16)]);
}

/// A gating metric that regressed beyond its fail threshold stops the
/// scenario at its look, the others left as they are; one within its
/// threshold does not.
#[test]
fn a_failure_stops_the_scenario_at_its_look() {
    let mut s = spend(100 * S, true);
    simulate(&mut s, S, |n| {
        let cpu = if n < 8 {
            open("cpu", n)
        } else {
            regressed("cpu", n)
        };
        vec![cpu, open("rps", n)]
    });
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (8, Stop::Failed));
    assert_eq!(decided_rounds(&r), [("cpu", 8)]);
    assert!(r.undecidable.is_empty());
}

/// A metric the share cannot decide stops drawing rounds: with the other
/// one decided the scenario stops, and says why. The same series with a
/// share that buys enough rounds goes on.
#[test]
fn an_undecidable_metric_stops_drawing_rounds() {
    // 10 s for rounds of 1 s: at the look after 4 rounds the share buys 10,
    // fewer than the 2.9 * 4 = 11.6 that could decide the wide metric.
    let rows = |n| vec![within("cpu", n), wide("rps", n)];
    let mut s = spend(10 * S, true);
    simulate(&mut s, S, rows);
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (4, Stop::Undecidable));
    assert_eq!(decided_rounds(&r), [("cpu", 4)]);
    let u = &r.undecidable;
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(
        (u[0].metric.as_str(), u[0].round, u[0].within),
        ("rps", 4, 10)
    );
    // 12 s buys 12 rounds: decidable at the look after 4, so the rounds go
    // on; at the look after 8 the same interval would need 2.9 * 8 = 23.
    let mut s = spend(12 * S, true);
    simulate(&mut s, S, rows);
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (8, Stop::Undecidable));
    let u = &r.undecidable;
    assert_eq!(
        (u[0].metric.as_str(), u[0].round, u[0].within),
        ("rps", 8, 12)
    );
}

/// An undecidable metric keeps no rounds going, but the rounds another
/// metric draws may still decide it at a later look: then it is decided.
#[test]
fn an_undecidable_metric_decided_at_a_later_look_is_decided() {
    let mut s = spend(10 * S, true);
    simulate(&mut s, S, |n| {
        let rps = if n < 8 {
            wide("rps", n)
        } else {
            within("rps", n)
        };
        let cpu = if n < 8 {
            open("cpu", n)
        } else {
            within("cpu", n)
        };
        vec![cpu, rps]
    });
    let r = s.finish();
    assert_eq!((r.rounds, r.stopped), (8, Stop::Decided));
    assert_eq!(decided_rounds(&r), [("cpu", 8), ("rps", 8)]);
    assert!(r.undecidable.is_empty(), "{:?}", r.undecidable);
}

#[test]
fn the_share_divides_what_is_left() {
    let b = RunBudget {
        total: 60 * S,
        started: Instant::now(),
    };
    let share = b.share(3);
    assert!(share <= 20 * S && share > 19 * S, "{share:?}");
}
