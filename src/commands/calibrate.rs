//! `benchgate calibrate`: run the suite N times against itself (A/A: same build,
//! same config), hand the runs to the pure analysis (`compare::calibrate`), print
//! the noise table and a ready-to-paste `[gate]` snippet, and with `--write`
//! set the config's `[gate]` thresholds in place, keeping its comments and
//! layout (`config::gate_edit`; re-parse, temp file, rename).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;

use crate::cli::CalibrateArgs;
use crate::commands::current_exe;
use crate::compare::calibrate::{self as cal, Calibration, Options};
use crate::compare::ComparisonMode;
use crate::config::{MockScript, Overrides, Suite, SuiteChoice, MAX_CONFIG_BYTES};
use crate::files::{shortened, SHOWN_CHARS};
use crate::orchestrate::RunOptions;
use crate::pipeline::{self, Lookup};
use crate::plan::{Asked, ComparisonPlan};
use crate::report::escape::fence;
use crate::results::RunResults;

/// `benchgate calibrate`.
pub fn calibrate(args: CalibrateArgs) -> anyhow::Result<u8> {
    // Runs made already (`--results`), each file read once.
    let given = if args.results.is_empty() {
        None
    } else {
        anyhow::ensure!(
            args.results.len() >= 2,
            "--results: give at least 2 results files (A/A runs of one config)"
        );
        let mut runs = Vec::new();
        for p in &args.results {
            let mut r = RunResults::read(p)?;
            if !args.scenarios.is_empty() {
                r.results.retain(|c| args.scenarios.contains(&c.scenario));
            }
            runs.push(r);
        }
        Some(runs)
    };
    let choice = SuiteChoice::for_command(args.config.as_deref());
    // Results files and no config of the user's to judge them by: the config
    // they ran (a base-vs-head kit's runs judged as the default suite would
    // be compared with one another, never within themselves).
    let recorded = match (&choice, &given) {
        (SuiteChoice::Builtin, Some(runs)) => {
            crate::stdoutln!(
                "note: no --config and no ./benchgate.toml: the runs are judged by the config {} recorded",
                crate::report::untrusted::for_log(&args.results[0].display().to_string())
            );
            Some(runs[0].config.clone())
        }
        _ => None,
    };
    let suite = match recorded {
        Some(suite) => suite,
        None => choice.load()?,
    }
    .with_overrides(&Overrides {
        no_pin: args.no_pin,
        scenarios: args.scenarios.clone(),
        ..Overrides::default()
    })?;
    let config_path = choice.path().map(Path::to_path_buf);
    if args.write && config_path.is_none() {
        anyhow::bail!("--write needs a config file to rewrite: pass --config FILE (the built-in suite has none)");
    }
    let plan = ComparisonPlan::resolve(Asked::default(), &suite, &suite, &suite.source)?;
    let runs = match given {
        Some(runs) => runs,
        None => {
            anyhow::ensure!(
                (2..=100).contains(&args.runs),
                "--runs {}: use a value from 2 to 100 (every pair of runs is compared)",
                args.runs
            );
            suite.check_runnable("benchgate calibrate")?;
            run_suite(&suite, &Lookup::new(plan.clone(), None), &args)?
        }
    };
    // A config that compares within the run (side by side, base vs head):
    // each run is an A/A comparison of its own, and the thresholds are the
    // ones its budget can check; otherwise the noise between separate runs.
    let calibration = if plan.mode.is_some_and(ComparisonMode::paired) {
        let note = format!(
            "note: {} compares within the run ([compare]), paired by round: each run is an A/A comparison of its own, and the thresholds suggested are the smallest its rounds can check (docs/gate.md, \"Thresholds a runner can check\")",
            suite.source
        );
        crate::stdoutln!("{}", crate::report::untrusted::for_log(&note));
        let lookup = Lookup::new(plan.clone(), None);
        let comparisons: Vec<_> = runs
            .iter()
            .filter_map(|r| pipeline::judge(&lookup, r).comparison)
            .collect();
        cal::calibrate_paired(&runs, &comparisons, &plan.gate, Options::default())
    } else {
        cal::calibrate(&runs, &plan.gate, Options::default())
    };
    anyhow::ensure!(
        !calibration.cells.is_empty(),
        "no gating metric was measured by at least 2 runs; nothing to calibrate"
    );
    // Both name the results files' scenarios and clients.
    crate::stdout!("{}", fence(&cal::render_table(&calibration)));
    if let Some(table) = cal::windows::render(&calibration.windows) {
        crate::stdoutln!("\n{}", fence(&table));
    }
    let about = about(&runs);
    crate::stdoutln!("\n{}", fence(&cal::gate_snippet(&calibration, &about)));
    if !suite.gate.overrides.is_empty() {
        crate::stdoutln!("note: the config has [[gate.override]] tables; they still apply where they name these metrics");
    }
    if args.write {
        let path = config_path.expect("checked above");
        write_config(&path, &calibration)?;
        crate::stdoutln!(
            "wrote the suggested thresholds into [gate] of {}",
            path.display()
        );
    }
    Ok(0)
}

/// ` of get-22b on Intel Xeon (2 cores), rounds 4`.
fn about(runs: &[RunResults]) -> String {
    let Some(r) = runs.first() else {
        return String::new();
    };
    let mut scenarios: Vec<&str> = r.results.iter().map(|c| c.scenario.as_str()).collect();
    scenarios.dedup();
    format!(
        " of {} on {} ({} cores), rounds {}",
        scenarios.join(", "),
        shortened(&r.environment.cpu_model, SHOWN_CHARS),
        r.environment.cores,
        r.config.run.rounds
    )
}

/// The A/A runs, each exactly `[run] rounds` (`lookup`'s plan is not
/// compared during them).
fn run_suite(
    suite: &Suite,
    lookup: &Lookup,
    args: &CalibrateArgs,
) -> anyhow::Result<Vec<RunResults>> {
    let scratch;
    let dir: &Path = match &args.keep_runs {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            d
        }
        None => {
            scratch = ScratchDir::new()?;
            &scratch.0
        }
    };
    let mock = (!args.mock_latencies_us.is_empty()).then(|| MockScript {
        latencies_us: args.mock_latencies_us.clone(),
        error_every: 0,
        response_bytes: 22,
        fail: None,
    });
    let knobs = crate::knobs::TestKnobs::from_process_env()?;
    let ci_commit = super::ci_commit();
    let started = Instant::now();
    let mut runs = Vec::new();
    for i in 1..=args.runs {
        if !args.quiet {
            let eta = if i > 1 {
                let per = started.elapsed().as_secs_f64() / f64::from(i - 1);
                format!(", about {:.0} s left", per * f64::from(args.runs - i + 1))
            } else {
                String::new()
            };
            crate::stderrln!("benchgate calibrate: A/A run {i} of {}{eta}", args.runs);
        }
        let opts = RunOptions {
            out: dir.join(format!("calibrate-run-{i}.json")),
            mock: mock.clone(),
            exe: current_exe()?,
            quiet: true,
            progress_bar: false,
            extend: None,
            shard: None,
            knobs: knobs.clone(),
            ci_commit: ci_commit.clone(),
            runner_image: super::runner_image(),
        };
        let out = opts.out.clone();
        let opts = pipeline::Options {
            shard: None,
            start: Path::new("."),
            run: opts,
            compared: false,
        };
        let run = pipeline::measure(suite.clone(), lookup, opts, &())
            .with_context(|| format!("A/A run {i}"))?
            .results;
        if let Some(signal) = &run.interrupted {
            anyhow::bail!(
                "A/A run {i} was stopped by {signal}; nothing calibrated (its partial results are in {})",
                out.display()
            );
        }
        runs.push(run);
    }
    Ok(runs)
}

/// Sets the suggestions in `[gate]` of the config at `path` (`config::gate_edit`,
/// comments and layout kept): the new text must parse, and its gate must hold
/// the suggested fail thresholds, before it replaces the file (temp file in the same
/// directory, then rename).
fn write_config(path: &Path, c: &Calibration) -> anyhow::Result<()> {
    let bytes = crate::files::read_untrusted(path, "config file", MAX_CONFIG_BYTES)?;
    let text = String::from_utf8(bytes)
        .with_context(|| format!("{} is not UTF-8 text; save it as UTF-8", path.display()))?;
    let name = path.display().to_string();
    let new = cal::rewrite_gate(&text, &name, &c.suggestions)?;
    let suite = Suite::from_toml(&new, &name).map_err(|e| {
        anyhow::anyhow!(
            "rewriting [gate] of {} would not parse ({e}); the file is unchanged: paste the snippet above by hand",
            path.display()
        )
    })?;
    for s in &c.suggestions {
        let got = suite.gate.metrics.iter().find(|g| g.metric == s.metric);
        anyhow::ensure!(
            got.and_then(|g| g.fail) == Some(s.fail),
            "rewriting [gate] of {} did not set {}; the file is unchanged: paste the snippet above by hand",
            path.display(),
            s.metric
        );
    }
    crate::files::write_atomic(path, new.as_bytes())
}

/// A scratch directory under the system temp dir, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> anyhow::Result<ScratchDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "benchgate-calibrate-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
