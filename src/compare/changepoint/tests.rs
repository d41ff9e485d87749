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
    let direct = |t: usize| {
        let (x, y) = s.split_at(t);
        let (a, b) = (x.len() as f64, y.len() as f64);
        let between: f64 = x
            .iter()
            .flat_map(|p| y.iter().map(move |q| (p - q).abs()))
            .sum();
        let within = |v: &[f64]| -> f64 {
            let mut sum = 0.0;
            for i in 0..v.len() {
                for j in i + 1..v.len() {
                    sum += (v[i] - v[j]).abs();
                }
            }
            sum / (v.len() * (v.len() - 1) / 2) as f64
        };
        a * b / (a + b) * (2.0 * between / (a * b) - within(x) - within(y))
    };
    let best_direct = (2..=15).map(direct).fold(f64::MIN, f64::max);
    assert!(
        (q - best_direct).abs() < 1e-6 * best_direct.abs(),
        "{q} vs {best_direct}"
    );
    assert!((direct(tau) - q).abs() < 1e-6 * q.abs());
    assert_eq!(tau, 9);
}
