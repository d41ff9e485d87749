//! The results file (`benchgate-results.json`): one versioned JSON document per
//! run. `schema/results.schema.json` describes it; tests validate real output
//! against that schema. Later stages (compare, report, publish) read only this.

pub mod anchor;
pub mod budget;
pub mod check;
pub mod environment;
pub mod histograms;
pub mod jmh;
pub mod jmh_limits;
pub mod jmh_merge;
pub mod merge;
pub mod profile;
#[cfg(test)]
#[path = "../../tests/common/synthetic.rs"]
pub(crate) mod synthetic;
pub mod validity;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::config::Suite;
use crate::interrupt::INTERRUPTED_PREFIX;
use crate::metric::{Spread, TrialMetrics};
use crate::server::ServerCounters;

pub use environment::{Environment, GitInfo};
pub use merge::ShardInfo;

/// Version of the results document layout. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Largest results file [`RunResults::read`] reads (it may come with an
/// untrusted artifact); the read itself stops after this many bytes.
pub const MAX_RESULTS_BYTES: u64 = 256 * 1024 * 1024;

/// One run: everything measured, with what it was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunResults {
    pub schema_version: u32,
    pub run_id: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// RFC 3339, UTC; absent while the run is in progress.
    pub finished_at: Option<String>,
    pub git: GitInfo,
    pub environment: Environment,
    /// The resolved config the run executed.
    pub config: Suite,
    /// One entry per (scenario, client, server): scenarios in the order they
    /// ran, each one's cells in config order (its anchor's cell last). Within a
    /// round the cells run in a counterbalanced order; each trial's
    /// `started_at` records it.
    pub results: Vec<CellResult>,
    /// The signal that stopped the run early (`SIGTERM`, `SIGINT`): the
    /// results are partial, the trial it cut short is recorded as failed, and
    /// nothing should gate on them or store them as a baseline. Absent for a
    /// run that finished (and in files written before the field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// `run --shard K/N`: which shard of which suite this is; a merged file:
    /// every shard's runner and scenarios ([`merge`]). Absent for a whole
    /// run (and in files written before shards existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<merge::ShardInfo>,
    /// How each scenario spent its rounds past `[run] rounds` (its share of
    /// `[run] budget`, or up to `max_rounds`), in the order they ran
    /// ([`budget`]). Empty when nothing was compared during the run (and in
    /// older files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budget: Vec<budget::ScenarioBudget>,
    /// A run read from a JMH result file ([`jmh`]): its JMH version and what
    /// a trial is. Absent for benchgate's own runs (and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jmh: Option<jmh::JmhOrigin>,
}

/// A run's cells by (scenario, client, server) ([`RunResults::index`]).
#[derive(Debug, Default)]
pub struct CellIndex<'a> {
    cells: HashMap<(&'a str, &'a str, Option<&'a str>), &'a CellResult>,
    clients: HashSet<&'a str>,
    servers: HashSet<&'a str>,
}

impl<'a> CellIndex<'a> {
    /// The cell of (scenario, client, server), as [`RunResults::cell_at`].
    pub fn get(
        &self,
        scenario: &str,
        client: &str,
        server: Option<&str>,
    ) -> Option<&'a CellResult> {
        self.cells.get(&(scenario, client, server)).copied()
    }

    /// Whether some cell ran `client`.
    pub fn has_client(&self, client: &str) -> bool {
        self.clients.contains(client)
    }

    /// Whether some cell drove the server under test `server`.
    pub fn has_server(&self, server: &str) -> bool {
        self.servers.contains(server)
    }
}

/// All trials of one (scenario, client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellResult {
    pub scenario: String,
    pub client: String,
    /// The server under test (`[[server]]` name) the client drove; absent: the
    /// reference server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The run's anchor measured in this scenario's rounds (`[run] anchor`,
    /// [`anchor`]): its fixed workload, not the scenario's; reported, gates
    /// nothing. Absent: a cell of the suite (and in files from before it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anchor: bool,
    pub trials: Vec<Trial>,
    /// Median, min and max over the successful trials, per metric name.
    pub summary: BTreeMap<String, Spread>,
    /// Merged latency histogram of all successful trials (µs; for open loop,
    /// measured from each request's intended start), HdrHistogram compressed
    /// encoding, base64. Absent when no latency was recorded.
    pub histogram: Option<String>,
    /// Open loop only: latency measured from the actual send (not corrected
    /// for coordinated omission), same encoding.
    pub histogram_uncorrected: Option<String>,
}

/// One trial: one fresh client process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    /// 1-based round number.
    pub round: u32,
    /// When benchgate began the trial, just before it started the trial's
    /// process (the driver, or a command client's program): RFC 3339, UTC,
    /// microseconds (`2026-11-30T01:02:03.123456Z`). Trials sorted by it give
    /// the order they ran in, which changes from round to round (cells are
    /// written in config order). Absent in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The measurement window as planned: the scenario's `duration`, seconds.
    /// Absent with a request-count stop (no planned length), and in files
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_planned_s: Option<f64>,
    /// The window as it actually lasted at benchgate's side, seconds, on the
    /// monotonic clock: from the moment the driver opened its window (told
    /// the reference server to open its own) to the moment it closed it; for
    /// a command client, the parent's opening and closing of the server's
    /// window. A built-in driver's window (and the parent's, for a program
    /// that prints no markers) lasts its planned duration from its actual
    /// opening, however late that was, so this differs from
    /// `window_planned_s` by the stalls inside it, not by a late opening.
    /// The server's own length of the same window is
    /// `server.window_secs`. Absent for a trial that measured nothing (failed),
    /// and in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_actual_s: Option<f64>,
    /// How many earlier attempts of this round were dropped because the
    /// machine starved a trial of it (`validity::starved`): the whole round
    /// ran again, so pairs stay pairs. Absent: none (and in older files).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reruns: u32,
    /// A command client's: where its CPU in the window (`cpu_user_us`,
    /// `cpu_sys_us`, `cpu_us_per_request`) was read. Absent for the built-in
    /// drivers (their own clock at their window's edges) and JMH clients, for
    /// a trial that measured nothing, and in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_source: Option<CpuSource>,
    /// A fork measured over several windows (`[run] windows`, the window
    /// loop): how many, and what became of starved ones. Its figures are the
    /// sums over its windows. Absent: one window (and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<ForkWindows>,
    /// `None` when the trial completed; otherwise why it failed.
    pub failure: Option<String>,
    pub metrics: Option<TrialMetrics>,
    /// The reference server's counters for the trial's measurement window
    /// (absent with a server under test: it has none).
    pub server: Option<ServerCounters>,
    /// Why the trial does not measure what its scenario asked for (the
    /// validity guard, [`validity`]); absent: valid, and in files written
    /// before the guard existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<validity::InvalidMark>,
}

/// The windows of a fork (a trial measured through the window loop).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkWindows {
    /// Windows summed into the trial's figures.
    pub count: u32,
    /// Windows measured again because the machine starved them (no request,
    /// or a window more than 10% off its planned length at the server or,
    /// a built-in driver's, at the driver).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rerun: u32,
    /// Starved windows kept after the reruns ran out, each with why: the
    /// trial is marked starved too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub starved: Vec<String>,
    /// Interleaved schedule: the frozen side's CPU during this fork's
    /// windows, µs in all (it must be ~0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_cpu_us: Option<u64>,
    /// The fork's windows, in order: each one's figures, for their trend
    /// within the fork ([`CellResult::still_warming`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<WindowFigures>,
    /// Which CPU reading is the trial's `cpu_us_per_request` (the gated
    /// one); the other is kept beside it. Absent in files from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gated_cpu: Option<ForkCpu>,
    /// The driver's own CPU (in-process, at its window's edges), µs summed
    /// over the windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_cpu_us: Option<u64>,
    /// The fork's process group's CPU, read by the parent at each window's
    /// edges, µs summed over the windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_cpu_us: Option<u64>,
}

/// A change between a fork's earlier and later windows beyond this share
/// reads as warming ([`CellResult::still_warming`]).
pub const WARMING_TREND: f64 = 0.02;

/// One window of a fork in the window loop: what a trend within the fork
/// ("still warming", [`CellResult::still_warming`]) is read from. The fork's own
/// figures are its windows' sums, in the trial's metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowFigures {
    /// Requests the program completed in the window, and those the
    /// reference server counted in it.
    pub requests: u64,
    pub server_requests: u64,
    pub throughput_rps: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_request: Option<f64>,
    /// When benchgate opened the window (RFC 3339, UTC, µs): sorting both
    /// sides' windows of an interleaved round by it gives the order they
    /// took turns in. Absent where not read (and in files from before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_at: Option<String>,
}

/// Where a fork's gated CPU was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForkCpu {
    /// The built-in driver's own, in-process (`driver_cpu_us`), as in a
    /// one-window trial.
    Driver,
    /// The process group's, by the parent (`group_cpu_us`).
    Group,
}

/// Where a command client's CPU in its window was read: its process group's
/// CPU (`measure::resources::sample_group`) at the window's open, then at
/// its close, or at the latest of the samples taken every 50 ms while it ran.
/// A group's CPU only grows while its processes live: a reading below the
/// one at the open (or below a sample taken before it) lost a process, and
/// counts as gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuSource {
    /// Read at the window's close.
    Close,
    /// The program was gone at the close (it exited as its window closed,
    /// or before): the last sample taken while the window was open, per
    /// request completed in the share of the window it covers. Never the
    /// exit's accounting, which would add the program's shutdown.
    LastSample,
    /// Gone at the close, and no sample taken while the window was open: the
    /// trial has no CPU figure (`cpu_us_per_request` absent), and says so.
    Gone,
}

/// What a trial whose CPU was gone at its window's close ([`CpuSource::Gone`])
/// is told by: reports print it beside the trial.
pub const CPU_GONE: &str = "the program's process group was gone when its window closed, and no sample of its CPU was taken while the window was open: no CPU per request";

impl RunResults {
    /// Writes the document atomically (temp file + rename), so a reader or a
    /// crash never sees a half-written file.
    pub fn write_atomic(&self, path: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_vec_pretty(self).context("serializing results")?;
        crate::files::write_atomic(path, &json)
    }

    /// Reads and checks a results file: a regular file of bounded size
    /// ([`crate::files::read_untrusted`]), then [`RunResults::parse_bytes`]. A
    /// JMH result file is read with a fork as a trial ([`Self::read_as`]).
    pub fn read(path: &Path) -> anyhow::Result<RunResults> {
        Self::read_as(path, jmh::TrialUnit::Forks)
    }

    /// [`Self::read`], a JMH result file's trials being `jmh_trials`
    /// (`[jmh] iterations_as_trials`).
    pub fn read_as(path: &Path, jmh_trials: jmh::TrialUnit) -> anyhow::Result<RunResults> {
        let bytes =
            crate::files::read_untrusted(path, "results file", MAX_RESULTS_BYTES).map_err(|e| {
                match e.is_too_big() {
                    true => anyhow::anyhow!("{e}; is it really a benchgate results file?"),
                    false => anyhow::Error::new(e),
                }
            })?;
        let source = path.display().to_string();
        if jmh::is_array(&bytes) {
            return jmh::parse(&bytes, &source, jmh_trials);
        }
        Self::parse_bytes(&bytes, &source)
    }

    /// Parses results JSON; `source` names the input in errors. The bytes
    /// are checked against [`check::LIMITS`] before anything is built from
    /// them, then deserialized straight into the typed results, whose
    /// measured values are checked last ([`check::check_values`]). A JSON
    /// array is a JMH result file, read with a fork as a trial ([`jmh`]).
    pub fn parse_bytes(bytes: &[u8], source: &str) -> anyhow::Result<RunResults> {
        if jmh::is_array(bytes) {
            return jmh::parse(bytes, source, jmh::TrialUnit::Forks);
        }
        if let Err(e) = std::str::from_utf8(bytes) {
            anyhow::bail!(
                "{source} is not UTF-8 text (byte {} is not): it is not a benchgate results file",
                e.valid_up_to()
            );
        }
        check::scan(bytes, source)?;
        // An object's field, as before a version is looked for.
        let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let version = serde_json::from_slice::<Head>(bytes).map(|h| h.schema_version);
        match version {
            Ok(Some(v)) if object && v == u64::from(SCHEMA_VERSION) => {}
            Ok(Some(v)) if object => anyhow::bail!(
                "{source} has schema_version {v}, but this benchgate reads version {SCHEMA_VERSION}; re-run the benchmark with this version or use the matching benchgate"
            ),
            // Its one field is read leniently: what refuses an object is a
            // second `schema_version`.
            Err(e) if object && e.is_data() => anyhow::bail!(
                "{source} has schema_version twice ({e}): it is corrupt or was not written by benchgate"
            ),
            _ => anyhow::bail!(
                "{source} has no numeric schema_version: it is not a benchgate results file"
            ),
        }
        let results: RunResults = serde_json::from_slice(bytes).with_context(|| {
            format!("{source} does not match the results schema v{SCHEMA_VERSION}")
        })?;
        check::check_values(&results, source)?;
        Ok(results)
    }

    /// The cell of (scenario, client, server); `server` `None` is the reference server.
    pub fn cell_at(
        &self,
        scenario: &str,
        client: &str,
        server: Option<&str>,
    ) -> Option<&CellResult> {
        self.results
            .iter()
            .find(|c| c.scenario == scenario && c.client == client && c.server.as_deref() == server)
    }

    /// The run's cells indexed by (scenario, client, server), built once:
    /// [`CellIndex::get`] answers in constant time what [`Self::cell_at`]
    /// answers by a scan (the first such cell), so a comparison of 10,000
    /// cells stays linear.
    pub fn index(&self) -> CellIndex<'_> {
        let mut index = CellIndex::default();
        for c in &self.results {
            index
                .cells
                .entry((c.scenario.as_str(), c.client.as_str(), c.server.as_deref()))
                .or_insert(c);
            index.clients.insert(c.client.as_str());
            if let Some(s) = c.server.as_deref() {
                index.servers.insert(s);
            }
        }
        index
    }

    /// Whether any cell was measured against a server under test.
    pub fn has_servers(&self) -> bool {
        self.results.iter().any(|c| c.server.is_some())
    }
}

/// A results document's version alone, read before the rest so that a
/// file of another version is named as such. Any other field is skipped
/// without being built.
#[derive(Deserialize)]
struct Head {
    #[serde(default, deserialize_with = "integer_or_none")]
    schema_version: Option<u64>,
}

/// A non-negative integer; `None` for any other value (skipped unbuilt).
fn integer_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Lenient;
    impl<'de> serde::de::Visitor<'de> for Lenient {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any value")
        }
        fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut a: A,
        ) -> Result<Self::Value, A::Error> {
            while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut a: A,
        ) -> Result<Self::Value, A::Error> {
            while a
                .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                .is_some()
            {}
            Ok(None)
        }
    }
    d.deserialize_any(Lenient)
}

/// Median, min and max of every metric over the trials that count (not
/// failed, not starved): a cell's `summary`.
pub fn summarize(trials: &[Trial]) -> BTreeMap<String, Spread> {
    crate::metric::METRICS
        .iter()
        .filter_map(|m| {
            let values: Vec<f64> = trials
                .iter()
                .filter(|t| t.failure.is_none() && !t.starved())
                .filter_map(|t| t.metrics.as_ref()?.get(m.name))
                .collect();
            Spread::of(&values).map(|s| (m.name.to_string(), s))
        })
        .collect()
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Trial {
    /// Whether the machine starved this trial in every attempt of its round
    /// (a [`validity::InvalidMark::Starved`] mark): its figures enter no
    /// median and no comparison.
    pub fn starved(&self) -> bool {
        self.invalid.iter().any(validity::InvalidMark::is_starved)
    }

    /// Whether this trial completed without its CPU figure, gone at its
    /// window's close ([`CpuSource::Gone`]).
    pub fn cpu_gone(&self) -> bool {
        self.failure.is_none() && self.cpu_source == Some(CpuSource::Gone)
    }

    /// Whether a signal cut this trial short (the run was stopped), rather
    /// than the client failing it.
    pub fn interrupted(&self) -> bool {
        self.failure
            .as_deref()
            .is_some_and(|f| f.starts_with(INTERRUPTED_PREFIX))
    }
}

impl CellResult {
    /// `(round, value)` of `metric` in every trial that counts (not failed,
    /// not starved), finite values only: what comparisons and spreads use.
    pub fn values(&self, metric: &str) -> Vec<(u32, f64)> {
        self.trials
            .iter()
            .filter(|t| t.failure.is_none() && !t.starved())
            .filter_map(|t| Some((t.round, t.metrics.as_ref()?.get(metric)?)))
            .filter(|(_, v)| v.is_finite())
            .collect()
    }

    /// Rounds of the trials that count (as in [`Self::values`]) without a
    /// value of `metric` that another of them measured: a figure lost in
    /// those trials (a command client's CPU gone at its window's close,
    /// [`CpuSource::Gone`]), which a comparison counts and names rather than
    /// leave out silently. Empty when no trial measured it.
    pub fn lacking(&self, metric: &str) -> Vec<u32> {
        let counted = || {
            self.trials
                .iter()
                .filter(|t| t.failure.is_none() && !t.starved())
                .filter_map(|t| Some((t.round, t.metrics.as_ref()?.get(metric))))
        };
        if !counted().any(|(_, v)| v.is_some_and(f64::is_finite)) {
            return Vec::new();
        }
        counted()
            .filter(|(_, v)| !v.is_some_and(f64::is_finite))
            .map(|(round, _)| round)
            .collect()
    }

    /// "Still warming" (issue 52, point 1): the window loop's forks whose
    /// later windows ran faster, or cheaper per request, than their earlier
    /// ones. Per fork of 2+ windows, the mean of its later half over the
    /// mean of its earlier half (the middle window of an odd count in
    /// neither); the cell is still warming when in at least 3/4 of its
    /// forks that rise (or fall, for CPU per request) exceeds
    /// [`WARMING_TREND`]. A note, never a gate: `None` when not.
    pub fn still_warming(&self) -> Option<String> {
        let forks: Vec<&[WindowFigures]> = self
            .trials
            .iter()
            .filter_map(|t| t.windows.as_ref().filter(|_| t.failure.is_none()))
            .map(|w| w.values.as_slice())
            .filter(|v| v.len() >= 2)
            .collect();
        let trend = |value: &dyn Fn(&WindowFigures) -> Option<f64>, sign: f64| {
            let rises: Vec<f64> = forks
                .iter()
                .filter_map(|w| {
                    let half = w.len() / 2;
                    let mean = |part: &[WindowFigures]| {
                        let v: Option<Vec<f64>> = part.iter().map(value).collect();
                        v.map(|v| v.iter().sum::<f64>() / v.len() as f64)
                    };
                    let (early, late) = (mean(&w[..half])?, mean(&w[w.len() - half..])?);
                    (early > 0.0).then(|| sign * (late / early - 1.0))
                })
                .collect();
            let warming = rises.iter().filter(|r| **r > WARMING_TREND).count();
            (!rises.is_empty() && warming * 4 >= rises.len() * 3).then(|| {
                let mut sorted = rises.clone();
                sorted.sort_by(f64::total_cmp);
                (sorted[sorted.len() / 2], warming, rises.len())
            })
        };
        let mut notes = Vec::new();
        if let Some((r, n, of)) = trend(&|w| Some(w.throughput_rps), 1.0) {
            notes.push(format!(
                "throughput rose {:.1}% in {n} of {of} forks",
                r * 100.0
            ));
        }
        if let Some((r, n, of)) = trend(&|w| w.cpu_us_per_request, -1.0) {
            notes.push(format!(
                "cpu/req fell {:.1}% in {n} of {of} forks",
                r * 100.0
            ));
        }
        (!notes.is_empty()).then(|| {
            format!(
                "still warming: {} from the first half of a fork's windows to the second (median); lengthen the warmup",
                notes.join(", ")
            )
        })
    }

    /// How reports name the cell's client: `client`, or `client @ server` with a
    /// server under test.
    pub fn label(&self) -> String {
        client_label(&self.client, self.server.as_deref())
    }
}

/// `client`, or `client @ server` when a server under test is named.
pub fn client_label(client: &str, server: Option<&str>) -> String {
    match server {
        Some(s) => format!("{client} @ {s}"),
        None => client.to_string(),
    }
}
