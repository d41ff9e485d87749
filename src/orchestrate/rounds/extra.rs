//! Whether a scenario runs another round: up to `[run] rounds`, then while
//! the run's comparison of its cells is undecided (`[run] max_rounds`), or as
//! `[run] budget`'s looks say.

use super::cell::CellAcc;
use super::Rounds;
use crate::orchestrate::budget::{Next, Spend};
use crate::orchestrate::progress::Progress;
use crate::report::untrusted::for_log;
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
        if !extend.needs_more(self.header, &cells, None) {
            return false;
        }
        progress.extend(cells.len() as u64);
        if !self.quiet && round == run.rounds {
            let line = format!(
                "benchgate: {}: the comparison is still inconclusive after {round} rounds; measuring more (up to {})",
                cells.first().map_or("", |c| c.scenario.as_str()),
                run.max_rounds
            );
            eprintln!("{}", for_log(&line));
        }
        true
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
        let beyond = round >= self.suite.run.rounds;
        let cells: Vec<&CellAcc> = cells.into_iter().collect();
        let more = match spend.after(round) {
            Next::Round => true,
            Next::Stop => false,
            Next::Look(alpha) => {
                let results: Vec<CellResult> = cells.iter().map(|c| c.result.clone()).collect();
                let undecided = self
                    .extend
                    .is_some_and(|e| e.needs_more(self.header, &results, Some(alpha)));
                let more = spend.looked(undecided);
                if more && !self.quiet {
                    let line = format!(
                        "benchgate: {}: undecided at the look after {round} rounds (alpha {alpha:.4}); measuring more within the budget",
                        results.first().map_or("", |c| c.scenario.as_str()),
                    );
                    eprintln!("{}", for_log(&line));
                }
                more
            }
        };
        if more && beyond {
            progress.extend(cells.len() as u64);
        }
        more
    }
}
