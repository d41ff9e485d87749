//! The benchgate binary: parse the command line, call the library, map the
//! outcome to an exit code (0 ok / gate passed, 1 gate failed, 2 error).

use std::process::ExitCode;

use benchgate::cli::{Cli, Command, PublishCommand};
use clap::Parser as _;

/// The static release binaries (musl) use mimalloc: musl's allocator costs the
/// built-in clients and the reference server far more CPU per request than
/// glibc's (Cargo.toml). Other builds keep the system allocator.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Whether what this process prints lands in a GitHub Actions log, where
    // untrusted text is fenced: decided here, once.
    benchgate::report::escape::set_actions_log(
        std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true"),
    );
    let cli = Cli::parse();
    // What the programs a run starts leave behind becomes benchgate's to end
    // (orchestrate::escapees).
    if matches!(
        cli.command,
        Command::Run(_) | Command::Calibrate(_) | Command::Action(_)
    ) {
        benchgate::orchestrate::escapees::adopt_orphans();
    }
    let result = match cli.command {
        Command::Init(args) => benchgate::commands::init::init(args),
        Command::Run(args) => benchgate::commands::run(args),
        Command::Merge(args) => benchgate::commands::merge::merge(args),
        Command::Compare(args) => benchgate::commands::compare(args),
        Command::Calibrate(args) => benchgate::commands::calibrate::calibrate(args),
        Command::Serve(args) => benchgate::commands::serve(args),
        Command::Publish(PublishCommand::Cloudwatch(args)) => {
            benchgate::commands::publish_cloudwatch(args)
        }
        Command::Action(args) => return ExitCode::from(benchgate::action::main(args.step)),
        Command::Changepoints(args) => benchgate::commands::changepoints::run(args),
        Command::History(args) => benchgate::commands::history::run(args),
        Command::Drive(args) => {
            benchgate::orchestrate::driver::drive_main(&args.spec, &args.out).map(|_| 0)
        }
    };
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            // The error may quote untrusted text (a results file's names, a
            // program's output).
            let message = format!("benchgate: error: {e:#}");
            benchgate::stderrln!("{}", benchgate::report::untrusted::for_log(&message));
            2
        }
    };
    // Whoever read stdout or stderr went away: the shell's code for that
    // (141), whatever the command had to say (`interrupt`).
    let pipe = benchgate::interrupt::Signal::Pipe;
    match benchgate::interrupt::received() {
        Some(s) if s == pipe => ExitCode::from(pipe.exit_code()),
        _ => ExitCode::from(code),
    }
}
