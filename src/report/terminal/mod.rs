//! The terminal report: the run's table ([`run_table`], a row per (scenario,
//! client[, server]), each figure the median across rounds with its spread),
//! its legend, then failed trials and the environment; and the comparison
//! table ([`render_comparison`]).

mod compare;
mod fit;

pub use crate::report::run_table::SERVER_UNDER_TEST_NOTE;
pub use compare::render_comparison;

use std::fmt::Write as _;

use crate::files::{shortened, SHOWN_CHARS};
use crate::report::run_table::{self, Width};
use crate::results::RunResults;
use fit::{Column, Give};

/// Longest failure reason shown per trial: its first line and the output
/// tails it quotes (2 KiB each); a results file may hold 64 KiB.
const MAX_FAILURE_CHARS: usize = 8_000;

/// The widest line the legend is wrapped to: a CI log or an 120-column
/// terminal shows it unbroken.
const LINE: usize = 120;

/// `text` in lines of at most `width` characters, broken at spaces (a word
/// longer than that stays whole), continuation lines indented by two.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let line = lines.last_mut().expect("one line at least");
        let len = line.chars().count();
        if len > 2 && len + 1 + word.chars().count() > width {
            lines.push(format!("  {word}"));
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// Renders the results table. Names from the config are printed with control
/// characters escaped, so a name cannot move the cursor or forge lines.
pub fn render(results: &RunResults, color: bool, width: Width) -> String {
    let table = run_table::table(results, width);
    let columns: Vec<Column> = table
        .headers
        .iter()
        .map(|h| match *h {
            "scenario" | "client" => Column::new(h, false, Give::Cut(12)),
            // What a narrow table leaves out first when it is too wide.
            "conns" => Column::new(h, true, Give::Drop(1)),
            "peak rss" => Column::new(h, true, Give::Drop(2)),
            "p50" => Column::new(h, true, Give::Drop(3)),
            _ => Column::new(h, true, Give::Keep),
        })
        .collect();
    let rows: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|(c, cells)| {
            let mut r: Vec<String> = cells.iter().map(|s| s.escape_debug().to_string()).collect();
            if c.trials.iter().any(|t| !t.invalid.is_empty()) {
                r[1].push_str(" (invalid)");
            }
            r
        })
        .collect();
    let fitted = fit::fit(&columns, &rows, width);
    let (bold, reset) = if color {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("", "")
    };
    let mut out = String::new();
    let _ = writeln!(out, "{bold}{}{reset}", fitted.header());
    for r in &rows {
        let _ = writeln!(out, "{}", fitted.row(r));
    }
    out.push('\n');
    let line = match width {
        Width::Narrow(columns) => columns,
        Width::Wide => LINE,
    };
    for l in &table.legend {
        for piece in wrap(l, line) {
            let _ = writeln!(out, "{piece}");
        }
    }
    for c in &results.results {
        if let Some(note) = c.still_warming() {
            let _ = writeln!(
                out,
                "note: {} / {}: {note}",
                c.scenario.escape_debug(),
                c.label().escape_debug()
            );
        }
        for t in &c.trials {
            if let Some(f) = &t.failure {
                let _ = writeln!(
                    out,
                    "failed: {} / {} round {}: {}",
                    c.scenario.escape_debug(),
                    c.label().escape_debug(),
                    t.round,
                    crate::report::untrusted::quoted(&shortened(f, MAX_FAILURE_CHARS))
                );
            }
            if t.cpu_gone() {
                let _ = writeln!(
                    out,
                    "no cpu/req: {} / {} round {}: {}",
                    c.scenario.escape_debug(),
                    c.label().escape_debug(),
                    t.round,
                    crate::results::CPU_GONE
                );
            }
            for mark in &t.invalid {
                let _ = writeln!(
                    out,
                    "invalid: {} / {} round {}: {}",
                    c.scenario.escape_debug(),
                    c.label().escape_debug(),
                    t.round,
                    shortened(&mark.describe(), MAX_FAILURE_CHARS)
                );
            }
        }
    }
    out.push_str(&crate::report::spent::terminal(results));
    let e = &results.environment;
    let _ = writeln!(
        out,
        "{} ({} cores), {}, kernel {}, benchgate {}, pinning {}",
        shortened(&e.cpu_model, SHOWN_CHARS),
        e.cores,
        shortened(&e.os, SHOWN_CHARS),
        shortened(&e.kernel, SHOWN_CHARS),
        shortened(&e.benchgate_version, SHOWN_CHARS),
        if e.pinning.enabled {
            format!(
                "server cpu {:?} / clients {:?}",
                e.pinning.server_cpus, e.pinning.client_cpus
            )
        } else {
            "off".into()
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use crate::report::run_table::Width;
    use crate::results::synthetic;

    fn render(edit: impl Fn(&mut crate::metric::TrialMetrics)) -> String {
        let mut m = crate::metric::every_field_measured();
        edit(&mut m);
        super::render(&synthetic::one_cell_run(m), false, Width::Wide)
    }

    /// Issue 52, point 6: a trial whose CPU was gone at its window's close
    /// is named, not left out silently.
    #[test]
    fn a_trial_without_its_cpu_is_named() {
        let mut run = synthetic::one_cell_run(crate::metric::every_field_measured());
        assert!(!super::render(&run, false, Width::Wide).contains("no cpu/req"));
        let t = &mut run.results[0].trials[1];
        t.cpu_source = Some(crate::results::CpuSource::Gone);
        t.metrics.as_mut().unwrap().cpu_us_per_request = None;
        let out = super::render(&run, false, Width::Wide);
        let c = &run.results[0];
        let line = format!(
            "\nno cpu/req: {} / {} round 2: {}\n",
            c.scenario,
            c.label(),
            crate::results::CPU_GONE
        );
        assert!(out.contains(&line), "{out}");
    }

    /// Issue 52, point 7: with several windows per fork, the report says
    /// forks × windows per side and the time in windows of the time used.
    #[test]
    fn forks_times_windows_and_the_time_used_are_said() {
        let mut run = synthetic::one_cell_run(crate::metric::every_field_measured());
        assert!(!super::render(&run, false, Width::Wide).contains("windows"));
        run.config.run.windows = 4;
        for t in &mut run.results[0].trials {
            t.windows = Some(crate::results::ForkWindows {
                count: 4,
                ..Default::default()
            });
            t.window_actual_s = Some(2.4);
        }
        let out = super::render(&run, false, Width::Wide);
        let line = "\neach side: 3 forks × 4 windows (the fork is the unit); 7.2s in windows of 60.0s used (12%)\n";
        assert!(out.contains(line), "{out}");
        let md = crate::report::markdown::render_run(&run, &Default::default());
        assert!(md.contains("3 forks × 4 windows"), "{md}");
    }

    /// Start-up gets its columns only when some cell measured it (results
    /// from before it existed render as they did).
    #[test]
    fn start_up_columns_only_when_measured() {
        let with = render(|_| {});
        let header = with.lines().next().unwrap();
        assert!(header.contains("  startup  startup cpu  "), "{with}");
        let row = with.lines().nth(1).unwrap();
        assert!(row.contains("  29.0ms       30.0ms  "), "{with}");
        let without = render(|m| (m.startup_ms, m.startup_cpu_ms) = (None, None));
        assert!(!without.contains("startup"), "{without}");
    }

    /// The starvation columns likewise (two of them: the client's run-delay
    /// share and the server's run delay), with their legend; within them, a
    /// figure not measured reads n/a.
    #[test]
    fn starvation_columns_only_when_measured() {
        let with = render(|m| m.server_run_delay_ms = None);
        let header = with.lines().next().unwrap();
        assert!(header.ends_with("cpu wait  srv cpu wait"), "{with}");
        let row = with.lines().nth(1).unwrap();
        assert!(row.ends_with("3400.00%           n/a"), "{with}");
        assert!(
            with.contains("\ncpu wait = the client's run delay"),
            "{with}"
        );
        let without = render(|m| {
            m.run_delay_ms = None;
            m.run_delay_share = None;
            m.involuntary_context_switches = None;
            m.server_run_delay_ms = None;
            m.host_steal_ms = None;
        });
        assert!(!without.contains("cpu wait"), "{without}");
    }

    /// The default table fits 120 columns with the default suite's names
    /// (issue 32, point 4), and keeps the core figures; `--wide` has every
    /// column, and a spread past ±999% is capped in display.
    #[test]
    fn the_default_table_fits_120_columns() {
        let run = synthetic::run(crate::config::Suite::default_suite(), 5, |_, _, r| {
            let mut m = synthetic::metrics(12_345.0, 1234.0, 12.3);
            m.startup_ms = Some(29.0);
            m.run_delay_share = Some(0.25);
            m.server_run_delay_ms = Some(3.0);
            if r == 1 {
                m.cpu_us_per_request = Some(m.cpu_us_per_request.unwrap() * 500.0);
            }
            Some(m)
        });
        let narrow = super::render(&run, false, Width::narrow());
        let widest = narrow.lines().map(|l| l.chars().count()).max().unwrap();
        let header = narrow.lines().next().unwrap();
        assert!(widest <= 120, "{widest} columns:\n{narrow}");
        for h in [
            "req/s", "p50", "p99", "errors", "cpu/req", "peak rss", "conns",
        ] {
            assert!(header.contains(h), "{header}");
        }
        for h in ["p99.9", "threads", "startup", "cpu wait"] {
            assert!(!header.contains(h), "{header}");
        }
        let wide = super::render(&run, false, Width::Wide);
        let header = wide.lines().next().unwrap();
        for h in ["p99.9", "max", "threads", "startup", "cpu wait"] {
            assert!(header.contains(h), "{header}");
        }
        // One stray round of five: the interquartile range ignores it.
        assert!(!narrow.contains("±>999%"), "{narrow}");
    }

    /// Free text of a results file (4 KiB of each field, 64 KiB of a
    /// failure reason, as the file may hold) is printed shortened.
    #[test]
    fn free_text_of_a_read_file_is_printed_shortened() {
        let mut r = synthetic::one_cell_run(crate::metric::every_field_measured());
        r.environment.cpu_model = "C".repeat(4096);
        r.environment.os = "O".repeat(4096);
        r.environment.kernel = "K".repeat(4096);
        r.run_id = "R".repeat(4096);
        r.git.sha = None;
        r.git.ref_name = Some("G".repeat(4096));
        r.results[0].trials[0].failure = Some("F".repeat(64 * 1024));
        let longest = |out: &str, c: char| out.split(|x| x != c).map(str::len).max().unwrap_or(0);
        let out = super::render(&r, false, Width::Wide);
        for c in ['C', 'O', 'K'] {
            assert_eq!(longest(&out, c), crate::files::SHOWN_CHARS - 1, "{c}");
        }
        assert_eq!(longest(&out, 'F'), super::MAX_FAILURE_CHARS - 1);
        let cmp = crate::compare::compare(Some(&r), &r, &r.config.gate);
        let out = super::render_comparison(&cmp, false, Width::Wide);
        for c in ['R', 'G'] {
            assert_eq!(
                longest(&out, c),
                crate::files::SHOWN_CHARS - 1,
                "{c}: {out}"
            );
        }
    }
}
