//! Limits on what a config may ask a run to do, checked when it loads, before
//! anything runs (issue 30, point 6): a run that could not finish, or whose
//! results every later read would refuse, fails in a second with the field,
//! the line and the fix instead of after minutes of measuring.

use super::validate::MAX_MAX_ROUNDS;
use super::Suite;

/// Most cells a results file holds: a cell is a (scenario, client) pair, per
/// server under test, anchors and base-vs-head twins included. Every read of
/// a results file refuses more (`results::check` re-exports this constant),
/// so a suite that would produce more is refused at load.
pub const MAX_CELLS: usize = 10_000;

/// Memory reading a results file may take beyond the file's own bytes, as
/// its reader counts it: every read refuses more (`results::check`
/// re-exports this constant as its `MAX_EXTRA_BYTES`), so a suite whose
/// results would take more is refused at load ([`Suite::too_many_rounds`]).
pub const MAX_RESULTS_EXTRA_BYTES: u64 = 64 << 20;

/// What the reader counts for a real run's own records (its environment, the
/// resolved config: a config file is at most 1 MiB), at most.
pub const RUN_BYTES: u64 = 2 << 20;

/// What the reader counts for one cell of a real run, its trials aside: its
/// slot in the file's list (twice the cell, as for a growing `Vec`), a
/// summary entry per metric, its names, and its two latency histograms as a
/// long run with a wide spread encodes them (4 KiB each; a few seconds of a
/// usual spread encode in 1 to 2 KiB): 17.6 KiB as the reader counts it.
pub const CELL_BYTES: u64 = 18 << 10;

/// What the reader counts for one trial of a real run: its slot in its
/// cell's list (twice the trial), its start time, the server's service-time
/// histogram and two validity marks (5.2 KiB; the marks are buffered by
/// serde, member by member, and a trial without them takes about 2.2 KiB).
/// A failed trial's reason (at most 64 KiB) is not counted: failures are a
/// run's exception. `results::check`'s tests hold a cell and a trial of
/// every field to these figures. The one place a trial's size is estimated:
/// a field added to a trial (per-window records, say) changes it here.
pub const TRIAL_BYTES: u64 = 5 * 1024 + 512;

/// What the reader counts for each window of a fork measured over several
/// (`[run] windows`): its figures in the trial's `windows.values`, with the
/// block's own fields and a starved window's reason spread over them
/// (`results::check`'s tests hold trials of 2, 8 and 50 windows to it).
pub const WINDOW_BYTES: u64 = 1024;

/// What the reader counts for one trial of `windows` windows.
pub fn trial_bytes(windows: u32) -> u64 {
    match windows {
        0 | 1 => TRIAL_BYTES,
        w => TRIAL_BYTES + u64::from(w) * WINDOW_BYTES,
    }
}

/// What the reader counts for `cells` cells of `rounds` trials of
/// `windows` windows each.
pub fn results_bytes(cells: usize, rounds: u32, windows: u32) -> u64 {
    RUN_BYTES + cells as u64 * (CELL_BYTES + u64::from(rounds) * trial_bytes(windows))
}

/// The most rounds (trials of `windows` windows) of `cells` cells whose
/// results file the reader holds ([`MAX_RESULTS_EXTRA_BYTES`]); 0: not even
/// one.
pub fn rounds_that_fit(cells: usize, windows: u32) -> u32 {
    let per_cell = (MAX_RESULTS_EXTRA_BYTES - RUN_BYTES) / cells.max(1) as u64;
    u32::try_from(per_cell.saturating_sub(CELL_BYTES) / trial_bytes(windows)).unwrap_or(u32::MAX)
}

/// Largest request body, 256 MiB. A larger upload measures copying through
/// the loopback interface, not the client; and the driver holds the body in
/// memory (a `100GiB` body aborted it allocating).
pub const MAX_BODY_BYTES: u64 = 256 * 1024 * 1024;

impl Suite {
    /// The cells a run of this suite produces: each scenario's clients
    /// against each server under test (or the reference server), plus one
    /// anchor cell per scenario with `[run] anchor`. Base-vs-head twins are
    /// clients of the suite once [`Suite::with_base_variants`] has added them.
    pub fn cell_count(&self) -> usize {
        let servers = self.servers.len().max(1);
        let anchors = if self.run.anchor.is_some() {
            self.scenarios.len()
        } else {
            0
        };
        self.scenarios
            .iter()
            .map(|s| s.clients.len() * servers)
            .sum::<usize>()
            + anchors
    }

    /// Why this suite cannot run, if it makes more than [`MAX_CELLS`] cells:
    /// the count and what it multiplies, and the limit.
    pub fn too_many_cells(&self) -> Option<String> {
        let cells = self.cell_count();
        (cells > MAX_CELLS).then(|| {
            let pairs: usize = self.scenarios.iter().map(|s| s.clients.len()).sum();
            let mut how = format!(
                "{} scenarios with {pairs} (scenario, client) pairs",
                self.scenarios.len()
            );
            if !self.servers.is_empty() {
                how.push_str(&format!(" x {} servers", self.servers.len()));
            }
            if self.run.anchor.is_some() {
                how.push_str(" + an anchor per scenario");
            }
            format!(
                "the suite makes {cells} cells ({how}), over the limit of {MAX_CELLS} a results file holds"
            )
        })
    }

    /// Why this suite's results file could not be read back, if its cells
    /// ran up to `max_rounds` rounds each: the estimate and the limit
    /// ([`results_bytes`]), and what would fit. `compare`, `merge` and the
    /// stores refuse such a file, after the run measured for hours.
    pub fn too_many_rounds(&self) -> Option<TooManyRounds> {
        TooManyRounds::of(self.cell_count(), self.run.max_rounds, self.run.windows)
    }

    /// `[run] max_rounds` when a budget is given and the file sets none:
    /// [`MAX_MAX_ROUNDS`], or as many as the results file holds, never fewer
    /// than `rounds`.
    pub(super) fn budget_max_rounds(&self) -> u32 {
        MAX_MAX_ROUNDS
            .min(rounds_that_fit(self.cell_count(), self.run.windows))
            .max(self.run.rounds)
    }
}

/// A suite whose results file would be over [`MAX_RESULTS_EXTRA_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyRounds {
    /// The cells, the rounds, the estimate and the limit.
    pub why: String,
    /// The most rounds that fit (0: not even one).
    pub fit: u32,
    /// The most cells that fit a results file of one round.
    pub cells_of_one_round: u64,
}

impl TooManyRounds {
    /// Why `cells` cells of up to `rounds` rounds (of `windows` windows
    /// each) make a results file over the limit, if they do.
    pub fn of(cells: usize, rounds: u32, windows: u32) -> Option<TooManyRounds> {
        let fit = rounds_that_fit(cells, windows);
        let plural = if rounds == 1 { "" } else { "s" };
        (rounds > fit).then(|| TooManyRounds {
            why: format!(
                "{cells} cells of up to {rounds} round{plural} make a results file that takes about {} MiB of memory to read, over the limit of {} MiB every reader of it holds (compare, merge, the stores)",
                results_bytes(cells, rounds, windows).div_ceil(1 << 20),
                MAX_RESULTS_EXTRA_BYTES >> 20
            ),
            fit,
            cells_of_one_round: (MAX_RESULTS_EXTRA_BYTES - RUN_BYTES)
                / (CELL_BYTES + trial_bytes(windows)),
        })
    }

    /// How to fix it in the config, for a suite of `rounds` rounds.
    pub fn fix(&self, rounds: u32) -> String {
        let split = "or split the suite into several configs";
        match self.fit {
            0 => format!(
                "split the suite into several configs, or give scenarios fewer clients (clients = [...]): at most {} cells fit a results file of one round",
                self.cells_of_one_round
            ),
            fit if fit < rounds => format!("set rounds = {fit} (and max_rounds at most that), {split}"),
            fit => format!("set max_rounds = {fit}, the most that fit, {split}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(scenarios: usize, clients: usize) -> String {
        let mut text = String::from("[run]\nanchor = true\n");
        for c in 0..clients {
            text.push_str(&format!("[[client]]\nname = \"c{c}\"\nkind = \"hyper\"\n"));
        }
        for s in 0..scenarios {
            text.push_str(&format!("[[scenario]]\nname = \"s{s}\"\npath = \"/\"\n"));
        }
        text
    }

    #[test]
    fn cells_count_every_pair_and_the_anchors() {
        let s = Suite::from_toml(&suite(3, 2), "t.toml").unwrap();
        assert_eq!(s.cell_count(), 3 * 2 + 3);
        assert_eq!(s.too_many_cells(), None);
        // (A suite of 10,000 cells loads no more: its trials take too much.)
        let mut s = Suite::from_toml(&suite(1, 99), "t.toml").unwrap();
        let one = s.scenarios[0].clone();
        s.scenarios = (0..100)
            .map(|i| super::super::Scenario {
                name: format!("s{i}"),
                ..one.clone()
            })
            .collect();
        assert_eq!(s.cell_count(), MAX_CELLS);
        assert_eq!(s.too_many_cells(), None);
        s.scenarios[0].clients.push("c0".into());
        let why = s.too_many_cells().unwrap();
        assert!(why.starts_with("the suite makes 10001 cells (100 scenarios with 9901 (scenario, client) pairs + an anchor per scenario), over the limit of 10000"), "{why}");
    }
}
