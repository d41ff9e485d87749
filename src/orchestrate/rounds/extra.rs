//! Whether a scenario runs another round: up to `[run] rounds`, then as the
//! planned looks at the run's comparison of its cells say (up to `[run]
//! max_rounds`, within `[run] budget` when there is one).

use super::cell::CellAcc;
use super::Rounds;
use crate::orchestrate::budget::{Next, Spend};
use crate::orchestrate::progress::Progress;
use crate::results::budget::Stop;
use crate::results::CellResult;

impl Rounds<'_> {
    /// After round `round`: whether to run another. Always up to `rounds`;
    /// beyond it, as the scenario's [`Spend`] says (a comparison made during
    /// the run, at planned looks, up to `max_rounds` or the budget's share).
    pub(super) fn another_round<'c>(
        &self,
        round: u32,
        cells: impl IntoIterator<Item = &'c CellAcc>,
        progress: &mut Progress,
        spend: Option<&mut Spend>,
    ) -> bool {
        match spend {
            Some(spend) => self.budgeted_round(round, cells, progress, spend),
            None => round < self.suite.run.rounds,
        }
    }

    /// [`Self::another_round`] past `rounds`: the scenario's [`Spend`] says
    /// when to look, at which alpha, and when to stop.
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
                    .and_then(|e| e.look(self.header, &results, alpha));
                let (rows, paired) = look
                    .as_ref()
                    .map_or((&[][..], false), |c| (&c.metrics[..], c.mode.paired()));
                let more = spend.looked(rows, paired);
                let scenario = results.first().map_or("", |c| c.scenario.as_str());
                progress.look(scenario, round, rows, more);
                // What bounds the rounds: the budget's share, or max_rounds.
                let (within, after) = match self.suite.run.budget {
                    Some(_) => (
                        "within its share of the budget".to_string(),
                        "its time goes to the scenarios after it",
                    ),
                    None => (
                        format!("within max_rounds = {}", self.suite.run.max_rounds),
                        "no more rounds",
                    ),
                };
                let said = match spend.stopped() {
                    _ if more => format!(
                        "undecided at the look after {round} rounds (alpha {alpha:.4}); measuring more {within}"
                    ),
                    Some(Stop::Failed) => format!(
                        "a gating metric failed at the look after {round} rounds; no more rounds"
                    ),
                    Some(Stop::Undecidable) => format!(
                        "after {round} rounds, what is undecided cannot be decided {within}; {after}"
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
