use proptest::prelude::*;

use super::*;

/// All `k`-subsets of `0..n` (brute force for checking the DPs).
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    (0u32..1 << n)
        .filter(|mask| mask.count_ones() as usize == k)
        .map(|mask| (0..n).filter(|i| mask & (1 << i) != 0).collect())
        .collect()
}

#[test]
fn mann_whitney_null_matches_brute_force() {
    for (n, m) in [(1, 1), (2, 3), (3, 3), (4, 5), (5, 5), (3, 7)] {
        let counts = mann_whitney_null(n, m);
        let mut brute = vec![0u128; n * m + 1];
        // x takes positions `s` among n+m ranked items; U counts (x, y) with y > x.
        for s in subsets(n + m, n) {
            let u: usize = s
                .iter()
                .map(|&p| (p + 1..n + m).filter(|q| !s.contains(q)).count())
                .sum();
            brute[u] += 1;
        }
        assert_eq!(counts, brute, "n={n} m={m}");
        assert_eq!(counts.iter().sum::<u128>() as f64, binomial(n + m, n));
    }
    // C(100, 50) ~ 1e29 fits: the largest exact table is exact.
    let big = mann_whitney_null(50, 50);
    assert_eq!(
        big.iter().sum::<u128>(),
        100_891_344_545_564_193_334_812_497_256
    );
}

/// Published two-sided alpha = 0.05 critical values (the largest U, or T, whose
/// lower tail is at most 0.025), e.g. Hollander-Wolfe-Chicken tables A.6 / A.4.
#[test]
fn critical_values_match_tables() {
    for (n, crit_u) in [(5, 2), (6, 5), (8, 13), (10, 23), (20, 127)] {
        let (c, _) = two_sample_critical(n, n, 0.05);
        assert_eq!(c - 1, crit_u, "Mann-Whitney n=m={n}");
    }
    assert_eq!(two_sample_critical(4, 6, 0.05).0 - 1, 2);
    for (n, crit_t) in [(6, 0), (8, 3), (10, 8), (15, 25), (20, 52)] {
        let (c, _) = paired_critical(n, 0.05);
        assert_eq!(c - 1, crit_t, "Wilcoxon n={n}");
    }
}

#[test]
fn achieved_confidence_is_reported() {
    let (c, conf) = two_sample_critical(5, 5, 0.05);
    assert_eq!(c, 3);
    assert!((conf - (1.0 - 8.0 / 252.0)).abs() < 1e-12, "{conf}");
    // 3 vs 3 cannot reach 95%: full range, 1 - 2/20.
    assert_eq!(two_sample_critical(3, 3, 0.05), (1, 0.9));
    let (c, conf) = paired_critical(8, 0.05);
    assert_eq!(c, 4);
    assert!((conf - (1.0 - 10.0 / 256.0)).abs() < 1e-12);
}

#[test]
fn smallest_attainable_p_and_rounds_needed() {
    assert!((min_p_two_sample(3, 3) - 0.1).abs() < 1e-12);
    assert!((min_p_two_sample(4, 4) - 2.0 / 70.0).abs() < 1e-12);
    assert_eq!(rounds_needed_two_sample(0.05), 4);
    assert_eq!(rounds_needed_two_sample(0.01), 5);
    assert!((min_p_paired(5) - 0.0625).abs() < 1e-12);
    assert_eq!(rounds_needed_paired(0.05), 6);
    // Complete separation attains the minimum.
    let (p, exact) = mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
    assert!(exact && (p - 0.1).abs() < 1e-12, "{p}");
    let (p, _) = signed_rank_p(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert!((p - 2.0 / 64.0).abs() < 1e-12, "{p}");
}

#[test]
fn tied_rank_sum_distribution_matches_permutations() {
    let x = [1.0, 2.0, 2.0, 3.0];
    let y = [2.0, 3.0, 3.0, 5.0, 1.0];
    let all: Vec<f64> = x.iter().chain(&y).copied().collect();
    let (ranks, _) = doubled_midranks(&all);
    let observed: u64 = ranks[x.len()..].iter().sum();
    let expected = (y.len() * (all.len() + 1)) as u64;
    let subs = subsets(all.len(), y.len());
    let extreme = subs
        .iter()
        .filter(|s| {
            let sum: u64 = s.iter().map(|&i| ranks[i]).sum();
            sum.abs_diff(expected) >= observed.abs_diff(expected)
        })
        .count();
    let (p, exact) = mann_whitney_p(&x, &y);
    assert!(exact);
    assert!(
        (p - extreme as f64 / subs.len() as f64).abs() < 1e-12,
        "{p}"
    );
}

#[test]
fn normal_approximation_agrees_with_exact_near_the_limit() {
    let x: Vec<f64> = (0..50).map(|i| i as f64).collect();
    let y: Vec<f64> = (0..50).map(|i| i as f64 + 9.5).collect();
    let (exact, is_exact) = mann_whitney_p(&x, &y);
    assert!(is_exact);
    let x51: Vec<f64> = (0..51).map(|i| i as f64).collect();
    let y51: Vec<f64> = (0..51).map(|i| i as f64 + 9.5).collect();
    let (approx, is_exact) = mann_whitney_p(&x51, &y51);
    assert!(!is_exact);
    assert!((exact - approx).abs() < 0.02, "{exact} vs {approx}");
}

#[test]
fn hodges_lehmann_estimates() {
    let s = two_sample(&[1.0, 2.0, 3.0], &[11.0, 12.0, 13.0], 0.05).unwrap();
    assert_eq!(s.estimate, 10.0);
    assert_eq!((s.ci_low, s.ci_high), (8.0, 12.0));
    assert_eq!(s.mde, None, "3 vs 3 cannot reach 0.05");
    let s = paired(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.05).unwrap();
    assert_eq!(s.estimate, 3.5);
    assert!(s.p_value < 0.05 && s.ci_low > 0.0);
    assert!(two_sample(&[], &[1.0], 0.05).is_none());
    assert!(paired(&[], 0.05).is_none());
}

#[test]
fn mde_grows_with_noise_and_shrinks_with_trials() {
    let mde = |x: &[f64], y: &[f64]| two_sample(x, y, 0.05).unwrap().mde.unwrap();
    let quiet = mde(&[1.0, 1.01, 0.99, 1.0, 1.0], &[1.0, 1.005, 0.995, 1.0, 1.0]);
    let noisy = mde(&[1.0, 1.1, 0.9, 1.0, 1.0], &[1.0, 1.05, 0.95, 1.0, 1.0]);
    assert!(noisy > 5.0 * quiet, "{quiet} {noisy}");
    let x10: Vec<f64> = [1.0, 1.1, 0.9, 1.0, 1.0].repeat(2);
    let y10: Vec<f64> = [1.0, 1.05, 0.95, 1.0, 1.0].repeat(2);
    assert!(mde(&x10, &y10) < noisy);
    assert_eq!(
        two_sample(&[1.0; 4], &[1.0; 4], 0.05).unwrap().mde,
        Some(0.0)
    );
    assert!(paired(&[0.1], 0.05).unwrap().mde.is_none());
}

/// The MDE is `(z(1 - alpha/2) + z(0.80)) * SE`, with SE the interval's width
/// over `2 z` of its achieved confidence, for every test: one spread, the
/// interval's.
#[test]
fn mde_comes_from_the_interval_of_every_test() {
    let d: Vec<f64> = (1..=12).map(|i| 0.02 + 0.01 * f64::from(i % 5)).collect();
    let x: Vec<f64> = (0..9).map(|i| f64::from(i % 4)).collect();
    let y: Vec<f64> = x.iter().map(|v| v * 1.1 + 0.3).collect();
    for alpha in [0.05, 0.01] {
        for s in [
            paired(&d, alpha).unwrap(),
            paired_sign(&d, alpha).unwrap(),
            two_sample(&x, &y, alpha).unwrap(),
        ] {
            let z = normal_quantile((1.0 + s.confidence) / 2.0);
            let se = (s.ci_high - s.ci_low) / (2.0 * z);
            assert_eq!(interval_se(s.ci_low, s.ci_high, s.confidence), Some(se));
            let want = (normal_quantile(1.0 - alpha / 2.0) + normal_quantile(0.8)) * se;
            let mde = s.mde.unwrap();
            assert!((mde - want).abs() < 1e-12, "{s:?}: {mde} vs {want}");
        }
    }
    // A 95% interval: SE = width / 3.92.
    let se = interval_se(-1.0, 1.0, 0.95).unwrap();
    assert!((se - 2.0 / 3.919_928).abs() < 1e-5, "{se}");
    assert_eq!(interval_se(0.0, 1.0, 1.0), None);
    assert_eq!(interval_se(0.0, f64::INFINITY, 0.95), None);
}

/// Two wild rounds of 20 inflate the standard deviation of the differences
/// more than 5 times and barely move the signed-rank interval: the MDE, from
/// the interval, stays near the interval's half-width (about 1.4 times it at
/// 95%), where a standard-deviation MDE would be several times it.
#[test]
fn wild_trials_do_not_inflate_the_mde() {
    let tame: Vec<f64> = (1..=18)
        .map(|i| 0.04 + 0.04 * normal_quantile((f64::from(i) - 0.5) / 18.0))
        .collect();
    let mut d = tame.clone();
    d.insert(6, 0.8);
    d.insert(14, 0.8);
    let sd = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    };
    assert!(sd(&d) > 5.0 * sd(&tame), "{} vs {}", sd(&d), sd(&tame));
    let s = paired(&d, 0.05).unwrap();
    let half = (s.ci_high - s.ci_low) / 2.0;
    let mde = s.mde.unwrap();
    assert!(
        mde > half && mde < 1.6 * half,
        "MDE {mde}, half-width {half}"
    );
    let t = paired(&tame, 0.05).unwrap();
    assert!(
        mde < 1.5 * t.mde.unwrap(),
        "{mde} vs {} without the wild rounds",
        t.mde.unwrap()
    );
}

#[test]
fn quantiles() {
    assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
    assert!((normal_quantile(0.025) + 1.959_964).abs() < 1e-5);
    assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
}

#[test]
fn holm_adjusts_step_down() {
    let adj = holm(&[0.01, 0.04, 0.03, 0.5]);
    assert_eq!(adj, vec![0.04, 0.09, 0.09, 0.5]);
}

fn sample(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(1.0f64..1000.0, len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn p_values_are_probabilities(x in sample(1..12), y in sample(1..12)) {
        let s = two_sample(&x, &y, 0.05).unwrap();
        prop_assert!((0.0..=1.0).contains(&s.p_value));
        prop_assert!(s.min_p_value <= 1.0 && s.ci_low <= s.estimate && s.estimate <= s.ci_high);
        let d: Vec<f64> = x.iter().zip(&y).map(|(a, b)| b - a).collect();
        let s = paired(&d, 0.05).unwrap();
        prop_assert!((0.0..=1.0).contains(&s.p_value));
        prop_assert!(s.ci_low <= s.estimate && s.estimate <= s.ci_high);
    }

    #[test]
    fn identical_samples_show_no_shift(x in sample(1..12)) {
        let s = two_sample(&x, &x, 0.05).unwrap();
        prop_assert_eq!(s.estimate, 0.0);
        prop_assert!(s.p_value > 0.5);
        prop_assert!(s.ci_low <= 0.0 && s.ci_high >= 0.0);
        let s = paired(&vec![0.0; x.len()], 0.05).unwrap();
        prop_assert_eq!((s.estimate, s.p_value), (0.0, 1.0));
    }

    #[test]
    fn scaling_on_the_log_scale_shifts_by_ln_k(x in sample(2..10), y in sample(2..10), k in 0.1f64..10.0) {
        let lx: Vec<f64> = x.iter().map(|v| v.ln()).collect();
        let ly: Vec<f64> = y.iter().map(|v| v.ln()).collect();
        let lyk: Vec<f64> = y.iter().map(|v| (v * k).ln()).collect();
        let a = two_sample(&lx, &ly, 0.05).unwrap();
        let b = two_sample(&lx, &lyk, 0.05).unwrap();
        prop_assert!((b.estimate - a.estimate - k.ln()).abs() < 1e-9);
        prop_assert!((b.ci_low - a.ci_low - k.ln()).abs() < 1e-9);
        prop_assert!((b.ci_high - a.ci_high - k.ln()).abs() < 1e-9);
    }

    #[test]
    fn swapping_sides_mirrors_the_shift(x in sample(1..10), y in sample(1..10)) {
        let a = two_sample(&x, &y, 0.05).unwrap();
        let b = two_sample(&y, &x, 0.05).unwrap();
        prop_assert!((a.estimate + b.estimate).abs() < 1e-9);
        prop_assert!((a.ci_low + b.ci_high).abs() < 1e-9);
        prop_assert!((a.p_value - b.p_value).abs() < 1e-12);
    }
}

// ---------------------------------------------------------------------------
// Sign test (`paired_sign`)

#[test]
fn sign_null_is_a_row_of_pascals_triangle() {
    assert_eq!(sign_null(0), vec![1]);
    assert_eq!(sign_null(5), vec![1, 5, 10, 10, 5, 1]);
    let row = sign_null(EXACT_MAX);
    assert_eq!(row.iter().sum::<u128>(), 1u128 << EXACT_MAX);
    assert_eq!(row[25] as f64, binomial(50, 25));
}

/// The distribution-free interval for a median, `[x(k), x(n+1-k)]`, from the
/// binomial(n, 1/2) tails by hand: n = 10: P(B <= 1) = 11/1024 <= 0.025 <
/// P(B <= 2) = 56/1024, so k = 2 at 1 - 22/1024; n = 20: (x(6), x(15)) at
/// 95.86%, n = 30: (x(10), x(21)) at 95.72%, as in the usual tables.
#[test]
fn sign_critical_values_match_binomial_tails() {
    let (k, conf) = sign_critical(10, 0.05);
    assert_eq!(k, 2);
    assert!((conf - (1.0 - 22.0 / 1024.0)).abs() < 1e-12, "{conf}");
    let (k, conf) = sign_critical(20, 0.05);
    assert_eq!(k, 6);
    assert!((conf - 0.958_61).abs() < 1e-5, "{conf}");
    let (k, conf) = sign_critical(30, 0.05);
    assert_eq!(k, 10);
    assert!((conf - 0.957_23).abs() < 1e-5, "{conf}");
    // 6 pairs: the full range at 1 - 2/64; 5 cannot reach 95%: 1 - 2/32.
    assert_eq!(sign_critical(6, 0.05), (1, 1.0 - 2.0 / 64.0));
    assert_eq!(sign_critical(5, 0.05), (1, 1.0 - 2.0 / 32.0));
    // Beyond the exact table: the normal approximation at the nominal level.
    assert_eq!(sign_critical(100, 0.05), (40, 0.95));
}

#[test]
fn sign_test_p_values_by_hand() {
    // 9 of 10 positive: 2 P(B >= 9) = 2 (10 + 1) / 1024.
    let d = [1.0, 2.0, 3.0, -1.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
    assert_eq!(sign_test_p(&d), (22.0 / 1024.0, true));
    // Odd n: 5 of 7 positive, P(|S - 3.5| >= 1.5) = 2 (1 + 7 + 21) / 128.
    let d = [1.0, 2.0, 3.0, 4.0, 5.0, -1.0, -2.0];
    assert_eq!(sign_test_p(&d), (58.0 / 128.0, true));
    // Balanced signs: p = 1; nothing but zeros: p = 1.
    assert_eq!(sign_test_p(&[1.0, -1.0, 2.0, -2.0]), (1.0, true));
    assert_eq!(sign_test_p(&[0.0; 8]), (1.0, true));
    // Zeros are dropped: 6 nonzero, all positive, 2 / 64 (not 2 / 256).
    let d = [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    assert_eq!(sign_test_p(&d), (2.0 / 64.0, true));
    // The signs alone count: magnitudes change nothing.
    let far = [1e6, 2.0, 3.0, -1.0, 5.0, 6.0, 7.0, 8.0, 9.0, -1e-9];
    assert_eq!(sign_test_p(&far).0, 2.0 * 56.0 / 1024.0);
}

#[test]
fn sign_test_normal_approximation_agrees_with_exact_near_the_limit() {
    // 33 of 50 positive (exact) against 34 of 51 (approximate).
    let d50: Vec<f64> = (0..50).map(|i| if i < 33 { 1.0 } else { -1.0 }).collect();
    let d51: Vec<f64> = (0..51).map(|i| if i < 34 { 1.0 } else { -1.0 }).collect();
    let (exact, is_exact) = sign_test_p(&d50);
    let (approx, approx_exact) = sign_test_p(&d51);
    assert!(is_exact && !approx_exact);
    assert!((exact - approx).abs() < 0.01, "{exact} vs {approx}");
}

#[test]
fn both_paired_tests_share_the_smallest_p_value() {
    for n in 1..=12 {
        let all_up: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        let sign = paired_sign(&all_up, 0.05).unwrap();
        let rank = paired(&all_up, 0.05).unwrap();
        assert_eq!(sign.p_value, min_p_paired(n), "n={n}");
        assert_eq!(rank.p_value, min_p_paired(n), "n={n}");
        assert_eq!(sign.min_p_value, rank.min_p_value);
    }
    assert_eq!(rounds_needed_paired(0.05), 6);
}

#[test]
fn sign_shift_is_the_median_with_its_order_statistic_interval() {
    let d = [7.0, 2.0, 10.0, 1.0, 9.0, 4.0, 3.0, 8.0, 6.0, 5.0];
    let s = paired_sign(&d, 0.05).unwrap();
    assert_eq!(s.estimate, 5.5);
    assert_eq!((s.ci_low, s.ci_high), (2.0, 9.0));
    assert!((s.confidence - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
    assert_eq!(s.p_value, 2.0 / 1024.0);
    assert!(s.exact);
    // Zeros stay in the estimate and the interval (the median of all pairs).
    let z = paired_sign(&[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0], 0.05).unwrap();
    assert_eq!((z.estimate, z.p_value), (0.0, 0.5));
    assert!(paired_sign(&[], 0.05).is_none());
    // Five pairs cannot reach 0.05: no MDE.
    assert_eq!(
        paired_sign(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.05).unwrap().mde,
        None
    );
}

/// 12 pairs near +10%, 8 far out on both sides (single trials jumping): the
/// Walsh averages mix the far ones into the middle, the order statistics
/// skip them.
#[test]
fn sign_interval_is_narrower_than_hodges_lehmann_under_outliers() {
    let mut d: Vec<f64> = (0..12).map(|i| 0.08 + 0.04 * i as f64 / 11.0).collect();
    d.extend([0.5, 0.6, 0.7, 0.8, -0.4, -0.5, -0.6, -0.7]);
    let sign = paired_sign(&d, 0.05).unwrap();
    let hl = paired(&d, 0.05).unwrap();
    assert!(sign.ci_low > 0.08 && sign.ci_high < 0.12, "{sign:?}");
    assert!(
        hl.ci_low < 0.0,
        "Hodges-Lehmann's interval crosses 0: {hl:?}"
    );
    assert!(
        (sign.ci_high - sign.ci_low) * 4.0 < hl.ci_high - hl.ci_low,
        "{sign:?} {hl:?}"
    );
    assert!(sign.p_value < 0.05 && hl.p_value > 0.05);
}

/// Differences at the normal quantiles of 20 pairs: the signed-rank interval
/// is the narrower one (the sign test's efficiency is 2/3 of it there).
#[test]
fn sign_interval_is_wider_than_hodges_lehmann_under_normal_noise() {
    let d: Vec<f64> = (1..=20)
        .map(|i| 0.02 + 0.05 * normal_quantile((i as f64 - 0.5) / 20.0))
        .collect();
    let sign = paired_sign(&d, 0.05).unwrap();
    let hl = paired(&d, 0.05).unwrap();
    let (ws, wh) = (sign.ci_high - sign.ci_low, hl.ci_high - hl.ci_low);
    assert!(ws > 1.1 * wh, "sign {ws} vs Hodges-Lehmann {wh}");
    // The MDE, from each interval, states the same loss.
    assert!(sign.mde.unwrap() > 1.1 * hl.mde.unwrap(), "{sign:?} {hl:?}");
    assert!(paired_sign(&[0.1], 0.05).unwrap().mde.is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sign_shift_is_well_formed(d in prop::collection::vec(-1.0f64..1.0, 1..60)) {
        let s = paired_sign(&d, 0.05).unwrap();
        prop_assert!((0.0..=1.0).contains(&s.p_value));
        prop_assert!(s.p_value >= s.min_p_value.min(1.0) - 1e-15);
        prop_assert!(s.ci_low <= s.estimate && s.estimate <= s.ci_high);
        // Mirroring the differences mirrors the shift and keeps p.
        let m: Vec<f64> = d.iter().map(|v| -v).collect();
        let r = paired_sign(&m, 0.05).unwrap();
        prop_assert_eq!(r.estimate, -s.estimate);
        prop_assert_eq!((r.ci_low, r.ci_high), (-s.ci_high, -s.ci_low));
        prop_assert!((r.p_value - s.p_value).abs() < 1e-12);
    }
}
