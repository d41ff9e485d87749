//! `[run] budget`: the wall-clock time a suite's rounds may take, spent where
//! the answer is still open.
//!
//! Each scenario, as it starts, gets what is left of the budget divided by the
//! scenarios left (one that stops early leaves its time to the rest); without
//! a budget, a run whose comparison may buy rounds past `rounds` spends the
//! same way with no time limit ([`UNBOUNDED`]: `max_rounds` alone). Its
//! configured `rounds` always run; after that, rounds continue while a gating
//! metric of the comparison made during the run is open: undecided
//! ([`crate::compare::MetricComparison::undecided`]), not decided at an
//! earlier look, and not undecidable; another round fits in its share (judged
//! by the mean round so far) and `max_rounds` is not reached. The evidence is
//! looked at only at the planned looks ([`LookPlan`]: `rounds`, then every
//! doubling, but for those that could decide nothing), each at its share of
//! alpha; when the share runs out first, one last look spends what the
//! skipped looks would have.
//!
//! At each look ([`Spend::looked`]):
//! - a gating metric decided there (regressed, improved, within its
//!   threshold) is **final**: the Bonferroni split already bounds the error
//!   over all the looks, whichever decides, so a later look neither re-tests
//!   nor revokes it. The final comparison reports it with that look's
//!   interval and alpha (`compare::settled`);
//! - a gating metric final as regressed beyond its fail threshold stops the
//!   scenario ([`Stop::Failed`]): it fails whatever the others would show;
//! - an undecided one is **undecidable** when even the rounds the share still
//!   buys (capped by `max_rounds`) are unlikely to decide it
//!   ([`advice::undecidable_within`]): it stops drawing rounds, and when every
//!   gating metric is final or undecidable the scenario stops
//!   ([`Stop::Undecidable`]), leaving its time to the scenarios after it.
//!
//! Every look and every metric it settled is recorded ([`ScenarioBudget`]),
//! and what the configured rounds took, so that a run whose configured
//! rounds alone overran the budget says so (`report::spent`).

use std::time::{Duration, Instant};

use crate::compare::advice;
use crate::compare::looks::LookPlan;
use crate::compare::{MetricComparison, Tier, Verdict};
use crate::results::budget::{Decided, Look, Names, ScenarioBudget, Stop, Undecidable};

/// The share of a run without `[run] budget` whose comparison may buy rounds
/// past `rounds`: `max_rounds` alone bounds them (recorded as a share of 0 s).
pub(super) const UNBOUNDED: Duration = Duration::MAX;

/// The budget of the whole run.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunBudget {
    pub total: Duration,
    pub started: Instant,
}

impl RunBudget {
    /// The share of the next scenario, with `left` scenarios (it included) to go.
    pub fn share(&self, left: usize) -> Duration {
        let remaining = self.total.saturating_sub(self.started.elapsed());
        remaining / u32::try_from(left.max(1)).unwrap_or(u32::MAX)
    }
}

/// What to do after a round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Next {
    /// Run another round.
    Round,
    /// Look at the evidence at this alpha: another round if a gating metric
    /// is still open ([`Spend::looked`] says).
    Look(f64),
    /// Stop: the rounds are done.
    Stop,
}

/// One scenario's spending of its share.
#[derive(Debug)]
pub(super) struct Spend {
    scenario: String,
    share: Duration,
    started: Instant,
    plan: LookPlan,
    rounds: u32,
    max_rounds: u32,
    /// Whether a comparison is made during the run (else no looks).
    compares: bool,
    looks: Vec<Look>,
    done: u32,
    /// The rounds the share buys in all, judged after the last round by the
    /// mean round so far, at most `max_rounds`.
    buys: u32,
    /// The look in progress is the last one (no further round fits).
    last: bool,
    decided: Vec<Decided>,
    undecidable: Vec<Undecidable>,
    stopped: Option<Stop>,
    /// What the configured `rounds` took, once they ran.
    rounds_took: Option<Duration>,
}

impl Spend {
    pub fn new(
        scenario: &str,
        share: Duration,
        (rounds, max_rounds): (u32, u32),
        plan: LookPlan,
        compares: bool,
    ) -> Spend {
        Spend {
            scenario: scenario.to_string(),
            share,
            started: Instant::now(),
            plan,
            rounds,
            max_rounds: max_rounds.max(rounds),
            compares,
            looks: Vec::new(),
            done: 0,
            buys: 0,
            last: false,
            decided: Vec::new(),
            undecidable: Vec::new(),
            stopped: None,
            rounds_took: None,
        }
    }

    /// After round `round` completed: go on, look, or stop.
    pub fn after(&mut self, round: u32) -> Next {
        self.after_at(round, self.started.elapsed())
    }

    /// [`Self::after`] with the time the scenario's rounds took so far.
    fn after_at(&mut self, round: u32, elapsed: Duration) -> Next {
        self.done = round;
        if round == self.rounds {
            self.rounds_took = Some(elapsed);
        }
        if !self.compares {
            if round < self.rounds {
                return Next::Round;
            }
            self.stopped = Some(Stop::NothingToCompare);
            return Next::Stop;
        }
        self.buys = self.rounds_bought(round, elapsed);
        if round < self.rounds {
            return Next::Round;
        }
        if self.buys <= round {
            self.last = true;
            let look = self.plan.last(round, self.looks.len());
            self.looks.push(look);
            return Next::Look(look.alpha);
        }
        match self.plan.at(round) {
            Some(look) => {
                self.looks.push(look);
                Next::Look(look.alpha)
            }
            None => Next::Round,
        }
    }

    /// The rounds the share buys in all after `round` rounds in `elapsed`:
    /// as many more as fit in what is left at the mean round so far, at
    /// most `max_rounds`.
    fn rounds_bought(&self, round: u32, elapsed: Duration) -> u32 {
        let per_round = (elapsed / round.max(1)).as_nanos();
        let left = self.share.saturating_sub(elapsed).as_nanos();
        let more = left.checked_div(per_round).unwrap_or(u128::MAX);
        let more = u32::try_from(more).unwrap_or(u32::MAX);
        round.saturating_add(more).min(self.max_rounds).max(round)
    }

    /// The answer of the look [`Self::after`] asked for: the comparison's
    /// rows of this scenario at that look's alpha (`paired`: by round).
    /// Records what the look settled; true: another round.
    pub fn looked(&mut self, rows: &[MetricComparison], paired: bool) -> bool {
        let Some(look) = self.looks.last().copied() else {
            return false;
        };
        let mut failed = false;
        for m in rows.iter().filter(|m| m.gating) {
            let key = (m.client.as_str(), m.server.as_deref(), m.metric.as_str());
            let is = |n: &dyn Names| n.names(key.0, key.1, key.2);
            if self.decided.iter().any(|d| is(d)) {
                continue;
            }
            if decided(m) {
                self.undecidable.retain(|u| !is(u));
                self.decided.push(Decided {
                    client: m.client.clone(),
                    server: m.server.clone(),
                    metric: m.metric.clone(),
                    round: look.round,
                    alpha: look.alpha,
                });
                failed |= m.verdict == Verdict::Regressed && m.tier == Tier::Fail;
                continue;
            }
            let known = self.undecidable.iter().any(|u| is(u));
            let hopeless = m.undecided()
                && !self.last
                && m.advice
                    .as_ref()
                    .is_some_and(|a| advice::undecidable_within(m, a, paired, self.buys));
            if hopeless && !known {
                self.undecidable.push(Undecidable {
                    client: m.client.clone(),
                    server: m.server.clone(),
                    metric: m.metric.clone(),
                    round: look.round,
                    within: self.buys,
                });
            }
        }
        let open = rows.iter().any(|m| {
            let is = |n: &dyn Names| n.names(&m.client, m.server.as_deref(), &m.metric);
            m.undecided()
                && !self.decided.iter().any(|d| is(d))
                && !self.undecidable.iter().any(|u| is(u))
        });
        let stop = if failed {
            Stop::Failed
        } else if !open && self.undecidable.is_empty() {
            Stop::Decided
        } else if !open {
            Stop::Undecidable
        } else if !self.last {
            return true;
        } else if self.done >= self.max_rounds {
            Stop::MaxRounds
        } else {
            Stop::Budget
        };
        self.stopped = Some(stop);
        false
    }

    /// Why the rounds stopped, once they did.
    pub fn stopped(&self) -> Option<Stop> {
        self.stopped
    }

    /// The record for the results file; a spend that never stopped was
    /// interrupted.
    pub fn finish(self) -> ScenarioBudget {
        ScenarioBudget {
            scenario: self.scenario,
            share_s: match self.share {
                UNBOUNDED => 0.0,
                share => share.as_secs_f64(),
            },
            elapsed_s: self.started.elapsed().as_secs_f64(),
            rounds_s: self.rounds_took.map(|d| d.as_secs_f64()),
            rounds: self.done,
            looks: self.looks,
            decided: self.decided,
            undecidable: self.undecidable,
            stopped: self.stopped.unwrap_or(Stop::Interrupted),
        }
    }
}

/// A gating metric's decision at a look: regressed, improved or within its
/// threshold, not left undecided (a warn-tier regression whose interval
/// reaches past the fail threshold is undecided).
fn decided(m: &MetricComparison) -> bool {
    !m.undecided()
        && matches!(
            m.verdict,
            Verdict::Regressed | Verdict::Improved | Verdict::Unchanged
        )
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
