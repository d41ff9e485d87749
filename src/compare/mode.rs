//! The comparison mode, one enum from the plan (`plan::ComparisonPlan`, which
//! decides it once) through the comparison to every renderer, serialized as
//! the comparison's `mode`. Matched with `match` only; what the rest of the
//! code asks of a mode is a method here (tests/house/mode_matches.rs).

use serde::{Deserialize, Serialize};

/// What a comparison pairs; serialized as `baseline`, `side_by_side`,
/// `base_vs_head`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonMode {
    /// Two runs (a stored baseline and the current run): independent samples.
    Baseline,
    /// Two clients or servers of one run, paired by round.
    SideBySide,
    /// Each cell against its build at the base commit, in one run, paired by round.
    BaseVsHead,
}

/// How the reports state a comparison within one run: the terminal's
/// "{name} in RUN{terminal}, paired by round", the markdown's "{markdown} in
/// the same run, RUN, paired by round."
pub struct WithinRun {
    pub name: &'static str,
    pub terminal: &'static str,
    pub markdown: &'static str,
}

impl ComparisonMode {
    /// Whether the two sides come from one run, paired by round.
    pub fn paired(self) -> bool {
        self.within_run().is_some()
    }

    /// `None`: two runs (the reports name the baseline run).
    pub fn within_run(self) -> Option<WithinRun> {
        match self {
            ComparisonMode::Baseline => None,
            ComparisonMode::SideBySide => Some(WithinRun {
                name: "side by side",
                terminal: "",
                markdown: "Side by side: each client against its baseline client",
            }),
            ComparisonMode::BaseVsHead => Some(WithinRun {
                name: "base vs head",
                terminal: ": each against its base commit's build",
                markdown: "Base vs head: each client and server of the repository against its own build at the base commit (`NAME@base`)",
            }),
        }
    }
}
