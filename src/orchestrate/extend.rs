//! Extra rounds while the answer is unclear (`[run] max_rounds`).
//!
//! The noise of a shared runner comes and goes: on a quiet machine 10 rounds
//! resolve a 10% change with room to spare, while a co-tenant can widen the
//! trial-to-trial spread several times over. So when a comparison is made
//! during the run (side-by-side mode, or `benchgate run --baseline`), the
//! comparison of the scenario's trials so far is made at planned looks
//! (`rounds`, then every doubling up to `max_rounds`: [`crate::compare::looks`]),
//! and rounds go on while a gating metric is still undecided
//! ([`crate::compare::MetricComparison::undecided`]: its interval straddles the
//! fail threshold, or too few trials reach `alpha`), up to `max_rounds` (and
//! within `[run] budget`, when set). A quiet machine stops at `rounds`; a noisy
//! one buys trials.
//!
//! Looking after every round and stopping at the first clear answer would be
//! optional stopping: each look another chance of calling a true regression
//! "within its threshold". So the looks are few and planned, alpha split across
//! them, whether or not a budget bounds them ([`super::budget`]).

use crate::compare::Comparison;
use crate::config::gate::GateConfig;
use crate::plan::ComparisonPlan;
use crate::results::{CellResult, RunResults};

/// The extension rule of one run: the run's [`ComparisonPlan`], whose
/// comparison decides both the extra rounds and the final verdict.
#[derive(Debug, Clone)]
pub struct Extend {
    pub plan: ComparisonPlan,
}

impl Extend {
    /// The comparison of the scenario's cells so far at a planned look's
    /// `alpha` (in place of the gate's), its rows narrowed to the scenario;
    /// `None`: nothing compared. `header` supplies the run's environment and
    /// config (its `results` are ignored); `cells` are this scenario's cells
    /// with their trials so far.
    pub fn look(
        &self,
        header: &RunResults,
        cells: &[CellResult],
        alpha: f64,
    ) -> Option<Comparison> {
        let scenario = cells.first()?.scenario.clone();
        let current = RunResults {
            results: cells
                .iter()
                .map(|c| CellResult {
                    summary: crate::results::summarize(&c.trials),
                    ..c.clone()
                })
                .collect(),
            ..header.clone()
        };
        let gate = GateConfig {
            alpha,
            ..self.plan.gate.clone()
        };
        let mut comparison = self.plan.compare_under(&current, &gate)?;
        comparison.metrics.retain(|m| m.scenario == scenario);
        Some(comparison)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::MetricComparison;

    impl Extend {
        /// Whether the scenario's cells so far leave a gating metric
        /// undecided (inconclusive, or regressed at the warn tier only), at
        /// `alpha` (`None`: the gate's).
        fn needs_more(
            &self,
            header: &RunResults,
            cells: &[CellResult],
            alpha: Option<f64>,
        ) -> bool {
            self.look(header, cells, alpha.unwrap_or(self.plan.gate.alpha))
                .is_some_and(|c| c.metrics.iter().any(MetricComparison::undecided))
        }
    }
    use crate::compare::ComparisonMode;
    use crate::config::{gate::default_gate, Suite};
    use crate::results::synthetic;

    /// `get-22b` with `hyper` and `reqwest`, `rounds` trials each; reqwest's CPU
    /// per request is hyper's times `ratio`, both with trial noise `noise`.
    fn run(rounds: u32, ratio: f64, noise: f64) -> RunResults {
        let mut suite = Suite::default_suite();
        suite.scenarios.truncate(1);
        const P: [f64; 7] = [0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8];
        synthetic::run(suite, rounds, |_, client, round| {
            let k = if client == "reqwest" { ratio } else { 1.0 };
            let shake = 1.0 + noise * P[(round as usize * 3 + client.len()) % 7];
            Some(synthetic::metrics(
                10_000.0 / (k * shake),
                300.0,
                10.0 * k * shake,
            ))
        })
    }

    fn extend(mode: Option<ComparisonMode>, plan: ComparisonPlan) -> Extend {
        Extend {
            plan: ComparisonPlan {
                mode,
                gate: default_gate(),
                ..plan
            },
        }
    }

    fn side_by_side() -> Extend {
        let plan = ComparisonPlan {
            baseline_client: Some("hyper".into()),
            ..ComparisonPlan::default()
        };
        extend(Some(ComparisonMode::SideBySide), plan)
    }

    /// Against a stored run (`None`: none stored).
    fn stored(base: Option<RunResults>) -> Extend {
        let plan = ComparisonPlan {
            stored: base.map(Box::new),
            ..ComparisonPlan::default()
        };
        extend(Some(ComparisonMode::Baseline), plan)
    }

    #[test]
    fn a_clear_answer_needs_no_more_rounds() {
        let r = run(10, 1.3, 0.002);
        assert!(!side_by_side().needs_more(&r, &r.results, None));
        let same = run(10, 1.0, 0.002);
        assert!(!side_by_side().needs_more(&same, &same.results, None));
    }

    #[test]
    fn noise_wider_than_the_threshold_asks_for_more() {
        let r = run(10, 1.05, 0.3);
        assert!(side_by_side().needs_more(&r, &r.results, None));
        // Too few pairs to reach alpha at all: more rounds, whatever the values.
        let short = run(3, 1.3, 0.002);
        assert!(side_by_side().needs_more(&short, &short.results, None));
    }

    #[test]
    fn against_a_stored_baseline() {
        let base = run(10, 1.0, 0.002);
        let quiet = run(10, 1.0, 0.002);
        let e = stored(Some(base));
        assert!(!e.needs_more(&quiet, &quiet.results, None));
        let noisy = run(10, 1.0, 0.3);
        assert!(e.needs_more(&noisy, &noisy.results, None));
    }

    #[test]
    fn a_change_whose_interval_straddles_the_fail_threshold_asks_for_more() {
        // +9.5% with a little noise: beyond warn (+5%) for sure, fail (+10%) unclear.
        let r = run(10, 1.095, 0.02);
        assert!(side_by_side().needs_more(&r, &r.results, None));
        // +7% with the same noise: a warning whose interval stays inside +10%.
        let r = run(10, 1.07, 0.02);
        assert!(!side_by_side().needs_more(&r, &r.results, None));
    }

    #[test]
    fn nothing_stored_or_nothing_compared_asks_for_nothing() {
        let noisy = run(10, 1.0, 0.3);
        assert!(!stored(None).needs_more(&noisy, &noisy.results, None));
        let nothing = extend(None, ComparisonPlan::default());
        assert!(!nothing.needs_more(&noisy, &noisy.results, None));
    }

    #[test]
    fn a_planned_look_tests_at_its_own_alpha() {
        // 8 pairs, +30%: p = 2/256 at best, decided at the gate's 0.05,
        // out of reach at a look's 0.005.
        let r = run(8, 1.3, 0.002);
        assert!(!side_by_side().needs_more(&r, &r.results, None));
        assert!(!side_by_side().needs_more(&r, &r.results, Some(0.05)));
        assert!(side_by_side().needs_more(&r, &r.results, Some(0.005)));
    }

    #[test]
    fn a_missing_stored_run_is_nothing_to_compare_during_the_run() {
        assert!(!stored(None).plan.compares_during_run());
        assert!(side_by_side().plan.compares_during_run());
        let base = run(10, 1.0, 0.002);
        assert!(stored(Some(base)).plan.compares_during_run());
    }

    #[test]
    fn no_cells_no_rounds() {
        let r = run(10, 1.0, 0.3);
        assert!(!side_by_side().needs_more(&r, &[], None));
    }
}
