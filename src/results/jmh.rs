//! A JMH result file (`-rf json`) read as a run (issue 31): JVM teams gate
//! the result files they already have, with the same comparison, gate,
//! report and stores as benchgate's own results.
//!
//! Recognized by its shape where every results file is read
//! ([`super::RunResults::parse_bytes`]): a JSON array (benchgate's own
//! results are an object) of entries with `benchmark`, `mode` and
//! `primaryMetric`. One cell per benchmark and its `params`; its client is
//! `jmh`. **A trial is a fork**: iterations inside one JVM share its JIT and
//! GC state and are not independent (Georges et al., OOPSLA 2007; Kalibera
//! and Jones, ISMM 2013), so a fork's value is the mean of its measurement
//! iterations (`rawData[fork]`), and SampleTime's mean and percentiles come
//! from the fork's raw histogram (`rawDataHistogram[fork]`), never from the
//! score. Each mode is its own metric in one unit (`jmh.ops_per_s`,
//! `jmh.avgt_ns`, ...; `metric::registry`), so a changed `@OutputTimeUnit`
//! never compares two scales, and a benchmark measured in another mode on
//! the other side is not comparable ([`differences`]). With fewer than
//! [`MIN_FORKS`] forks a side nothing can be decided ([`too_few_forks`]);
//! `[jmh] iterations_as_trials = true` takes the iterations as trials
//! instead, which the report calls optimistic.
//!
//! The file is untrusted: its bytes are checked against the limits of
//! [`super::jmh_limits`] before serde builds anything (at most
//! [`super::check::MAX_CELLS`] entries), and every value read is checked.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::config::Suite;
use crate::files::json::{self, Breach};
use crate::measure::histogram::MAX_TOTAL_COUNT;
use crate::metric::{Family, JmhFigures, MetricDef, TrialMetrics};

use super::{CellResult, RunResults, Trial};

/// Forks a side a comparison needs before it can decide anything: with 4
/// against 4 Mann-Whitney's smallest two-sided p-value is 2/70 = 0.029, under
/// the default alpha; with 3 against 3 it is 0.1.
pub const MIN_FORKS: usize = 4;

/// How the run id of a results file read from a JMH file begins: its
/// `started_at` is when benchgate read the file (a JMH file does not record
/// when it ran), so no report may call it the time of measurement.
pub const RUN_ID_PREFIX: &str = "jmh-";

/// Whether `run_id` is that of a JMH file read ([`RUN_ID_PREFIX`]).
pub fn is_jmh_run(run_id: &str) -> bool {
    run_id.starts_with(RUN_ID_PREFIX)
}

/// The client of every JMH cell.
pub const CLIENT: &str = "jmh";

/// What a converted run's trials are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialUnit {
    /// One fork each: the mean of its measurement iterations.
    #[default]
    Forks,
    /// One measurement iteration each (`[jmh] iterations_as_trials`):
    /// optimistic, iterations of one fork are not independent.
    Iterations,
}

impl TrialUnit {
    /// The trials `[jmh]` asks for.
    pub fn of(settings: &crate::config::jmh::JmhSettings) -> TrialUnit {
        match settings.iterations_as_trials {
            true => TrialUnit::Iterations,
            false => TrialUnit::Forks,
        }
    }
}

/// Where a run read from a JMH result file came from (`RunResults::jmh`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JmhOrigin {
    /// The file's `jmhVersion` (absent in files of JMH before 1.20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jmh_version: Option<String>,
    /// What one trial is.
    pub trials: TrialUnit,
}

/// Whether `bytes` hold a JSON array: a JMH result file's shape (every
/// benchgate results file is an object).
pub fn is_array(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// One entry of the file, as far as benchgate reads it (other fields skipped).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Entry {
    jmh_version: Option<String>,
    benchmark: String,
    mode: String,
    #[serde(default)]
    params: BTreeMap<String, String>,
    primary_metric: Metric,
    #[serde(default)]
    secondary_metrics: Secondary,
}

/// The secondary metric benchgate reads: `-prof gc`'s bytes per operation
/// (older JMH prefixes its name with "·"). Every other one is skipped
/// unbuilt, however many there are.
#[derive(Default, Deserialize)]
struct Secondary {
    #[serde(rename = "gc.alloc.rate.norm")]
    alloc: Option<Metric>,
    #[serde(rename = "·gc.alloc.rate.norm")]
    alloc_before_1_22: Option<Metric>,
}

/// SampleTime's raw data: `[fork][iteration][(value, count)]`.
type Histograms = Vec<Vec<Vec<(f64, u64)>>>;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metric {
    score_unit: String,
    #[serde(default)]
    raw_data: Option<Vec<Vec<f64>>>,
    #[serde(default)]
    raw_data_histogram: Option<Histograms>,
}

/// A JMH mode, as a result file spells it (also read by the JMH command
/// client, `orchestrate::jmh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Mode {
    Throughput,
    AverageTime,
    SampleTime,
    SingleShotTime,
}

impl Mode {
    pub(crate) fn parse(text: &str) -> Option<Mode> {
        Some(match text {
            "thrpt" => Mode::Throughput,
            "avgt" => Mode::AverageTime,
            "sample" => Mode::SampleTime,
            "ss" => Mode::SingleShotTime,
            _ => return None,
        })
    }
}

/// The JMH mode whose primary score `metric` is (`jmh.ops_per_s` ->
/// `thrpt`); `None` for any other metric.
fn mode_of_metric(metric: &str) -> Option<&'static str> {
    Some(match metric {
        "jmh.ops_per_s" => "thrpt",
        "jmh.avgt_ns" => "avgt",
        "jmh.sample_mean_ns" => "sample",
        "jmh.ss_ns" => "ss",
        _ => return None,
    })
}

/// Seconds in one of JMH's time units (also read by `orchestrate::jmh`).
pub(crate) fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1e-9,
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        "hr" => 3600.0,
        "day" => 86_400.0,
        _ => return None,
    })
}

/// Reads a JMH result file's bytes (`source` names it in errors) as a run:
/// one cell per benchmark and params, trials as `trials` says.
pub fn parse(bytes: &[u8], source: &str, trials: TrialUnit) -> anyhow::Result<RunResults> {
    let fix = "JMH writes it with -rf json; pass the file JMH wrote, unchanged";
    match json::scan(bytes, &super::jmh_limits::limits(trials)) {
        Ok(()) => {}
        Err(Breach::Syntax(e)) => {
            anyhow::bail!(
                "{source} is a JSON array, read as a JMH result file, but is not valid JSON: {e}"
            )
        }
        Err(Breach::Items { n, limit, .. }) if limit == super::check::MAX_CELLS => anyhow::bail!(
            "{source} (a JMH result file) holds {n} results (a benchmark with its params in one mode each), over the limit of {limit} cells a results file may hold; run the benchmarks in parts (a benchmark regexp on JMH's command line) and gate each part's file on its own"
        ),
        Err(b) => anyhow::bail!("{source} (a JMH result file): {b}; {fix}"),
    }
    let entries: Vec<Entry> = serde_json::from_slice(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{source} is a JSON array, read as a JMH result file, but its entries are not JMH results (each needs benchmark, mode, params and primaryMetric with scoreUnit and rawData or rawDataHistogram): {e}; {fix}"
        )
    })?;
    if entries.is_empty() {
        anyhow::bail!("{source} is an empty JMH result file: JMH ran no benchmark; check the benchmark filter of the JMH run");
    }
    // Each cell once, in the file's order, found by name; each (cell, mode) read once.
    let mut cells: Vec<(String, Vec<Option<JmhFigures>>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut seen: HashSet<(usize, Mode)> = HashSet::new();
    for (i, e) in entries.iter().enumerate() {
        let at = format!("{source}: [{i}] ({})", e.benchmark);
        let mode = Mode::parse(&e.mode).ok_or_else(|| {
            anyhow::anyhow!(
                "{at}: mode {:?} is not a JMH mode (thrpt, avgt, sample or ss); {fix}",
                e.mode
            )
        })?;
        let name = cell_name(e);
        if name.len() > super::check::MAX_NAME_BYTES {
            anyhow::bail!(
                "{at}: the benchmark with its params is {} bytes, over the limit of {}; give the @Param values shorter names",
                name.len(),
                super::check::MAX_NAME_BYTES
            );
        }
        let slot = match index.get(&name) {
            Some(&k) => k,
            None => {
                index.insert(name.clone(), cells.len());
                cells.push((name, Vec::new()));
                cells.len() - 1
            }
        };
        if !seen.insert((slot, mode)) {
            anyhow::bail!("{at}: a second {} result of {}; a JMH result file holds each benchmark, params and mode once: pass the file of one JMH run", e.mode, cells[slot].0);
        }
        let values =
            figures(e, mode, trials).map_err(|why| anyhow::anyhow!("{at}: {why}; {fix}"))?;
        let forks = &mut cells[slot].1;
        for (k, f) in values.into_iter().enumerate() {
            if forks.len() <= k {
                forks.resize(k + 1, None);
            }
            merge(forks[k].get_or_insert_with(JmhFigures::default), f);
        }
    }
    drop(index);
    let run = run(cells, entries[0].jmh_version.clone(), trials, source);
    // What was read meets the bar of every results file, as stored files must.
    super::check::check_values(&run, source)?;
    Ok(run)
}

/// `benchmark`, or `benchmark (k1=v1, k2=v2)` with its params in key order.
fn cell_name(e: &Entry) -> String {
    if e.params.is_empty() {
        return e.benchmark.clone();
    }
    let params: Vec<String> = e.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{} ({})", e.benchmark, params.join(", "))
}

/// Every figure of `from` that is set, into `into`.
fn merge(into: &mut JmhFigures, from: JmhFigures) {
    let pairs = [
        (&mut into.ops_per_s, from.ops_per_s),
        (&mut into.avgt_ns, from.avgt_ns),
        (&mut into.sample_mean_ns, from.sample_mean_ns),
        (&mut into.sample_p50_ns, from.sample_p50_ns),
        (&mut into.sample_p90_ns, from.sample_p90_ns),
        (&mut into.sample_p99_ns, from.sample_p99_ns),
        (&mut into.sample_p999_ns, from.sample_p999_ns),
        (&mut into.ss_ns, from.ss_ns),
        (&mut into.alloc_bytes_per_op, from.alloc_bytes_per_op),
    ];
    for (slot, v) in pairs {
        if v.is_some() {
            *slot = v;
        }
    }
}

/// The figures of one entry, one per trial (fork or iteration), each finite
/// and >= 0 once converted to benchgate's units; an error names the field
/// (`primaryMetric.rawData[1]`).
fn figures(e: &Entry, mode: Mode, trials: TrialUnit) -> Result<Vec<JmhFigures>, String> {
    let unit = e.primary_metric.score_unit.as_str();
    let per = |suffix: bool| {
        let time = if suffix {
            unit.strip_suffix("/op")
        } else {
            unit.strip_prefix("ops/")
        };
        time.and_then(unit_seconds).ok_or_else(|| {
            format!(
                "primaryMetric.scoreUnit {unit:?} is not a JMH unit of a {} result (like {:?})",
                e.mode,
                if suffix { "us/op" } else { "ops/s" }
            )
        })
    };
    let mut out: Vec<JmhFigures> = match mode {
        Mode::SampleTime => {
            let ns = per(true)? * 1e9;
            let forks = e.primary_metric.raw_data_histogram.as_ref().ok_or(
                "primaryMetric.rawDataHistogram is missing: benchgate reads SampleTime only from JMH's raw histogram, which -rf json writes",
            )?;
            groups(forks, trials)
                .into_iter()
                .map(|(at, pairs)| {
                    sample(pairs, ns, unit)
                        .map_err(|why| format!("primaryMetric.rawDataHistogram{at}: {why}"))
                })
                .collect::<Result<_, _>>()?
        }
        _ => {
            let (field, factor) = match mode {
                Mode::Throughput => ("ops/s", 1.0 / per(false)?),
                _ => ("ns/op", per(true)? * 1e9),
            };
            let raw = rows(e.primary_metric.raw_data.as_ref(), "primaryMetric")?;
            trial_means(raw, trials)
                .into_iter()
                .map(|(at, v)| {
                    let v = finite(v * factor, field, Some(unit))
                        .map_err(|why| format!("primaryMetric.rawData{at} {why}"))?;
                    let mut f = JmhFigures::default();
                    *match mode {
                        Mode::Throughput => &mut f.ops_per_s,
                        Mode::AverageTime => &mut f.avgt_ns,
                        _ => &mut f.ss_ns,
                    } = Some(v);
                    Ok(f)
                })
                .collect::<Result<_, String>>()?
        }
    };
    let secondary = &e.secondary_metrics;
    if let Some(m) = secondary
        .alloc
        .as_ref()
        .or(secondary.alloc_before_1_22.as_ref())
    {
        if m.score_unit == "B/op" {
            let field = "secondaryMetrics gc.alloc.rate.norm";
            let raw = rows(m.raw_data.as_ref(), field)?;
            for (f, (at, v)) in out.iter_mut().zip(trial_means(raw, trials)) {
                let v =
                    finite(v, "B/op", None).map_err(|why| format!("{field}.rawData{at} {why}"))?;
                f.alloc_bytes_per_op = Some(v);
            }
        }
    }
    Ok(out)
}

/// `v` (in `unit`, converted from the file's `from`) when it is finite and
/// >= 0; else why not.
fn finite(v: f64, unit: &str, from: Option<&str>) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        return Ok(v);
    }
    Err(match from {
        Some(from) => {
            format!("gives {v:?} {unit} once converted from {from}, not a finite value >= 0")
        }
        None => format!("gives {v:?} {unit}, not a finite value >= 0"),
    })
}

fn rows<'a>(raw: Option<&'a Vec<Vec<f64>>>, field: &str) -> Result<&'a [Vec<f64>], String> {
    match raw {
        Some(r) if r.iter().any(|f| !f.is_empty()) => Ok(r),
        _ => Err(format!(
            "{field}.rawData is missing or empty: benchgate compares forks from JMH's raw data, which -rf json writes"
        )),
    }
}

/// The trials' values, each with where it is (`[fork]` or
/// `[fork][iteration]`): each fork's mean, or every iteration.
fn trial_means(raw: &[Vec<f64>], trials: TrialUnit) -> Vec<(String, f64)> {
    let forks = raw.iter().enumerate().filter(|(_, f)| !f.is_empty());
    match trials {
        TrialUnit::Forks => forks
            .map(|(k, f)| (format!("[{k}]"), f.iter().sum::<f64>() / f.len() as f64))
            .collect(),
        TrialUnit::Iterations => forks
            .flat_map(|(k, f)| {
                f.iter()
                    .enumerate()
                    .map(move |(i, v)| (format!("[{k}][{i}]"), *v))
            })
            .collect(),
    }
}

/// The `[value, count]` pairs of each trial that has samples, with where
/// they are (`[fork]` or `[fork][iteration]`): a fork's iterations pooled,
/// or each iteration.
fn groups(forks: &[Vec<Vec<(f64, u64)>>], trials: TrialUnit) -> Vec<(String, Vec<(f64, u64)>)> {
    let forks = forks.iter().enumerate();
    match trials {
        TrialUnit::Forks => forks
            .map(|(k, f)| (format!("[{k}]"), f.concat()))
            .collect::<Vec<_>>(),
        TrialUnit::Iterations => forks
            .flat_map(|(k, f)| {
                f.iter()
                    .enumerate()
                    .map(move |(i, it)| (format!("[{k}][{i}]"), it.clone()))
            })
            .collect(),
    }
    .into_iter()
    .filter(|(_, g)| g.iter().any(|(_, c)| *c > 0))
    .collect()
}

/// SampleTime figures of one trial's samples (`ns` per score `unit`): the
/// mean and the nearest-rank percentiles, in ns. The counts add up to at
/// most [`MAX_TOTAL_COUNT`] (summed with overflow checks), as in every
/// histogram benchgate reads from outside.
fn sample(mut pairs: Vec<(f64, u64)>, ns: f64, unit: &str) -> Result<JmhFigures, String> {
    let mut n: u64 = 0;
    for (v, c) in &mut pairs {
        let converted = *v * ns;
        if !converted.is_finite() || converted < 0.0 {
            return Err(format!(
                "holds the value {v:?} {unit}, not a finite time >= 0 once converted to ns"
            ));
        }
        *v = converted;
        n = n.checked_add(*c).ok_or_else(|| {
            format!("its counts add up to more than 2^64 samples (the limit is {MAX_TOTAL_COUNT})")
        })?;
    }
    if n > MAX_TOTAL_COUNT {
        return Err(format!(
            "its counts add up to {n} samples, over the limit of {MAX_TOTAL_COUNT}"
        ));
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mean = pairs.iter().map(|(v, c)| v * *c as f64).sum::<f64>() / n as f64;
    if !mean.is_finite() {
        return Err(format!("their mean is {mean:?} ns, not a finite time >= 0"));
    }
    let at = |q: f64| {
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        pairs
            .iter()
            .find(|(_, c)| {
                seen += c;
                seen >= rank
            })
            .map(|(v, _)| *v)
    };
    Ok(JmhFigures {
        sample_mean_ns: Some(mean),
        sample_p50_ns: at(0.50),
        sample_p90_ns: at(0.90),
        sample_p99_ns: at(0.99),
        sample_p999_ns: at(0.999),
        ..JmhFigures::default()
    })
}

/// The run of `cells` (name, figures per trial).
fn run(
    cells: Vec<(String, Vec<Option<JmhFigures>>)>,
    jmh_version: Option<String>,
    trials: TrialUnit,
    source: &str,
) -> RunResults {
    let mut config = Suite::default_suite();
    let template = config.scenarios[0].clone();
    let mut client = config.clients[0].clone();
    client.name = CLIENT.into();
    config.source = format!("JMH result file {source}");
    config.clients = vec![client];
    config.scenarios = cells
        .iter()
        .map(|(name, _)| {
            let mut s = template.clone();
            s.name = name.clone();
            s.clients = vec![CLIENT.into()];
            s
        })
        .collect();
    let results = cells
        .into_iter()
        .map(|(name, forks)| {
            let trials: Vec<Trial> = forks
                .into_iter()
                .enumerate()
                .filter_map(|(k, f)| {
                    Some(Trial {
                        round: k as u32 + 1,
                        metrics: Some(TrialMetrics::jmh(f?)),
                        ..Trial::default()
                    })
                })
                .collect();
            CellResult {
                scenario: name,
                client: CLIENT.into(),
                server: None,
                anchor: false,
                summary: super::summarize(&trials),
                trials,
                histogram: None,
                histogram_uncorrected: None,
            }
        })
        .collect();
    let now = crate::timer::clock::now_rfc3339();
    RunResults {
        schema_version: super::SCHEMA_VERSION,
        run_id: format!("{RUN_ID_PREFIX}{now}"),
        started_at: now.clone(),
        finished_at: Some(now),
        git: super::GitInfo::default(),
        environment: super::Environment::unknown(),
        config,
        results,
        interrupted: None,
        shard: None,
        budget: Vec::new(),
        jmh: Some(JmhOrigin {
            jmh_version,
            trials,
        }),
    }
}

/// Why a JMH metric of `cell` cannot be decided: fewer than [`MIN_FORKS`]
/// forks on a side (`None`: enough, not a JMH metric, or trials that are
/// iterations).
pub fn too_few_forks(
    def: &MetricDef,
    baseline: (&RunResults, &CellResult),
    current: (&RunResults, &CellResult),
) -> Option<String> {
    let forks = |(run, cell): (&RunResults, &CellResult)| {
        run.jmh
            .as_ref()
            .filter(|o| o.trials == TrialUnit::Forks)
            .map(|_| cell.values(def.name).len())
    };
    if def.family != Family::Jmh {
        return None;
    }
    let (b, c) = (forks(baseline)?, forks(current)?);
    (b < MIN_FORKS || c < MIN_FORKS).then(|| {
        format!(
            "needs at least {MIN_FORKS} forks per side (`-f {MIN_FORKS}`): the baseline has {b}, this run {c}; a fork is one trial, its iterations are not independent"
        )
    })
}

/// The JMH modes a cell was measured in (`thrpt`, `avgt`, ...), in the
/// registry's order.
pub(crate) fn modes(cell: &CellResult) -> Vec<&'static str> {
    crate::metric::METRICS
        .iter()
        .filter_map(|d| Some((mode_of_metric(d.name)?, d.name)))
        .filter(|(_, m)| !cell.values(m).is_empty())
        .map(|(mode, _)| mode)
        .collect()
}

/// Why a JMH cell of the two runs cannot be compared: no mode in common
/// (a throughput against a time per operation), or trials of different
/// kinds (forks against iterations).
pub fn differences(
    baseline: (&RunResults, &CellResult),
    current: (&RunResults, &CellResult),
) -> Vec<String> {
    let (Some(bo), Some(co)) = (&baseline.0.jmh, &current.0.jmh) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if bo.trials != co.trials {
        out.push(format!(
            "JMH trials differ ({:?} vs {:?}): set [jmh] iterations_as_trials alike on both sides",
            bo.trials, co.trials
        ));
    }
    let (bm, cm) = (modes(baseline.1), modes(current.1));
    if !bm.is_empty() && !cm.is_empty() && !bm.iter().any(|m| cm.contains(m)) {
        out.push(format!(
            "JMH mode differs ({} vs {}): a benchmark is compared in one mode (-bm) on both sides",
            bm.join("+"),
            cm.join("+")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_and_the_mean_of_a_histogram() {
        // 100 samples: 1..=100 us/op, one each.
        let pairs: Vec<(f64, u64)> = (1..=100).map(|v| (v as f64, 1)).collect();
        let f = sample(pairs, 1e3, "us/op").unwrap();
        assert_eq!(f.sample_p50_ns, Some(50_000.0));
        assert_eq!(f.sample_p99_ns, Some(99_000.0));
        assert_eq!(f.sample_mean_ns, Some(50_500.0));
        // Counts weigh: 99 samples of 1 and 1 of 1000.
        let f = sample(vec![(1000.0, 1), (1.0, 99)], 1.0, "ns/op").unwrap();
        assert_eq!(
            (f.sample_p99_ns, f.sample_p999_ns),
            (Some(1.0), Some(1000.0))
        );
        assert!(sample(vec![(-1.0, 1)], 1.0, "ns/op").is_err());
    }

    #[test]
    fn a_fork_is_the_mean_of_its_iterations_unless_iterations_are_trials() {
        let raw = vec![vec![1.0, 3.0], vec![10.0, 20.0, 30.0]];
        let values = |unit| -> Vec<f64> {
            trial_means(&raw, unit)
                .into_iter()
                .map(|(_, v)| v)
                .collect()
        };
        assert_eq!(values(TrialUnit::Forks), [2.0, 20.0]);
        assert_eq!(values(TrialUnit::Iterations), [1.0, 3.0, 10.0, 20.0, 30.0]);
        assert_eq!(trial_means(&raw, TrialUnit::Iterations)[3].0, "[1][1]");
    }
}
