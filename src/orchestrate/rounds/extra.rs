//! Whether a scenario runs another round: up to `[run] rounds`, then while
//! the run's comparison of its cells is undecided (`[run] max_rounds`), or as
//! `[run] budget`'s looks say.

use super::cell::CellAcc;
use super::Rounds;
use crate::compare::MetricComparison;
use crate::orchestrate::budget::{Next, Spend};
use crate::orchestrate::progress::Progress;
use crate::results::budget::Stop;
use crate::results::CellResult;

impl Rounds<'_> {
    /// After round `round`: whether to run another. Always up to `rounds`;
    /// beyond it, while the run's comparison of these cells is inconclusive,
    /// up to `max_rounds`.
    pub(super) fn another_round<'c>(
        &self,
        round: u32,
        cells: impl IntoIterator<Item = &'c CellAcc>,
        progress: &mut Progress,
        spend: Option<&mut Spend>,
    ) -> bool {
        if let Some(spend) = spend {
            return self.budgeted_round(round, cells, progress, spend);
        }
        let run = &self.suite.run;
        if round < run.rounds {
            return true;
        }
        let Some(extend) = self.extend else {
            return false;
        };
        if round >= run.max_rounds.max(run.rounds) {
            return false;
        }
        let cells: Vec<CellResult> = cells.into_iter().map(|c| c.result.clone()).collect();
        let Some(look) = extend.look(self.header, &cells, None) else {
            return false;
        };
        let more = look.metrics.iter().any(MetricComparison::undecided);
        let scenario = cells.first().map_or("", |c| c.scenario.as_str());
        progress.look(scenario, round, &look.metrics, more);
        if more && round == run.rounds {
            progress.note(&format!(
                "benchgate: {scenario}: the comparison is still inconclusive after {round} rounds; measuring more (up to {})",
                run.max_rounds
            ));
        }
        more
    }

    /// [`Self::another_round`] under `[run] budget`: the scenario's
    /// [`Spend`] says when to look, at which alpha, and when to stop.
    fn budgeted_round<'c>(
        &self,
        round: u32,
        cells: impl IntoIterator<Item = &'c CellAcc>,
        progress: &mut Progress,
        spend: &mut Spend,
    ) -> bool {
        let cells: Vec<&CellAcc> = cells.into_iter().collect();
        let more = match spend.after(round) {
            Next::Round => true,
            Next::Stop => false,
            Next::Look(alpha) => {
                let results: Vec<CellResult> = cells.iter().map(|c| c.result.clone()).collect();
                let look = self
                    .extend
                    .and_then(|e| e.look(self.header, &results, Some(alpha)));
                let (rows, paired) = look
                    .as_ref()
                    .map_or((&[][..], false), |c| (&c.metrics[..], c.mode.paired()));
                let more = spend.looked(rows, paired);
                let scenario = results.first().map_or("", |c| c.scenario.as_str());
                progress.look(scenario, round, rows, more);
                let said = match spend.stopped() {
                    _ if more => format!(
                        "undecided at the look after {round} rounds (alpha {alpha:.4}); measuring more within the budget"
                    ),
                    Some(Stop::Failed) => format!(
                        "a gating metric failed at the look after {round} rounds; no more rounds"
                    ),
                    Some(Stop::Undecidable) => format!(
                        "after {round} rounds, what is undecided cannot be decided within its share of the budget; its time goes to the scenarios after it"
                    ),
                    _ => String::new(),
                };
                if !said.is_empty() {
                    progress.note(&format!("benchgate: {scenario}: {said}"));
                }
                more
            }
        };
        more
    }
}
