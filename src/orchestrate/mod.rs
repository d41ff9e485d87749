//! `benchgate run`: the rounds, from a validated suite to a results file.
//!
//! Start the reference server in its own process (pinned to its own core), then
//! for every scenario run `rounds` rounds, each round one fresh trial process per
//! client, interleaved so machine drift hits every client alike, the order
//! counterbalanced (A B, then B A; more clients rotate: `rounds::round_order`).
//! With servers under test (`[[server]]`) the reference server is not started:
//! each round starts every server fresh and runs every client against it
//! (`rounds`). After every scenario the results file is rewritten, so a late
//! failure loses nothing. SIGINT/SIGTERM stop the run early ([`crate::interrupt`]):
//! the trial in progress is killed and recorded as failed, and the results file
//! keeps what was measured, marked `interrupted`. With `[run] anchor = true`
//! each round also measures the anchor (`rounds`, `config::anchor`).

pub mod base_gate;
pub mod base_tree;
mod budget;
pub mod capture;
mod child;
pub mod child_env;
pub mod command;
mod command_loop;
mod command_result;
pub mod control;
pub mod driver;
pub mod driver_loop;
pub mod escapees;
pub mod extend;
pub mod external;
pub mod failure;
pub mod fork;
pub mod git_info;
pub mod jmh;
mod markers;
pub mod progress;
mod rounds;
pub mod server_proc;
pub mod shard;
pub mod sut;
pub mod target;
pub mod trial;
mod trial_loop;
mod window_cpu;
pub mod window_loop;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::compare::looks::LookPlan;
use crate::config::{ClientKind, MockScript, Schedule, ServerTarget, Suite};
use crate::interrupt;
use crate::measure::limits;
use crate::measure::resources::allowed_cpus;
use crate::results::environment::Pinning;
use crate::results::{Environment, RunResults, SCHEMA_VERSION};
use progress::Progress;
use rounds::Rounds;
use server_proc::ServerProcess;

/// Options of one `benchgate run` beyond the suite itself.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub out: PathBuf,
    /// Replace every client's driver with this mock script (hidden flag).
    pub mock: Option<MockScript>,
    /// The benchgate executable to re-invoke for the server and drivers.
    pub exe: PathBuf,
    pub quiet: bool,
    /// A progress bar on stderr instead of a line per trial (the CLI on a
    /// terminal outside CI: the edge decides); nothing when `quiet`.
    pub progress_bar: bool,
    /// Extra rounds (up to `[run] max_rounds`) while this comparison is
    /// inconclusive; `None`: exactly `rounds`.
    pub extend: Option<extend::Extend>,
    /// `run --shard K/N`: recorded in the results header
    /// ([`shard::select`] has already cut the suite).
    pub shard: Option<crate::results::ShardInfo>,
    /// The test suite's hooks, read at the edge (none in a shipped build).
    pub knobs: crate::knobs::TestKnobs,
    /// The commit the CI says this run measures (`GITHUB_SHA`, `GITHUB_REF`,
    /// read at the edge: the CLI by [`git_info::from_ci`], the action from its
    /// context); git is asked for the rest.
    pub ci_commit: crate::results::GitInfo,
    /// The CI runner's image, for the environment fingerprint
    /// ([`crate::results::environment::runner_image`], read at the edge).
    pub runner_image: Option<String>,
}

/// Splits the allowed CPUs: the server gets the last, clients the rest.
pub fn plan_pinning(pin: bool) -> Pinning {
    split_cpus(pin, &allowed_cpus())
}

/// [`plan_pinning`] for the CPUs `cpus`: with two or more, the server gets the
/// last and the clients the rest; otherwise nothing is pinned.
fn split_cpus(pin: bool, cpus: &[usize]) -> Pinning {
    if pin && cpus.len() >= 2 {
        let (client, server) = cpus.split_at(cpus.len() - 1);
        Pinning {
            enabled: true,
            server_cpus: server.to_vec(),
            client_cpus: client.to_vec(),
        }
    } else {
        Pinning {
            enabled: false,
            server_cpus: vec![],
            client_cpus: vec![],
        }
    }
}

/// A duet's two lanes: the allowed CPUs `cpus` in two equal halves, one for
/// each side and its reference server (an odd CPU is left out: a larger
/// lane would not cancel when the sides swap over an odd number of rounds).
fn duet_lanes(cpus: &[usize]) -> anyhow::Result<[Vec<usize>; 2]> {
    anyhow::ensure!(
        cpus.len() >= 2,
        "[run] schedule = \"duet\" runs the two sides on CPUs of their own, and this process may use {} CPU(s) ({cpus:?}); \
         allow it two or more, or set schedule = \"sequential\"",
        cpus.len()
    );
    let half = cpus.len() / 2;
    Ok([cpus[..half].to_vec(), cpus[half..2 * half].to_vec()])
}

/// Runs the suite and writes the results file; returns the results.
///
/// While it runs, SIGINT and SIGTERM are recorded instead of fatal
/// ([`crate::interrupt`]); on one, the run stops early and returns the results so far
/// with `interrupted` set. The caller picks the exit code
/// ([`crate::interrupt::Signal::exit_code`]).
pub fn run(suite: &Suite, opts: &RunOptions) -> anyhow::Result<RunResults> {
    let _signals = interrupt::Handler::install().context("handling SIGINT and SIGTERM")?;
    let mut suite = suite.clone();
    if let Some(script) = &opts.mock {
        let script = MockScript {
            fail: opts.knobs.mock_fail.clone(),
            ..script.clone()
        };
        for c in &mut suite.clients {
            c.kind = ClientKind::Mock(script.clone());
        }
        if let Some(anchor) = &mut suite.run.anchor {
            anchor.client.kind = ClientKind::Mock(script.clone());
        }
    }
    check_open_files(&suite)?;
    if let Some(note) = crate::config::schedule::settle_cells(&mut suite)? {
        if !opts.quiet {
            crate::stderrln!("benchgate: note: {note}");
        }
    }
    // A duet's two sides each get half the CPUs (a lane) and a reference
    // server of their own pinned there; otherwise one server, the clients
    // beside it.
    let lanes = match suite.run.schedule {
        Schedule::Duet => Some(duet_lanes(&allowed_cpus())?),
        Schedule::Sequential | Schedule::Interleaved => None,
    };
    // (Recorded as servers and clients on all the lanes' CPUs: each side
    // runs on both, a lane a round.)
    let pinning = match &lanes {
        Some(lanes) => Pinning {
            enabled: true,
            server_cpus: lanes.concat(),
            client_cpus: lanes.concat(),
        },
        None => plan_pinning(suite.run.pin),
    };
    let client_threads = match (&lanes, pinning.enabled) {
        (Some([lane, _]), _) => lane.len(),
        (None, true) => pinning.client_cpus.len(),
        (None, false) => allowed_cpus().len(),
    }
    .max(1);
    // Against servers under test the reference server is not needed at all.
    let servers = match (&lanes, suite.servers.is_empty()) {
        (_, false) => Vec::new(),
        (Some(lanes), true) => (lanes.iter())
            .map(|lane| ServerProcess::start(&opts.exe, lane))
            .collect::<anyhow::Result<_>>()?,
        (None, true) => vec![ServerProcess::start(&opts.exe, &pinning.server_cpus)?],
    };
    let scratch = tempdir()?;
    // Ended before the scratch space goes: setup steps' daemons, orphans.
    let mut leftovers = escapees::RunEnd::default();

    let mut results = RunResults {
        schema_version: SCHEMA_VERSION,
        run_id: run_id(),
        started_at: now_rfc3339(),
        finished_at: None,
        git: git_info::detect(&opts.ci_commit),
        environment: Environment::detect(pinning.clone(), opts.runner_image.clone()),
        config: suite.clone(),
        results: vec![],
        interrupted: None,
        budget: Vec::new(),
        jmh: None,
        shard: opts.shard.clone(),
    };

    // Setup steps of command clients and servers under test run once, before
    // any round. A command client that cannot run (its setup failed, its
    // program is missing) stops the run before it measures anything: every
    // trial would fail alike. A base-side twin's or a server's failed setup
    // fails its trials, not the run: a base commit that does not build has no
    // baseline, a neutral verdict.
    let base_vs_head = opts
        .extend
        .as_ref()
        .is_some_and(|e| e.plan.base_ref().is_some());
    let head_client = |name: &str| !(base_vs_head && suite.is_base_variant(name));
    let mut setup_failed: BTreeMap<String, String> = BTreeMap::new();
    let mut server_setup_failed: BTreeMap<String, String> = BTreeMap::new();
    let setups = suite
        .clients
        .iter()
        .filter_map(|c| match &c.kind {
            ClientKind::Command(cmd) => Some(("client", &c.name, cmd.setup.as_ref()?, cmd.into())),
            _ => None,
        })
        .chain(suite.servers.iter().filter_map(|s| match &s.target {
            ServerTarget::Command(cmd) => {
                Some(("server", &s.name, cmd.setup.as_ref()?, cmd.into()))
            }
            ServerTarget::Url(_) => None,
        }));
    for (i, (kind, name, argv, place)) in setups.enumerate() {
        if interrupt::received().is_some() {
            break;
        }
        if !opts.quiet {
            let line = format!(
                "benchgate: setup for {kind} {}: {:?}",
                name.escape_debug(),
                argv
            );
            crate::stderrln!("{}", crate::report::untrusted::for_log(&line));
        }
        let log = scratch.path().join(format!("setup-{i}.log"));
        let setup = command::run_setup(argv, place, &log).map(|s| leftovers.keep(s));
        if let Err(e) = setup {
            if kind == "client" && head_client(name) {
                anyhow::bail!(
                    "client {name:?} cannot run, so nothing was measured: {e:#}\n\
                     Fix its setup (or what it needs) and run again"
                );
            }
            let failed = match kind {
                "client" => &mut setup_failed,
                _ => &mut server_setup_failed,
            };
            failed.insert(name.clone(), format!("{e:#}"));
        }
    }

    for c in &suite.clients {
        if let ClientKind::Command(cmd) = &c.kind {
            if head_client(&c.name) {
                command::find_program(cmd).with_context(|| {
                    format!("client {:?} cannot run, so nothing was measured", c.name)
                })?;
            }
        }
    }

    let rounds = Rounds {
        suite: &suite,
        exe: &opts.exe,
        pinning: &pinning,
        lanes: lanes.as_ref(),
        client_threads,
        scratch: scratch.path(),
        setup_failed: &setup_failed,
        server_setup_failed: &server_setup_failed,
        quiet: opts.quiet,
        extend: opts.extend.as_ref(),
        header: &results.clone(),
        logs: &failure::log_dir(&opts.out, &results.run_id),
        marker_lag: opts.knobs.marker_lag,
        close_lag: opts.knobs.close_lag,
    };
    let plan = progress::Plan {
        trials: rounds.total_trials(),
        expected: suite
            .scenarios
            .iter()
            .map(|s| shard::expected_time(s, &suite))
            .sum(),
        budget: suite.run.budget,
        rounds: suite.run.rounds,
        max_rounds: suite.run.max_rounds,
    };
    let mut progress = Progress::new(plan, opts.quiet, opts.progress_bar);
    let mut stopped = None;
    let run_budget = suite.run.budget.map(|total| budget::RunBudget {
        total,
        started: std::time::Instant::now(),
    });
    // Rounds past `rounds` are bought at planned looks, alpha split across
    // them, with or without a budget (without one, up to `max_rounds` alone):
    // a look after every round would be optional stopping.
    let compares = opts
        .extend
        .as_ref()
        .is_some_and(|e| e.plan.compares_during_run());
    let extra_rounds = compares && suite.run.max_rounds > suite.run.rounds;
    for (i, scenario) in suite.scenarios.iter().enumerate() {
        if let Some(signal) = interrupt::received() {
            stopped = Some(signal);
            break;
        }
        let share = match run_budget {
            Some(b) => Some(b.share(suite.scenarios.len() - i)),
            None => extra_rounds.then_some(budget::UNBOUNDED),
        };
        let mut spend = share.map(|share| {
            let (rounds, max_rounds) = (suite.run.rounds, suite.run.max_rounds);
            let looks = match opts.extend.as_ref() {
                Some(e) => LookPlan::new(rounds, max_rounds, e.plan.gate.alpha, |r| {
                    e.plan.smallest_p(r)
                }),
                None => LookPlan::new(rounds, max_rounds, 0.0, |_| 0.0),
            };
            budget::Spend::new(&scenario.name, share, (rounds, max_rounds), looks, compares)
        });
        let cells = match servers.is_empty() {
            false => rounds.reference(scenario, &servers, &mut progress, spend.as_mut()),
            true => rounds.servers(scenario, &mut progress, spend.as_mut()),
        };
        results.budget.extend(spend.map(budget::Spend::finish));
        // An interrupted scenario keeps only the cells that ran a trial.
        results
            .results
            .extend(cells.into_iter().filter(|c| !c.trials.is_empty()));
        stopped = interrupt::received();
        if stopped.is_some() {
            break;
        }
        results.write_atomic(&opts.out)?;
    }
    progress.done();
    if let Some(signal) = stopped {
        crate::stderrln!(
            "benchgate: {} received: stopped the run; the results file keeps the {} finished trial(s), marked interrupted",
            signal.name(),
            results
                .results
                .iter()
                .flat_map(|c| &c.trials)
                .filter(|t| t.failure.is_none())
                .count()
        );
    }
    results.interrupted = stopped.map(|s| s.name().to_string());
    results.finished_at = Some(now_rfc3339());
    results.write_atomic(&opts.out)?;
    Ok(results)
}

/// Fails before anything starts when the most connections a scenario opens
/// cannot all be open files of the driver and of the reference server (both
/// inherit this process's limit, raised here to the hard one; [`limits`]).
fn check_open_files(suite: &Suite) -> anyhow::Result<()> {
    let Some(s) = suite.scenarios.iter().max_by_key(|s| s.load.workers()) else {
        return Ok(());
    };
    let connections = u64::from(s.load.workers());
    let what = format!("scenario {:?} ({connections} connections)", s.name);
    limits::ensure_open_files(limits::open_files_needed(connections), &what)
        .map_err(anyhow::Error::msg)
}

fn tempdir() -> anyhow::Result<TempDir> {
    let path = std::env::temp_dir().join(format!("benchgate-{}-{}", std::process::id(), run_id()));
    std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
    Ok(TempDir(path))
}

/// A scratch directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

use crate::timer::clock::now_compact;
pub use crate::timer::clock::{now_rfc3339, now_rfc3339_micros};

/// A run id: UTC timestamp plus random suffix, e.g. `20261130T010203Z-3f9a1c`.
fn run_id() -> String {
    format!(
        "{}-{:06x}",
        now_compact(),
        rand::random::<u32>() & 0xff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_splits_cpus_when_possible() {
        // Whatever this machine has: the split covers exactly the allowed CPUs.
        let cpus = allowed_cpus();
        assert_eq!(plan_pinning(true), split_cpus(true, &cpus));
        let split = |cpus: &[usize]| {
            let p = split_cpus(true, cpus);
            (p.enabled, p.client_cpus, p.server_cpus)
        };
        assert_eq!(split(&[0, 1]), (true, vec![0], vec![1]));
        assert_eq!(split(&[0, 1, 2, 3]), (true, vec![0, 1, 2], vec![3]));
        assert_eq!(split(&[2, 5, 7]), (true, vec![2, 5], vec![7]), "sparse");
        assert_eq!(split(&[3]), (false, vec![], vec![]), "one CPU: no pinning");
        assert_eq!(split(&[]), (false, vec![], vec![]));
        assert_eq!(duet_lanes(&[0, 1]).unwrap(), [vec![0], vec![1]]);
        assert_eq!(duet_lanes(&[0, 2, 5]).unwrap(), [vec![0], vec![2]]);
        assert_eq!(duet_lanes(&[0, 1, 2, 3]).unwrap(), [vec![0, 1], vec![2, 3]]);
        let e = duet_lanes(&[3]).unwrap_err().to_string();
        assert!(
            e.contains("may use 1 CPU(s) ([3])") && e.contains("schedule = \"sequential\""),
            "{e}"
        );
        for pin in [split_cpus(false, &[0, 1, 2, 3]), plan_pinning(false)] {
            assert!(!pin.enabled && pin.server_cpus.is_empty() && pin.client_cpus.is_empty());
        }
    }
}
