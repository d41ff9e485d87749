use super::*;
use crate::config::Suite;
use crate::results::synthetic;

/// A run of one cell (the default suite's first scenario and client) whose
/// throughput and CPU per request are these values.
fn run(throughput: f64, cpu: f64) -> RunResults {
    let mut suite = Suite::default_suite();
    suite.scenarios.truncate(1);
    suite.scenarios[0].clients.truncate(1);
    synthetic::run(suite, 1, |_, _, _| {
        Some(synthetic::metrics(throughput, 500.0, cpu))
    })
}

/// +-1.5% of deterministic wiggle.
fn wiggle(i: usize) -> f64 {
    1.0 + 0.01 * (i as f64 * 1.7).sin() + 0.005 * (i as f64 * 0.61).cos()
}

fn of<'a>(h: &'a [CellHistory], metric: &str) -> &'a CellHistory {
    h.iter().find(|c| c.metric == metric).unwrap()
}

#[test]
fn each_gating_metric_of_each_cell_gets_a_history_and_its_direction_decides_the_drift() {
    // CPU per request +10% at run 20 (worse), throughput +10% (better).
    let runs: Vec<RunResults> = (0..40)
        .map(|i| {
            let step = if i >= 20 { 1.10 } else { 1.0 };
            run(1000.0 * step * wiggle(i), 20.0 * step * wiggle(i + 7))
        })
        .collect();
    let refs: Vec<&RunResults> = runs.iter().collect();
    let gate = GateConfig::default();
    let h = histories(&refs, &gate, Options::default());
    let metrics: Vec<&str> = h.iter().map(|c| c.metric.as_str()).collect();
    // benchgate's own runs: the JMH metrics are not theirs.
    let gating: Vec<&str> = METRICS
        .iter()
        .filter(|d| d.gate.fail.is_some() && d.family == crate::metric::Family::Http)
        .map(|d| d.name)
        .collect();
    assert_eq!(metrics, gating, "one history per gating metric");
    let cpu = of(&h, "cpu_us_per_request");
    assert_eq!(cpu.values.len(), 40);
    assert_eq!(cpu.shifts.len(), 1, "{:?}", cpu.shifts);
    assert_eq!((cpu.shifts[0].run, cpu.shifts[0].worse), (20, true));
    assert!(cpu.drifting());
    let tp = of(&h, "throughput_rps");
    assert_eq!(tp.shifts.len(), 1);
    assert!(!tp.shifts[0].worse && !tp.drifting(), "{tp:?}");
    // The latency is the same in every run: nothing.
    assert!(of(&h, "latency_p99_us").shifts.is_empty());
    assert!(cpu.shifts[0].past_warn);
    // A non-gating metric gets no history.
    let mut quiet = gate.clone();
    quiet
        .metrics
        .iter_mut()
        .filter(|g| g.metric == "cpu_us_per_request")
        .for_each(|g| g.gating = false);
    let h = histories(&refs, &quiet, Options::default());
    assert!(h.iter().all(|c| c.metric != "cpu_us_per_request"));
}

#[test]
fn a_worse_shift_within_the_warn_band_is_a_change_point_not_drift() {
    // CPU +3.5% (warn: +5%), p99 +10% of 1 ms (warn floor: 2 ms).
    let runs: Vec<RunResults> = (0..40)
        .map(|i| {
            let step = if i >= 20 { 1.0 } else { 0.0 };
            let mut r = run(
                1000.0,
                20.0 * (1.0 + 0.035 * step) * (1.0 + (wiggle(i) - 1.0) / 5.0),
            );
            let p99 = r.results[0].summary.get_mut("latency_p99_us").unwrap();
            p99.median = 1000.0 * (1.0 + 0.1 * step) * wiggle(i + 3);
            r
        })
        .collect();
    let refs: Vec<&RunResults> = runs.iter().collect();
    let h = histories(&refs, &GateConfig::default(), Options::default());
    for metric in ["cpu_us_per_request", "latency_p99_us"] {
        let c = of(&h, metric);
        assert_eq!(c.shifts.len(), 1, "{metric}: {:?}", c.shifts);
        let s = &c.shifts[0];
        assert_eq!((s.run, s.worse, s.past_warn), (20, true, false), "{metric}");
        assert!(!c.drifting(), "{metric}");
    }
}

#[test]
fn a_change_back_ends_the_drift_and_the_segment_means_follow_the_levels() {
    let runs: Vec<RunResults> = (0..45)
        .map(|i| {
            let cpu = if (15..30).contains(&i) { 22.0 } else { 20.0 };
            run(1000.0, cpu * wiggle(i))
        })
        .collect();
    let refs: Vec<&RunResults> = runs.iter().collect();
    let h = histories(&refs, &GateConfig::default(), Options::default());
    let cpu = of(&h, "cpu_us_per_request");
    let at: Vec<(usize, bool)> = cpu.shifts.iter().map(|s| (s.run, s.worse)).collect();
    assert_eq!(at, [(15, true), (30, false)]);
    assert!(!cpu.drifting());
    let means = cpu.segment_means();
    assert_eq!(means.len(), 45);
    assert!((means[0] - 20.0).abs() < 0.2 && (means[20] - 22.0).abs() < 0.2);
    assert!((means[44] - 20.0).abs() < 0.2, "{means:?}");
    assert_eq!(means[14], means[0]);
    assert_eq!(means[15], means[29]);
}

#[test]
fn runs_without_the_cell_are_left_out_and_shifts_name_their_run() {
    // Every third run measured another scenario only.
    let mut runs = Vec::new();
    for i in 0..45 {
        let mut r = run(1000.0, if i >= 24 { 23.0 } else { 20.0 } * wiggle(i));
        if i % 3 == 2 {
            r.results[0].scenario = "other".into();
        }
        runs.push(r);
    }
    let refs: Vec<&RunResults> = runs.iter().collect();
    let h = histories(&refs, &GateConfig::default(), Options::default());
    let cpu = h
        .iter()
        .find(|c| c.metric == "cpu_us_per_request" && c.scenario != "other")
        .unwrap();
    assert_eq!(cpu.values.len(), 30);
    assert!(cpu.values.iter().all(|(run, _)| run % 3 != 2));
    assert_eq!(cpu.shifts.len(), 1, "{:?}", cpu.shifts);
    assert_eq!(cpu.shifts[0].run, 24);
    assert_eq!(cpu.values[cpu.shifts[0].point.index].0, 24);
}

#[test]
fn a_shift_where_the_fingerprint_moved_is_marked_environment_and_is_not_drift() {
    // CPU per request +10% at run 20, where the runner image changed too.
    let image = |i: usize| match i {
        0..20 => "ubuntu24 20250105.1.0",
        _ => "ubuntu24 20250112.1.0",
    };
    let runs: Vec<RunResults> = (0..40)
        .map(|i| {
            let step = if i >= 20 { 1.10 } else { 1.0 };
            let mut r = run(1000.0 * wiggle(i), 20.0 * step * wiggle(i + 7));
            r.environment.runner_image = Some(image(i).into());
            r
        })
        .collect();
    let refs: Vec<&RunResults> = runs.iter().collect();
    let gate = GateConfig::default();
    let h = histories(&refs, &gate, Options::default());
    let cpu = of(&h, "cpu_us_per_request");
    assert_eq!(cpu.shifts.len(), 1, "{:?}", cpu.shifts);
    let s = &cpu.shifts[0];
    assert_eq!((s.run, s.worse, s.past_warn), (20, true, true));
    assert_eq!(
        s.environment,
        ["runner_image differs (\"ubuntu24 20250105.1.0\" vs \"ubuntu24 20250112.1.0\")"]
    );
    assert!(
        !cpu.drifting(),
        "a new runner image is not a regression in the code"
    );
    // The same shift on an unchanged machine drifts.
    let same: Vec<RunResults> = runs
        .iter()
        .cloned()
        .map(|mut r| {
            r.environment.runner_image = Some(image(0).into());
            r
        })
        .collect();
    let refs: Vec<&RunResults> = same.iter().collect();
    let h = histories(&refs, &gate, Options::default());
    let cpu = of(&h, "cpu_us_per_request");
    assert!(cpu.shifts[0].environment.is_empty());
    assert!(cpu.drifting());
}
