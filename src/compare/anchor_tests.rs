//! The anchored gate on synthetic runs: the machine's drift between two
//! runs cancels when both measured the anchor, a regression of the client
//! still shows, and a run without the anchor is compared raw, said so.

use super::super::{compare, compare_side_by_side};
use crate::compare::model::{Comparison, GateOutcome, MetricComparison, Tier, Verdict};
use crate::config::anchor::{Anchor, NAME};
use crate::config::gate::{default_gate, GateConfig};
use crate::config::Suite;
use crate::results::{synthetic, RunResults};

/// One scenario, its two clients, anchored or not.
fn suite(anchored: bool) -> Suite {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(1);
    s.run.anchor = anchored.then(Anchor::fixed);
    s
}

/// Per-round noise of about +-2%, the same for every process of a round.
fn noise(round: u32, salt: u32) -> f64 {
    const N: [f64; 7] = [0.0, 0.012, -0.018, 0.007, -0.004, 0.019, -0.011];
    1.0 + N[((round + salt * 3) % 7) as usize]
}

/// 12 rounds on a machine `machine` times slower than usual (every client
/// and the anchor alike), the clients (not the anchor) `client` times slower.
fn run(anchored: bool, machine: f64, client: f64, salt: u32) -> RunResults {
    synthetic::run(suite(anchored), 12, |_, c, r| {
        let k = noise(r, salt) * machine * if c == NAME { 1.0 } else { client };
        Some(synthetic::metrics(10_000.0 / k, 2000.0 * k, 10.0 * k))
    })
}

fn find<'a>(c: &'a Comparison, client: &str, metric: &str) -> &'a MetricComparison {
    c.metrics
        .iter()
        .find(|m| m.client == client && m.metric == metric)
        .unwrap_or_else(|| {
            panic!(
                "no {client}/{metric} in {:?}",
                c.metrics
                    .iter()
                    .map(|m| (&m.client, &m.metric))
                    .collect::<Vec<_>>()
            )
        })
}

#[test]
fn both_runs_anchored_the_anchored_figures_gate_and_the_drift_cancels() {
    // The machine is 12% slower for the second run: raw, every client regressed.
    let (base, cur) = (run(true, 1.0, 1.0, 0), run(true, 1.12, 1.0, 1));
    let c = compare(Some(&base), &cur, &default_gate());
    assert_eq!(c.outcome, GateOutcome::Pass, "{:#?}", c.metrics);
    let anchored = find(&c, "hyper", "cpu_us_per_request_anchored");
    assert!(anchored.gating, "{}", anchored.reason);
    assert_eq!(anchored.verdict, Verdict::Unchanged, "{}", anchored.reason);
    assert!(
        anchored
            .reason
            .starts_with("gates in place of cpu_us_per_request (both runs anchored)"),
        "{}",
        anchored.reason
    );
    let raw = find(&c, "hyper", "cpu_us_per_request");
    assert!(!raw.gating, "the raw figure informs");
    assert_eq!(
        raw.verdict,
        Verdict::Regressed,
        "raw, the drift shows: {}",
        raw.reason
    );
    assert!(
        raw.reason
            .starts_with("informs: cpu_us_per_request_anchored gates in its place"),
        "{}",
        raw.reason
    );
    let rps = find(&c, "reqwest", "throughput_rps_anchored");
    assert!(
        rps.gating && rps.verdict == Verdict::Unchanged,
        "{}",
        rps.reason
    );
    // The anchor's own cell is compared, gates nothing, and its drift is in the note.
    let drift = find(&c, NAME, "cpu_us_per_request");
    assert!(
        !drift.gating && drift.verdict == Verdict::Regressed,
        "{}",
        drift.reason
    );
    assert!(c
        .metrics
        .iter()
        .filter(|m| m.client == NAME)
        .all(|m| !m.gating));
    let note = c.anchoring.as_deref().unwrap();
    assert!(
        note.starts_with("Anchored: both runs measured the anchor"),
        "{note}"
    );
    assert!(note.contains("cpu_us_per_request +12.0%"), "{note}");
}

#[test]
fn both_runs_anchored_a_slower_client_still_fails() {
    let (base, cur) = (run(true, 1.0, 1.0, 0), run(true, 1.0, 1.12, 1));
    let c = compare(Some(&base), &cur, &default_gate());
    assert_eq!(c.outcome, GateOutcome::Fail);
    let m = find(&c, "hyper", "cpu_us_per_request_anchored");
    assert_eq!(
        (m.verdict, m.tier),
        (Verdict::Regressed, Tier::Fail),
        "{}",
        m.reason
    );
    // Under cpu_us_per_request's thresholds: raising them to 20% passes it.
    let mut gate = default_gate();
    for g in gate
        .metrics
        .iter_mut()
        .filter(|g| g.metric == "cpu_us_per_request" || g.metric == "throughput_rps")
    {
        g.fail.as_mut().unwrap().relative = 0.20;
    }
    let c = compare(Some(&base), &cur, &gate);
    assert_eq!(
        find(&c, "hyper", "cpu_us_per_request_anchored").tier,
        Tier::Warn
    );
}

#[test]
fn a_baseline_without_the_anchor_is_compared_raw_and_says_so() {
    let (base, cur) = (run(false, 1.0, 1.0, 0), run(true, 1.12, 1.0, 1));
    let c = compare(Some(&base), &cur, &default_gate());
    let raw = find(&c, "hyper", "cpu_us_per_request");
    assert!(raw.gating);
    assert_eq!(
        (raw.verdict, raw.tier),
        (Verdict::Regressed, Tier::Fail),
        "{}",
        raw.reason
    );
    let anchored = find(&c, "hyper", "cpu_us_per_request_anchored");
    assert!(!anchored.gating && anchored.verdict == Verdict::NoBaseline);
    assert_eq!(
        c.anchoring.as_deref(),
        Some("Compared raw: the baseline run has no anchor ([run] anchor = true in the run that stores the baseline too divides the machine's drift out).")
    );
    // Neither anchored: raw as before the anchor existed, no note, no anchored rows.
    let c = compare(
        Some(&run(false, 1.0, 1.0, 0)),
        &run(false, 1.0, 1.0, 1),
        &default_gate(),
    );
    assert_eq!(c.anchoring, None);
    assert!(c.metrics.iter().all(|m| !m.metric.ends_with("_anchored")));
}

#[test]
fn gate_anchored_false_compares_anchored_runs_raw() {
    let gate = GateConfig {
        anchored: false,
        ..default_gate()
    };
    let c = compare(
        Some(&run(true, 1.0, 1.0, 0)),
        &run(true, 1.12, 1.0, 1),
        &gate,
    );
    assert_eq!(c.outcome, GateOutcome::Fail);
    assert!(find(&c, "hyper", "cpu_us_per_request").gating);
    assert!(!find(&c, "hyper", "cpu_us_per_request_anchored").gating);
    assert_eq!(
        c.anchoring.as_deref(),
        Some("Compared raw: [gate] anchored = false.")
    );
}

#[test]
fn a_scenario_whose_anchor_failed_gates_raw() {
    let base = run(true, 1.0, 1.0, 0);
    let cur = synthetic::run(suite(true), 12, |_, c, r| {
        let k = noise(r, 1) * 1.12;
        (c != NAME).then(|| synthetic::metrics(10_000.0 / k, 2000.0 * k, 10.0 * k))
    });
    let c = compare(Some(&base), &cur, &default_gate());
    assert!(find(&c, "hyper", "cpu_us_per_request").gating);
    assert_eq!(c.outcome, GateOutcome::Fail, "raw, the drift fails it");
    assert!(
        c.metrics.iter().all(|m| m.client != NAME),
        "the anchor's failed cell is no failed row of the gate"
    );
}

#[test]
fn side_by_side_leaves_the_anchor_and_its_figures_out() {
    let r = run(true, 1.0, 1.0, 0);
    let c = compare_side_by_side(&r, "hyper", &default_gate());
    assert!(!c.metrics.is_empty());
    assert!(c
        .metrics
        .iter()
        .all(|m| m.client != NAME && !m.metric.ends_with("_anchored")));
    assert_eq!(c.anchoring, None);
}
