//! Planned looks of a run whose comparison may buy rounds past `[run] rounds`
//! (up to `max_rounds`, within `[run] budget` when set): the rounds at which
//! the comparison made during the run may stop it, and the alpha each look
//! spends.
//!
//! Looking at the evidence after every round and stopping at the first clear
//! answer is optional stopping: every look is another chance of a false
//! alarm (an A/A difference read as a regression), and, in the other
//! direction, of a real regression shown "within its threshold". So the
//! looks are planned before the run: at `rounds`, then at every
//! doubling of it (`rounds`, 2 `rounds`, 4 `rounds`, ...) up to `max_rounds`,
//! and the gate's alpha is split equally across them (a Bonferroni split, the
//! simplest alpha-spending plan: whatever the looks' correlation, the chance
//! of any wrong answer over all of them stays within alpha). Between looks
//! the rounds run without a test.
//!
//! A look at which the test cannot reach its alpha spends none: a paired
//! test's smallest p-value with n pairs is 2 / 2^n, so at 0.05 / 6 = 0.0083 a
//! look at 4 or 8 pairs could decide nothing, neither a regression nor a
//! change within its threshold (whose interval needs the same confidence).
//! Such looks are left out of the plan and the alpha is split over the looks
//! that can decide (`rounds = 4` to 300: 16, 32, ... 300, 0.05 / 6 each,
//! instead of 0.05 / 8 with the first two wasted).
//!
//! When the scenario's share of the budget runs out before the next planned
//! look, one last look is taken at the rounds reached, with all the alpha the
//! skipped looks would have spent (so the total stays alpha, the rule of
//! Lan & DeMets' spending functions at a final analysis). Doubling keeps the
//! looks few (6 from 10 rounds to 300), so each gets a usable share (0.05 / 6
//! = 0.0083, reachable by 8 pairs), while a clear change still stops at the
//! first look.

pub use crate::results::budget::Look;

/// The planned looks of one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct LookPlan {
    /// Planned rounds of the looks, ascending, the last one `max_rounds`.
    rounds: Vec<u32>,
    /// The gate's alpha, split across the looks.
    alpha: f64,
}

impl LookPlan {
    /// Looks at `rounds`, doubling up to `max_rounds` (the last look at
    /// `max_rounds` itself), for a gate at `alpha`, but for the looks at which
    /// the test's smallest p-value (`smallest_p` of the rounds) exceeds their
    /// share of alpha: they could decide nothing. The last look is kept even
    /// then, so a plan always has one.
    pub fn new(
        rounds: u32,
        max_rounds: u32,
        alpha: f64,
        smallest_p: impl Fn(u32) -> f64,
    ) -> LookPlan {
        let first = rounds.max(1);
        let last = max_rounds.max(first);
        let mut planned = vec![first];
        let mut next = first;
        while next < last {
            next = next.saturating_mul(2).min(last);
            planned.push(next);
        }
        // Dropping a look raises the others' share: repeat until none drops.
        // (A look dropped at a smaller share stays dropped: the plan is
        // fixed before the run, and this keeps it the same for any order.)
        loop {
            let share = alpha / planned.len() as f64;
            let before = planned.len();
            planned.retain(|r| *r == last || smallest_p(*r) <= share);
            if planned.len() == before {
                break;
            }
        }
        LookPlan {
            rounds: planned,
            alpha,
        }
    }

    /// The planned rounds of the looks.
    pub fn planned(&self) -> &[u32] {
        &self.rounds
    }

    /// The alpha of one planned look.
    pub fn per_look(&self) -> f64 {
        self.alpha / self.rounds.len() as f64
    }

    /// The look planned at `round`, if one is: the alpha it spends.
    pub fn at(&self, round: u32) -> Option<Look> {
        self.rounds.contains(&round).then(|| Look {
            round,
            alpha: self.per_look(),
        })
    }

    /// The last look, taken early at `round` (the budget ran out before the
    /// next planned look) after `taken` looks: it spends what the planned
    /// looks not taken would have.
    pub fn last(&self, round: u32, taken: usize) -> Look {
        let left = self.rounds.len().saturating_sub(taken).max(1);
        Look {
            round,
            alpha: self.per_look() * left as f64,
        }
    }
}

/// An alpha to four decimals (`0.0083`), or in scientific notation below
/// 0.001: how reports show a look's alpha.
pub fn show_alpha(a: f64) -> String {
    if a < 0.001 {
        format!("{a:.1e}")
    } else {
        let s = format!("{a:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::compare::stats::min_p_paired;

    /// A test without granularity: every look can decide.
    fn any(_: u32) -> f64 {
        0.0
    }

    fn paired(r: u32) -> f64 {
        min_p_paired(r as usize)
    }

    #[test]
    fn looks_double_from_rounds_to_max_rounds() {
        let p = LookPlan::new(10, 300, 0.05, paired);
        assert_eq!(p.planned(), &[10, 20, 40, 80, 160, 300]);
        assert!((p.per_look() - 0.05 / 6.0).abs() < 1e-12);
        assert_eq!(p.at(40).map(|l| l.round), Some(40));
        assert_eq!(p.at(41), None);
        // No extra rounds: one look, all the alpha.
        let one = LookPlan::new(10, 10, 0.05, paired);
        assert_eq!(one.planned(), &[10]);
        assert_eq!(one.per_look(), 0.05);
    }

    #[test]
    fn the_alpha_of_every_look_taken_sums_to_at_most_alpha() {
        let p = LookPlan::new(6, 300, 0.05, any);
        assert_eq!(p.planned(), &[6, 12, 24, 48, 96, 192, 300]);
        // Two planned looks, then the budget runs out at round 31.
        let spent = p.at(6).unwrap().alpha + p.at(12).unwrap().alpha + p.last(31, 2).alpha;
        assert!((spent - 0.05).abs() < 1e-12, "{spent}");
        // Every planned look taken: exactly alpha.
        let all: f64 = p.planned().iter().map(|r| p.at(*r).unwrap().alpha).sum();
        assert!((all - 0.05).abs() < 1e-12, "{all}");
    }

    #[test]
    fn a_look_the_test_cannot_decide_at_spends_no_alpha() {
        // From 4 rounds to 300 there are 8 doublings, 0.05 / 8 = 0.00625 each:
        // 4 pairs reach p = 0.125 at best, 8 pairs 0.0078. Both go; the six
        // left get 0.05 / 6 = 0.0083, which 16 pairs reach.
        let p = LookPlan::new(4, 300, 0.05, paired);
        assert_eq!(p.planned(), &[16, 32, 64, 128, 256, 300]);
        assert!((p.per_look() - 0.05 / 6.0).abs() < 1e-12);
        assert_eq!(p.at(4), None);
        // The budget out at round 9, before the first look: one look with
        // all the alpha.
        assert_eq!(p.last(9, 0).alpha, 0.05);
        // A test that can decide anywhere keeps every doubling.
        assert_eq!(LookPlan::new(4, 300, 0.05, any).planned().len(), 8);
        // No look can decide: the last one stays, so the run still reports.
        assert_eq!(LookPlan::new(3, 5, 0.05, paired).planned(), &[5]);
    }
}
