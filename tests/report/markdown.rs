//! Snapshots of the PR comment and the job summary in every mode.

use benchgate::report::markdown::{self, MarkdownOptions, MetricHistory};

use crate::cases::{self, Case};
use crate::check::{assert_balanced, assert_inert};

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

#[test]
fn job_summary_has_the_same_content() {
    let c = cases::mixed();
    let opts = MarkdownOptions::default();
    let summary = markdown::render_job_summary(&c.cmp, &c.current, c.baseline.as_ref(), &opts);
    assert_balanced(&summary);
    assert_eq!(summary, comment(&c, &opts), "small reports are identical");
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
