//! The subcommands as library functions: what `main.rs` calls. Each returns the
//! process exit code on success.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::cli::{CloudWatchArgs, CompareArgs, ReportArgs, RunArgs, ServeCliArgs};
use crate::compare::{self, Comparison, GateConfig};
use crate::config::{CompareSettings, MockScript, Suite};
use crate::publish::cloudwatch_limits::{name_problem, NameKind};
use crate::report;
use crate::results::RunResults;
use crate::runner::extend::{Against, Extend};
use crate::runner::{self, RunOptions};

/// Picks the suite: `--config`, else ./benchgate.toml, else the default suite.
pub fn load_suite(config: Option<&Path>) -> anyhow::Result<Suite> {
    match config {
        Some(path) => Ok(Suite::from_file(path)?),
        None if Path::new("benchgate.toml").exists() => {
            Ok(Suite::from_file(Path::new("benchgate.toml"))?)
        }
        None => Ok(Suite::default_suite()),
    }
}

/// Keeps only the named scenarios (`--scenario`, repeatable; empty: all of them).
pub fn select_scenarios(suite: &mut Suite, names: &[String]) -> anyhow::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    for name in names {
        anyhow::ensure!(
            suite.scenarios.iter().any(|s| &s.name == name),
            "--scenario {name:?}: no such scenario in {}; it has: {}",
            suite.source,
            suite
                .scenarios
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    suite.scenarios.retain(|s| names.contains(&s.name));
    Ok(())
}

/// `benchgate run`.
pub fn run(args: RunArgs) -> anyhow::Result<u8> {
    let mut suite = load_suite(args.config.as_deref())?;
    if let Some(rounds) = args.rounds {
        anyhow::ensure!(
            (1..=100).contains(&rounds),
            "--rounds {rounds}: use a value from 1 to 100"
        );
        suite.run.rounds = rounds;
    }
    if args.no_pin {
        suite.run.pin = false;
    }
    select_scenarios(&mut suite, &args.scenarios)?;
    let mock = (!args.mock_latencies_us.is_empty()).then(|| MockScript {
        latencies_us: args.mock_latencies_us.clone(),
        error_every: args.mock_error_every,
        response_bytes: 22,
    });
    let mut opts = RunOptions {
        out: args.out.clone(),
        mock,
        exe: current_exe()?,
        quiet: args.quiet,
        extend: None,
    };
    if !args.quiet {
        eprintln!(
            "benchgate: running {} ({} scenarios, {} rounds), results to {}",
            suite.source,
            suite.scenarios.len(),
            suite.run.rounds,
            args.out.display()
        );
    }
    // Read the baseline before spending minutes on the run.
    let baseline = match &args.baseline {
        Some(path) => Some(RunResults::read(path)?),
        None => None,
    };
    if let Some(client) = &args.side_by_side {
        check_client(
            client,
            &suite
                .clients
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            &suite.source,
        )?;
    }
    // The comparison that follows the run (or the config's `[compare]`) also
    // decides, during it, whether a scenario needs more rounds (`[run]
    // max_rounds`).
    let against = match (&baseline, &args.side_by_side, &suite.compare) {
        (Some(b), _, _) => Some(Against::Baseline(Box::new(b.clone()))),
        (None, Some(client), _) => Some(Against::SideBySide {
            client: Some(client.clone()),
            server: None,
        }),
        (None, None, Some(c)) => Some(Against::SideBySide {
            client: c.baseline_client.clone(),
            server: c.baseline_server.clone(),
        }),
        (None, None, None) => None,
    };
    opts.extend = against.map(|against| Extend {
        against,
        gate: suite.gate.clone(),
    });
    let results = runner::run(&suite, &opts)?;
    print!(
        "{}",
        report::terminal::render(&results, report::terminal::color_stdout())
    );
    if let Some(signal) = runner::interrupt::received() {
        // Partial results gate nothing and export nothing.
        eprintln!(
            "benchgate: stopped by {}; the results measured so far are in {}{}",
            signal.name(),
            args.out.display(),
            if results.interrupted.is_some() {
                " (marked interrupted)"
            } else {
                ""
            }
        );
        return Ok(signal.exit_code());
    }
    // The comparison decided above (`--baseline`, `--side-by-side`, or the
    // config's `[compare]`), now on the whole run.
    let comparison = match &opts.extend {
        Some(extend) => extend.against.compare(&results, &suite.gate),
        None => {
            write_exports(&results, &args.outputs)?;
            return Ok(0);
        }
    };
    let sides = Sides {
        current: &results,
        baseline: baseline.as_ref(),
    };
    finish_comparison(&comparison, sides, args.json.as_deref(), &args.outputs)
}

/// A run stopped by SIGINT/SIGTERM compares like any other (its finished
/// trials are real), but the reader should know it is partial.
fn warn_if_partial(run: &RunResults, path: &std::path::Path) {
    if let Some(signal) = &run.interrupted {
        eprintln!(
            "benchgate: warning: {} is a partial run (stopped by {}): only its finished trials are compared; re-run it for a full comparison",
            path.display(),
            signal.escape_debug()
        );
    }
}

/// `benchgate compare`.
pub fn compare(args: CompareArgs) -> anyhow::Result<u8> {
    let current = RunResults::read(&args.current)?;
    warn_if_partial(&current, &args.current);
    let (gate, settings): (GateConfig, Option<CompareSettings>) = match &args.config {
        Some(path) => {
            let suite = Suite::from_file(path)?;
            (suite.gate, suite.compare)
        }
        None => (current.config.gate.clone(), current.config.compare.clone()),
    };
    let mut baseline = None;
    let comparison = match (&args.baseline, &args.side_by_side) {
        (Some(path), _) => {
            let b = baseline.insert(RunResults::read(path)?);
            warn_if_partial(b, path);
            compare::compare(Some(b), &current, &gate)
        }
        (None, side) => {
            let (client, server) = match (side, &args.side_by_side_server) {
                (None, None) => settings
                    .map(|s| (s.baseline_client, s.baseline_server))
                    .unwrap_or_default(),
                (c, s) => (c.clone(), s.clone()),
            };
            if client.is_none() && server.is_none() {
                anyhow::bail!(
                    "nothing to compare {} with: give --baseline FILE, or --side-by-side CLIENT or --side-by-side-server SERVER (or set [compare] baseline_client / baseline_server in the config)",
                    args.current.display()
                );
            }
            let source = args.current.display().to_string();
            if let Some(client) = &client {
                let clients: Vec<&str> = current
                    .config
                    .clients
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect();
                check_client(client, &clients, &source)?;
            }
            if let Some(server) = &server {
                let servers: Vec<&str> = current
                    .config
                    .servers
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect();
                anyhow::ensure!(
                    servers.contains(&server.as_str()),
                    "--side-by-side-server {server:?}: {source} has no server under test of that name; it has: {}",
                    if servers.is_empty() { "none".to_string() } else { servers.join(", ") }
                );
            }
            let base = compare::SideBySide {
                client: client.as_deref(),
                server: server.as_deref(),
            };
            compare::compare_side_by_side_with(&current, base, &gate)
        }
    };
    let sides = Sides {
        current: &current,
        baseline: baseline.as_ref(),
    };
    finish_comparison(&comparison, sides, args.json.as_deref(), &args.outputs)
}

fn check_client(client: &str, clients: &[&str], source: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        clients.contains(&client),
        "--side-by-side {client:?}: {source} has no client of that name; it has: {}",
        clients.join(", ")
    );
    Ok(())
}

/// The two runs behind a comparison (side by side: only `current`).
#[derive(Clone, Copy)]
struct Sides<'a> {
    current: &'a RunResults,
    baseline: Option<&'a RunResults>,
}

/// Prints the comparison, writes the outputs asked for, and returns the gate's
/// exit code.
fn finish_comparison(
    c: &Comparison,
    sides: Sides<'_>,
    json: Option<&Path>,
    outputs: &ReportArgs,
) -> anyhow::Result<u8> {
    if let Some(path) = json {
        write_file(path, &report::json::render(c), "the comparison JSON")?;
    }
    let opts = report::markdown::MarkdownOptions::default();
    if let Some(path) = &outputs.markdown {
        let body = report::markdown::render(c, sides.current, sides.baseline, &opts);
        write_file(path, &body, "the PR comment")?;
    }
    if let Some(path) = &outputs.summary {
        let body = report::markdown::render_job_summary(c, sides.current, sides.baseline, &opts);
        if path.as_os_str() == "-" {
            let target = std::env::var_os("GITHUB_STEP_SUMMARY").ok_or_else(|| {
                anyhow::anyhow!("--summary -: GITHUB_STEP_SUMMARY is not set; name a file instead")
            })?;
            use std::io::Write as _;
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&target)
                .and_then(|mut f| f.write_all(body.as_bytes()))
                .with_context(|| "appending the job summary to $GITHUB_STEP_SUMMARY")?;
        } else {
            write_file(path, &body, "the job summary")?;
        }
    }
    write_exports(sides.current, outputs)?;
    print!(
        "{}",
        report::terminal::render_comparison(c, report::terminal::color_stdout())
    );
    Ok(c.exit_code)
}

/// github-action-benchmark JSON and `.hgrm` files, when `--export-dir` is given.
fn write_exports(results: &RunResults, outputs: &ReportArgs) -> anyhow::Result<()> {
    let Some(dir) = &outputs.export_dir else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let bench = report::export::github_action_benchmark(results);
    write_file(
        &dir.join("benchmark-bigger-is-better.json"),
        &bench.bigger_json(),
        "an export",
    )?;
    write_file(
        &dir.join("benchmark-smaller-is-better.json"),
        &bench.smaller_json(),
        "an export",
    )?;
    for f in report::export::hgrm_files(results).map_err(anyhow::Error::msg)? {
        write_file(&dir.join(&f.file_name), &f.text, "a histogram export")?;
    }
    Ok(())
}

fn write_file(path: &Path, text: &str, what: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {what} to {}", path.display()))
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
    })?;
    Ok(0)
}

pub(crate) fn current_exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe()
        .context("finding the benchgate executable to start the server and drivers")
}

/// `benchgate publish cloudwatch`. A failure to publish is a warning, a summary
/// line and exit code 2 for this command only: the results file and any gate
/// verdict drawn from it are untouched.
pub fn publish_cloudwatch(args: CloudWatchArgs) -> anyhow::Result<u8> {
    let results = RunResults::read(&args.results)?;
    let mut settings = match &args.config {
        Some(path) => Suite::from_file(path)?.publish,
        None => results.config.publish.clone(),
    }
    .and_then(|p| p.cloudwatch)
    .unwrap_or_default();
    if let Some(ns) = args.namespace {
        if let Some(p) = name_problem(NameKind::Namespace, &ns) {
            anyhow::bail!("--namespace {ns:?}: {p}");
        }
        settings.namespace = ns;
    }
    if let Some(r) = args.region {
        settings.region = Some(r);
    }
    let branch = match args.branch {
        Some(b) => b,
        None => branch_of(results.git.ref_name.as_deref()).with_context(|| {
            format!(
                "{} records no git branch; pass --branch NAME",
                args.results.display()
            )
        })?,
    };
    anyhow::ensure!(
        (1..=20).contains(&args.max_attempts),
        "--max-attempts {}: use a value from 1 to 20",
        args.max_attempts
    );
    let deadline = crate::config::units::parse_duration(&args.retry_deadline)
        .map_err(|e| anyhow::anyhow!("--retry-deadline {:?}: {e}", args.retry_deadline))?;
    let retry = crate::retry::RetryPolicy {
        max_attempts: args.max_attempts,
        base: std::time::Duration::from_millis(args.retry_base_ms.max(1)),
        deadline,
        ..Default::default()
    };
    publish_cloudwatch_with(&results, settings, branch, retry)
}

#[cfg(feature = "cloudwatch")]
fn publish_cloudwatch_with(
    results: &RunResults,
    settings: crate::config::CloudWatchSettings,
    branch: String,
    retry: crate::retry::RetryPolicy,
) -> anyhow::Result<u8> {
    use crate::publish::cloudwatch::{publish, PublishOptions};
    let opts = PublishOptions {
        settings,
        branch,
        retry,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let report = runtime.block_on(publish(results, &opts));
    for s in &report.skipped {
        eprintln!("benchgate: cloudwatch: skipped {s}");
    }
    println!("{}", report.summary());
    match &report.error {
        None => Ok(0),
        Some(e) => {
            eprintln!("benchgate: warning: publishing to CloudWatch failed: {e}");
            if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
                println!("::warning title=benchgate CloudWatch publish failed::{e}");
            }
            Ok(2)
        }
    }
}

#[cfg(not(feature = "cloudwatch"))]
fn publish_cloudwatch_with(
    _results: &RunResults,
    _settings: crate::config::CloudWatchSettings,
    _branch: String,
    _retry: crate::retry::RetryPolicy,
) -> anyhow::Result<u8> {
    anyhow::bail!(
        "this benchgate was built without the `cloudwatch` feature; build it with default features (cargo install benchgate) to publish to CloudWatch"
    )
}

/// The branch name in a git ref: `refs/heads/main` -> `main`.
fn branch_of(ref_name: Option<&str>) -> Option<String> {
    let r = ref_name?;
    let name = r
        .strip_prefix("refs/heads/")
        .or_else(|| r.strip_prefix("refs/tags/"))
        .unwrap_or(r);
    (!name.is_empty()).then(|| name.to_string())
}
