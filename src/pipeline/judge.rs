//! The third stage: a run's results compared as its [`Lookup`] planned
//! ([`judge`] -> [`Judged`]), every comparison the edges show.

use crate::compare::{self, Comparison};
use crate::config::base_variants::BASE_SUFFIX;
use crate::results::{CellResult, RunResults};

use super::Lookup;

/// The third stage's record.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The plan's comparison, which gates (`None`: the plan compares
    /// nothing).
    pub comparison: Option<Comparison>,
    /// Base vs head: the run's head cells against the base branch's stored
    /// run ([`Lookup::informative`]), shown beside the verdict, never gated.
    pub informative: Option<Comparison>,
}

/// `results` compared as `lookup` planned.
pub fn judge(lookup: &Lookup, results: &RunResults) -> Judged {
    let informative = lookup.informative.as_ref().map(|found| {
        let is_base = |c: &CellResult| {
            c.client.ends_with(BASE_SUFFIX)
                || c.server
                    .as_deref()
                    .is_some_and(|s| s.ends_with(BASE_SUFFIX))
        };
        let head = RunResults {
            results: results
                .results
                .iter()
                .filter(|c| !is_base(c))
                .cloned()
                .collect(),
            ..results.clone()
        };
        compare::compare(Some(&found.results), &head, &lookup.plan.gate)
    });
    Judged {
        comparison: lookup.plan.compare(results),
        informative,
    }
}
