//! The subcommands as library functions: what `main.rs` calls. Each returns the
//! process exit code on success.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::cli::{RunArgs, ServeCliArgs};
use crate::config::{MockScript, Suite};
use crate::report;
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
    let results = runner::run(&suite, &opts)?;
    print!(
        "{}",
        report::terminal::render(&results, report::terminal::color_stdout())
    );
    Ok(0)
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
