//! The sign test on paired differences (`[gate] paired_test = "sign"`): the
//! exact binomial test of the signs, the median and its order-statistic
//! interval (whose width gives the minimum detectable effect, as for every
//! test). The parent module's docs give the methods and sources (HWC 3.4-3.6).

use super::{
    exact_critical, mde_of_interval, median_sorted, min_p_paired, normal_quantile,
    normal_two_sided, two_sided_p, Shift, EXACT_MAX,
};

/// Paired samples, sign test: the exact two-sided sign test of the differences
/// `d_i = current_i - baseline_i` ([`sign_test_p`]: zero differences dropped,
/// binomial(n', 1/2) over the `n'` nonzero ones) and their median with the
/// order-statistic interval `[d(k), d(n+1-k)]` of all `n` differences, `k` from
/// [`sign_critical`] (HWC 3.4-3.6). `None` when empty.
pub fn paired_sign(diffs: &[f64], alpha: f64) -> Option<Shift> {
    let n = diffs.len();
    if n == 0 {
        return None;
    }
    let (p_value, exact) = sign_test_p(diffs);
    let mut sorted = diffs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (k, confidence) = sign_critical(n, alpha);
    let min_p = min_p_paired(n);
    let (lo, hi) = (sorted[k - 1], sorted[n - k]);
    Some(Shift {
        estimate: median_sorted(&sorted),
        ci_low: lo,
        ci_high: hi,
        confidence,
        p_value,
        min_p_value: min_p,
        mde: mde_of_interval(min_p, (lo, hi, confidence), alpha),
        exact,
    })
}

/// Exact null distribution of the sign statistic (the number of positive
/// differences among `n` nonzero ones): `counts[s] = C(n, s)` of `2^n` sign
/// patterns, a row of Pascal's triangle (exact in `u128` far beyond `EXACT_MAX`).
pub fn sign_null(n: usize) -> Vec<u128> {
    let mut row = vec![1u128];
    for _ in 0..n {
        let mut next = vec![1u128; row.len() + 1];
        for s in 1..row.len() {
            next[s] = row[s - 1] + row[s];
        }
        row = next;
    }
    row
}

/// Two-sided sign test p-value of the differences `d` and whether it is exact.
/// Zero differences are dropped (they carry no sign): the statistic is the
/// number of positive differences among the `n'` nonzero ones, binomial(n',
/// 1/2) under "no shift", and `p = P(|S - n'/2| >= |s - n'/2|)`. Exact for
/// `n' <= EXACT_MAX`, else the normal approximation with a continuity
/// correction. No nonzero difference: `p = 1`.
pub fn sign_test_p(d: &[f64]) -> (f64, bool) {
    let n = d.iter().filter(|v| **v != 0.0).count();
    if n == 0 {
        return (1.0, true);
    }
    let positive = d.iter().filter(|v| **v > 0.0).count();
    if n <= EXACT_MAX {
        // Doubled statistic, so the expectation n'/2 is an integer: 2S vs n'.
        let mut doubled = vec![0u128; 2 * n + 1];
        for (s, c) in sign_null(n).into_iter().enumerate() {
            doubled[2 * s] = c;
        }
        return (two_sided_p(&doubled, 2 * positive as u64, n as u64), true);
    }
    let dev = (positive as f64 - n as f64 / 2.0).abs();
    (normal_two_sided(dev, n as f64 / 4.0), false)
}

/// `k` of the sign test's interval `[d(k), d(n+1-k)]` over `n` differences and
/// its achieved confidence: the largest `k` with `P(B <= k-1) <= alpha/2`,
/// `B ~ binomial(n, 1/2)` (HWC 3.6), exact up to `EXACT_MAX`; beyond, the
/// normal approximation `n/2 - z(1-alpha/2) sqrt(n/4)` at the nominal level.
pub fn sign_critical(n: usize, alpha: f64) -> (usize, f64) {
    if n <= EXACT_MAX {
        return exact_critical(&sign_null(n), n, alpha);
    }
    let nf = n as f64;
    let k = (nf / 2.0 - normal_quantile(1.0 - alpha / 2.0) * (nf / 4.0).sqrt()).floor();
    ((k.max(1.0) as usize).min(n.div_ceil(2)), 1.0 - alpha)
}
