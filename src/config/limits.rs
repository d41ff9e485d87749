//! Limits on what a config may ask a run to do, checked when it loads, before
//! anything runs (issue 30, point 6): a run that could not finish, or whose
//! results every later read would refuse, fails in a second with the field,
//! the line and the fix instead of after minutes of measuring.

use super::Suite;

/// Most cells a results file holds: a cell is a (scenario, client) pair, per
/// server under test, anchors and base-vs-head twins included. Every read of
/// a results file refuses more (`results::check` re-exports this constant),
/// so a suite that would produce more is refused at load.
pub const MAX_CELLS: usize = 10_000;

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
        let mut s = Suite::from_toml(&suite(100, 99), "t.toml").unwrap();
        assert_eq!(s.cell_count(), MAX_CELLS);
        assert_eq!(s.too_many_cells(), None);
        s.scenarios[0].clients.push("c0".into());
        let why = s.too_many_cells().unwrap();
        assert!(why.starts_with("the suite makes 10001 cells (100 scenarios with 9901 (scenario, client) pairs + an anchor per scenario), over the limit of 10000"), "{why}");
    }
}
