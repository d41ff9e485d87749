//! Snapshots of the PR comment and the job summary in every mode.

use benchgate::report::markdown::{self, MarkdownOptions, MetricHistory};

use super::cases::{self, Case};
use super::check::{assert_balanced, assert_inert};

fn comment(c: &Case, opts: &MarkdownOptions) -> String {
    let md = markdown::render(&c.cmp, &c.current, c.baseline.as_ref(), opts);
    assert_balanced(&md);
    assert_inert(&md);
    assert!(md.chars().count() <= opts.max_chars);
    md
}

#[test]
fn mixed_comment() {
    insta::assert_snapshot!(comment(&cases::mixed(), &MarkdownOptions::default()));
}

#[test]
fn mixed_comment_with_history() {
    let opts = MarkdownOptions {
        history: vec![MetricHistory {
            scenario: "get-22b".into(),
            client: "hyper".into(),
            metric: "latency_p99_us".into(),
            points: vec![
                ("a1b2c3d".into(), 1180.0),
                ("e4f5a6b".into(), 1210.0),
                ("\"]%%{init}".into(), 1195.0),
                ("bad".into(), f64::NAN),
            ],
        }],
        ..MarkdownOptions::default()
    };
    let md = comment(&cases::mixed(), &opts);
    let charts = &md[md.find("<summary>Charts").unwrap()..];
    let charts = &charts[..charts.find("</details>").unwrap()];
    insta::assert_snapshot!(charts);
}

/// The pull request's trend charts (issue 18, point 4) are bounded: at most
/// `MAX_HISTORY_CHARTS` charts of `MAX_HISTORY_POINTS` points (the newest,
/// this run last), and the whole comment fits its limit.
#[test]
fn a_long_trend_stays_within_its_bounds_and_the_comment_limit() {
    let c = cases::huge(120, |i| format!("scenario-{i}-{}", "x".repeat(30)));
    let history: Vec<MetricHistory> = c
        .cmp
        .metrics
        .iter()
        .filter(|m| m.gating)
        .map(|m| MetricHistory {
            scenario: m.scenario.clone(),
            client: m.client.clone(),
            metric: m.metric.clone(),
            points: (0..100)
                .map(|i| (format!("{i:07x}"), 1000.0 + i as f64))
                .collect(),
        })
        .collect();
    assert!(history.len() > markdown::MAX_HISTORY_POINTS);
    let opts = MarkdownOptions {
        history,
        ..MarkdownOptions::default()
    };
    let md = markdown::render_job_summary(&c.cmp, &c.current, c.baseline.as_ref(), &opts);
    assert_balanced(&md);
    let lines: Vec<&str> = md.lines().filter(|l| l.starts_with("    line [")).collect();
    assert_eq!(lines.len(), 12, "MAX_HISTORY_CHARTS");
    for l in &lines {
        assert_eq!(
            l.matches(',').count() + 1,
            markdown::MAX_HISTORY_POINTS,
            "{l}"
        );
    }
    assert!(
        md.contains(r#""0000063", "this run"]"#) || md.contains(r#""0000063"]"#),
        "newest last"
    );
    let comment = comment(&c, &opts);
    assert!(comment.chars().count() <= opts.max_chars);
}

#[test]
fn job_summary_has_the_same_content() {
    let c = cases::mixed();
    let opts = MarkdownOptions::default();
    let summary = markdown::render_job_summary(&c.cmp, &c.current, c.baseline.as_ref(), &opts);
    assert_balanced(&summary);
    assert_eq!(summary, comment(&c, &opts), "small reports are identical");
}

#[test]
fn every_trial_failed_comment() {
    let c = cases::every_trial_failed();
    let md = comment(&c, &MarkdownOptions::default());
    // The head says why the gate failed, quoting the first failure.
    let head = &md[..md.find("### ").unwrap()];
    assert!(head.starts_with("## ❌ benchgate: fail"), "{head}");
    let quoted = r"> - every trial failed \(3 of 3\): get-22b / hyper round 1/3: FAILED: the driver panicked: ALPN protocols should not be pre-defined \(full output: results-logs/20260303T121500Z-head/get-22b--hyper--round-1.log\)";
    assert!(head.contains(quoted), "{head}");
    // Every failed trial is listed once: the three of hyper, reqwest's one.
    let failed = &md[md.find("Failed trials:").unwrap()..];
    for l in [
        "- get-22b / hyper round 1: the driver panicked",
        "- get-22b / hyper round 2: the driver panicked",
        "- get-22b / hyper round 3: the driver panicked",
        "- get-22b / reqwest round 2: exit status 101",
    ] {
        assert_eq!(failed.matches(l).count(), 1, "{l:?} in {failed}");
    }
    let opts = MarkdownOptions::default();
    let summary = markdown::render_job_summary(&c.cmp, &c.current, c.baseline.as_ref(), &opts);
    assert_eq!(summary, md, "the job summary says the same");
    insta::assert_snapshot!(md);
}

#[test]
fn every_baseline_trial_failed_side_by_side_comment() {
    let c = cases::every_baseline_trial_failed_side_by_side();
    let md = comment(&c, &MarkdownOptions::default());
    let head = &md[..md.find("### ").unwrap()];
    assert!(
        head.contains("**Every trial failed** in 2 comparisons"),
        "{head}"
    );
    let reason = r"every trial of the baseline failed \(4 of 4\): get-22b / hyper round 1/4: FAILED: the driver was killed by signal 6 \(SIGABRT\)";
    assert_eq!(
        head.matches(reason).count(),
        1,
        "once for both pairs: {head}"
    );
    for client in ["reqwest", "ureq"] {
        let row = format!(r"| {client} vs hyper | **throughput\_rps** | n/a → ");
        assert!(md.contains(&row), "{row:?} in {md}");
    }
    // The shared baseline cell's failures are listed once, not once per pair.
    for round in 1..=4 {
        let l = format!("- get-22b / hyper round {round}: the driver was killed");
        assert_eq!(md.matches(&l).count(), 1, "{l:?} once in {md}");
    }
}

#[test]
fn side_by_side_comment() {
    insta::assert_snapshot!(comment(&cases::side_by_side(), &MarkdownOptions::default()));
}

#[test]
fn no_baseline_comment() {
    insta::assert_snapshot!(comment(&cases::no_baseline(), &MarkdownOptions::default()));
}

#[test]
fn not_comparable_comment() {
    insta::assert_snapshot!(comment(
        &cases::not_comparable(),
        &MarkdownOptions::default()
    ));
}

#[test]
fn hostile_names_comment() {
    insta::assert_snapshot!(comment(&cases::hostile(), &MarkdownOptions::default()));
}

#[test]
fn truncated_comment_keeps_the_most_important_rows() {
    let c = cases::huge(40, |i| format!("scenario-{i:03}"));
    let opts = MarkdownOptions {
        max_chars: 3000,
        ..MarkdownOptions::default()
    };
    insta::assert_snapshot!(comment(&c, &opts));
}

/// A trial the validity guard marked shows in the comment's table and its
/// reasons, and in the terminal comparison, as decided by `compare` itself.
#[test]
fn invalid_trials_are_marked_in_every_report() {
    use crate::common::synthetic;
    use benchgate::config::Suite;
    use benchgate::results::validity::InvalidMark;

    let run = || {
        let mut s = Suite::default_suite();
        s.scenarios.truncate(1);
        synthetic::run(s, 5, |_, _, _| {
            Some(synthetic::metrics(10_000.0, 2000.0, 50.0))
        })
    };
    let (baseline, mut current) = (run(), run());
    current.results[0].trials[2].invalid = vec![InvalidMark::RateShortfall {
        target_rps: 2000.0,
        achieved_rps: 1234.0,
    }];
    let cmp = benchgate::compare::compare(
        Some(&baseline),
        &current,
        &benchgate::config::gate::default_gate(),
    );
    let md = markdown::render(&cmp, &current, Some(&baseline), &MarkdownOptions::default());
    assert_balanced(&md);
    let client = &current.results[0].client;
    assert!(
        md.lines().any(|l| l.contains(&format!("| {client} |"))
            && l.contains("⚠️ within threshold, invalid trials |")),
        "{md}"
    );
    assert!(
        md.contains(r"round 3: open loop reached 1234 of 2000 req/s \(62%, under 95%\)"),
        "{md}"
    );
    let term = benchgate::report::terminal::render_comparison(
        &cmp,
        false,
        benchgate::report::run_table::Width::Wide,
    );
    assert!(term.contains("within threshold, invalid trials"), "{term}");
}
