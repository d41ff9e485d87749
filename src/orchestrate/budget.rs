//! `[run] budget`: the wall-clock time a suite's rounds may take, spent where
//! the answer is still open.
//!
//! Each scenario, as it starts, gets what is left of the budget divided by the
//! scenarios left (one that decides early leaves its time to the rest). Its
//! configured `rounds` always run; after that, rounds continue while a gating
//! metric of the comparison made during the run is undecided
//! ([`crate::compare::MetricComparison::undecided`]), another round fits in
//! its share (judged by the mean round so far) and `max_rounds` is not
//! reached. The evidence is looked at only at the planned looks
//! ([`LookPlan`]: `rounds`, then every doubling), each at its share of alpha;
//! when the share runs out first, one last look spends what the skipped
//! looks would have. Every look is recorded ([`ScenarioBudget`]), and the
//! scenario's final comparison tests at the last look's alpha.

use std::time::{Duration, Instant};

use crate::compare::looks::LookPlan;
use crate::results::budget::{Look, ScenarioBudget, Stop};

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
    /// Look at the evidence at this alpha: another round if it is undecided
    /// ([`Spend::looked`] says).
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
    /// The look in progress is the last one (no further round fits).
    last: bool,
    stopped: Option<Stop>,
}

impl Spend {
    pub fn new(
        scenario: &str,
        share: Duration,
        (rounds, max_rounds): (u32, u32),
        alpha: f64,
        compares: bool,
    ) -> Spend {
        Spend {
            scenario: scenario.to_string(),
            share,
            started: Instant::now(),
            plan: LookPlan::new(rounds, max_rounds, alpha),
            rounds,
            max_rounds: max_rounds.max(rounds),
            compares,
            looks: Vec::new(),
            done: 0,
            last: false,
            stopped: None,
        }
    }

    /// After round `round` completed: go on, look, or stop.
    pub fn after(&mut self, round: u32) -> Next {
        self.after_at(round, self.started.elapsed())
    }

    /// [`Self::after`] with the time the scenario's rounds took so far.
    fn after_at(&mut self, round: u32, elapsed: Duration) -> Next {
        self.done = round;
        if !self.compares {
            if round < self.rounds {
                return Next::Round;
            }
            self.stopped = Some(Stop::NothingToCompare);
            return Next::Stop;
        }
        let per_round = elapsed / round.max(1);
        let fits = round < self.max_rounds && elapsed + per_round <= self.share;
        if round < self.rounds {
            return Next::Round;
        }
        if !fits {
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

    /// The answer of the look [`Self::after`] asked for: whether it left a
    /// gating metric undecided. True: another round.
    pub fn looked(&mut self, undecided: bool) -> bool {
        if !undecided {
            self.stopped = Some(Stop::Decided);
            return false;
        }
        if self.last {
            self.stopped = Some(if self.done >= self.max_rounds {
                Stop::MaxRounds
            } else {
                Stop::Budget
            });
            return false;
        }
        true
    }

    /// The record for the results file; a spend that never stopped was
    /// interrupted.
    pub fn finish(self) -> ScenarioBudget {
        ScenarioBudget {
            scenario: self.scenario,
            share_s: self.share.as_secs_f64(),
            elapsed_s: self.started.elapsed().as_secs_f64(),
            rounds: self.done,
            looks: self.looks,
            stopped: self.stopped.unwrap_or(Stop::Interrupted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    fn spend(share: Duration, compares: bool) -> Spend {
        Spend::new("get", share, (4, 300), 0.05, compares)
    }

    /// Runs rounds of `round_time` each, the comparison undecided until
    /// round `decided_at`; returns the record.
    fn simulate(s: &mut Spend, round_time: Duration, decided_at: u32) {
        let mut round = 0;
        loop {
            round += 1;
            match s.after_at(round, round_time * round) {
                Next::Round => continue,
                Next::Look(_) => {
                    if !s.looked(round < decided_at) {
                        break;
                    }
                }
                Next::Stop => break,
            }
        }
    }

    #[test]
    fn a_decided_comparison_stops_at_the_first_look() {
        let mut s = spend(100 * S, true);
        simulate(&mut s, S, 1);
        let r = s.finish();
        assert_eq!((r.rounds, r.stopped), (4, Stop::Decided));
        assert_eq!(r.looks.len(), 1);
        assert!(
            (r.looks[0].alpha - 0.05 / 8.0).abs() < 1e-12,
            "{:?}",
            r.looks
        );
    }

    #[test]
    fn an_undecided_one_runs_to_the_next_planned_look_until_decided() {
        let mut s = spend(100 * S, true);
        simulate(&mut s, S, 10);
        let r = s.finish();
        // Looks at 4, 8 (undecided), 16 (decided).
        assert_eq!((r.rounds, r.stopped), (16, Stop::Decided));
        let at: Vec<u32> = r.looks.iter().map(|l| l.round).collect();
        assert_eq!(at, [4, 8, 16]);
    }

    #[test]
    fn the_budget_ends_with_a_last_look_spending_the_rest() {
        // 30 s for rounds of 1 s: planned looks at 4, 8, 16 (32 would be
        // next), and after round 30 another would end past 30 s: a last look.
        let mut s = spend(30 * S, true);
        simulate(&mut s, S, u32::MAX);
        let r = s.finish();
        assert_eq!(r.stopped, Stop::Budget);
        assert_eq!(r.rounds, 30);
        let at: Vec<u32> = r.looks.iter().map(|l| l.round).collect();
        assert_eq!(at, [4, 8, 16, 30]);
        let spent: f64 = r.looks.iter().map(|l| l.alpha).sum();
        assert!((spent - 0.05).abs() < 1e-12, "{spent}");
        assert!(r.elapsed_s >= 0.0);
    }

    #[test]
    fn configured_rounds_always_run_and_nothing_compared_means_no_look() {
        // A share shorter than one round: the 4 rounds still run, then the
        // one look takes all the alpha.
        let mut s = spend(Duration::from_millis(1), true);
        simulate(&mut s, S, u32::MAX);
        let r = s.finish();
        assert_eq!((r.rounds, r.stopped), (4, Stop::Budget));
        assert_eq!(r.looks.len(), 1);
        assert!((r.looks[0].alpha - 0.05).abs() < 1e-12);
        let mut s = spend(100 * S, false);
        simulate(&mut s, S, u32::MAX);
        let r = s.finish();
        assert_eq!((r.rounds, r.stopped), (4, Stop::NothingToCompare));
        assert!(r.looks.is_empty());
    }

    #[test]
    fn max_rounds_stops_even_with_time_left() {
        let mut s = Spend::new("get", 1000 * S, (4, 10), 0.05, true);
        simulate(&mut s, S, u32::MAX);
        let r = s.finish();
        assert_eq!((r.rounds, r.stopped), (10, Stop::MaxRounds));
        let at: Vec<u32> = r.looks.iter().map(|l| l.round).collect();
        assert_eq!(at, [4, 8, 10]);
    }

    #[test]
    fn the_share_divides_what_is_left() {
        let b = RunBudget {
            total: 60 * S,
            started: Instant::now(),
        };
        let share = b.share(3);
        assert!(share <= 20 * S && share > 19 * S, "{share:?}");
    }
}
