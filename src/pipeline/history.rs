//! A branch's stored history analysed: the newest stored runs of a branch
//! (a local store or the data branch, through the baseline stores) in the
//! order they were stored, and per gating metric and cell their change points
//! ([`crate::compare::drift`]). `benchgate history` (`commands::history`)
//! and the action's nightly drift check read it through [`read`].

use anyhow::Context as _;

use crate::baseline::{BaselineKey, BaselineStore};
use crate::compare::changepoint::Options;
use crate::compare::drift::{histories, CellHistory};
use crate::report::drift::History;

/// A branch's stored runs, oldest first, and the change points of each
/// gating metric's series per cell.
#[derive(Debug, Clone)]
pub struct Analysed {
    pub runs: Vec<BaselineKey>,
    pub cells: Vec<CellHistory>,
}

impl Analysed {
    /// The report's view.
    pub fn view<'a>(&'a self, branch: &'a str, opts: Options) -> History<'a> {
        History {
            branch,
            runs: &self.runs,
            cells: &self.cells,
            opts,
        }
    }
}

/// The newest `last` stored runs of `branch` in `store` (described by
/// `source` in errors), analysed with the `[gate]` of the newest (which
/// metrics gate); `None` when none is stored.
pub fn read(
    store: &dyn BaselineStore,
    source: &str,
    branch: &str,
    last: usize,
    opts: Options,
) -> anyhow::Result<Option<Analysed>> {
    let stored = store
        .load_history(branch, last)
        .with_context(|| format!("reading the stored baselines of {branch:?} in {source}"))?;
    let Some(newest) = stored.last() else {
        return Ok(None);
    };
    let gate = &newest.results.config.gate;
    let runs: Vec<_> = stored.iter().map(|s| &s.results).collect();
    let cells = histories(&runs, gate, opts);
    Ok(Some(Analysed {
        runs: stored.into_iter().map(|s| s.key).collect(),
        cells,
    }))
}

/// Why nothing was analysed: `source` holds nothing of `branch`, with what
/// the store said.
pub fn nothing_stored(store: &dyn BaselineStore, source: &str, branch: &str) -> String {
    let notes: String = store.notes().iter().map(|n| format!("; {n}")).collect();
    format!(
        "{source} holds no stored baselines of branch {branch:?}: runs on pushes to {branch:?} store them; if they store another branch, name that one{notes}"
    )
}
