//! Command-line definitions (clap). Parsing only: `main.rs` maps these onto the
//! library.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Benchmark HTTP clients against a local reference server and gate pull
/// requests on the result.
#[derive(Debug, Parser)]
#[command(name = "benchgate", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a starting kit for the project in a directory: a commented
    /// benchgate.toml (a command client with bench/ scripts for Maven, Gradle,
    /// Python and Node; the built-in clients otherwise), and with --workflow
    /// the GitHub workflows. Fetches nothing; never overwrites a file.
    Init(InitArgs),
    /// Run the benchmark suite and write the results file.
    Run(RunArgs),
    /// Merge the results files of every shard of one suite (`run --shard K/N`)
    /// into one results file.
    Merge(MergeArgs),
    /// Compare two results files (or two clients of one) and apply the gate.
    /// Exit code: 0 the gate passed, 1 it failed, 2 an error.
    Compare(CompareArgs),
    /// Run the suite N times against itself (A/A), measure each gating metric's
    /// noise and minimum detectable effect, and suggest `[gate]` thresholds.
    Calibrate(CalibrateArgs),
    /// Run the reference server in the foreground.
    Serve(ServeCliArgs),
    /// Publish a results file (e.g. to CloudWatch). Never changes a gate verdict.
    #[command(subcommand)]
    Publish(PublishCommand),
    /// The GitHub Action's entrypoint (the composite action's steps, the
    /// container image): reads `INPUT_*` and `GITHUB_*` from the environment
    /// (see docs/action.md). Exit code: 0 pass, 1 gate failed, 2 error.
    #[command(hide = true)]
    Action(ActionArgs),
    /// Internal: run one trial in this process (started by `run`).
    #[command(name = "__drive", hide = true)]
    Drive(DriveArgs),
    /// Change points of series read from stdin, one JSON array of numbers per
    /// line; one JSON line of change points per series on stdout (the
    /// building block of drift detection; scripts/changepoint-vs-otava.py).
    #[command(hide = true)]
    Changepoints(ChangepointArgs),
    /// Change points in the stored baselines of a branch: per gating metric
    /// and cell, where its level shifted and stayed shifted (slow drift that
    /// no single comparison sees), with the commit, size and p-value.
    History(HistoryArgs),
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project's directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// The kit to write, instead of the one for the files found in DIR
    /// (pom.xml naming jmh-core: jmh; pom.xml: maven; build.gradle*,
    /// settings.gradle*: gradle; pyproject.toml, requirements.txt, setup.py:
    /// python; package.json: node; none of them: builtin).
    #[arg(long, value_enum, value_name = "KIND")]
    pub kind: Option<ProjectKind>,
    /// Also write the pull-request and main-branch workflows
    /// (.github/workflows/benchgate-pr.yml, benchgate-main.yml), at the root
    /// of the git repository DIR lies in, pointing into DIR.
    #[arg(long)]
    pub workflow: bool,
}

/// See [`InitArgs::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProjectKind {
    Maven,
    Gradle,
    Python,
    Node,
    /// A Maven JMH module: its `-rf json` result file gated, nothing run.
    Jmh,
    Builtin,
}

#[derive(Debug, Args)]
pub struct ChangepointArgs {
    #[command(flatten)]
    pub detect: DetectArgs,
}

/// How change points are searched (E-divisive means, a permutation test).
#[derive(Debug, Args, Clone, Copy)]
pub struct DetectArgs {
    /// Significance level of each split.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Shuffles per permutation test.
    #[arg(long, default_value_t = 199)]
    pub permutations: usize,
    /// Fewest values on each side of a change point.
    #[arg(long, default_value_t = 3)]
    pub min_size: usize,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// A local baseline store (the directory of the action's
    /// `baseline-store: local:<dir>`).
    #[arg(long, value_name = "DIR", required_unless_present = "repository")]
    pub store: Option<PathBuf>,
    /// Read the data branch of this GitHub repository instead, through the
    /// API at $GITHUB_API_URL (default https://api.github.com) with the token
    /// in $GITHUB_TOKEN.
    #[arg(long, value_name = "OWNER/NAME", conflicts_with = "store")]
    pub repository: Option<String>,
    /// The data branch (with --repository).
    #[arg(long, value_name = "BRANCH", default_value = "benchgate-data")]
    pub data_branch: String,
    /// The branch whose stored baselines are read.
    #[arg(long, value_name = "BRANCH", default_value = "main")]
    pub branch: String,
    /// Read the newest N stored runs.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub last: usize,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the report as markdown (with a trend chart per drifting
    /// series) to this file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Exit 1 when a series drifts (its newest change point is for the worse).
    #[arg(long)]
    pub fail_on_drift: bool,
    #[command(flatten)]
    pub detect: DetectArgs,
}

#[derive(Debug, Args)]
pub struct ActionArgs {
    /// Which part of the action this process does. `all` (the container
    /// image): everything in one process. The composite action on the runner
    /// runs `lookup` (token: find the stored baseline), `measure` (no token in
    /// its environment: runs the suite, whose programs are the pull request's
    /// code) and `publish` (token: compare, comment, store, publish) as three
    /// steps; they pass state through files next to `results-path`.
    #[arg(long, value_enum, default_value_t = ActionStep::All)]
    pub step: ActionStep,
}

/// See [`ActionArgs::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ActionStep {
    All,
    Lookup,
    Measure,
    Publish,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suite config. Default: ./benchgate.toml if it exists, else the built-in default suite.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where to write the results JSON.
    #[arg(
        long,
        short = 'o',
        value_name = "FILE",
        default_value = "benchgate-results.json"
    )]
    pub out: PathBuf,
    /// Override [run] rounds.
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,
    /// Override [run] budget: the wall-clock time the rounds may take; while
    /// a comparison made during the run is undecided, more rounds within it.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Do not pin the server and the clients to separate cores.
    #[arg(long)]
    pub no_pin: bool,
    /// Run only these scenarios (repeatable).
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,
    /// Run shard K of N: whole scenarios, balanced by expected time, the
    /// same cut in every job; `benchgate merge` joins the N results files.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// No progress output; the report still prints.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// After the run, compare with this baseline results file and apply the gate
    /// (exit 1 when it fails).
    #[arg(long, value_name = "FILE", conflicts_with = "side_by_side")]
    pub baseline: Option<PathBuf>,
    /// After the run, compare every client with this one, paired by round.
    #[arg(long, value_name = "CLIENT", conflicts_with = "compare_base")]
    pub side_by_side: Option<String>,
    /// Base vs head: also measure every command client and server under test
    /// that lives in the repository at commit REF (a git worktree), as
    /// `NAME@base`, and compare each with it, paired by round. Default with
    /// `[compare] base = "git"`: HEAD^.
    #[arg(long, value_name = "REF", conflicts_with = "baseline")]
    pub compare_base: Option<String>,
    /// With --baseline, --side-by-side or --compare-base: also write the comparison as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub outputs: ReportArgs,
    /// Testing: replace every client with a mock driver with these latencies (µs, comma separated).
    #[arg(long, hide = true, value_name = "US,US,...", value_delimiter = ',')]
    pub mock_latencies_us: Vec<u64>,
    /// Testing: with --mock-latencies-us, every N-th request fails with a 503.
    #[arg(long, hide = true, default_value_t = 0)]
    pub mock_error_every: u64,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' results files, one per shard, in any order.
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<PathBuf>,
    /// Where to write the merged results.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: PathBuf,
    /// Config whose `[jmh]` says how JMH result files are read
    /// (`iterations_as_trials`); only JMH files need it.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Baseline results file (baseline mode).
    #[arg(long, value_name = "FILE", conflicts_with = "side_by_side")]
    pub baseline: Option<PathBuf>,
    /// Current results file.
    #[arg(long, value_name = "FILE")]
    pub current: PathBuf,
    /// Compare every client of the current run with this one, paired by round.
    /// Default (without --baseline): `[compare] baseline_client` of the config.
    #[arg(long, value_name = "CLIENT")]
    pub side_by_side: Option<String>,
    /// Compare each client on every other server under test with the same
    /// client on this `[[server]]`, paired by round. Default (without
    /// --baseline): `[compare] baseline_server` of the config.
    #[arg(long, value_name = "SERVER", conflicts_with = "baseline")]
    pub side_by_side_server: Option<String>,
    /// Gate config (`[gate]`, `[compare]`). Default: the resolved config stored in
    /// the current results file.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Also write the comparison as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub outputs: ReportArgs,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Suite config (its `[gate]` is the current gate). Default: ./benchgate.toml
    /// if it exists, else the config the first --results file recorded, else the
    /// built-in default suite.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A/A runs of the suite (at least 2; every pair of runs is compared).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub runs: u32,
    /// Calibrate only these scenarios (repeatable).
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,
    /// Analyse these existing results files (A/A runs of one config) instead of
    /// running the suite (repeatable; at least 2).
    #[arg(long = "results", value_name = "FILE", conflicts_with = "runs")]
    pub results: Vec<PathBuf>,
    /// Keep the runs' results files in this directory (default: a scratch
    /// directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub keep_runs: Option<PathBuf>,
    /// Rewrite the thresholds of the config file's `[gate]` (its comments and
    /// layout are kept; written to a temporary file, checked, then renamed over it).
    #[arg(long)]
    pub write: bool,
    /// Do not pin the server and the clients to separate cores.
    #[arg(long)]
    pub no_pin: bool,
    /// No progress output.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Testing: replace every client with a mock driver with these latencies (µs).
    #[arg(long, hide = true, value_name = "US,US,...", value_delimiter = ',')]
    pub mock_latencies_us: Vec<u64>,
}

/// Where to write the rendered reports of a comparison.
#[derive(Debug, Args, Default)]
pub struct ReportArgs {
    /// Write the PR comment (markdown, at most 65,536 characters) to this file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write the job summary (markdown) to this file; `-` appends to $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Write github-action-benchmark JSON (bigger/smaller-is-better) and one
    /// HdrHistogram `.hgrm` file per (scenario, client) of the current run here.
    #[arg(long, value_name = "DIR")]
    pub export_dir: Option<PathBuf>,
    /// Every column of the terminal's tables, names whole (the run's p99.9,
    /// max, threads, the server's cost, start-up, CPU wait; the comparison's
    /// MDE and medians); the default fits 120 columns, or the terminal's
    /// width when wider. The results file has every figure either way.
    #[arg(long)]
    pub wide: bool,
}

#[derive(Debug, Args)]
pub struct ServeCliArgs {
    /// Address for plain HTTP/1.1 and h2c. Port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Address for HTTPS (ALPN h2 and http/1.1). Default: same IP, a free port.
    #[arg(long)]
    pub tls_listen: Option<SocketAddr>,
    /// Serve no HTTPS port.
    #[arg(long)]
    pub no_tls: bool,
    /// Runtime threads, and as many lean HTTP/1.1 loops for the plain port (1: a
    /// single-threaded runtime and one loop, best when pinned to one core).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Exit when standard input reaches end of file (used when run as a child).
    #[arg(long)]
    pub exit_on_stdin_eof: bool,
    /// For validating server gates: every response waits this long, e.g. "2ms".
    #[arg(long, value_name = "DURATION")]
    pub added_delay: Option<String>,
    /// Serve plain HTTP/1.1 through hyper only, without the lean loop that
    /// answers `GET /bytes/{n}` itself (for measuring the difference).
    #[arg(long)]
    pub hyper_only: bool,
}

/// `benchgate publish <target>`.
#[derive(Debug, Subcommand)]
pub enum PublishCommand {
    /// Put the results' metrics into CloudWatch (PutMetricData). Exit 2 if it fails.
    Cloudwatch(CloudWatchArgs),
}

#[derive(Debug, Args)]
pub struct CloudWatchArgs {
    /// The results file to publish.
    #[arg(long, short = 'r', value_name = "FILE")]
    pub results: PathBuf,
    /// Config with [publish.cloudwatch]. Default: the config recorded in the results file.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override the namespace.
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Override the region (default: config, then AWS_REGION / the AWS profile).
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// The Branch dimension. Default: the branch recorded in the results file.
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Attempts per request, the first included (throttling and 5xx are retried).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub max_attempts: u32,
    /// Give up retrying a request after this long, e.g. "60s".
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub retry_deadline: String,
    /// Testing: the first backoff's upper bound, milliseconds.
    #[arg(long, hide = true, default_value_t = 200)]
    pub retry_base_ms: u64,
}

#[derive(Debug, Args)]
pub struct DriveArgs {
    #[arg(long)]
    pub spec: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
}
