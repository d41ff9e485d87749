//! Change points in a series of runs: where a metric's level shifted and
//! stayed shifted (a slow drift that no single comparison sees). Pure.
//!
//! The method is E-divisive means (Matteson & James, "A Nonparametric
//! Approach for Multiple Change Point Analysis of Multivariate Data", JASA
//! 2014), the one Apache Otava (formerly Hunter) builds on: for every split of
//! a segment, the energy distance between the values before and after it,
//! scaled by the sizes of both sides; the best split is a change point when a
//! permutation test finds it significant (the same statistic on shuffled
//! copies of the segment reaches it rarely). Segments are split
//! hierarchically: each step takes the most divergent split among all current
//! segments and tests it; the first split that is not significant ends the
//! search. Distances are `|x - y|` (alpha = 1: a shift in location).
//!
//! The shuffles come from a fixed-seed generator, so a series always gives the
//! same answer.

/// One change point.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// The index of the first value after the change.
    pub index: usize,
    /// The permutation test's p-value.
    pub p_value: f64,
    /// Mean of the segment before the change and of the one after (between
    /// the neighbouring change points).
    pub mean_before: f64,
    pub mean_after: f64,
}

impl ChangePoint {
    /// `mean_after / mean_before - 1` (`None` when the mean before is 0).
    pub fn relative_change(&self) -> Option<f64> {
        (self.mean_before != 0.0).then(|| self.mean_after / self.mean_before - 1.0)
    }
}

/// How the search runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Significance level of each split.
    pub alpha: f64,
    /// Shuffles per permutation test.
    pub permutations: usize,
    /// Fewest values on each side of a change point.
    pub min_size: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            alpha: 0.05,
            permutations: 199,
            min_size: 3,
        }
    }
}

/// The change points of `series`, in order of position.
pub fn change_points(series: &[f64], opts: Options) -> Vec<ChangePoint> {
    let mut cuts: Vec<usize> = Vec::new();
    let mut found: Vec<(usize, f64)> = Vec::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    loop {
        let mut bounds = vec![0];
        bounds.extend(cuts.iter().copied());
        bounds.push(series.len());
        // The most divergent split among the segments.
        let best = bounds
            .windows(2)
            .filter_map(|w| {
                let seg = &series[w[0]..w[1]];
                best_split(seg, opts.min_size).map(|(tau, q)| (w[0], w[1], tau, q))
            })
            .max_by(|a, b| a.3.total_cmp(&b.3));
        let Some((start, end, tau, q)) = best else {
            break;
        };
        let seg = &series[start..end];
        let mut shuffled = seg.to_vec();
        let mut at_least = 0usize;
        for _ in 0..opts.permutations {
            rng.shuffle(&mut shuffled);
            if best_split(&shuffled, opts.min_size).is_some_and(|(_, qp)| qp >= q) {
                at_least += 1;
            }
        }
        let p = (1 + at_least) as f64 / (1 + opts.permutations) as f64;
        if p > opts.alpha {
            break;
        }
        cuts.push(start + tau);
        cuts.sort_unstable();
        found.push((start + tau, p));
    }
    let mut bounds = vec![0];
    bounds.extend(cuts.iter().copied());
    bounds.push(series.len());
    found.sort_unstable_by_key(|f| f.0);
    found
        .into_iter()
        .map(|(index, p_value)| {
            let i = bounds.iter().position(|b| *b == index).unwrap_or(1);
            ChangePoint {
                index,
                p_value,
                mean_before: mean(&series[bounds[i - 1]..index]),
                mean_after: mean(&series[index..bounds[i + 1]]),
            }
        })
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The split `tau` (values `..tau` before, `tau..` after) of `seg` with the
/// largest scaled energy distance `Q`, and that `Q`; `None` when `seg` is too
/// short for `min_size` values on each side.
///
/// O(n log n), not O(n^2): every permutation test calls it 199 times per
/// split. In one dimension a sum of distances `|x_i - v|` over a set is
/// `count below * v - sum below + sum above - count above * v`, so the sums
/// move with one value at a time through a Fenwick tree of the left side's
/// values by rank, and each value's distance to all others comes from prefix
/// sums in sorted order. `tests.rs` checks it against the sums written out.
fn best_split(seg: &[f64], min_size: usize) -> Option<(usize, f64)> {
    let n = seg.len();
    let min = min_size.max(2);
    if n < 2 * min {
        return None;
    }
    // Ranks (ties in any order: their distance is 0 either way).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| seg[a].total_cmp(&seg[b]));
    let mut rank = vec![0usize; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    // Distances do not change with a shift: measured from the median, the
    // sums below stay near the spread's size, not the level's (and values
    // that are whole numbers stay whole, so their sums stay exact).
    let centre = seg[order[n / 2]];
    let x: Vec<f64> = seg.iter().map(|v| v - centre).collect();
    let total: f64 = x.iter().sum();
    // Each value's summed distance to all others, and the sum over all pairs.
    let mut to_all = vec![0.0; n];
    let mut pairs = 0.0;
    let mut below = 0.0;
    for (r, &i) in order.iter().enumerate() {
        let v = x[i];
        let under = r as f64 * v - below;
        let over = (total - below - v) - (n - 1 - r) as f64 * v;
        to_all[i] = under + over;
        pairs += under;
        below += v;
    }
    // Running sums of |x_i - x_j|: within the left side, within the right
    // side, and between them, updated as one value moves across.
    let mut left_side = Fenwick::new(n);
    let mut left_total = 0.0;
    let mut left = 0.0;
    let mut right = pairs;
    let mut between = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..n {
        // Value tau-1 moves from the right side to the left.
        let k = tau - 1;
        let (v, r) = (x[k], rank[k]);
        // The left side holds values 0..k: k of them, summing to left_total.
        let (count_below, sum_below) = left_side.below(r);
        let to_left = (count_below * v - sum_below)
            + ((left_total - sum_below) - (k as f64 - count_below) * v);
        let to_right = to_all[k] - to_left;
        left_side.add(r, v);
        left_total += v;
        left += to_left;
        right -= to_right;
        between += to_right - to_left;
        if tau < min || n - tau < min {
            continue;
        }
        let (a, b) = (tau as f64, (n - tau) as f64);
        let e =
            2.0 * between / (a * b) - left / (a * (a - 1.0) / 2.0) - right / (b * (b - 1.0) / 2.0);
        let q = a * b / (a + b) * e;
        if best.is_none_or(|(_, bq)| q > bq) {
            best = Some((tau, q));
        }
    }
    best
}

/// Counts and sums of values by rank, with sums over the ranks below one.
struct Fenwick {
    count: Vec<f64>,
    sum: Vec<f64>,
}

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick {
            count: vec![0.0; n + 1],
            sum: vec![0.0; n + 1],
        }
    }

    fn add(&mut self, rank: usize, v: f64) {
        let mut i = rank + 1;
        while i < self.count.len() {
            self.count[i] += 1.0;
            self.sum[i] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// How many values have a rank below `rank`, and their sum.
    fn below(&self, rank: usize) -> (f64, f64) {
        let (mut c, mut s) = (0.0, 0.0);
        let mut i = rank;
        while i > 0 {
            c += self.count[i];
            s += self.sum[i];
            i &= i - 1;
        }
        (c, s)
    }
}

/// xorshift64*: a small fixed-seed generator for the shuffles.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Fisher-Yates.
    fn shuffle(&mut self, v: &mut [f64]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests;
