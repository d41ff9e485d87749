//! A paired round (`[run] schedule = "interleaved"` or `"duet"`; issue 52
//! point 2, issue 51 point 4): the scenario's two cells' forks alive at
//! once, the round's first side as the counterbalanced order says
//! ([`round_order`]: A first in one round, B in the next). A side is a
//! built-in client's driver or a command client's program that declares the
//! window loop ([`Side`]).
//!
//! Interleaved, their windows take turns A B B A A B ... ([`window_order`]),
//! one window open at a time, against the one reference server. Once both
//! are READY both are frozen (paused, then their group stopped), so that
//! every window starts from a thaw: thaw X, window on X, freeze X, thaw Y,
//! window on Y, ... The frozen side's group CPU is read over the other
//! side's window (the trial's `windows.peer_cpu_us`: it must be ~0). Drift
//! slower than a window pair lands on both sides.
//!
//! As a duet ("Duet Benchmarking", Bulej et al., ICPE 2020), each side runs
//! on its own lane (half the CPUs) against its own reference server pinned
//! there, and their windows open and close together ([`together`]): noise
//! the machine's CPUs share (memory bandwidth, frequency, a co-tenant's
//! steal) lands on both inside the same window, and both sides measure at
//! once. The lanes swap every round, with the order, so a slower lane or
//! server cancels over two rounds. Noise private to one CPU does not
//! cancel. A starved window measured again runs alone.
//!
//! Each side's trial is then what a sequential fork's is
//! ([`Side::finish`]), its starved windows measured again by the same
//! rules. Interleaved, the figures two live forks cannot keep apart are
//! absent or span both: the reference server's connection totals
//! (`connections_opened`), its peak threads and RSS. If one fork fails,
//! both trials of the round fail (a pair is a pair); a broken window loop
//! reruns the round as in a sequential one.

use std::path::Path;

use super::side::Side;
use super::{planned, round_order, CellAcc, Ran, Rounds};
use crate::config::Scenario;
use crate::interrupt;
use crate::orchestrate::progress::Progress;
use crate::orchestrate::target::Target;

impl Rounds<'_> {
    /// Round `round` of `scenario`'s two cells, as the run's schedule pairs
    /// them, against `targets` (a duet's: one per lane); both trials
    /// recorded in their cells.
    pub(super) fn paired(
        &self,
        scenario: &Scenario,
        cells: &mut [CellAcc],
        targets: &[Target],
        round: u32,
        progress: &mut Progress,
    ) {
        let order = round_order(cells.len(), round);
        let &[first, second] = &order[..] else {
            // The config allows two cells only (`config::schedule`).
            for cell in cells.iter_mut() {
                let why = format!("an interleaved round needs two cells, not {}", order.len());
                cell.fail(planned(scenario, round), why);
            }
            return;
        };
        let sides = [first, second];
        // Side k's lane: a duet's (the run has lanes only then) swap every
        // round; interleaved, one target and the clients' CPUs for both.
        let place = |k: usize| match self.lanes {
            Some(lanes) => {
                let l = lane(sides[k], round);
                (&targets[l], &lanes[l][..])
            }
            None => (&targets[0], &self.pinning.client_cpus[..]),
        };
        let label = |k: usize| cells[sides[k]].label();
        progress.start(
            &scenario.name,
            &format!("{} + {}", label(0), label(1)),
            round,
        );
        let logs = sides.map(|i| self.log_path(scenario, &cells[i], round));
        let trials = [planned(scenario, round), planned(scenario, round)];
        let mut measured = trials.clone();
        let specs = [0, 1].map(|k| self.spec(scenario, &cells[sides[k]].result, place(k).0, round));
        let [m0, m1] = &mut measured;
        // `None`: not run or not finished, its partner failed.
        let results = match &specs {
            [Ok(a), Ok(b)] => {
                let started = [(a, &logs[0], 0), (b, &logs[1], 1)]
                    .map(|(spec, log, k)| self.start_side(spec, place(k), log, k + 1));
                match started {
                    [Ok(mut a), Ok(mut b)] => {
                        // A side whose loop failed leaves its partner
                        // unfinished: that one's own error is no news.
                        let broke = match self.lanes {
                            Some(_) => together([&mut a, &mut b], [place(0).0, place(1).0]),
                            None => take_turns([&mut a, &mut b], &targets[0]),
                        };
                        let [ra, rb] = [a.finish(m0), b.finish(m1)];
                        match broke {
                            Some(0) => [Some(ra), None],
                            Some(_) => [None, Some(rb)],
                            None => [Some(ra), Some(rb)],
                        }
                    }
                    [a, b] => [
                        Some(a.and_then(|a| a.finish(m0))),
                        Some(b.and_then(|b| b.finish(m1))),
                    ],
                }
            }
            _ => specs.map(|s| s.err().map(Err)),
        };
        let labels = [label(0), label(1)];
        let failed = (0..2).find(|&k| matches!(results[k], Some(Err(_))));
        for (k, result) in results.into_iter().enumerate() {
            let result = match (result, failed) {
                (Some(Err(e)), _) => Err(e),
                (_, Some(other)) => Err(anyhow::anyhow!(
                    "its partner fork ({}) failed in this {} round, so this fork's windows are dropped with it",
                    labels[other],
                    self.suite.run.schedule.as_str()
                )),
                (Some(ok), None) => ok,
                (None, None) => unreachable!("a side is left unrun only when its partner failed"),
            };
            let ran = Ran {
                trial: trials[k].clone(),
                measured: measured[k].clone(),
                result,
            };
            let cell = &mut cells[sides[k]];
            progress.start(&scenario.name, &cell.label(), round);
            self.record(scenario, cell, place(k).0, ran, progress, &mut || None);
        }
    }

    /// Starts side `k`'s driver against `target` on `cpus`, its files in a
    /// scratch directory of its own.
    fn start_side<'a>(
        &self,
        spec: &'a crate::orchestrate::driver::TrialSpec,
        (target, cpus): (&'a Target<'a>, &[usize]),
        log: &'a Path,
        k: usize,
    ) -> anyhow::Result<Side<'a>> {
        let scratch = self.scratch.join(format!("side-{k}"));
        std::fs::create_dir_all(&scratch)?;
        Side::spawn(self.exe, spec, target, cpus, &scratch, log)
    }
}

/// Both forks READY, both frozen, then their windows in [`window_order`]
/// (`sides[0]` the round's first), each from a thaw to a freeze, the other
/// side's CPU read over it; stops at the first failure (kept in its side,
/// for [`Side::finish`]; which side it was is returned) or an interrupt.
fn take_turns(sides: [&mut Side; 2], target: &Target) -> Option<usize> {
    let [a, b] = sides;
    a.beside_another();
    b.beside_another();
    if !a.ready() {
        return Some(0);
    }
    if !b.ready() {
        return Some(1);
    }
    if !a.freeze() {
        return Some(0);
    }
    if !b.freeze() {
        return Some(1);
    }
    let windows = a.planned_windows();
    for side in window_order(windows) {
        if interrupt::received().is_some() {
            return None;
        }
        let (x, y) = match side {
            0 => (&mut *a, &mut *b),
            _ => (&mut *b, &mut *a),
        };
        let peer = y.pgid();
        let turn = x.thaw() && x.window(target, peer) && x.freeze();
        if !turn {
            return Some(side);
        }
    }
    None
}

/// Both forks READY (they warmed at once, each on its lane), then their
/// windows opened together, each against its own server: side 0's on a
/// thread of its own, both released by one barrier, so the two opens are
/// microseconds apart and the closes, a window's length later, too. Stops
/// at the first failure (which side it was is returned) or an interrupt.
fn together(sides: [&mut Side; 2], targets: [&Target; 2]) -> Option<usize> {
    let [a, b] = sides;
    if !a.ready() {
        return Some(0);
    }
    if !b.ready() {
        return Some(1);
    }
    for _ in 0..a.planned_windows() {
        if interrupt::received().is_some() {
            return None;
        }
        let start = std::sync::Barrier::new(2);
        let (ok_a, ok_b) = std::thread::scope(|s| {
            let first = s.spawn(|| {
                start.wait();
                a.window(targets[0], None)
            });
            start.wait();
            let ok_b = b.window(targets[1], None);
            // A panic on side 0's thread is the round's, as one on this thread would be.
            let ok_a = first
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (ok_a, ok_b)
        });
        match (ok_a, ok_b) {
            (false, _) => return Some(0),
            (_, false) => return Some(1),
            (true, true) => {}
        }
    }
    None
}

/// The lane of a duet's cell `cell` (0 or 1, config order) in round
/// `round`: the cells swap lanes every round.
fn lane(cell: usize, round: u32) -> usize {
    (cell + round as usize) % 2
}

/// The sides' turns over `windows` windows each: 0 is the round's first
/// side. Window pairs alternate which side goes first, A B, B A, A B, ...,
/// so that each side's windows sit before and after the other's alike.
pub(super) fn window_order(windows: u32) -> Vec<usize> {
    (0..windows)
        .flat_map(|k| match k % 2 {
            0 => [0, 1],
            _ => [1, 0],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{lane, round_order, window_order};

    #[test]
    fn a_duet_s_cells_take_both_lanes_and_swap_them_every_round() {
        for round in 1..=6 {
            assert_ne!(lane(0, round), lane(1, round), "round {round}");
            assert_ne!(lane(0, round), lane(0, round + 1), "round {round}");
        }
    }

    #[test]
    fn windows_alternate_a_b_b_a_and_the_first_side_flips_by_round() {
        let ab = |order: &[usize]| -> String {
            order.iter().map(|&s| ["A", "B"][s]).collect::<String>()
        };
        assert_eq!(ab(&window_order(1)), "AB");
        assert_eq!(ab(&window_order(3)), "ABBAAB");
        assert_eq!(ab(&window_order(4)), "ABBAABBA");
        for w in 1..=9 {
            let order = window_order(w);
            assert_eq!(order.len(), 2 * w as usize);
            assert_eq!(order.iter().filter(|&&s| s == 0).count(), w as usize);
        }
        // The cells of the two sides, by round: the first side is cell 0 in
        // odd rounds and cell 1 in even ones (the counterbalanced order).
        let cells = |round| -> String {
            let sides = round_order(2, round);
            window_order(3)
                .iter()
                .map(|&s| ["a", "b"][sides[s]])
                .collect()
        };
        assert_eq!(cells(1), "abbaab");
        assert_eq!(cells(2), "baabba");
        assert_eq!(cells(3), "abbaab");
    }
}
