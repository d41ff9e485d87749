//! Issue 4, point 7: the comment stays under GitHub's 65,536-character limit,
//! balanced, with the most important rows kept and a note on what was left out.

use benchgate::report::markdown::{
    self, MarkdownOptions, MAX_COMMENT_CHARS, MAX_JOB_SUMMARY_BYTES,
};

use super::cases;
use super::check::{assert_balanced, assert_inert};

#[test]
fn five_thousand_scenarios_fit_the_comment_limit() {
    let c = cases::huge(5000, |i| format!("scenario-{i:04}"));
    let md = markdown::render(
        &c.cmp,
        &c.current,
        c.baseline.as_ref(),
        &MarkdownOptions::default(),
    );
    let chars = md.chars().count();
    assert!(chars <= MAX_COMMENT_CHARS, "{chars} chars");
    assert!(
        chars > MAX_COMMENT_CHARS - 2000,
        "uses the room: {chars} chars"
    );
    assert_balanced(&md);
    assert_inert(&md);
    assert!(md.contains("rows omitted"), "says what was left out");
    assert!(md.contains("see the job summary or the results artifact"));
    assert!(md.contains("details (charts, other metrics, percentiles"));
    // Regressions first: 715 failing p99 rows (one scenario in 7) do not all
    // fit, so only they are shown, the most important rows, none of the others.
    let first_table = &md[md.find("### ").unwrap()..];
    assert!(first_table.lines().nth(4).unwrap().contains("❌ regressed"));
    let failing = md.matches("❌ regressed").count();
    assert!(failing > 250, "{failing} failing rows kept");
    assert!(!md.contains("➖ unchanged") && !md.contains("🟢 improved"));
    let omitted = 5000 * 4 - failing;
    assert!(md.contains(&format!("… {omitted} rows omitted")));
}

#[test]
fn the_limit_counts_characters_and_holds_at_any_size() {
    // Multi-byte names: 4-byte emoji and 2-byte letters.
    let c = cases::huge(300, |i| format!("é🚀-{i}"));
    for max in [200, 1_000, 2_500, 7_000, 20_000, 65_536] {
        let opts = MarkdownOptions {
            max_chars: max,
            ..MarkdownOptions::default()
        };
        let md = markdown::render(&c.cmp, &c.current, c.baseline.as_ref(), &opts);
        assert!(md.chars().count() <= max, "{} > {max}", md.chars().count());
        assert_balanced(&md);
        assert_inert(&md);
        if max >= 20_000 {
            assert!(md.len() > md.chars().count(), "multi-byte names kept");
        }
    }
}

#[test]
fn five_thousand_scenarios_fit_the_job_summary() {
    let c = cases::huge(5000, |i| format!("scenario-{i:04}"));
    let md = markdown::render_job_summary(
        &c.cmp,
        &c.current,
        c.baseline.as_ref(),
        &MarkdownOptions::default(),
    );
    assert!(md.len() <= MAX_JOB_SUMMARY_BYTES);
    assert!(
        md.len() > MAX_COMMENT_CHARS * 4,
        "the summary holds far more"
    );
    assert_balanced(&md);
}
