//! One cell's trials as its rounds run: kept, dropped (a round run again
//! after a starved trial) and merged into the cell's histograms.

use std::collections::BTreeMap;

use crate::measure::LatencyHistogram;
use crate::orchestrate::trial::Latencies;
use crate::results::{client_label, CellResult, Trial};

/// Accumulates one (scenario, client, server) across rounds.
pub(super) struct CellAcc {
    pub(super) result: CellResult,
    hist: Option<LatencyHistogram>,
    hist_uncorrected: Option<LatencyHistogram>,
    /// The histograms of the round being measured, merged once the round is
    /// kept ([`CellAcc::keep_round`]); a round run again drops them.
    pub(super) pending: Vec<Latencies>,
    /// Rounds whose trial failed in a broken window loop (run once more).
    pub(super) broken: Vec<u32>,
}

impl CellAcc {
    pub(super) fn new(scenario: &str, client: &str, server: Option<&str>) -> CellAcc {
        CellAcc {
            result: CellResult {
                scenario: scenario.to_string(),
                client: client.to_string(),
                server: server.map(String::from),
                anchor: false,
                trials: vec![],
                summary: BTreeMap::new(),
                histogram: None,
                histogram_uncorrected: None,
            },
            hist: None,
            hist_uncorrected: None,
            pending: Vec::new(),
            broken: Vec::new(),
        }
    }

    /// The cell of the anchor's trials in the rounds of `scenario`.
    pub(super) fn anchor(scenario: &str) -> CellAcc {
        let mut cell = CellAcc::new(scenario, crate::config::anchor::NAME, None);
        cell.result.anchor = true;
        cell
    }

    pub(super) fn label(&self) -> String {
        client_label(&self.result.client, self.result.server.as_deref())
    }

    /// Records `trial` (as [`super::planned`] began it) as failed for `reason`.
    pub(super) fn fail(&mut self, trial: Trial, reason: String) {
        self.result.trials.push(Trial {
            failure: Some(reason),
            ..trial
        });
    }

    /// Keeps round `round` as measured: its histograms join the cell's, and
    /// its trials say how many attempts before them were dropped.
    pub(super) fn keep_round(&mut self, round: u32, reruns: u32) {
        fn add(acc: &mut Option<LatencyHistogram>, h: Option<LatencyHistogram>) {
            if let Some(h) = h {
                acc.get_or_insert_with(LatencyHistogram::new).merge(&h);
            }
        }
        for (h, hu) in std::mem::take(&mut self.pending) {
            add(&mut self.hist, h);
            add(&mut self.hist_uncorrected, hu);
        }
        for t in self.result.trials.iter_mut().filter(|t| t.round == round) {
            t.reruns = reruns;
        }
    }

    /// Drops round `round`'s trials, to run the round again.
    pub(super) fn drop_round(&mut self, round: u32) {
        self.result.trials.retain(|t| t.round != round);
        self.broken.retain(|r| *r != round);
        self.pending.clear();
    }

    /// Why a trial of round `round` failed in a broken window loop, if one
    /// did.
    pub(super) fn broken_in(&self, round: u32) -> Option<String> {
        self.broken.contains(&round).then(|| {
            let failure = self
                .result
                .trials
                .iter()
                .rev()
                .find(|t| t.round == round)
                .and_then(|t| t.failure.as_deref())
                .unwrap_or_default();
            format!(
                "{}: {}",
                self.label(),
                failure.lines().next().unwrap_or_default()
            )
        })
    }

    /// Why a trial of round `round` was starved, if one was.
    pub(super) fn starved_in(&self, round: u32) -> Option<String> {
        self.result
            .trials
            .iter()
            .filter(|t| t.round == round)
            .flat_map(|t| &t.invalid)
            .find(|m| m.is_starved())
            .map(|m| format!("{}: {}", self.label(), m.describe()))
    }

    pub(super) fn finish(mut self) -> CellResult {
        self.result.summary = crate::results::summarize(&self.result.trials);
        self.result.histogram = self.hist.map(|h| h.encode());
        self.result.histogram_uncorrected = self.hist_uncorrected.map(|h| h.encode());
        self.result
    }
}
