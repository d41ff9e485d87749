//! Issue 54, point 4: every terminal table fits 120 columns (or the
//! terminal's width when wider), and `--wide` shows every column whatever
//! the width. Tables of the default suite's names, every metric moved so
//! every row shows, and an anchored run; then names longer than any column.

use benchgate::compare::{self, Comparison};
use benchgate::config::anchor::Anchor;
use benchgate::config::Suite;
use benchgate::report::run_table::Width;
use benchgate::report::terminal;
use benchgate::results::RunResults;

use crate::common::synthetic;

/// Five rounds of the suite, `slow` times slower for `slow_client` (every
/// client when `None`), with a round-to-round wiggle so intervals are wide.
fn run(suite: &Suite, slow: f64, slow_client: Option<&str>) -> RunResults {
    synthetic::run(suite.clone(), 5, |_, client, r| {
        let k = match slow_client {
            Some(c) if c != client => 1.0,
            _ => slow,
        } * (1.0 + 0.013 * f64::from(r % 3));
        let mut m = synthetic::metrics(12_345.0 / k, 1234.0 * k, 12.3 * k);
        m.peak_rss_bytes = (f64::from(30u32 << 20) * k) as u64;
        m.startup_ms = Some(29.0 * k);
        m.run_delay_share = Some(0.25 * k);
        m.server_run_delay_ms = Some(3.0 * k);
        Some(m)
    })
}

/// The widest line of the table in `text`: from its header (the line that
/// starts with `scenario`) to the first empty line. (The prose around it,
/// as the method's sentence, is a log's to wrap.)
fn widest(text: &str) -> usize {
    text.lines()
        .skip_while(|l| !l.starts_with("scenario"))
        .take_while(|l| !l.is_empty())
        .map(|l| l.chars().count())
        .max()
        .expect("a table")
}

fn comparisons(suite: &Suite) -> Vec<(&'static str, Comparison)> {
    let gate = &suite.gate;
    let base = run(suite, 1.0, None);
    let cur = run(suite, 1.3, None);
    let sbs = run(suite, 1.3, Some("reqwest-blocking"));
    vec![
        ("baseline", compare::compare(Some(&base), &cur, gate)),
        (
            "side by side",
            compare::compare_side_by_side(&sbs, "hyper", gate),
        ),
    ]
}

#[test]
fn every_table_fits_120_columns_and_wide_has_every_column() {
    let mut suite = Suite::default_suite();
    suite.run.anchor = Some(Anchor::fixed());
    for (mode, cmp) in comparisons(&suite) {
        let narrow = terminal::render_comparison(&cmp, false, Width::narrow());
        assert!(
            widest(&narrow) <= 120,
            "{mode}: {} columns:\n{narrow}",
            widest(&narrow)
        );
        // A wider terminal takes it whole.
        let wide = terminal::render_comparison(&cmp, false, Width::Wide);
        assert!(widest(&wide) > 120, "{mode}: nothing to fit:\n{wide}");
        let fitted = terminal::render_comparison(&cmp, false, Width::fit(Some(widest(&wide))));
        assert_eq!(fitted, wide, "{mode}");
        for h in ["baseline median", "current median", "MDE", "verdict"] {
            assert!(wide.contains(h), "{mode}: {h}:\n{wide}");
        }
    }
    let anchored = run(&suite, 1.0, None);
    let narrow = terminal::render(&anchored, false, Width::narrow());
    assert!(
        widest(&narrow) <= 120,
        "{} columns:\n{narrow}",
        widest(&narrow)
    );
    for h in [
        "req/s",
        "p99",
        "errors",
        "cpu/req",
        "req/s ÷ anchor",
        "cpu ÷ anchor",
    ] {
        assert!(narrow.lines().next().unwrap().contains(h), "{h}:\n{narrow}");
    }
    assert!(narrow.contains("--wide: every column"), "{narrow}");
    let wide = terminal::render(&anchored, false, Width::Wide);
    for h in [
        "p50", "p99.9", "peak rss", "threads", "conns", "startup", "cpu wait",
    ] {
        assert!(wide.lines().next().unwrap().contains(h), "{h}:\n{wide}");
    }
}

#[test]
fn long_names_are_cut_to_fit_and_whole_with_wide() {
    let mut suite = Suite::default_suite();
    suite.scenarios.truncate(2);
    // 100 characters: past what leaving columns out can make room for.
    let long = format!("a-scenario-name-{}", "x".repeat(84));
    suite.scenarios[0].name = long.clone();
    let cur = run(&suite, 1.3, None);
    let cmp = compare::compare(Some(&run(&suite, 1.0, None)), &cur, &suite.gate);
    for text in [
        terminal::render_comparison(&cmp, false, Width::narrow()),
        terminal::render(&cur, false, Width::narrow()),
    ] {
        assert!(widest(&text) <= 120, "{} columns:\n{text}", widest(&text));
        assert!(text.contains("a-scenario-name-xxxx"), "{text}");
        assert!(!text.contains(&long), "{text}");
        assert!(text.contains("--wide"), "{text}");
    }
    for text in [
        terminal::render_comparison(&cmp, false, Width::Wide),
        terminal::render(&cur, false, Width::Wide),
    ] {
        assert!(text.contains(&long), "{text}");
    }
}
