//! How a run with `[run] budget` spent it: per scenario, the time it was
//! given and used, the rounds it ran, the looks at the evidence it took
//! (`compare::looks`) and why it stopped. The comparison of a scenario that
//! looked tests at its last look's alpha, so a later `benchgate compare` of
//! the same file reaches the verdict the run stopped on.

use serde::{Deserialize, Serialize};

/// One look at the evidence during the run: after `round` rounds, at `alpha`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Look {
    pub round: u32,
    pub alpha: f64,
}

/// Why a scenario's rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Every gating metric was decided at a look.
    Decided,
    /// Another round would not fit in the scenario's share of the budget.
    Budget,
    /// `[run] max_rounds` reached.
    MaxRounds,
    /// The run compares nothing during it: `rounds` rounds, no look.
    NothingToCompare,
    /// A signal stopped the run.
    Interrupted,
}

impl Stop {
    /// How a report says it.
    pub fn describe(self) -> &'static str {
        match self {
            Stop::Decided => "decided",
            Stop::Budget => "budget used",
            Stop::MaxRounds => "max_rounds reached",
            Stop::NothingToCompare => "nothing compared during the run",
            Stop::Interrupted => "interrupted",
        }
    }
}

/// One scenario's share of the budget and what it did with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioBudget {
    pub scenario: String,
    /// Seconds it was given: what was left of the budget when it started,
    /// divided by the scenarios left.
    pub share_s: f64,
    /// Seconds its rounds took.
    pub elapsed_s: f64,
    /// Rounds it ran (starved attempts re-run not counted).
    pub rounds: u32,
    /// The looks taken, in order; the last one's alpha is the one its
    /// comparison tests at. Empty: nothing compared during the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<Look>,
    pub stopped: Stop,
}

impl ScenarioBudget {
    /// The alpha the scenario's comparison tests at: its last look's.
    pub fn alpha(&self) -> Option<f64> {
        self.looks.last().map(|l| l.alpha)
    }
}
