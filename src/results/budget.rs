//! How a run with `[run] budget` spent it: per scenario, the time it was
//! given and used, the rounds it ran, the looks at the evidence it took
//! (`compare::looks`), the gating metrics each look settled and why it
//! stopped. A gating metric decided at a look keeps that look's decision:
//! the comparison of the scenario, then and in a later `benchgate compare`
//! of the same file, judges it on the rounds up to that look at that look's
//! alpha, and the other metrics at the last look's alpha, so it reaches the
//! verdicts the run stopped on.

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
    /// A gating metric regressed beyond its fail threshold at a look: the
    /// scenario fails whatever more rounds would show of the others.
    Failed,
    /// Every gating metric was decided at a look or undecidable within the
    /// scenario's share ([`Undecidable`]), at least one undecidable.
    Undecidable,
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
            Stop::Failed => "a gating metric failed",
            Stop::Undecidable => "undecidable within its share",
            Stop::Budget => "budget used",
            Stop::MaxRounds => "max_rounds reached",
            Stop::NothingToCompare => "nothing compared during the run",
            Stop::Interrupted => "interrupted",
        }
    }
}

/// A gating metric decided at a look (regressed, improved or within its
/// threshold): the decision is final there, reported with that look's
/// interval and alpha.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decided {
    pub client: String,
    /// The server under test of the cell (absent: the reference server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub metric: String,
    /// The look that decided it: its round and alpha.
    pub round: u32,
    pub alpha: f64,
}

/// A gating metric that the rounds its scenario's share still bought could
/// not decide (`compare::advice::undecidable_within`): it stopped drawing
/// rounds at the look after `round`, when the share bought `within` rounds
/// in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Undecidable {
    pub client: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub metric: String,
    pub round: u32,
    pub within: u32,
}

/// Whether a record names the row of (`client`, `server`, `metric`).
pub trait Names {
    fn names(&self, client: &str, server: Option<&str>, metric: &str) -> bool;
}

impl Names for Decided {
    fn names(&self, client: &str, server: Option<&str>, metric: &str) -> bool {
        self.client == client && self.server.as_deref() == server && self.metric == metric
    }
}

impl Names for Undecidable {
    fn names(&self, client: &str, server: Option<&str>, metric: &str) -> bool {
        self.client == client && self.server.as_deref() == server && self.metric == metric
    }
}

/// One scenario's share of the budget and what it did with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioBudget {
    pub scenario: String,
    /// Seconds it was given: what was left of the budget when it started,
    /// divided by the scenarios left; 0 without a budget (`max_rounds` alone).
    pub share_s: f64,
    /// Seconds its rounds took.
    pub elapsed_s: f64,
    /// Seconds its configured `[run] rounds` took: they always run, within
    /// its share or not. Absent: they did not all run (interrupted), or a
    /// file written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_s: Option<f64>,
    /// Rounds it ran (starved attempts re-run not counted).
    pub rounds: u32,
    /// The looks taken, in order; the last one's alpha is the one its
    /// comparison tests the metrics no look decided at. Empty: nothing
    /// compared during the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<Look>,
    /// The gating metrics decided at a look, each with that look.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decided: Vec<Decided>,
    /// The gating metrics that stopped drawing rounds, undecidable within
    /// the share (and not decided at a later look).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undecidable: Vec<Undecidable>,
    pub stopped: Stop,
}

impl ScenarioBudget {
    /// The alpha the scenario's comparison tests at: its last look's.
    pub fn alpha(&self) -> Option<f64> {
        self.looks.last().map(|l| l.alpha)
    }
}
