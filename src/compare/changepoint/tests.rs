use super::*;

/// Deterministic noise of about +-2% (a mix of a few incommensurate
/// periods): what run-to-run spread looks like on a quiet runner.
fn noise(i: usize) -> f64 {
    let x = i as f64;
    1.0 + 0.012 * (x * 1.7).sin() + 0.008 * (x * 0.61 + 1.0).cos() + 0.005 * (x * 3.3).sin()
}

fn series(n: usize, shifts: &[(usize, f64)]) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let level: f64 = shifts
                .iter()
                .filter(|(at, _)| i >= *at)
                .map(|(_, by)| 1.0 + by)
                .product();
            100.0 * level * noise(i)
        })
        .collect()
}

#[test]
fn a_flat_series_has_no_change_point() {
    for n in [10, 40, 100] {
        let found = change_points(&series(n, &[]), Options::default());
        assert!(found.is_empty(), "n = {n}: {found:?}");
    }
}

#[test]
fn a_ten_percent_shift_is_found_within_one_commit() {
    for (n, at) in [(40, 20), (60, 15), (80, 61)] {
        let found = change_points(&series(n, &[(at, 0.10)]), Options::default());
        assert_eq!(found.len(), 1, "n = {n}, at {at}: {found:?}");
        let c = &found[0];
        assert!(c.index.abs_diff(at) <= 1, "n = {n}, at {at}: {c:?}");
        assert!(c.p_value <= 0.05, "{c:?}");
        let change = c.relative_change().unwrap();
        assert!((change - 0.10).abs() < 0.02, "{change}");
    }
}

#[test]
fn two_shifts_are_both_found_in_order() {
    let found = change_points(&series(90, &[(30, 0.08), (60, -0.12)]), Options::default());
    let at: Vec<usize> = found.iter().map(|c| c.index).collect();
    assert_eq!(at.len(), 2, "{found:?}");
    assert!(at[0].abs_diff(30) <= 1 && at[1].abs_diff(60) <= 1, "{at:?}");
    assert!(found[0].relative_change().unwrap() > 0.05);
    assert!(found[1].relative_change().unwrap() < -0.09);
}

#[test]
fn too_short_a_series_or_a_side_finds_nothing() {
    assert!(change_points(&[], Options::default()).is_empty());
    assert!(change_points(&[1.0, 2.0, 3.0, 4.0, 5.0], Options::default()).is_empty());
    // A shift in the last two values: fewer than min_size after it.
    let s = series(30, &[(28, 0.5)]);
    let found = change_points(&s, Options::default());
    assert!(found.iter().all(|c| c.index <= 27), "{found:?}");
}

#[test]
fn the_answer_is_the_same_every_time() {
    let s = series(50, &[(25, 0.05)]);
    assert_eq!(
        change_points(&s, Options::default()),
        change_points(&s, Options::default())
    );
}

#[test]
fn the_running_sums_match_the_definition() {
    // Q at every split against a direct computation of the energy distance.
    let s = series(17, &[(9, 0.3)]);
    let (tau, q) = best_split(&s, 2).unwrap();
    let direct = |t: usize| q_by_pairs(&s, t);
    let best_direct = (2..=15).map(direct).fold(f64::MIN, f64::max);
    assert!(
        (q - best_direct).abs() < 1e-6 * best_direct.abs(),
        "{q} vs {best_direct}"
    );
    assert!((direct(tau) - q).abs() < 1e-6 * q.abs());
    assert_eq!(tau, 9);
}

/// The scaled energy distance of the split at `tau`, its sums written out:
/// O(n^2), the reference [`best_split`] is checked against.
fn q_by_pairs(seg: &[f64], tau: usize) -> f64 {
    let n = seg.len();
    let sum = |a: std::ops::Range<usize>, b: std::ops::Range<usize>| -> f64 {
        a.flat_map(|i| b.clone().map(move |j| (i, j)))
            .filter(|(i, j)| i != j)
            .map(|(i, j)| (seg[i] - seg[j]).abs())
            .sum()
    };
    let (a, b) = (tau as f64, (n - tau) as f64);
    // Within a side every pair is counted twice above.
    let e = 2.0 * sum(0..tau, tau..n) / (a * b)
        - sum(0..tau, 0..tau) / 2.0 / (a * (a - 1.0) / 2.0)
        - sum(tau..n, tau..n) / 2.0 / (b * (b - 1.0) / 2.0);
    a * b / (a + b) * e
}

#[test]
fn the_best_split_is_the_one_the_written_out_sums_give() {
    let mut rng = Rng(42);
    let mut cases: Vec<Vec<f64>> = vec![
        vec![5.0; 12],                                   // flat: every Q is 0
        (0..30).map(|i| (i % 4) as f64 + 3.0).collect(), // whole numbers, ties
        series(60, &[(25, 0.10)]),
        series(100, &[(40, -0.10), (70, 0.2)]),
        // A high level with a small spread (throughput): no precision lost.
        (0..80)
            .map(|i| 14_000.0 + 30.0 * noise(i) + if i >= 50 { 400.0 } else { 0.0 })
            .collect(),
        // A level far above the spread: summed uncentred (count * value -
        // sum), Q would be off by far more than the tolerance.
        (0..80)
            .map(|i| 1e9 + 30.0 * noise(i) + if i >= 50 { 100.0 } else { 0.0 })
            .collect(),
    ];
    for n in [6, 7, 20, 33] {
        cases.push((0..n).map(|_| (rng.next() % 1000) as f64 / 7.0).collect());
    }
    for seg in &cases {
        let n = seg.len();
        for min_size in [0, 1, 2, 3, 5] {
            let min = min_size.max(2);
            let got = best_split(seg, min_size);
            if n < 2 * min {
                assert_eq!(got, None, "{seg:?}, min {min_size}");
                continue;
            }
            let (want_tau, want_q) = (min..=n - min)
                .map(|t| (t, q_by_pairs(seg, t)))
                .fold(None, |best: Option<(usize, f64)>, (t, q)| match best {
                    Some((_, bq)) if q <= bq => best,
                    _ => Some((t, q)),
                })
                .unwrap();
            let (tau, q) = got.unwrap_or_else(|| panic!("{seg:?}, min {min_size}: none"));
            if seg.iter().all(|v| *v == seg[0]) {
                // Flat: every distance is 0, exactly; the first split wins.
                assert_eq!((tau, q), (min, 0.0), "{seg:?}");
                continue;
            }
            let tol = 1e-9 * want_q.abs();
            assert!((q - want_q).abs() <= tol, "{seg:?}: Q {q} vs {want_q}");
            // The same split, or one whose Q ties with the best.
            assert!(
                tau == want_tau || (q_by_pairs(seg, tau) - want_q).abs() <= tol,
                "{seg:?}: split {tau} vs {want_tau}"
            );
        }
    }
}
