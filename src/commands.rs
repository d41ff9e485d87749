//! The subcommands as library functions: what `main.rs` calls. Each returns the
//! process exit code on success.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::cli::{CompareArgs, RunArgs, ServeCliArgs};
use crate::compare::{self, Comparison, GateConfig, GateOutcome, Verdict};
use crate::config::{CompareSettings, MockScript, Suite};
use crate::report;
use crate::results::RunResults;
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
    if !args.scenarios.is_empty() {
        for name in &args.scenarios {
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
        suite.scenarios.retain(|s| args.scenarios.contains(&s.name));
    }
    let mock = (!args.mock_latencies_us.is_empty()).then(|| MockScript {
        latencies_us: args.mock_latencies_us.clone(),
        error_every: args.mock_error_every,
        response_bytes: 22,
    });
    let opts = RunOptions {
        out: args.out.clone(),
        mock,
        exe: current_exe()?,
        quiet: args.quiet,
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
    let results = runner::run(&suite, &opts)?;
    print!(
        "{}",
        report::terminal::render(&results, report::terminal::color_stdout())
    );
    let comparison = match (&baseline, &args.side_by_side) {
        (Some(b), _) => compare::compare(Some(b), &results, &suite.gate),
        (None, Some(client)) => compare::compare_side_by_side(&results, client, &suite.gate),
        (None, None) => return Ok(0),
    };
    finish_comparison(&comparison, args.json.as_deref())
}

/// `benchgate compare`.
pub fn compare(args: CompareArgs) -> anyhow::Result<u8> {
    let current = RunResults::read(&args.current)?;
    let (gate, settings): (GateConfig, Option<CompareSettings>) = match &args.config {
        Some(path) => {
            let suite = Suite::from_file(path)?;
            (suite.gate, suite.compare)
        }
        None => (current.config.gate.clone(), current.config.compare.clone()),
    };
    let comparison = match (&args.baseline, &args.side_by_side) {
        (Some(path), _) => {
            let baseline = RunResults::read(path)?;
            compare::compare(Some(&baseline), &current, &gate)
        }
        (None, side) => {
            let client = side
                .clone()
                .or(settings.map(|s| s.baseline_client))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "nothing to compare {} with: give --baseline FILE, or --side-by-side CLIENT (or set [compare] baseline_client in the config)",
                        args.current.display()
                    )
                })?;
            let clients: Vec<&str> = current
                .config
                .clients
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            check_client(&client, &clients, &args.current.display().to_string())?;
            compare::compare_side_by_side(&current, &client, &gate)
        }
    };
    finish_comparison(&comparison, args.json.as_deref())
}

fn check_client(client: &str, clients: &[&str], source: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        clients.contains(&client),
        "--side-by-side {client:?}: {source} has no client of that name; it has: {}",
        clients.join(", ")
    );
    Ok(())
}

/// Prints the comparison, writes its JSON if asked, and returns the gate's exit code.
fn finish_comparison(c: &Comparison, json: Option<&Path>) -> anyhow::Result<u8> {
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(c).context("serializing the comparison")?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("writing the comparison to {}", path.display()))?;
    }
    print!("{}", plain_comparison(c));
    Ok(c.exit_code)
}

/// A minimal plain-text rendering of a comparison (the terminal renderer in
/// `report` replaces it): the outcome, then every gating metric and every
/// metric that changed.
pub fn plain_comparison(c: &Comparison) -> String {
    let outcome = match c.outcome {
        GateOutcome::Pass => "PASS",
        GateOutcome::Fail => "FAIL",
        GateOutcome::NoBaseline => "NO BASELINE",
        GateOutcome::NotComparable => "NOT COMPARABLE",
    };
    let mut out = format!(
        "gate: {outcome} ({} regressions, {} improvements, {} warnings; {} mode)\n",
        c.regressions, c.improvements, c.warnings, c.mode
    );
    for d in &c.environment_differences {
        out.push_str(&format!("  environment: {d}\n"));
    }
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:+.1}%", v * 100.0));
    let num = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    for m in c
        .metrics
        .iter()
        .filter(|m| m.gating || matches!(m.verdict, Verdict::Regressed | Verdict::Improved))
    {
        out.push_str(&format!(
            "  {:<24} {:<18} {:<20} {:>12} -> {:<12} {:>8} [{} .. {}] mde {:<8} {:?}/{:?}: {}\n",
            m.scenario.escape_debug().to_string(),
            m.client.escape_debug().to_string(),
            m.metric,
            num(m.baseline_median),
            num(m.current_median),
            pct(m.change),
            pct(m.ci_low),
            pct(m.ci_high),
            pct(m.mde),
            m.verdict,
            m.tier,
            m.reason.escape_debug()
        ));
    }
    out
}

/// `benchgate serve`.
pub fn serve(args: ServeCliArgs) -> anyhow::Result<u8> {
    crate::server::serve_main(crate::server::ServeArgs {
        listen: args.listen,
        tls_listen: args.tls_listen,
        no_tls: args.no_tls,
        threads: args.threads,
        exit_on_stdin_eof: args.exit_on_stdin_eof,
    })?;
    Ok(0)
}

fn current_exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe()
        .context("finding the benchgate executable to start the server and drivers")
}
