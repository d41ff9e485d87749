//! Configuration: the raw TOML model (`raw`), its validation into the types below
//! (`validate`), the unit parsers (`units`), servers under test (`server`) and
//! the built-in default suite (`defaults`).
//!
//! Everything after this module sees only the validated [`Suite`]: durations are
//! `Duration`s, sizes are byte counts, client names referenced by scenarios exist.
//! The validated types are also what the results file records as the resolved
//! config and what the parent hands to each driver process, so they serialize.

pub mod anchor;
pub mod base_variants;
pub mod choice;
pub mod cloudwatch_limits;
pub mod command;
pub mod defaults;
pub mod error;
pub mod gate;
pub mod gate_edit;
mod gate_parse;
pub mod glob;
pub mod inject;
pub mod jmh;
pub mod limits;
pub mod publish;
pub mod raw;
mod scenario;
pub mod schedule;
pub mod server;
mod tree;
pub mod units;
pub mod validate;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use choice::{Overrides, SuiteChoice};
pub use error::ConfigError;
pub use gate::{CompareBase, CompareSettings, GateConfig};

pub use publish::{CloudWatchSettings, PublishSettings};
pub use server::{ServerCommand, ServerSpec, ServerTarget};

/// A validated benchmark suite: what `benchgate run` executes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Where the suite came from: a file path, or `built-in default suite`.
    pub source: String,
    pub run: RunSettings,
    pub clients: Vec<ClientSpec>,
    pub scenarios: Vec<Scenario>,
    /// `[gate]`: thresholds and policies (defaults when absent; results files
    /// written before the gate existed read as the defaults).
    #[serde(default)]
    pub gate: GateConfig,
    /// `[compare]`: side-by-side mode, when set.
    #[serde(default)]
    pub compare: Option<CompareSettings>,
    /// `[publish.*]`: publishers' settings; absent when the file has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publish: Option<PublishSettings>,
    /// `[[server]]`: servers under test the clients drive instead of the
    /// reference server (empty: the reference server). Results files written
    /// before servers existed read as empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerSpec>,
    /// `[jmh]`: how JMH result files are read. Left out of results files
    /// when it is the default (and absent in files from before it).
    #[serde(default, skip_serializing_if = "jmh::JmhSettings::is_default")]
    pub jmh: jmh::JmhSettings,
}

/// `[run]`: settings shared by every scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSettings {
    /// Trials per (scenario, client); each trial is a fresh process.
    pub rounds: u32,
    /// Up to this many rounds while a comparison made during the run (side by
    /// side, or against `run --baseline`) still has an inconclusive gating
    /// metric: a noisy machine gets more trials, a quiet one stops at `rounds`.
    /// Equal to `rounds`: off. Results files without it read as `rounds`.
    #[serde(default)]
    pub max_rounds: u32,
    /// Pin the reference server and the clients to disjoint cores (needs 2+ cores).
    pub pin: bool,
    /// `[run] anchor = true`: the fixed anchor measured in every round of
    /// every scenario (`anchor`). Absent: off (and in files from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<anchor::Anchor>,
    /// `[run] budget`: the wall-clock time the suite's rounds may take. Each
    /// scenario gets what is left divided by the scenarios left, and spends
    /// it on extra rounds (up to `max_rounds`, 300 by default with a budget)
    /// while a comparison made during the run is undecided, looking at the
    /// evidence only at planned rounds with alpha split across the looks
    /// (`compare::looks`). The configured `rounds` always run. Absent: no
    /// budget (and in files from before it).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "units::serde_opt_duration"
    )]
    pub budget: Option<Duration>,
    /// `[run] windows`: windows per fork (a built-in client's driver stays
    /// alive across them, warmed once; `orchestrate::window_loop`). 1: one
    /// window per process, as before it existed (and in files from before).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub windows: u32,
    /// `[run] schedule`: how a paired run's forks take turns.
    #[serde(default, skip_serializing_if = "Schedule::is_sequential")]
    pub schedule: Schedule,
}

/// The most windows per fork (`[run] windows`).
pub const MAX_WINDOWS: u32 = 50;

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// `[run] schedule`: one per run, never mixed in one comparison.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Each fork runs its windows back to back, the forks in counterbalanced
    /// order (A B, then B A).
    #[default]
    Sequential,
    /// Both forks of a round alive at once, their windows alternating
    /// A B B A ..., the side not measuring paused and frozen.
    Interleaved,
    /// Both forks of a round alive at once, their windows open together,
    /// each side on its own half of the CPUs with its own reference server,
    /// the halves swapped every round.
    Duet,
}

impl Schedule {
    pub fn parse(s: &str) -> Option<Schedule> {
        match s {
            "sequential" => Some(Schedule::Sequential),
            "interleaved" => Some(Schedule::Interleaved),
            "duet" => Some(Schedule::Duet),
            _ => None,
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Schedule::Sequential => "sequential",
            Schedule::Interleaved => "interleaved",
            Schedule::Duet => "duet",
        }
    }

    /// Whether each side of a round runs on CPUs (a lane) and against a
    /// reference server of its own: its figures then compare only with the
    /// other side's.
    pub fn on_lanes(&self) -> bool {
        match self {
            Schedule::Duet => true,
            Schedule::Sequential | Schedule::Interleaved => false,
        }
    }

    pub fn is_sequential(&self) -> bool {
        match self {
            Schedule::Sequential => true,
            Schedule::Interleaved | Schedule::Duet => false,
        }
    }
}

/// When a trial's measurement phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopRule {
    /// Measure for this long after the warmup.
    Duration(#[serde(with = "units::serde_duration")] Duration),
    /// Measure exactly this many requests after the warmup.
    Requests(u64),
}

/// Which built-in driver a client uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientKind {
    /// hyper-util's pooled legacy client on tokio.
    Hyper,
    /// reqwest's async client.
    Reqwest,
    /// reqwest's blocking client, one OS thread per worker (the "old SDK" shape).
    ReqwestBlocking,
    /// The lean load generator: HTTP/1.1 over plain TCP on one epoll thread,
    /// wrk's cost per request; for servers under test ([`crate::engine::lean`]).
    H1Lean,
    /// Scripted latencies, no sockets. Hidden: for tests of the engine and reports.
    Mock(MockScript),
    /// Any program, started once per trial with `BENCHGATE_*` variables
    /// (docs/external-clients.md).
    Command(CommandSpec),
}

/// How a client kind's trial runs: which engine drives it, or its own program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// A tokio runtime and [`crate::client::AsyncClient`] (`engine::run_async`).
    Async,
    /// One OS thread per worker (`engine::run_blocking`).
    Blocking,
    /// The lean epoll loop (`engine::lean::run`).
    Lean,
    /// The client's own program, one process group per trial
    /// (`orchestrate::command`).
    Program,
}

impl Driver {
    /// Whether the driver process speaks the window loop (a fork of several
    /// windows, `orchestrate::driver_loop`): h1-lean's event loop does not
    /// yet, and a command client's program declares it or not on its own.
    pub fn window_loop(&self) -> bool {
        match self {
            Driver::Async | Driver::Blocking => true,
            Driver::Lean | Driver::Program => false,
        }
    }
}

impl ClientKind {
    /// The built-in drivers: what the config accepts besides `"command"` (the
    /// mock is hidden, for tests), by [`ClientKind::name`]. Config validation
    /// reads this list, and tests/run/client_matrix.rs runs every entry over
    /// HTTP/1.1 and HTTP/2, plain and TLS.
    pub const BUILT_IN: [ClientKind; 4] = [
        ClientKind::Hyper,
        ClientKind::Reqwest,
        ClientKind::ReqwestBlocking,
        ClientKind::H1Lean,
    ];

    /// The kind's name, as `kind = "..."` gives it and the results' profile
    /// compares it: the one place the names are written.
    pub fn name(&self) -> &'static str {
        match self {
            ClientKind::Hyper => "hyper",
            ClientKind::Reqwest => "reqwest",
            ClientKind::ReqwestBlocking => "reqwest-blocking",
            ClientKind::H1Lean => "h1-lean",
            ClientKind::Mock(_) => "mock",
            ClientKind::Command(_) => "command",
        }
    }

    /// How the kind's trial runs: the one table from a kind to its driver.
    pub fn driver(&self) -> Driver {
        match self {
            ClientKind::Hyper | ClientKind::Reqwest | ClientKind::Mock(_) => Driver::Async,
            ClientKind::ReqwestBlocking => Driver::Blocking,
            ClientKind::H1Lean => Driver::Lean,
            ClientKind::Command(_) => Driver::Program,
        }
    }

    /// Whether the driver speaks HTTP/1.1 over plain TCP only (no `http = "2"`,
    /// no `tls = true`). Config validation refuses the other combinations.
    pub fn plain_http1_only(&self) -> bool {
        matches!(self, ClientKind::H1Lean)
    }
}

/// An external client program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// argv; `argv[0]` is looked up on PATH (or relative to `cwd`).
    pub command: Vec<String>,
    /// Run once before the rounds (e.g. a build); argv.
    pub setup: Option<Vec<String>>,
    /// Working directory, resolved against the config file's directory.
    pub cwd: String,
    /// Extra environment (names never start with `BENCHGATE_`).
    pub env: std::collections::BTreeMap<String, String>,
    /// Variables of benchgate's environment passed through although they
    /// are withheld from child programs by default (`orchestrate::child_env`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Time limit per trial, after which the whole process group is killed.
    /// `None`: warmup + duration + request timeout + 30 s.
    #[serde(with = "units::serde_opt_duration")]
    pub timeout: Option<Duration>,
    /// The result file the program writes: benchgate's own, or JMH's.
    #[serde(default, skip_serializing_if = "ResultFormat::is_benchgate")]
    pub result: ResultFormat,
}

/// The result file a command client writes (`result = "..."`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ResultFormat {
    /// benchgate's result file, optional (docs/external-clients.md).
    #[default]
    Benchgate,
    /// JMH's JSON result (`-rf json`) of one benchmark method, run with the
    /// options benchgate derives from the workload (`{jmh_args}`).
    Jmh {
        /// The method's full name, `package.Class.method`.
        benchmark: String,
    },
}

impl ResultFormat {
    /// The argv element replaced by the JMH options of a trial.
    pub const JMH_ARGS: &'static str = "{jmh_args}";

    /// benchgate's own format (the default, left out when serialized).
    pub fn is_benchgate(&self) -> bool {
        *self == ResultFormat::Benchgate
    }
}

/// A mock driver's script: latencies (µs) served round-robin, and every
/// `error_every`-th request failing with a 5xx (0 = never).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockScript {
    pub latencies_us: Vec<u64>,
    #[serde(default)]
    pub error_every: u64,
    /// Response size reported per request, bytes.
    #[serde(default)]
    pub response_bytes: u64,
    /// How the mock driver's process fails (the test knob
    /// [`crate::knobs::MOCK_FAIL_VAR`], `[CLIENT=]HOW`); acted on only in a
    /// build with the `test-knobs` feature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail: Option<String>,
}

/// HTTP version a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpVersion {
    /// HTTP/1.1 with keep-alive.
    Http1,
    /// HTTP/2: prior knowledge (h2c) in clear text, ALPN over TLS.
    Http2,
}

/// `[[client]]`: one client under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ClientSpecFile")]
pub struct ClientSpec {
    pub name: String,
    pub kind: ClientKind,
    /// Maximum connections to the target (the pool size). `None`: one per worker.
    pub pool: Option<u32>,
    pub http: HttpVersion,
    /// Talk HTTPS to the reference server's TLS port (certificate is self-signed).
    pub tls: bool,
    /// Testing knob for validating gates (`inject_cpu` in the config): CPU
    /// busy-spun per request inside the built-in drivers (hyper, reqwest,
    /// reqwest-blocking), nanoseconds; 0: off ([`crate::client::spin`]). Not part
    /// of the load profile a comparison checks: it stands for a change in the
    /// code under test. Written to results files only when set, so a run without
    /// it stays readable by versions that predate the field.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inject_cpu_ns: u64,
    /// Testing knob for validating tail-latency gates (`inject_tail`): a share
    /// of requests delayed by a fixed time inside the built-in drivers
    /// ([`crate::client::tail`]). Like `inject_cpu`, not part of the load
    /// profile, and written to results files only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject_tail: Option<inject::TailInjection>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// [`ClientSpec`] as a results file may hold it: also `inject_cpu_us`
/// (microseconds), which files written before `inject_cpu_ns` carry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientSpecFile {
    name: String,
    kind: ClientKind,
    pool: Option<u32>,
    http: HttpVersion,
    tls: bool,
    #[serde(default)]
    inject_cpu_ns: Option<u64>,
    #[serde(default)]
    inject_cpu_us: Option<u64>,
    #[serde(default)]
    inject_tail: Option<inject::TailInjection>,
}

impl TryFrom<ClientSpecFile> for ClientSpec {
    type Error = String;

    fn try_from(f: ClientSpecFile) -> Result<ClientSpec, String> {
        let inject_cpu_ns = match (f.inject_cpu_ns, f.inject_cpu_us) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "client {:?} has both inject_cpu_ns and inject_cpu_us (the older spelling, in microseconds); keep one",
                    f.name
                ))
            }
            (Some(ns), None) => ns,
            (None, Some(us)) => us
                .checked_mul(1_000)
                .ok_or_else(|| format!("client {:?}: inject_cpu_us {us} is too large", f.name))?,
            (None, None) => 0,
        };
        Ok(ClientSpec {
            name: f.name,
            kind: f.kind,
            pool: f.pool,
            http: f.http,
            tls: f.tls,
            inject_cpu_ns,
            inject_tail: f.inject_tail,
        })
    }
}

/// HTTP method of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// How requests are issued.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "model")]
pub enum Load {
    /// `concurrency` workers, each sending its next request when the last one ends.
    Closed { concurrency: u32 },
    /// Requests start at a constant `rate` (per second), whatever the responses do;
    /// at most `max_in_flight` at once (the worker count).
    Open { rate: f64, max_in_flight: u32 },
}

impl Load {
    /// Number of workers the engine starts.
    pub fn workers(&self) -> u32 {
        match *self {
            Load::Closed { concurrency } => concurrency,
            Load::Open { max_in_flight, .. } => max_in_flight,
        }
    }
}

/// `[[scenario]]`: one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub method: Method,
    /// Path and query on the target, starting with `/`.
    pub path: String,
    /// Request body size in bytes (0: no body).
    pub body: u64,
    pub load: Load,
    #[serde(with = "units::serde_duration")]
    pub warmup: Duration,
    pub stop: StopRule,
    /// Per-request timeout; a request that takes longer counts as a `timeout` error.
    #[serde(with = "units::serde_duration")]
    pub timeout: Duration,
    /// Names of the clients that run this scenario (validated, in config order).
    pub clients: Vec<String>,
}

/// Largest config file [`Suite::from_file`] reads; real ones are a few KiB.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

impl Suite {
    /// Loads and validates a config file. A config in a pull request may be
    /// a FIFO, or a symlink to `/dev/zero`: only a regular file of at most
    /// [`MAX_CONFIG_BYTES`] is read ([`crate::files::read_untrusted`]); a
    /// directory or text that is not UTF-8 is refused with the fix.
    pub fn from_file(path: &Path) -> Result<Suite, ConfigError> {
        use std::io::Error;
        let bytes =
            crate::files::read_untrusted(path, "config file", MAX_CONFIG_BYTES).map_err(|e| {
                ConfigError::Read {
                    path: path.display().to_string(),
                    reason: match e.refusal {
                        crate::files::Refusal::Io(io) => io,
                        other => {
                            Error::other(format!("{other}; pass the path of the TOML config file"))
                        }
                    },
                }
            })?;
        Suite::from_bytes(&bytes, &path.display().to_string())
    }

    /// Validates a config file's bytes as [`Suite::from_file`] read them:
    /// at most [`MAX_CONFIG_BYTES`], UTF-8 (a BOM is accepted), then
    /// [`Suite::from_toml`]. `source` names the input in errors.
    pub fn from_bytes(bytes: &[u8], source: &str) -> Result<Suite, ConfigError> {
        use std::io::{Error, ErrorKind};
        let read = |source_error: Error| ConfigError::Read {
            path: source.to_string(),
            reason: source_error,
        };
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(read(Error::new(
                ErrorKind::InvalidData,
                format!("it is over the {MAX_CONFIG_BYTES} byte limit; pass the path of a benchgate TOML config"),
            )));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            read(Error::new(
                ErrorKind::InvalidData,
                format!(
                    "it is not UTF-8 text (byte {} is not); save the file as UTF-8",
                    e.valid_up_to()
                ),
            ))
        })?;
        Suite::from_toml(text, source)
    }

    /// Parses and validates TOML text; `source` names the input in errors.
    pub fn from_toml(text: &str, source: &str) -> Result<Suite, ConfigError> {
        validate::validate(text, source)
    }

    /// The built-in default suite (see `defaults`).
    pub fn default_suite() -> Suite {
        defaults::default_suite()
    }

    /// Whether the suite only gates result files (`[jmh]` or `[gate]`
    /// without clients or scenarios, [`jmh`]): nothing to run.
    pub fn gates_only(&self) -> bool {
        self.clients.is_empty() && self.scenarios.is_empty()
    }

    /// Refuses a suite with nothing to run ([`Suite::gates_only`]), naming
    /// the config and the fix; `command` is what was asked (`benchgate run`).
    pub fn check_runnable(&self, command: &str) -> anyhow::Result<()> {
        if self.gates_only() {
            anyhow::bail!(
                "{}: {command} has nothing to run: the config has no [[client]] or [[scenario]] (it only holds settings to gate result files, such as [jmh] and [gate]); pass it to benchgate compare --config, or add [[client]] and [[scenario]] tables to benchmark HTTP clients",
                self.source
            );
        }
        Ok(())
    }

    pub fn client(&self, name: &str) -> Option<&ClientSpec> {
        self.clients.iter().find(|c| c.name == name)
    }

    /// The server under test of that name.
    pub fn server(&self, name: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_named_as_the_results_file_writes_it_and_driven_by_one_table() {
        // The results file writes a kind with serde's names: the same names.
        let mock = ClientKind::Mock(MockScript {
            latencies_us: vec![1],
            error_every: 0,
            response_bytes: 0,
            fail: None,
        });
        for kind in ClientKind::BUILT_IN.iter().chain([&mock]) {
            let json = serde_json::to_value(kind).unwrap();
            let written = json
                .as_str()
                .map(String::from)
                .or_else(|| json.as_object().and_then(|o| o.keys().next().cloned()))
                .unwrap();
            assert_eq!(written, kind.name(), "{json}");
        }
        let drivers: Vec<Driver> = ClientKind::BUILT_IN
            .iter()
            .map(ClientKind::driver)
            .collect();
        assert_eq!(
            drivers,
            [Driver::Async, Driver::Async, Driver::Blocking, Driver::Lean]
        );
        assert_eq!(mock.driver(), Driver::Async);
    }
}
