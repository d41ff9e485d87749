//! Issue 4, point 7: names from the config or a results file cannot inject
//! markdown, HTML, images, mentions or lines, in any renderer.

use benchgate::report::{markdown, terminal};

use super::cases;
use super::check::{assert_balanced, assert_inert};

#[test]
fn hostile_names_are_inert_in_the_comment_and_the_summary() {
    let c = cases::hostile();
    let opts = markdown::MarkdownOptions::default();
    for md in [
        markdown::render(&c.cmp, &c.current, c.baseline.as_ref(), &opts),
        markdown::render_job_summary(&c.cmp, &c.current, c.baseline.as_ref(), &opts),
    ] {
        assert_balanced(&md);
        assert_inert(&md);
        // The newline inside a client name does not start a line.
        assert!(!md.lines().any(|l| l.starts_with("line two")));
        // Input `</details>` is shown escaped, never as a tag.
        assert!(md.contains("\\</details\\>"));
        assert!(md.contains("a\\|b"));
        assert!(md.contains("@\u{200D}org/team"));
        assert!(md.contains("\\!\\[x\\]\\(http:/\u{200D}/e\\)"));
        // Fences only come from our mermaid charts.
        let fences = md.lines().filter(|l| l.starts_with("```")).count();
        let charts = md.matches("```mermaid").count();
        assert_eq!(fences, 2 * charts);
    }
}

#[test]
fn hostile_names_cannot_forge_terminal_lines_or_escapes() {
    let mut c = cases::hostile();
    c.cmp.metrics[0].scenario = "evil\x1b[2J\rname".into();
    let out = terminal::render_comparison(&c.cmp, false, benchgate::report::run_table::Width::Wide);
    assert!(!out.contains('\x1b'));
    assert!(!out.contains('\r'));
    assert!(!out.lines().any(|l| l.starts_with("line two")));
}
