//! Snapshots of the terminal comparison table, plain and coloured.

use benchgate::report::run_table::Width;
use benchgate::report::terminal;

use super::cases;

#[test]
fn comparison_table_plain() {
    insta::assert_snapshot!(terminal::render_comparison(
        &cases::mixed().cmp,
        false,
        Width::Wide
    ));
}

#[test]
fn comparison_table_coloured() {
    let out = terminal::render_comparison(&cases::mixed().cmp, true, Width::Wide);
    assert!(out.contains("\x1b[31m"), "regressions red");
    assert!(out.contains("\x1b[32m"), "improvements green");
    insta::assert_snapshot!(out.escape_debug().to_string().replace("\\n", "\n"));
}

#[test]
fn comparison_table_modes() {
    let mut out = String::new();
    for c in [
        cases::side_by_side(),
        cases::no_baseline(),
        cases::not_comparable(),
        cases::hostile(),
    ] {
        out.push_str(&terminal::render_comparison(&c.cmp, false, Width::Wide));
        out.push_str("----\n");
    }
    insta::assert_snapshot!(out);
}

#[test]
fn every_trial_failed_table() {
    let mut out = String::new();
    for c in [
        cases::every_trial_failed(),
        cases::every_baseline_trial_failed_side_by_side(),
    ] {
        let table = terminal::render_comparison(&c.cmp, false, Width::Wide);
        assert!(
            table.starts_with("benchgate: FAIL (every trial failed in "),
            "{table}"
        );
        let reason = &c.cmp.metrics[0].reason;
        assert_eq!(table.matches(reason.as_str()).count(), 1, "{table}");
        out.push_str(&table);
        out.push_str("----\n");
    }
    let coloured = terminal::render_comparison(&cases::every_trial_failed().cmp, true, Width::Wide);
    assert!(
        coloured.contains("\x1b[31mevery trial failed (3 of 3)"),
        "{coloured:?}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn run_table_is_kept() {
    insta::assert_snapshot!(terminal::render(
        &cases::mixed().current,
        false,
        Width::Wide
    ));
}

/// Issue 52, point 6: a gating row that left out trials without its figure
/// says how many and which, below the table, in the terminal and in the
/// comment's head; a comparison without any says nothing of it.
#[test]
fn trials_without_a_gated_figure_are_counted_in_every_report() {
    let case = cases::mixed();
    let plain = terminal::render_comparison(&case.cmp, false, Width::Wide);
    assert!(!plain.contains("without a gated figure"), "{plain}");
    let md = benchgate::report::markdown::render(
        &case.cmp,
        &case.current,
        case.baseline.as_ref(),
        &Default::default(),
    );
    assert!(!md.contains("without a gated figure"), "{md}");

    let mut case = cases::mixed();
    let row = case
        .cmp
        .metrics
        .iter_mut()
        .find(|m| m.gating)
        .expect("a gating row");
    row.lacking = vec!["round 2".into(), "baseline round 4".into()];
    let (scenario, client, metric) = (row.scenario.clone(), row.client.clone(), row.metric.clone());
    let out = terminal::render_comparison(&case.cmp, false, Width::Wide);
    assert!(
        out.contains(&format!(
            "\n2 trials without a gated figure, left out of its comparison:\n  {scenario} / {client} {metric}: round 2, baseline round 4\n"
        )),
        "{out}"
    );
    let md = benchgate::report::markdown::render(
        &case.cmp,
        &case.current,
        case.baseline.as_ref(),
        &Default::default(),
    );
    assert!(
        md.contains("> ⚠️ **2 trials without a gated figure**, left out of its comparison:\n"),
        "{md}"
    );
    let escaped = metric.replace('_', "\\_");
    assert!(
        md.contains(&format!("**{escaped}**: round 2, baseline round 4\n")),
        "{md}"
    );
}
