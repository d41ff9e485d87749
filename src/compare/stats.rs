//! Rank statistics for the gate: pure functions on small samples of per-trial
//! values (one value per fresh process; the trial is the unit of replication).
//!
//! Methods and sources (M. Hollander, D. A. Wolfe, E. Chicken, *Nonparametric
//! Statistical Methods*, 3rd ed., Wiley 2014, "HWC" below):
//!
//! - **Two independent samples** (baseline mode): the Wilcoxon-Mann-Whitney rank-sum
//!   test (HWC 4.1) and the Hodges-Lehmann estimate of the shift, the median of the
//!   `n*m` pairwise differences `y_j - x_i`, with its distribution-free confidence
//!   interval `[D(c), D(nm+1-c)]` (HWC 4.2-4.3). The null distribution is exact
//!   for `n, m <= 50`: without ties it is the Gaussian-binomial coefficient
//!   `[n+m choose n]_q` (the number of rank arrangements with each `U`), with ties
//!   the conditional (permutation) distribution of the midrank sum, by dynamic
//!   programming. Beyond 50 a side: the normal approximation with the tie
//!   correction of the variance and a continuity correction.
//! - **Paired samples** (side-by-side mode, paired by round): the Wilcoxon
//!   signed-rank test on the per-round differences (HWC 3.1; zero differences
//!   dropped, midranks for ties, exact conditional distribution for `n <= 50`)
//!   and the Hodges-Lehmann estimate, the median of the `n(n+1)/2` Walsh averages,
//!   with its interval `[W(c), W(M+1-c)]` (HWC 3.2-3.3).
//! - **Paired samples, sign test** (`[gate] paired_test = "sign"`): the exact
//!   sign test on the per-round differences (HWC 3.4; zero differences dropped,
//!   binomial(n', 1/2) with `n'` the nonzero ones), the median of the differences
//!   (HWC 3.5) and its order-statistic interval `[d(k), d(n+1-k)]` (HWC 3.6). It
//!   uses only the signs, so a few far-out differences (single trials jumping
//!   20-50% in a noisy stretch) move neither its test nor its interval much,
//!   where the Walsh averages spread with them; under near-normal noise it is
//!   the less efficient of the two (2/pi against 3/pi relative to the t-test).
//! - The interval's `c` is the exact critical value of the no-ties null
//!   distribution: the largest `c` with `P(U <= c-1) <= alpha/2`. Its **achieved**
//!   confidence `1 - 2 P(U <= c-1)` is reported (e.g. 0.968 for 5 vs 5 at 0.95).
//!   When even `c = 1` misses the level (3 vs 3), the interval is the full range and
//!   its achieved confidence says so (0.90).
//! - The **smallest attainable p-value** is `2 / C(n+m, n)` (two samples) and
//!   `2 / 2^n` (paired, signed-rank and sign test alike: either attains it only
//!   when all `n` differences share a sign): 3 vs 3 trials can never reach
//!   p < 0.05, 4 vs 4 can; paired needs 6 rounds. The gate calls such a
//!   comparison inconclusive.
//! - **Minimum detectable effect** (MDE) at the observed noise: the shift the test
//!   detects with 80% power at level alpha, `MDE = (z(1-alpha/2) + z(0.80)) * SE`,
//!   with `SE` the standard error the test's own interval implies: its width over
//!   `2 z((1+c)/2)`, `c` its achieved confidence ([`interval_se`]; `1.96` for a 95%
//!   interval). One spread for the interval, the MDE and the advice built on it:
//!   a few wild trials inflate a standard deviation many times over but barely
//!   move a rank interval (statistics primer, "One spread, read robustly,
//!   everywhere"), and the rank tests' efficiency against the t-test is already
//!   in the interval's width. Assumption: the estimate is roughly normal, so its
//!   interval's half-width is `z` standard errors. It is `None` when the trial
//!   count cannot reach the level at all.
//!
//! Callers choose the scale: the gate compares `ln(value)` for ratio-scale metrics
//! (so +10% and -10% are symmetric and scaling every value by `k` shifts the
//! estimate by exactly `ln k`) and raw values for metrics that can be 0.

/// Largest sample size per side with an exact null distribution.
pub const EXACT_MAX: usize = 50;

/// Power at which the minimum detectable effect is stated.
pub const MDE_POWER: f64 = 0.80;

/// A location shift estimated from two sides, on the scale of the input values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// Estimate of `current - baseline`: Hodges-Lehmann (rank tests), or the
    /// median of the differences (sign test).
    pub estimate: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// Achieved confidence of `[ci_low, ci_high]`.
    pub confidence: f64,
    /// Two-sided p-value for "no shift".
    pub p_value: f64,
    /// Smallest p-value the test can attain with these sample sizes.
    pub min_p_value: f64,
    /// Minimum detectable shift (80% power at `alpha`); `None` when undetectable.
    pub mde: Option<f64>,
    /// Whether the p-value came from the exact distribution.
    pub exact: bool,
}

/// Two independent samples: Mann-Whitney test and Hodges-Lehmann shift of
/// `current` relative to `baseline`. `None` when a side is empty.
pub fn two_sample(baseline: &[f64], current: &[f64], alpha: f64) -> Option<Shift> {
    let (n, m) = (baseline.len(), current.len());
    if n == 0 || m == 0 {
        return None;
    }
    let (p_value, exact) = mann_whitney_p(baseline, current);
    let mut diffs: Vec<f64> = current
        .iter()
        .flat_map(|y| baseline.iter().map(move |x| y - x))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let (c, confidence) = two_sample_critical(n, m, alpha);
    let min_p = min_p_two_sample(n, m);
    let (lo, hi) = (diffs[c - 1], diffs[diffs.len() - c]);
    Some(Shift {
        estimate: median_sorted(&diffs),
        ci_low: lo,
        ci_high: hi,
        confidence,
        p_value,
        min_p_value: min_p,
        mde: mde_of_interval(min_p, (lo, hi, confidence), alpha),
        exact,
    })
}

/// Paired samples: Wilcoxon signed-rank test and Hodges-Lehmann shift of the
/// differences `d_i = current_i - baseline_i`. `None` when empty.
pub fn paired(diffs: &[f64], alpha: f64) -> Option<Shift> {
    let n = diffs.len();
    if n == 0 {
        return None;
    }
    let (p_value, exact) = signed_rank_p(diffs);
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((diffs[i] + diffs[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let (c, confidence) = paired_critical(n, alpha);
    let min_p = min_p_paired(n);
    let (lo, hi) = (walsh[c - 1], walsh[walsh.len() - c]);
    Some(Shift {
        estimate: median_sorted(&walsh),
        ci_low: lo,
        ci_high: hi,
        confidence,
        p_value,
        min_p_value: min_p,
        mde: mde_of_interval(min_p, (lo, hi, confidence), alpha),
        exact,
    })
}

/// Smallest two-sided p-value of the rank-sum test with `n` and `m` trials.
pub fn min_p_two_sample(n: usize, m: usize) -> f64 {
    (2.0 / binomial(n + m, n)).min(1.0)
}

/// Smallest two-sided p-value of a paired test with `n` pairs: `2 / 2^n` for
/// the signed-rank test and the sign test alike (all `n` signs equal).
pub fn min_p_paired(n: usize) -> f64 {
    (2.0 / 2f64.powi(n as i32)).min(1.0)
}

/// Fewest trials per side with which the rank-sum test can reach `alpha`.
pub fn rounds_needed_two_sample(alpha: f64) -> usize {
    (1..=EXACT_MAX)
        .find(|&r| min_p_two_sample(r, r) <= alpha)
        .unwrap_or(EXACT_MAX)
}

/// Fewest pairs with which a paired test (signed-rank or sign) can reach `alpha`.
pub fn rounds_needed_paired(alpha: f64) -> usize {
    (1..=EXACT_MAX)
        .find(|&r| min_p_paired(r) <= alpha)
        .unwrap_or(EXACT_MAX)
}

// ---------------------------------------------------------------------------
// Null distributions

/// Exact no-ties null distribution of the Mann-Whitney `U` for sizes `n`, `m`:
/// `counts[u]` arrangements (of `C(n+m, n)`) have `U = u`. These are the
/// coefficients of the Gaussian binomial `[n+m choose n]_q`, built as
/// `prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i)`; each partial product is itself a
/// Gaussian binomial, so every step stays exact in integers.
pub fn mann_whitney_null(n: usize, m: usize) -> Vec<u128> {
    let len = n * m + 1;
    let mut c = vec![0i128; len];
    c[0] = 1;
    for i in 1..=n {
        // Multiply by (1 - q^(m+i)), high degrees first.
        let k = m + i;
        for d in (k..len).rev() {
            c[d] -= c[d - k];
        }
        // Divide by (1 - q^i): a running sum with stride i.
        for d in i..len {
            c[d] += c[d - i];
        }
    }
    c.into_iter().map(|v| v as u128).collect()
}

/// Exact null distribution of the Wilcoxon signed-rank statistic `T+` for `n`
/// pairs without ties: `counts[t]` sign patterns (of `2^n`) have `T+ = t`.
pub fn signed_rank_null(n: usize) -> Vec<u128> {
    let doubled: Vec<u64> = (1..=n as u64).map(|r| 2 * r).collect();
    signed_rank_doubled(&doubled)
        .into_iter()
        .step_by(2)
        .collect()
}

/// Counts of the sum of doubled ranks of a random `k`-subset (index = sum).
fn rank_sum_doubled(doubled: &[u64], k: usize) -> Vec<u128> {
    let total: u64 = doubled.iter().sum();
    let mut dp = vec![vec![0u128; total as usize + 1]; k + 1];
    dp[0][0] = 1;
    for (i, &r) in doubled.iter().enumerate() {
        let r = r as usize;
        for j in (1..=k.min(i + 1)).rev() {
            let (lo, hi) = dp.split_at_mut(j);
            let (prev, cur) = (&lo[j - 1], &mut hi[0]);
            for s in (r..cur.len()).rev() {
                cur[s] += prev[s - r];
            }
        }
    }
    dp.swap_remove(k)
}

/// Counts of the sum of doubled ranks with a `+` sign (index = sum).
fn signed_rank_doubled(doubled: &[u64]) -> Vec<u128> {
    let total: u64 = doubled.iter().sum();
    let mut dp = vec![0u128; total as usize + 1];
    dp[0] = 1;
    for &r in doubled {
        let r = r as usize;
        for s in (r..dp.len()).rev() {
            dp[s] += dp[s - r];
        }
    }
    dp
}

/// Two-sided p-value `P(|S - E| >= |s - E|)` from counts indexed by `S`.
fn two_sided_p(counts: &[u128], observed: u64, expected: u64) -> f64 {
    let dist = observed.abs_diff(expected);
    let total: u128 = counts.iter().sum();
    let extreme: u128 = counts
        .iter()
        .enumerate()
        .filter(|(s, _)| (*s as u64).abs_diff(expected) >= dist)
        .map(|(_, c)| *c)
        .sum();
    (extreme as f64 / total as f64).clamp(0.0, 1.0)
}

/// Midranks (1-based) of `values`, doubled so they are integers, and the tie
/// group sizes.
fn doubled_midranks(values: &[f64]) -> (Vec<u64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0u64; values.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their mean; doubled: (i+1) + (j+1).
        let doubled = (i + j + 2) as u64;
        for &o in &order[i..=j] {
            ranks[o] = doubled;
        }
        ties.push(j - i + 1);
        i = j + 1;
    }
    (ranks, ties)
}

/// Two-sided Mann-Whitney p-value of `y` against `x` and whether it is exact.
pub fn mann_whitney_p(x: &[f64], y: &[f64]) -> (f64, bool) {
    let (n, m) = (x.len(), y.len());
    let all: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, ties) = doubled_midranks(&all);
    let big_n = n + m;
    // Rank sum of the smaller side (cheaper DP), doubled.
    let (k, sum) = if m <= n {
        (m, ranks[n..].iter().sum::<u64>())
    } else {
        (n, ranks[..n].iter().sum::<u64>())
    };
    let expected = (k * (big_n + 1)) as u64;
    if n <= EXACT_MAX && m <= EXACT_MAX {
        let counts = if ties.iter().all(|&t| t == 1) {
            // No ties: doubled sum = 2 (U + k(k+1)/2).
            let base = k * (k + 1);
            let mut counts = vec![0u128; 2 * (n * m) + base + 1];
            for (u, c) in mann_whitney_null(k, big_n - k).into_iter().enumerate() {
                counts[2 * u + base] = c;
            }
            counts
        } else {
            rank_sum_doubled(&ranks, k)
        };
        return (two_sided_p(&counts, sum, expected), true);
    }
    let (nf, mf, nn) = (n as f64, m as f64, big_n as f64);
    let tie_term: f64 = ties.iter().map(|&t| (t as f64).powi(3) - t as f64).sum();
    let var = nf * mf / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    let dev = (sum as f64 - expected as f64).abs() / 2.0;
    (normal_two_sided(dev, var), false)
}

/// Two-sided Wilcoxon signed-rank p-value of the differences `d` (zeros
/// dropped) and whether it is exact.
pub fn signed_rank_p(d: &[f64]) -> (f64, bool) {
    let nonzero: Vec<f64> = d.iter().copied().filter(|v| *v != 0.0).collect();
    let n = nonzero.len();
    if n == 0 {
        return (1.0, true);
    }
    let abs: Vec<f64> = nonzero.iter().map(|v| v.abs()).collect();
    let (ranks, ties) = doubled_midranks(&abs);
    let t_plus: u64 = ranks
        .iter()
        .zip(&nonzero)
        .filter(|(_, v)| **v > 0.0)
        .map(|(r, _)| *r)
        .sum();
    let total: u64 = ranks.iter().sum();
    if n <= EXACT_MAX {
        let counts = signed_rank_doubled(&ranks);
        // E[T+] = total / 2; compare doubled distances to stay in integers.
        let dist = (2 * t_plus).abs_diff(total);
        let all: u128 = counts.iter().sum();
        let extreme: u128 = counts
            .iter()
            .enumerate()
            .filter(|(s, _)| (2 * *s as u64).abs_diff(total) >= dist)
            .map(|(_, c)| *c)
            .sum();
        return ((extreme as f64 / all as f64).clamp(0.0, 1.0), true);
    }
    let nf = n as f64;
    let tie_term: f64 = ties.iter().map(|&t| (t as f64).powi(3) - t as f64).sum();
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
    let dev = (t_plus as f64 - total as f64 / 2.0).abs() / 2.0;
    (normal_two_sided(dev, var), false)
}

/// `2 (1 - Phi((dev - 0.5) / sd))` with a continuity correction.
fn normal_two_sided(dev: f64, var: f64) -> f64 {
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((dev - 0.5).max(0.0)) / var.sqrt();
    (2.0 * (1.0 - normal_cdf(z))).clamp(0.0, 1.0)
}

// ---------------------------------------------------------------------------
// Critical values for the intervals

/// `c` of the two-sample interval `[D(c), D(nm+1-c)]` and its achieved confidence.
pub fn two_sample_critical(n: usize, m: usize, alpha: f64) -> (usize, f64) {
    let nm = n * m;
    if n <= EXACT_MAX && m <= EXACT_MAX {
        let counts = mann_whitney_null(n, m);
        return exact_critical(&counts, nm, alpha);
    }
    let mean = nm as f64 / 2.0;
    let sd = (nm as f64 * (n + m + 1) as f64 / 12.0).sqrt();
    let c = (mean - normal_quantile(1.0 - alpha / 2.0) * sd).floor();
    ((c.max(1.0) as usize).min(nm.div_ceil(2)), 1.0 - alpha)
}

/// `c` of the paired interval `[W(c), W(M+1-c)]` and its achieved confidence.
pub fn paired_critical(n: usize, alpha: f64) -> (usize, f64) {
    let big_m = n * (n + 1) / 2;
    if n <= EXACT_MAX {
        return exact_critical(&signed_rank_null(n), big_m, alpha);
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
    let c = (mean - normal_quantile(1.0 - alpha / 2.0) * sd).floor();
    ((c.max(1.0) as usize).min(big_m.div_ceil(2)), 1.0 - alpha)
}

/// Largest `c >= 1` with `P(S <= c-1) <= alpha/2` (at most `(max+1)/2`, so the
/// interval is never empty), and the achieved confidence `1 - 2 P(S <= c-1)`.
fn exact_critical(counts: &[u128], max: usize, alpha: f64) -> (usize, f64) {
    let total: u128 = counts.iter().sum();
    let (mut c, mut tail) = (1, counts[0]);
    let mut cum: u128 = 0;
    for (s, count) in counts.iter().enumerate() {
        cum += count;
        if cum as f64 / total as f64 > alpha / 2.0 || s + 1 > max.div_ceil(2) {
            break;
        }
        (c, tail) = (s + 1, cum);
    }
    (c, (1.0 - 2.0 * tail as f64 / total as f64).clamp(0.0, 1.0))
}

// ---------------------------------------------------------------------------
// Minimum detectable effect

/// The standard error an interval `[low, high]` of achieved confidence
/// `confidence` implies: `(high - low) / (2 z((1 + confidence) / 2))`, so
/// `(high - low) / 3.92` for a 95% interval. `None` for a confidence outside
/// (0, 1) or an interval that is not finite.
pub fn interval_se(low: f64, high: f64, confidence: f64) -> Option<f64> {
    let finite = low.is_finite() && high.is_finite() && high >= low;
    let z = normal_quantile((1.0 + confidence) / 2.0);
    (finite && confidence > 0.0 && confidence < 1.0 && z > 0.0).then(|| (high - low) / (2.0 * z))
}

/// The MDE of a test at `alpha` whose estimate has standard error `se`:
/// `(z(1 - alpha/2) + z(0.80)) * se` (see the module docs).
pub fn mde_of_se(se: f64, alpha: f64) -> f64 {
    (normal_quantile(1.0 - alpha / 2.0) + normal_quantile(MDE_POWER)) * se
}

/// The MDE of a shift whose interval is `(low, high, confidence)`, when the
/// test can reach `alpha` at all (`min_p`, its smallest p-value).
fn mde_of_interval(
    min_p: f64,
    (low, high, confidence): (f64, f64, f64),
    alpha: f64,
) -> Option<f64> {
    if min_p > alpha {
        return None;
    }
    interval_se(low, high, confidence).map(|se| mde_of_se(se, alpha))
}

// ---------------------------------------------------------------------------
// Multiple comparisons

/// Holm's step-down adjusted p-values (S. Holm, "A simple sequentially rejective
/// multiple test procedure", Scand. J. Statist. 1979): reject where adjusted <= alpha.
/// Controls the family-wise error rate under any dependence.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let k = p.len();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; k];
    let mut running: f64 = 0.0;
    for (i, &idx) in order.iter().enumerate() {
        running = running.max(((k - i) as f64 * p[idx]).min(1.0));
        adjusted[idx] = running;
    }
    adjusted
}

// ---------------------------------------------------------------------------
// Small numeric helpers

/// Median of sorted values (mean of the middle two for an even count).
pub fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median of unsorted values; `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    Some(median_sorted(&s))
}

/// `C(n, k)` as a float (exact up to 2^53, then rounded).
fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Standard normal CDF, via `erfc` (Numerical Recipes' Chebyshev fit, relative
/// error below 1.2e-7).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Standard normal quantile (P. J. Acklam's rational approximation, relative
/// error below 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

mod sign;
pub use sign::{paired_sign, sign_critical, sign_null, sign_test_p};

#[cfg(test)]
mod tests;
