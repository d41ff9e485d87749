use super::*;
use crate::config::gate::GateConfig;

fn config() -> GateConfig {
    GateConfig {
        alpha: 0.05,
        metrics: vec![],
        overrides: vec![],
        missing_baseline: MissingBaseline::Neutral,
        not_comparable: NotComparablePolicy::Warn,
        invalid: Default::default(),
        paired_test: Default::default(),
        strict: false,
        anchored: true,
        inconclusive: Default::default(),
        missing_cell: Default::default(),
    }
}

fn gate(metric: &str, fail: Option<(f64, Option<f64>)>, warn: Option<f64>) -> MetricGate {
    MetricGate {
        metric: metric.into(),
        fail: fail.map(|(relative, absolute)| Threshold { relative, absolute }),
        warn: warn.map(|relative| Threshold {
            relative,
            absolute: None,
        }),
        gating: fail.is_some(),
    }
}

/// A measurement with relative interval `(lo, est, hi)` on a baseline of `base`.
fn measured(base: f64, (lo, est, hi): (f64, f64, f64), p: f64, mde_rel: f64) -> Evidence {
    let iv = |a: f64, b: f64, c: f64| Interval {
        estimate: b,
        low: a,
        high: c,
    };
    Evidence::Measured(Measured {
        baseline_center: base,
        relative: iv(lo, est, hi),
        absolute: iv(lo * base, est * base, hi * base),
        confidence: 0.968,
        p_value: p,
        min_p_value: 2.0 / 252.0,
        mde_absolute: Some(mde_rel * base),
        n_baseline: 5,
        n_current: 5,
        paired: false,
        identical: false,
        undecidable: None,
    })
}

fn check(e: &Evidence, g: &MetricGate, c: &GateConfig) -> (Verdict, Tier) {
    let d = decide(e, g, c);
    (d.verdict, d.tier)
}

#[test]
fn an_undecidable_measurement_is_inconclusive_whatever_it_shows() {
    let c = config();
    let g = gate("jmh.avgt_ns", Some((0.05, None)), Some(0.03));
    let mut e = measured(100.0, (0.18, 0.20, 0.22), 0.008, 0.02);
    assert_eq!(check(&e, &g, &c), (Verdict::Regressed, Tier::Fail));
    if let Evidence::Measured(m) = &mut e {
        m.undecidable = Some("needs at least 4 forks per side (`-f 4`)".into());
    }
    let d = decide(&e, &g, &c);
    assert_eq!((d.verdict, d.tier), (Verdict::Inconclusive, Tier::Warn));
    assert!(
        d.reason
            .ends_with(": needs at least 4 forks per side (`-f 4`)"),
        "{}",
        d.reason
    );
    // On an informative metric it informs.
    let info = gate("jmh.sample_p99_ns", None, Some(0.2));
    assert_eq!(check(&e, &info, &c), (Verdict::Inconclusive, Tier::Pass));
}

#[test]
fn regression_needs_significance_and_the_whole_interval_beyond_the_threshold() {
    let c = config();
    let p99 = gate("latency_p99_us", Some((0.10, None)), Some(0.05));
    let e = measured(5000.0, (0.12, 0.14, 0.16), 0.008, 0.05);
    let d = decide(&e, &p99, &c);
    assert_eq!((d.verdict, d.tier), (Verdict::Regressed, Tier::Fail));
    assert!(d.reason.contains("fail threshold +10%"), "{}", d.reason);
    // Not significant: the same interval does not regress, and it shows no
    // change within the threshold either: undecided.
    let e = measured(5000.0, (0.12, 0.14, 0.16), 0.2, 0.05);
    assert_eq!(check(&e, &p99, &c), (Verdict::Inconclusive, Tier::Warn));
    // Beyond +5% but straddling +10%: undecided, not a warning that passes.
    let e = measured(5000.0, (0.07, 0.12, 0.16), 0.008, 0.05);
    let d = decide(&e, &p99, &c);
    assert_eq!((d.verdict, d.tier), (Verdict::Inconclusive, Tier::Warn));
    assert!(
        d.reason.contains("reaches past the threshold +10%"),
        "{}",
        d.reason
    );
    // Straddles the warn threshold as well: undecided.
    let e = measured(5000.0, (0.02, 0.12, 0.16), 0.008, 0.05);
    assert_eq!(check(&e, &p99, &c), (Verdict::Inconclusive, Tier::Warn));
    // Beyond +5% with the worse end inside +10%: a warning, within the fail threshold.
    let e = measured(5000.0, (0.06, 0.07, 0.09), 0.008, 0.05);
    assert_eq!(check(&e, &p99, &c), (Verdict::Regressed, Tier::Warn));
}

#[test]
fn within_threshold_is_shown_by_the_worse_end_of_the_interval() {
    let c = config();
    let p99 = gate("latency_p99_us", Some((0.10, None)), Some(0.05));
    // Not significant, the worse end +8% inside +10%: within threshold.
    let e = measured(5000.0, (-0.04, 0.02, 0.08), 0.4, 0.05);
    let d = decide(&e, &p99, &c);
    assert_eq!(
        (d.verdict, d.tier),
        (Verdict::Unchanged, Tier::Pass),
        "{}",
        d.reason
    );
    assert!(
        d.reason.contains("within the threshold +10%"),
        "{}",
        d.reason
    );
    // The same interval at a confidence below 95% shows nothing.
    let Evidence::Measured(mut m) = e else {
        unreachable!()
    };
    m.confidence = 0.90;
    assert_eq!(
        check(&Evidence::Measured(m), &p99, &c),
        (Verdict::Inconclusive, Tier::Warn)
    );
    // Higher is better: the worse end is the low one.
    let rps = gate("throughput_rps", Some((0.05, None)), None);
    let e = measured(10_000.0, (-0.04, 0.0, 0.08), 0.9, 0.5);
    assert_eq!(check(&e, &rps, &c), (Verdict::Unchanged, Tier::Pass));
    let e = measured(10_000.0, (-0.06, 0.0, 0.02), 0.9, 0.5);
    assert_eq!(check(&e, &rps, &c), (Verdict::Inconclusive, Tier::Warn));
    // A floor counts as in `beyond`: +20% of 300 us is under a 2 ms floor.
    let floored = gate("latency_p99_us", Some((0.10, Some(2000.0))), None);
    let e = measured(300.0, (-0.1, 0.05, 0.2), 0.5, 0.5);
    assert_eq!(check(&e, &floored, &c), (Verdict::Unchanged, Tier::Pass));
    // An informative metric keeps the MDE rule and never warns.
    let info = MetricGate {
        gating: false,
        ..gate("latency_p50_us", Some((0.10, None)), None)
    };
    let e = measured(300.0, (-0.1, 0.05, 0.2), 0.5, 0.05);
    assert_eq!(check(&e, &info, &c), (Verdict::Unchanged, Tier::Pass));
}

#[test]
fn the_absolute_floor_must_be_exceeded_too() {
    let c = config();
    let p99 = gate("latency_p99_us", Some((0.10, Some(2000.0))), None);
    // +20% of 300 us is 60 us, under the 2 ms floor.
    let e = measured(300.0, (0.15, 0.2, 0.25), 0.008, 0.05);
    let d = decide(&e, &p99, &c);
    assert_eq!(
        (d.verdict, d.tier),
        (Verdict::Unchanged, Tier::Pass),
        "{}",
        d.reason
    );
    // +20% of 20 ms is 4 ms: beyond both.
    let e = measured(20_000.0, (0.15, 0.2, 0.25), 0.008, 0.05);
    assert_eq!(check(&e, &p99, &c), (Verdict::Regressed, Tier::Fail));
}

#[test]
fn higher_is_better_metrics_regress_downwards() {
    let c = config();
    let rps = gate("throughput_rps", Some((0.05, None)), None);
    let e = measured(10_000.0, (-0.12, -0.09, -0.06), 0.008, 0.03);
    let d = decide(&e, &rps, &c);
    assert_eq!((d.verdict, d.tier), (Verdict::Regressed, Tier::Fail));
    assert!(d.reason.contains("-5%"), "{}", d.reason);
    let e = measured(10_000.0, (0.06, 0.09, 0.12), 0.008, 0.03);
    assert_eq!(check(&e, &rps, &c), (Verdict::Improved, Tier::Pass));
    // Latency going down is an improvement.
    let p50 = gate("latency_p50_us", Some((0.05, None)), None);
    assert_eq!(check(&e, &p50, &c).0, Verdict::Regressed);
    let e = measured(100.0, (-0.12, -0.09, -0.06), 0.008, 0.03);
    assert_eq!(check(&e, &p50, &c).0, Verdict::Improved);
}

#[test]
fn inconclusive_when_too_few_trials_or_too_noisy() {
    let c = config();
    let rps = gate("throughput_rps", Some((0.05, None)), None);
    let Evidence::Measured(mut m) = measured(100.0, (-0.2, 0.0, 0.2), 0.1, 0.03) else {
        unreachable!()
    };
    m.min_p_value = 0.1;
    (m.n_baseline, m.n_current) = (3, 3);
    let d = decide(&Evidence::Measured(m.clone()), &rps, &c);
    assert_eq!((d.verdict, d.tier), (Verdict::Inconclusive, Tier::Warn));
    assert!(
        d.reason
            .contains("3 vs 3 trials cannot reach p < 0.05 (it takes 4 trials a side)"),
        "{}",
        d.reason
    );
    m.paired = true;
    let d = decide(&Evidence::Measured(m), &rps, &c);
    assert!(d.reason.contains("(it takes 6 pairs)"), "{}", d.reason);
    // Noise: an interval of +-10% cannot show a change within -5%.
    let e = measured(100.0, (-0.1, 0.0, 0.1), 0.9, 0.08);
    let d = decide(&e, &rps, &c);
    assert_eq!(d.verdict, Verdict::Inconclusive);
    assert!(
        d.reason.contains("reaches past the threshold -5%"),
        "{}",
        d.reason
    );
    // An informative metric says it was too noisy (its MDE rule).
    let d = decide(
        &e,
        &MetricGate {
            gating: false,
            ..rps.clone()
        },
        &c,
    );
    assert!(d.reason.contains("too noisy"), "{}", d.reason);
    // Non-gating metrics never warn for it.
    let info = gate("bytes_per_sec", None, Some(0.05));
    assert_eq!(check(&e, &info, &c), (Verdict::Inconclusive, Tier::Pass));
}

#[test]
fn non_gating_metrics_warn_at_most() {
    let c = config();
    let mut rss = gate("peak_rss_bytes", Some((0.2, None)), None);
    rss.gating = false;
    let e = measured(1e8, (0.3, 0.4, 0.5), 0.008, 0.05);
    assert_eq!(check(&e, &rss, &c), (Verdict::Regressed, Tier::Warn));
}

#[test]
fn policies_for_missing_and_not_comparable() {
    let mut c = config();
    let rps = gate("throughput_rps", Some((0.05, None)), None);
    let missing = Evidence::Missing {
        current_lacks: false,
        reason: "no baseline".into(),
    };
    let lacks = Evidence::Missing {
        current_lacks: true,
        reason: "every current trial failed".into(),
    };
    let nc = Evidence::NotComparable(vec!["cpu_model differs".into()]);
    assert_eq!(check(&missing, &rps, &c), (Verdict::NoBaseline, Tier::Pass));
    assert_eq!(check(&lacks, &rps, &c), (Verdict::NoBaseline, Tier::Warn));
    assert_eq!(check(&nc, &rps, &c), (Verdict::NotComparable, Tier::Warn));
    assert!(decide(&nc, &rps, &c).reason.contains("cpu_model differs"));
    c.missing_baseline = MissingBaseline::Fail;
    c.not_comparable = NotComparablePolicy::Fail;
    assert_eq!(check(&missing, &rps, &c), (Verdict::NoBaseline, Tier::Fail));
    assert_eq!(check(&nc, &rps, &c), (Verdict::NotComparable, Tier::Fail));
    let info = gate("bytes_per_sec", None, Some(0.05));
    assert_eq!(check(&nc, &info, &c).1, Tier::Pass);
}

#[test]
fn a_cell_where_every_trial_failed_always_fails() {
    let failed = Evidence::Failed("every trial failed (4 of 4): x".into());
    let c = config();
    for g in [
        gate("throughput_rps", Some((0.05, None)), None),
        gate("bytes_per_sec", None, Some(0.05)),
    ] {
        let d = decide(&failed, &g, &c);
        assert_eq!((d.verdict, d.tier), (Verdict::Failed, Tier::Fail));
        assert_eq!(d.reason, "every trial failed (4 of 4): x");
    }
}

#[test]
fn absolute_metrics_with_a_zero_baseline() {
    let c = config();
    let errors = MetricGate {
        metric: "error_rate".into(),
        fail: Some(Threshold {
            relative: 0.0,
            absolute: Some(0.01),
        }),
        warn: None,
        gating: true,
    };
    let abs = |lo: f64, est: f64, hi: f64| {
        let inf = |v: f64| {
            if v == 0.0 {
                0.0
            } else {
                v.signum() * f64::INFINITY
            }
        };
        Evidence::Measured(Measured {
            baseline_center: 0.0,
            relative: Interval {
                estimate: inf(est),
                low: inf(lo),
                high: inf(hi),
            },
            absolute: Interval {
                estimate: est,
                low: lo,
                high: hi,
            },
            confidence: 0.968,
            p_value: 0.008,
            min_p_value: 0.008,
            mde_absolute: Some(0.002),
            n_baseline: 5,
            n_current: 5,
            paired: false,
            identical: false,
            undecidable: None,
        })
    };
    let d = decide(&abs(0.02, 0.03, 0.04), &errors, &c);
    assert_eq!(
        (d.verdict, d.tier),
        (Verdict::Regressed, Tier::Fail),
        "{}",
        d.reason
    );
    assert!(d.reason.contains("+0.03"), "{}", d.reason);
    assert_eq!(
        check(&abs(0.001, 0.003, 0.005), &errors, &c).0,
        Verdict::Unchanged
    );
}
