//! The subcommands as library functions: what `main.rs` calls. Each returns the
//! process exit code on success. The edge layer: command-line arguments become
//! a suite ([`SuiteChoice`], [`Overrides`]), a [`ComparisonPlan`] and the
//! report files asked for ([`output`]); CloudWatch publishing is in [`cloudwatch`].

pub mod calibrate;
pub mod changepoints;
pub mod cloudwatch;
pub mod history;
pub mod init;
pub mod merge;
pub mod output;

use std::path::PathBuf;

use anyhow::Context as _;

use crate::cli::{CompareArgs, RunArgs, ServeCliArgs};
use crate::config::{MockScript, Overrides, Suite, SuiteChoice};
use crate::knobs::TestKnobs;
use crate::orchestrate::{self, RunOptions};
use crate::pipeline::{self, Baseline, Lookup};
use crate::plan::{Asked, ComparisonPlan, GitBase, Otherwise};
use crate::report;
use crate::report::escape::{fence, warn_refused_histograms};
use crate::report::markdown::MarkdownOptions;
use crate::report::untrusted::for_log;
use crate::results::jmh::TrialUnit;
use crate::results::RunResults;

use crate::report::files::Sides;
pub use cloudwatch::publish_cloudwatch;
use output::{finish_comparison, report_files};

/// `benchgate run`: the pipeline's three stages in a row, presented on the
/// terminal.
pub fn run(args: RunArgs) -> anyhow::Result<u8> {
    let choice = SuiteChoice::for_command(args.config.as_deref());
    let suite = choice.load()?.with_overrides(&Overrides {
        rounds: args.rounds,
        budget: args.budget.clone(),
        no_pin: args.no_pin,
        scenarios: args.scenarios.clone(),
    })?;
    suite.check_runnable("benchgate run")?;
    let shard = match &args.shard {
        Some(text) => Some((text.parse()?, "--shard")),
        None => None,
    };
    let mock = (!args.mock_latencies_us.is_empty()).then(|| MockScript {
        latencies_us: args.mock_latencies_us.clone(),
        error_every: args.mock_error_every,
        response_bytes: 22,
        fail: None,
    });
    let opts = RunOptions {
        out: args.out.clone(),
        mock,
        exe: current_exe()?,
        quiet: args.quiet,
        progress_bar: output::progress_bar(),
        extend: None,
        shard: None,
        knobs: TestKnobs::from_process_env()?,
        ci_commit: ci_commit(),
        runner_image: runner_image(),
    };
    // Base vs head: the base commit checked out beside this one (removed when
    // `measured.base` drops, however the run ends) and its variants in the suite.
    let start = choice
        .path()
        .and_then(|p| p.parent())
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let asked = Asked {
        stored: args.baseline.is_some(),
        side_by_side_client: args.side_by_side.clone(),
        compare_base: args.compare_base.clone(),
        ..Asked::default()
    };
    // The baseline read before minutes are spent on the run; base vs head
    // gates with the base commit's `[gate]`.
    let baseline = match &args.baseline {
        Some(path) => Baseline::File(path),
        None => Baseline::None,
    };
    let lookup = pipeline::lookup(&suite, asked, choice.path(), baseline)?;
    let opts = pipeline::Options {
        shard,
        start: &start,
        run: opts,
        compared: true,
    };
    let measured = pipeline::measure(suite, &lookup, opts, &Terminal { args: &args })?;
    let results = &measured.results;
    if let Some(signal) = measured.interrupted {
        // Partial results gate nothing and export nothing.
        let line = format!(
            "benchgate: stopped by {}; the results measured so far are in {}{}",
            signal.name(),
            args.out.display(),
            if results.interrupted.is_some() {
                " (marked interrupted)"
            } else {
                ""
            }
        );
        crate::stderrln!("{}", for_log(&line));
        return Ok(signal.exit_code());
    }
    let Some(comparison) = pipeline::judge(&lookup, results).comparison else {
        // Nothing to compare: the markdown files (and exports) still show
        // the run, and with no gate to fail a cell that measured nothing is
        // the exit code.
        report_files(&args.outputs, args.json.as_deref())?
            .write_run(results, &MarkdownOptions::default())?;
        return Ok(failed_cells_code(results, &args.out));
    };
    let sides = Sides {
        current: results,
        baseline: lookup.plan.stored.as_deref(),
    };
    finish_comparison(&comparison, sides, args.json.as_deref(), &args.outputs)
}

/// `benchgate run` on the terminal: a line before the run, warnings on
/// stderr, the run's table on stdout.
struct Terminal<'a> {
    args: &'a RunArgs,
}

impl pipeline::Events for Terminal<'_> {
    fn starting(&self, suite: &Suite) {
        if self.args.quiet {
            return;
        }
        let line = format!(
            "benchgate: running {}{} ({} scenarios, {} rounds), results to {}",
            suite.source,
            self.args
                .shard
                .as_deref()
                .map_or(String::new(), |s| format!(", shard {s}")),
            suite.scenarios.len(),
            suite.run.rounds,
            self.args.out.display()
        );
        crate::stderrln!("{}", for_log(&line));
    }

    fn unreachable(&self, why: &str) {
        crate::stderrln!("{}", for_log(&format!("benchgate: warning: {why}")));
    }

    fn gate_note(&self, note: &str) {
        let line = format!("benchgate: {}", note.trim_start_matches("> "));
        crate::stderrln!("{}", for_log(&line));
    }

    fn measured(&self, results: Option<&RunResults>) {
        let Some(results) = results else {
            return;
        };
        let table = report::terminal::render(
            results,
            output::color_stdout(),
            output::table_width(self.args.outputs.wide),
        );
        crate::stdout!("{}", fence(&table));
    }
}

/// Longest line `run` prints per failed cell.
const FAILED_CELL_LINE_CHARS: usize = 300;

/// A run compared with nothing: 2 when every trial of some cell failed (it
/// measured nothing, which no gate will say), with one line per such cell on
/// stderr (its first failure on one line, cut); else 0. Anchor
/// cells gate nothing, here as in a comparison.
fn failed_cells_code(results: &RunResults, out: &std::path::Path) -> u8 {
    let failed: Vec<_> = results
        .results
        .iter()
        .filter(|c| !c.anchor)
        .filter_map(crate::compare::all_failed)
        .collect();
    if failed.is_empty() {
        return 0;
    }
    let line = format!(
        "benchgate: error: {} measured nothing (every trial failed); the results are in {}",
        match failed.len() {
            1 => "1 cell".to_string(),
            n => format!("{n} cells"),
        },
        out.display()
    );
    crate::stderrln!("{}", for_log(&line));
    for f in failed {
        let line = format!("every trial failed ({0} of {0}): {1}", f.trials, f.first);
        // A failure may quote a program's output: its lines joined into one
        // here, the rest of its controls shown escaped (`for_log`).
        let line = line
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l).trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let line = format!(
            "benchgate: error: {}",
            report::escape::truncate_chars(&line, FAILED_CELL_LINE_CHARS)
        );
        crate::stderrln!("{}", for_log(&line));
    }
    2
}

/// A run stopped by SIGINT/SIGTERM compares like any other (its finished
/// trials are real), but the reader should know it is partial.
fn warn_if_partial(run: &RunResults, path: &std::path::Path) {
    use crate::files::{shortened, SHOWN_CHARS};
    if let Some(signal) = &run.interrupted {
        let line = format!(
            "benchgate: warning: {} is a partial run (stopped by {}): only its finished trials are compared; re-run it for a full comparison",
            path.display(),
            shortened(signal, SHOWN_CHARS).escape_debug()
        );
        crate::stderrln!("{}", for_log(&line));
    }
}

/// `benchgate compare`.
pub fn compare(args: CompareArgs) -> anyhow::Result<u8> {
    // `--config` supplies the gate, `[compare]` and how JMH files are read
    // (`[jmh]`); else the run's own.
    let file = match &args.config {
        Some(path) => Some(Suite::from_file(path)?),
        None => None,
    };
    let trials = TrialUnit::of(&file.as_ref().map(|s| s.jmh).unwrap_or_default());
    let current = RunResults::read_as(&args.current, trials)?;
    warn_if_partial(&current, &args.current);
    warn_refused_histograms(&current, &args.current.display().to_string());
    let config = file.unwrap_or_else(|| current.config.clone());
    let baseline = match &args.baseline {
        Some(path) => {
            let b = RunResults::read_as(path, trials)?;
            warn_if_partial(&b, path);
            warn_refused_histograms(&b, &path.display().to_string());
            Some(b)
        }
        None => None,
    };
    let asked = Asked {
        stored: baseline.is_some(),
        side_by_side_client: args.side_by_side.clone(),
        side_by_side_server: args.side_by_side_server.clone(),
        compare_base: None,
        // A results file of a base-vs-head run holds both sides.
        git_base: GitBase::default(),
        otherwise: Otherwise::Refuse(format!(
            "nothing to compare {} with: give --baseline FILE, or --side-by-side CLIENT or --side-by-side-server SERVER (or set [compare] baseline_client / baseline_server in the config)",
            args.current.display()
        )),
    };
    let source = args.current.display().to_string();
    let plan = ComparisonPlan::resolve(asked, &config, &current.config, &source)?;
    let lookup = Lookup::new(plan, baseline);
    let comparison = pipeline::judge(&lookup, &current)
        .comparison
        .expect("a plan that compares nothing was refused above");
    let sides = Sides {
        current: &current,
        baseline: lookup.plan.stored.as_deref(),
    };
    finish_comparison(&comparison, sides, args.json.as_deref(), &args.outputs)
}

/// `benchgate serve`.
pub fn serve(args: ServeCliArgs) -> anyhow::Result<u8> {
    let added_delay = match &args.added_delay {
        Some(d) => crate::config::units::parse_duration(d)
            .map_err(|e| anyhow::anyhow!("--added-delay {d:?}: {e}"))?,
        None => std::time::Duration::ZERO,
    };
    crate::server::serve_main(crate::server::ServeArgs {
        added_delay,
        listen: args.listen,
        tls_listen: args.tls_listen,
        no_tls: args.no_tls,
        threads: args.threads,
        exit_on_stdin_eof: args.exit_on_stdin_eof,
        hyper_only: args.hyper_only,
    })?;
    Ok(0)
}

pub(crate) fn current_exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe()
        .context("finding the benchgate executable to start the server and drivers")
}

/// The commit the CI says the CLI's run measures (`GITHUB_SHA`,
/// `GITHUB_REF`), read from the process environment here, at the edge.
pub(crate) fn ci_commit() -> crate::results::GitInfo {
    orchestrate::git_info::from_ci(|name| std::env::var(name).ok())
}

/// The runner image the CI names (`ImageOS`, `ImageVersion`), read from the
/// process environment here, at the edge.
pub(crate) fn runner_image() -> Option<String> {
    crate::results::environment::runner_image(|name| std::env::var(name).ok())
}
