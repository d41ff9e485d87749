//! The variance components of windowed forks, and the windows they ask for.

use super::windows::{components, render, suggested, WINDOWS};
use crate::compare::compare_side_by_side;
use crate::compare::model::Comparison;
use crate::config::{gate::default_gate, Suite};
use crate::results::{synthetic, ForkWindows, RunResults, WindowFigures};

/// One A/A run whose reqwest and hyper forks measured `d[r].len()` windows
/// each: reqwest's throughput in window j of round r is hyper's times
/// `exp(d[r][j])`. Each fork lasts 10 s from its start to the next trial's
/// (reqwest first), 2 s of it in each of two windows.
fn run(d: &[[f64; 2]]) -> (RunResults, Comparison) {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(1);
    let mut r = synthetic::run(s, d.len() as u32, |_, _, _| {
        Some(synthetic::metrics(1000.0, 2000.0, 50.0))
    });
    for cell in &mut r.results {
        let first = match cell.client.as_str() {
            "reqwest" => 0,
            "hyper" => 10,
            _ => continue,
        };
        for t in &mut cell.trials {
            let round = t.round as usize - 1;
            let at = first + 20 * round;
            t.started_at = Some(format!(
                "2026-12-06T10:{:02}:{:02}.250000Z",
                at / 60,
                at % 60
            ));
            t.window_actual_s = Some(4.0);
            let values = d[round]
                .iter()
                .map(|x| WindowFigures {
                    throughput_rps: match cell.client.as_str() {
                        "reqwest" => 1000.0 * x.exp(),
                        _ => 1000.0,
                    },
                    ..WindowFigures::default()
                })
                .collect();
            t.windows = Some(ForkWindows {
                count: 2,
                values,
                ..ForkWindows::default()
            });
        }
    }
    let c = compare_side_by_side(&r, "hyper", &default_gate());
    (r, c)
}

#[test]
fn the_components_and_the_windows_they_ask_for() {
    // Within each round the two window pairs differ by ±0.02 (σ²_w = 8e-4);
    // the rounds' means 0.00 and 0.03 (var(D) = 4.5e-4, so σ²_f = 4.5e-4 −
    // 8e-4 / 2 = 5e-5). A fork pair outside its windows: 2 × (10 − 4) s =
    // 12 s (only round 1's: round 2's second fork has no trial after it); a
    // window pair 4 s. W* = √(12 / 4 · 8e-4 / 5e-5) = √48 ≈ 6.9.
    let (r, c) = run(&[[0.02, -0.02], [0.05, 0.01]]);
    let cells = components(&[r], &[c]);
    assert_eq!(
        cells.len(),
        1,
        "only throughput has windows here: {cells:?}"
    );
    let w = &cells[0];
    assert_eq!(
        (w.client.as_str(), w.metric.as_str()),
        ("reqwest", "throughput_rps")
    );
    assert_eq!((w.windows, w.rounds), (2, 2));
    assert!((w.sigma_w - 8e-4_f64.sqrt()).abs() < 1e-9, "{w:?}");
    assert!((w.sigma_f - 5e-5_f64.sqrt()).abs() < 1e-9, "{w:?}");
    assert!((w.fork_cost_s - 12.0).abs() < 1e-9, "{w:?}");
    assert!((w.window_cost_s - 4.0).abs() < 1e-9, "{w:?}");
    assert_eq!(w.best, 7);
    assert_eq!(suggested(&cells), Some(7));
    let table = render(&cells).unwrap();
    assert!(table.contains("suggested: [run] windows = 7"), "{table}");
    assert!(
        table.contains("2.83%") && table.contains("0.71%"),
        "{table}"
    );
}

#[test]
fn without_a_fork_level_part_every_window_is_worth_its_time() {
    let (r, c) = run(&[[0.02, -0.02], [0.02, -0.02], [0.03, -0.01]]);
    let cells = components(&[r], &[c]);
    assert_eq!(cells[0].sigma_f, 0.0, "{cells:?}");
    assert_eq!(cells[0].best, WINDOWS.1);
}

#[test]
fn forks_without_window_values_give_nothing() {
    let (mut r, c) = run(&[[0.02, -0.02], [0.05, 0.01]]);
    for t in r.results.iter_mut().flat_map(|c| &mut c.trials) {
        t.windows = None;
    }
    assert!(components(&[r], &[c]).is_empty());
    assert_eq!(suggested(&[]), None);
    assert!(render(&[]).is_none());
}
