//! Issue 28, point 7, "reports read right": a failed trial's output shown
//! with its real lines (and inert), informative metrics without a tier, and
//! medians beside a change that points the other way marked and explained.

use benchgate::compare::{Tier, Verdict};
use benchgate::report::escape::{disarm, MAX_BLOCK_CHARS, MAX_BLOCK_LINES};
use benchgate::report::markdown::{self, MarkdownOptions};
use benchgate::report::run_table::Width;
use benchgate::report::terminal;

use super::builder::{comparison, metric};
use super::cases::{self, Case};
use super::check::{assert_balanced, assert_inert, Fences};

fn comment(c: &Case) -> String {
    let md = markdown::render(
        &c.cmp,
        &c.current,
        c.baseline.as_ref(),
        &MarkdownOptions::default(),
    );
    assert_balanced(&md);
    assert_inert(&md);
    md
}

/// The code blocks of `md`: (fence line, lines inside).
fn code_blocks(md: &str) -> Vec<(String, Vec<String>)> {
    let mut fences = Fences::default();
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in md.lines() {
        let was_open = fences.info().is_some();
        if fences.code(line) {
            match (was_open, fences.info()) {
                (false, Some(_)) => out.push((line.to_string(), Vec::new())),
                (true, Some(_)) => out.last_mut().unwrap().1.push(line.to_string()),
                _ => {}
            }
        }
    }
    out
}

/// A program's output tail is a code block with its real lines, under the
/// failed trial's line; the head and the reasons quote the first line only.
#[test]
fn failure_output_is_a_code_block_with_real_lines() {
    let c = cases::failed_with_output();
    let md = comment(&c);
    assert!(!md.contains(r"\\n"), "no escaped line breaks: {md}");
    assert!(!md.contains(r#"\""#), "no escaped quotes: {md}");
    let head = &md[..md.find("### ").unwrap()];
    assert!(
        head.contains(
            r"get-22b / java round 1/3: FAILED: the program failed \(exit status: 1\) (its output is under “Failed trials” below)"
        ),
        "{head}"
    );
    let blocks: Vec<_> = code_blocks(&md)
        .into_iter()
        .filter(|(fence, _)| fence.ends_with("text"))
        .collect();
    // java's three trials and hyper's one, each once.
    assert_eq!(blocks.len(), 4, "{md}");
    let (fence, lines) = &blocks[0];
    // Longer than the output's longest backtick run (5).
    assert_eq!(fence, "``````text");
    assert_eq!(lines[0], "stdout tail:");
    assert!(lines.contains(&r#"listening on "http://127.0.0.1:8080""#.to_string()));
    assert!(lines.contains(&"</details>".to_string()));
    assert!(lines.contains(&"\tat Main.main(Main.java:12)".to_string()));
    assert!(lines.contains(&": :add-mask::hunter2".to_string()));
    assert!(lines.contains(&"## [error]boom".to_string()));
    assert!(lines.contains(&"  : :set-output name=verdict::pass".to_string()));
    assert!(lines.contains(&"ping @\u{200D}org/team \\u{1b}[2J done".to_string()));
    let failed = &md[md.find("Failed trials:").unwrap()..];
    assert!(
        failed.contains(
            "- get-22b / java round 1: the program failed \\(exit status: 1\\)\n\n``````text\nstdout tail:\n"
        ),
        "{failed}"
    );
    insta::assert_snapshot!(md);
}

/// The terminal shows the output's lines too, each behind `    | `, so none
/// starts a line and nothing moves the cursor; printed under Actions (through
/// the fence, [`disarm`]), no line of it is a workflow command.
#[test]
fn failure_output_keeps_its_lines_in_the_terminal() {
    let c = cases::failed_with_output();
    let mut out = terminal::render_comparison(&c.cmp, false, Width::Wide);
    out.push_str("----\n");
    out.push_str(&terminal::render(&c.current, false, Width::Wide));
    assert!(!out.contains('\x1b') && !out.contains('\r'), "{out:?}");
    assert!(!out.contains(r#"\""#), "{out}");
    assert!(
        out.contains("\n    | Exception in thread \"main\" java.net.ConnectException"),
        "{out}"
    );
    for l in out.lines() {
        assert!(!l.trim_start().starts_with("::"), "{l}");
    }
    for l in disarm(&out).lines() {
        assert!(!l.contains("##["), "{l}");
    }
    insta::assert_snapshot!(out);
}

/// However much the programs print and however many trials fail, each block
/// is bounded and only the first few trials show their output.
#[test]
fn failure_output_stays_bounded() {
    let mut c = cases::failed_with_output();
    let long: String = (0..5000)
        .map(|i| format!("line {i} {}\n", "`".repeat(i % 40)))
        .collect();
    let failure = format!("the program failed (exit status: 1)\nstdout tail:\n{long}");
    for cell in &mut c.current.results {
        cell.trials = (1..=60)
            .map(|round| benchgate::results::Trial {
                round,
                failure: Some(format!("{failure}round {round} ends here")),
                metrics: None,
                server: None,
                invalid: vec![],
                ..Default::default()
            })
            .collect();
        cell.summary.clear();
    }
    let md = markdown::render_job_summary(
        &c.cmp,
        &c.current,
        c.baseline.as_ref(),
        &MarkdownOptions::default(),
    );
    assert_balanced(&md);
    assert_inert(&md);
    let blocks: Vec<_> = code_blocks(&md)
        .into_iter()
        .filter(|(fence, _)| fence.ends_with("text"))
        .collect();
    assert_eq!(blocks.len(), 8, "MAX_OUTPUT_BLOCKS");
    for (fence, lines) in &blocks {
        assert!(lines.len() <= MAX_BLOCK_LINES, "{}", lines.len());
        let chars: usize = lines.iter().map(|l| l.chars().count() + 1).sum();
        assert!(chars <= MAX_BLOCK_CHARS, "{chars}");
        assert!(
            lines.last().unwrap().ends_with("ends here"),
            "the end is kept"
        );
        assert!(fence.len() > 40, "longer than the longest run: {fence}");
    }
    assert!(md.contains(" (output left out: see the results file)"));
    assert!(md.contains("- … and "), "at most 50 trials listed");
}

/// Only gating metrics carry ❌/⚠️/🟢 (and a colour): an informative metric
/// beyond its threshold, improved, or unchanged says so in plain words.
#[test]
fn informative_metrics_carry_no_tier() {
    let mut c = cases::mixed();
    let informative = |m: &benchgate::compare::MetricComparison| !m.gating;
    for m in &mut c.cmp.metrics {
        if m.metric == "peak_rss_bytes" {
            // Beyond its fail threshold: `compare` warns on an informative metric.
            m.tier = Tier::Warn;
        }
    }
    let mut p999 = metric(
        "put-1mib",
        "hyper",
        "latency_p999_us",
        Verdict::Improved,
        Tier::Pass,
        Some(-0.2),
    );
    p999.gating = false;
    c.cmp.metrics.push(p999);
    let md = comment(&c);
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.contains("peak\\_rss\\_bytes") || l.contains("latency\\_p999\\_us"))
        .collect();
    assert!(rows.len() >= 4, "table and reasons rows: {rows:?}");
    for r in &rows {
        for mark in ["❌", "⚠️", "🟢", "🔸", "➖", "❔", "(warn)"] {
            assert!(!r.contains(mark), "{mark} in {r}");
        }
    }
    assert!(md.contains(
        "| 24.0MiB → 30.0MiB | +25.0% [+20.8%, +28.7%] | ±3.1% | regressed (informative) |"
    ));
    assert!(md.contains("| ±3.1% | improved (informative) |"), "{md}");
    // Gating rows keep theirs.
    assert!(md.contains("| ±3.1% | ❌ regressed |"));
    assert!(md.contains("| ±3.1% | ⚠️ regressed (warn) |"));
    assert!(md.contains("| ±3.1% | 🟢 improved |"));

    let term = terminal::render_comparison(&c.cmp, true, Width::Wide);
    for l in term.lines().filter(|l| l.contains("(info)")) {
        assert!(!l.contains("\x1b[3"), "no colour: {l:?}");
        assert!(!l.contains("(warn)"), "{l:?}");
    }
    assert!(term.contains("regressed (informative)"));
    assert!(term.contains("improved (informative)"));
    assert!(c.cmp.metrics.iter().any(informative));
}

/// Medians that move one way beside a change that points the other: the
/// change is marked and the mark explained, paired (side by side) and not.
#[test]
fn medians_and_a_change_that_disagree_are_marked() {
    for paired in [true, false] {
        let mut c = if paired {
            cases::side_by_side()
        } else {
            cases::mixed()
        };
        let at = c
            .cmp
            .metrics
            .iter()
            .position(|m| m.metric == "throughput_rps")
            .unwrap();
        let m = &mut c.cmp.metrics[at];
        // The issue's `266 → 288 req/s | -7.4%`.
        m.baseline_median = Some(266.0);
        m.current_median = Some(288.0);
        m.change = Some(-0.074);
        m.ci_low = Some(-0.116);
        m.ci_high = Some(-0.037);
        let md = comment(&c);
        let change = if paired { "paired change" } else { "change" };
        assert!(
            md.lines()
                .filter(|l| l.starts_with("| client"))
                .all(|l| l.contains(&format!("(medians) | {change} [CI] |"))),
            "{md}"
        );
        let marked: Vec<&str> = md.lines().filter(|l| l.contains('†')).collect();
        assert_eq!(marked.len(), 2, "the row and the note: {marked:?}");
        assert!(
            marked[0].contains("266 req/s → 288 req/s | -7.4% [-11.6%, -3.7%] † |"),
            "{}",
            marked[0]
        );
        assert!(
            marked[1].starts_with(&format!(
                "† The medians and the {change} point in opposite directions: the gate decides on the {change}"
            )),
            "{}",
            marked[1]
        );
        let term = terminal::render_comparison(&c.cmp, false, Width::Wide);
        let marked: Vec<&str> = term.lines().filter(|l| l.contains('†')).collect();
        assert_eq!(marked.len(), 2, "{term}");
        assert!(marked[0].contains("-7.4% [-11.6%, -3.7%] †"), "{term}");
        assert!(marked[1].starts_with("† The medians and the"), "{term}");
        assert!(term
            .lines()
            .nth(3)
            .unwrap()
            .contains(&format!("{change} [CI]")));
    }
    // Agreeing rows carry no mark and no note.
    let md = comment(&cases::mixed());
    assert!(!md.contains('†'), "{md}");
    let side_by_side = comparison("side_by_side", &cases::mixed().current, None, vec![]);
    assert!(!terminal::render_comparison(&side_by_side, false, Width::Wide).contains('†'));
}

/// A run compared with nothing (`run --markdown/--summary` without a
/// baseline): the run's tables, the same figures as the terminal's, and a
/// plain statement that nothing was compared and how to compare.
#[test]
fn a_run_compared_with_nothing_shows_its_tables() {
    let c = cases::mixed();
    let opts = MarkdownOptions::default();
    let md = markdown::render_run(&c.current, &opts);
    assert_balanced(&md);
    assert_inert(&md);
    assert!(
        md.starts_with("## benchgate: measured, nothing compared\n"),
        "{md}"
    );
    assert!(md.contains("**Nothing to compare**"), "{md}");
    assert!(md.contains(markdown::HOW_TO_COMPARE), "{md}");
    for needle in [
        "`--baseline FILE`",
        "`[compare]`",
        "`--side-by-side CLIENT`",
    ] {
        assert!(markdown::HOW_TO_COMPARE.contains(needle), "{needle}");
    }
    // A table per scenario; each client's figures as the terminal shows them.
    let term = terminal::render(&c.current, false, Width::Wide);
    for cell in &c.current.results {
        let heading = format!("### {}\n", cell.scenario);
        assert_eq!(md.matches(&heading).count(), 1, "{heading}");
        let line = term
            .lines()
            .find(|l| l.starts_with(&cell.scenario) && l.contains(&format!(" {} ", cell.client)))
            .unwrap();
        let figures: Vec<&str> = line.split("  ").filter(|s| !s.is_empty()).skip(2).collect();
        let section = &md[md.find(&heading).unwrap()..];
        let section = &section[..section.find("\n\n<").unwrap()];
        let row = section
            .lines()
            .find(|l| l.starts_with(&format!("| {} ", cell.client)))
            .unwrap();
        let cells: Vec<&str> = row
            .split(" | ")
            .skip(1)
            .map(|s| s.trim_matches(['|', ' ']))
            .collect();
        let figures: Vec<String> = figures
            .iter()
            .map(|f| f.trim().replace('(', "\\(").replace(')', "\\)"))
            .collect();
        assert_eq!(cells, figures, "{row} vs {line}");
    }
    assert!(md.contains("| reqwest (1 failed) |"), "{md}");
    assert!(md.contains("Figures: median of 3 rounds"), "{md}");
    let summary = markdown::render_run_job_summary(&c.current, &opts);
    assert_eq!(summary, md, "small reports are identical");
    insta::assert_snapshot!(md);
}

/// A run whose cells failed says so first, and shows the programs' output.
#[test]
fn a_run_compared_with_nothing_shows_its_failures() {
    let c = cases::failed_with_output();
    let md = markdown::render_run(&c.current, &MarkdownOptions::default());
    assert_balanced(&md);
    assert_inert(&md);
    let head = &md[..md.find("### ").unwrap()];
    assert!(
        head.contains("> ❌ **Every trial failed** in 1 cell: nothing was measured there.\n> - get-22b / java: the program failed \\(exit status: 1\\) (its output is under “Failed trials” below)\n"),
        "{head}"
    );
    assert!(md.contains("| java (3 failed) | n/a |"), "{md}");
    assert_eq!(
        code_blocks(&md)
            .iter()
            .filter(|(f, _)| f.ends_with("text"))
            .count(),
        4,
        "{md}"
    );
}

/// However big the run, the comment fits its limit and says what it left out.
#[test]
fn a_big_run_compared_with_nothing_fits_the_comment() {
    let c = cases::huge(3000, |i| format!("scenario-{i:04}-{}", "x".repeat(40)));
    let opts = MarkdownOptions::default();
    let md = markdown::render_run(&c.current, &opts);
    assert!(md.chars().count() <= opts.max_chars);
    assert_balanced(&md);
    assert_inert(&md);
    assert!(md.contains("**Nothing to compare**"));
    assert!(md.contains("rows omitted"), "says what was left out");
    let summary = markdown::render_run_job_summary(&c.current, &opts);
    assert!(summary.len() <= markdown::MAX_JOB_SUMMARY_BYTES);
    assert!(summary.len() > md.len());
}
