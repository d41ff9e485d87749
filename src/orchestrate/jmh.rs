//! JMH benchmarks as command clients (`result = "jmh"`,
//! docs/external-clients.md, "JMH benchmarks as clients"): the options
//! benchgate derives from the workload ([`options`], the `{jmh_args}`
//! argument) and the reader of JMH's JSON result file ([`parse`]).
//!
//! The result file is untrusted input, read with the rigour of benchgate's
//! own ([`super::external`]): size bounded, every entry and number checked,
//! errors naming the field and what was expected. What benchgate reads:
//! throughput from a Throughput-mode (`thrpt`) entry's score, latency from a
//! SampleTime-mode (`sample`) entry's raw histogram data (never from its
//! score or percentiles). Other modes (`avgt`, `ss`) are accepted and give
//! nothing benchgate reports: those figures are n/a, never derived.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::driver::TrialSpec;
use super::external::{shorten, MAX_RESULT_BYTES};
use crate::config::{Load, ResultFormat, StopRule};
use crate::measure::LatencyHistogram;
use crate::results::jmh::{unit_seconds, Mode};

/// Entries (benchmark x mode x params) a result file may hold.
const MAX_ENTRIES: usize = 100_000;
/// `[value, count]` pairs read from one entry's raw histogram data.
const MAX_HISTOGRAM_PAIRS: usize = 10_000_000;
/// Longest latency recorded: one hour in µs (the recorder's range).
const MAX_LATENCY_US: f64 = 3_600_000_000.0;
/// Highest throughput accepted, requests per second.
const MAX_THROUGHPUT_RPS: f64 = 1e12;

/// What benchgate read for one benchmark method from a JMH result file.
#[derive(Debug, Clone)]
pub struct JmhResult {
    /// Operations per second from the Throughput-mode entry; `None` without one.
    pub throughput_rps: Option<f64>,
    /// Latency (µs) from the SampleTime-mode entry's raw histogram data;
    /// `None` without one (or with no samples).
    pub latency: Option<LatencyHistogram>,
}

/// JMH's command-line options for one trial: only `benchmark` (an anchored
/// include pattern), the scenario's concurrency as threads, one fork, one
/// warmup iteration of `warmup` (none for a zero warmup) and one measurement
/// iteration of `duration`, failing on the first error, JSON results to
/// `result_path`, and the target URL as `-p url=...` and as the system
/// property `benchgate.url`. JMH runs a closed loop for a time: an open loop
/// or a request count is an error naming the scenario and the fix.
pub fn options(
    spec: &TrialSpec,
    benchmark: &str,
    result_path: &Path,
) -> Result<Vec<String>, String> {
    let s = &spec.scenario;
    let threads = match s.load {
        Load::Closed { concurrency } => concurrency,
        Load::Open { .. } => {
            return Err(format!(
                "scenario {:?} is an open loop (rate), but JMH runs a closed loop of threads; give JMH clients scenarios with concurrency, or list other clients in this scenario's clients",
                s.name
            ))
        }
    };
    let duration = match s.stop {
        StopRule::Duration(d) => d,
        StopRule::Requests(_) => {
            return Err(format!(
                "scenario {:?} stops after a request count, but JMH measures for a time; give it a duration instead of requests",
                s.name
            ))
        }
    };
    let time = |d: Duration| format!("{}ms", d.as_millis().max(1));
    let url = format!("{}{}", spec.base_url.trim_end_matches('/'), s.path);
    let mut args = vec![include_pattern(benchmark)];
    let mut push = |flag: &str, value: String| {
        args.push(flag.to_string());
        args.push(value);
    };
    push("-t", threads.to_string());
    push("-f", "1".into());
    if s.warmup.is_zero() {
        push("-wi", "0".into());
    } else {
        push("-wi", "1".into());
        push("-w", time(s.warmup));
    }
    push("-i", "1".into());
    push("-r", time(duration));
    push("-foe", "true".into());
    push("-rf", "json".into());
    push("-rff", result_path.display().to_string());
    push("-p", format!("url={url}"));
    push("-jvmArgsAppend", format!("-Dbenchgate.url={url}"));
    Ok(args)
}

/// The program's argv: `command` with its `{jmh_args}` argument replaced by
/// [`options`] for a JMH client; unchanged for other clients.
pub fn argv(
    command: &[String],
    result: &ResultFormat,
    spec: &TrialSpec,
    result_path: &Path,
) -> Result<Vec<String>, String> {
    let ResultFormat::Jmh { benchmark } = result else {
        return Ok(command.to_vec());
    };
    let options = options(spec, benchmark, result_path)?;
    let mut out = Vec::with_capacity(command.len() + options.len());
    for a in command {
        if a == ResultFormat::JMH_ARGS {
            out.extend(options.iter().cloned());
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// `^package\.Class\.method$`: JMH matches include patterns anywhere in a
/// benchmark's name, so the name is anchored and its dots (and `$`) escaped.
fn include_pattern(benchmark: &str) -> String {
    let mut p = String::from("^");
    for ch in benchmark.chars() {
        if matches!(ch, '.' | '$') {
            p.push('\\');
        }
        p.push(ch);
    }
    p.push('$');
    p
}

/// Reads the result of `benchmark` from a JMH JSON result file's bytes: its
/// Throughput-mode score as requests per second and its SampleTime-mode raw
/// histogram data as latency. Errors name the entry and field.
pub fn parse(bytes: &[u8], benchmark: &str) -> Result<JmhResult, String> {
    if bytes.len() as u64 > MAX_RESULT_BYTES {
        return Err(format!(
            "the JMH result file is {} bytes, over the {MAX_RESULT_BYTES} byte limit; run fewer benchmarks or shorter SampleTime iterations",
            bytes.len()
        ));
    }
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
        format!("the file is not a JMH JSON result (JMH writes it with -rf json): {e}")
    })?;
    let entries = doc.as_array().ok_or_else(|| {
        format!(
            "a JMH JSON result is an array of benchmark results, found {}",
            shorten(&doc)
        )
    })?;
    if entries.len() > MAX_ENTRIES {
        return Err(format!(
            "the file holds {} results, over the limit of {MAX_ENTRIES}",
            entries.len()
        ));
    }
    let mut found: Vec<(Mode, usize, &Map<String, Value>)> = Vec::new();
    let mut others: Vec<&str> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let obj = entry
            .as_object()
            .ok_or_else(|| format!("[{i}] must be an object (one benchmark result)"))?;
        let name = text(obj, "benchmark", i)?;
        if name != benchmark {
            if others.len() < 5 && !others.contains(&name) {
                others.push(name);
            }
            continue;
        }
        let mode_text = text(obj, "mode", i)?;
        let mode = Mode::parse(mode_text).ok_or_else(|| {
            format!("[{i}].mode is {mode_text:?}, not a JMH mode (thrpt, avgt, sample or ss)")
        })?;
        if let Some((_, j, _)) = found.iter().find(|(m, _, _)| *m == mode) {
            return Err(format!(
                "[{j}] and [{i}] are both {mode_text} results of {benchmark} ({}); one trial measures one parameter combination: fix the other @Param values with -p name=value in command",
                params_differ(&entries[*j], entry)
            ));
        }
        found.push((mode, i, obj));
    }
    if found.is_empty() {
        return Err(if others.is_empty() {
            format!("the file holds no result for {benchmark}: JMH ran nothing (check the benchmark name and the jar)")
        } else {
            format!(
                "the file holds no result for {benchmark}, only for {}; check benchmark in the config",
                others.join(", ")
            )
        });
    }
    let mut result = JmhResult {
        throughput_rps: None,
        latency: None,
    };
    for (mode, i, obj) in found {
        let metric = obj
            .get("primaryMetric")
            .and_then(Value::as_object)
            .ok_or_else(|| format!("[{i}].primaryMetric must be an object"))?;
        match mode {
            Mode::Throughput => result.throughput_rps = Some(throughput(metric, i)?),
            Mode::SampleTime => result.latency = latency(metric, i)?,
            Mode::AverageTime | Mode::SingleShotTime => {}
        }
    }
    Ok(result)
}

fn text<'a>(obj: &'a Map<String, Value>, field: &str, i: usize) -> Result<&'a str, String> {
    obj.get(field).and_then(Value::as_str).ok_or_else(|| {
        format!(
            "[{i}].{field} must be a string, found {}",
            obj.get(field).map_or("nothing".into(), shorten)
        )
    })
}

/// The params two results differ in, like `pipelining "1" vs "2"` (at most
/// five, values shortened).
fn params_differ(a: &Value, b: &Value) -> String {
    let params = |e: &Value| e.get("params").and_then(Value::as_object).cloned();
    let (pa, pb) = (params(a).unwrap_or_default(), params(b).unwrap_or_default());
    let null = Value::Null;
    let mut keys: Vec<&String> = pa.keys().chain(pb.keys()).collect();
    keys.sort();
    keys.dedup();
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| pa.get(*k) != pb.get(*k))
        .take(5)
        .map(|k| {
            let shown = |m: &Map<String, Value>| shorten(m.get(k).unwrap_or(&null));
            format!(
                "{} {} vs {}",
                shorten(&Value::String(k.clone())),
                shown(&pa),
                shown(&pb)
            )
        })
        .collect();
    if differ.is_empty() {
        "same params".into()
    } else {
        format!("params {}", differ.join(", "))
    }
}

/// The score unit's time unit: `ops/<unit>` for throughput, `<unit>/op` for
/// time per operation.
fn score_unit(metric: &Map<String, Value>, i: usize, throughput: bool) -> Result<f64, String> {
    let field = format!("[{i}].primaryMetric.scoreUnit");
    let unit = metric
        .get("scoreUnit")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{field} must be a string like \"ops/s\" or \"us/op\""))?;
    let time = if throughput {
        unit.strip_prefix("ops/")
    } else {
        unit.strip_suffix("/op")
    };
    time.and_then(unit_seconds).ok_or_else(|| {
        let like = if throughput { "ops/s" } else { "us/op" };
        format!("{field} is {unit:?}, not a JMH unit like {like:?} (ns, us, ms, s, min, hr, day)")
    })
}

/// Requests per second from a Throughput-mode score (operations per unit).
fn throughput(metric: &Map<String, Value>, i: usize) -> Result<f64, String> {
    let seconds = score_unit(metric, i, true)?;
    let score = metric.get("score");
    score
        .and_then(Value::as_f64)
        .map(|s| s / seconds)
        .filter(|r| r.is_finite() && *r >= 0.0 && *r <= MAX_THROUGHPUT_RPS)
        .ok_or_else(|| {
            format!(
                "[{i}].primaryMetric.score must be a throughput of 0 to {MAX_THROUGHPUT_RPS} operations per second, found {}",
                score.map_or("nothing".into(), shorten)
            )
        })
}

/// Latency from SampleTime's raw histogram data,
/// `rawDataHistogram[fork][iteration] = [[value, count], ...]` in the score
/// unit: every fork and iteration, each value converted to whole µs.
fn latency(metric: &Map<String, Value>, i: usize) -> Result<Option<LatencyHistogram>, String> {
    let us_per_unit = score_unit(metric, i, false)? * 1e6;
    let field = format!("[{i}].primaryMetric.rawDataHistogram");
    let forks = metric
        .get("rawDataHistogram")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            format!("{field} is missing: benchgate reads SampleTime latency only from JMH's raw histogram data, which JMH's JSON result holds for every sample-mode benchmark")
        })?;
    // The recorder's bounds, from the one place that decides them.
    let mut h = LatencyHistogram::new().inner().clone();
    let mut pairs = 0usize;
    for (f, fork) in forks.iter().enumerate() {
        let iterations = fork
            .as_array()
            .ok_or_else(|| format!("{field}[{f}] must be an array of iterations"))?;
        for (t, iteration) in iterations.iter().enumerate() {
            let at = format!("{field}[{f}][{t}]");
            let items = iteration
                .as_array()
                .ok_or_else(|| format!("{at} must be an array of [value, count] pairs"))?;
            pairs += items.len();
            if pairs > MAX_HISTOGRAM_PAIRS {
                return Err(format!(
                    "{field} has more than {MAX_HISTOGRAM_PAIRS} [value, count] pairs"
                ));
            }
            for (k, item) in items.iter().enumerate() {
                let (us, count) = sample(item, us_per_unit).ok_or_else(|| {
                    format!(
                        "{at}[{k}] must be [value, count]: a time of 0 to 1 hour in the score unit and a non-negative integer, found {}",
                        shorten(item)
                    )
                })?;
                // Sub-microsecond samples count as 1 µs, as the recorder does.
                h.record_n(us.max(1), count)
                    .map_err(|e| format!("{at}[{k}]: {e:?}"))?;
            }
        }
    }
    crate::measure::histogram::check_total(&h).map_err(|e| format!("{field}: {e}"))?;
    Ok((!h.is_empty()).then(|| LatencyHistogram::from_inner(h)))
}

/// One `[value, count]` pair: the value in whole µs and its count.
fn sample(item: &Value, us_per_unit: f64) -> Option<(u64, u64)> {
    let [value, count] = item.as_array()?.as_slice() else {
        return None;
    };
    let us = value.as_f64()? * us_per_unit;
    if !us.is_finite() || !(0.0..=MAX_LATENCY_US).contains(&us) {
        return None;
    }
    Some((us.round() as u64, count.as_u64()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ClientKind, Suite};

    const NAME: &str = "org.example.HttpBench.get";

    fn err(text: &str) -> String {
        parse(text.as_bytes(), NAME).unwrap_err()
    }

    fn entry(mode: &str, metric: &str) -> String {
        format!(
            r#"[{{"benchmark":"{NAME}","mode":"{mode}","params":{{}},"primaryMetric":{metric}}}]"#
        )
    }

    /// The trial of the first scenario and client of `toml`.
    fn spec(toml: &str) -> TrialSpec {
        let suite = Suite::from_toml(toml, "t.toml").unwrap();
        TrialSpec {
            scenario: suite.scenarios[0].clone(),
            client: suite.clients[0].clone(),
            base_url: "http://127.0.0.1:4000".into(),
            round: 1,
            control_url: None,
            threads: 1,
            server_watch: None,
            windows: 1,
            marker_lag: None,
            close_lag: None,
        }
    }

    const CLIENT: &str = "[[client]]\nname = \"j\"\nkind = \"command\"\nresult = \"jmh\"\nbenchmark = \"org.example.HttpBench.get\"\ncommand = [\"java\", \"-jar\", \"b.jar\", \"{jmh_args}\", \"-bm\", \"sample\"]\n";

    #[test]
    fn options_come_from_the_workload_and_replace_the_placeholder() {
        let s = spec(&format!("{CLIENT}[[scenario]]\nname = \"s\"\npath = \"/bytes/22\"\nconcurrency = 3\nwarmup = \"1500ms\"\nduration = \"2s\"\n"));
        let ClientKind::Command(cmd) = &s.client.kind else {
            panic!("a command client")
        };
        let argv = argv(&cmd.command, &cmd.result, &s, Path::new("/r/out.json")).unwrap();
        let url = "http://127.0.0.1:4000/bytes/22";
        let expected = [
            "java",
            "-jar",
            "b.jar",
            r"^org\.example\.HttpBench\.get$",
            "-t",
            "3",
            "-f",
            "1",
            "-wi",
            "1",
            "-w",
            "1500ms",
            "-i",
            "1",
            "-r",
            "2000ms",
            "-foe",
            "true",
            "-rf",
            "json",
            "-rff",
            "/r/out.json",
            "-p",
            &format!("url={url}"),
            "-jvmArgsAppend",
            &format!("-Dbenchgate.url={url}"),
            "-bm",
            "sample",
        ];
        assert_eq!(argv, expected);
        // No warmup: no warmup iteration.
        let s = spec(&format!(
            "{CLIENT}[[scenario]]\nname = \"s\"\npath = \"/\"\nwarmup = \"0s\"\n"
        ));
        let o = options(&s, NAME, Path::new("/r")).unwrap();
        assert!(o.windows(2).any(|w| w == ["-wi", "0"]) && !o.contains(&"-w".to_string()));
    }

    #[test]
    fn open_loops_and_request_counts_are_refused_with_the_fix() {
        let open = spec(&format!(
            "{CLIENT}[[scenario]]\nname = \"o\"\npath = \"/\"\nrate = 100\n"
        ));
        assert!(options(&open, NAME, Path::new("/r"))
            .unwrap_err()
            .contains("open loop"));
        let counted = spec(&format!(
            "{CLIENT}[[scenario]]\nname = \"c\"\npath = \"/\"\nrequests = 10\n"
        ));
        assert!(options(&counted, NAME, Path::new("/r"))
            .unwrap_err()
            .contains("give it a duration"));
    }

    #[test]
    fn the_include_pattern_is_anchored_and_escaped() {
        assert_eq!(include_pattern("a.B$C.m"), r"^a\.B\$C\.m$");
    }

    #[test]
    fn units_convert_to_microseconds_and_requests_per_second() {
        let r = parse(entry("sample", r#"{"score":1,"scoreUnit":"ns/op","rawDataHistogram":[[[[2500,2],[400,1]]],[[[1e6,1]]]]}"#).as_bytes(), NAME).unwrap();
        let s = r.latency.unwrap().summary().unwrap();
        // 2500 ns -> 3 µs (rounded), 400 ns -> 1 µs (the recorder's floor), 1e6 ns -> 1000 µs.
        assert_eq!((s.count, s.min_us, s.max_us), (4, 1, 1000));
        assert_eq!(s.p50_us, 3);
        let r = parse(
            entry("thrpt", r#"{"score":2.5,"scoreUnit":"ops/us"}"#).as_bytes(),
            NAME,
        )
        .unwrap();
        assert_eq!(r.throughput_rps, Some(2_500_000.0));
        let r = parse(
            entry("thrpt", r#"{"score":120,"scoreUnit":"ops/min"}"#).as_bytes(),
            NAME,
        )
        .unwrap();
        assert_eq!(r.throughput_rps, Some(2.0));
        let r = parse(
            entry("ss", r#"{"score":3,"scoreUnit":"s/op"}"#).as_bytes(),
            NAME,
        )
        .unwrap();
        assert!(r.throughput_rps.is_none() && r.latency.is_none());
    }

    #[test]
    fn rejects_hostile_and_malformed_files() {
        assert!(err("not json").contains("not a JMH JSON result"));
        assert!(err(r#"{"benchmark":"x"}"#).contains("an array of benchmark results"));
        assert!(err("[1]").contains("[0] must be an object"));
        assert!(err(r#"[{"mode":"thrpt"}]"#).contains("[0].benchmark must be a string"));
        assert!(err("[]").contains("JMH ran nothing"));
        assert!(err(&entry("fast", "{}")).contains("not a JMH mode"));
        assert!(err(&entry("thrpt", "1")).contains("[0].primaryMetric must be an object"));
        assert!(err(&entry("thrpt", r#"{"score":1,"scoreUnit":"req/s"}"#))
            .contains("[0].primaryMetric.scoreUnit is \"req/s\""));
        assert!(
            err(&entry("thrpt", r#"{"score":"NaN","scoreUnit":"ops/s"}"#))
                .contains("[0].primaryMetric.score must be a throughput")
        );
        assert!(err(&entry("thrpt", r#"{"score":-1,"scoreUnit":"ops/s"}"#))
            .contains("[0].primaryMetric.score"));
        assert!(err(&entry("sample", r#"{"score":1,"scoreUnit":"us/op"}"#))
            .contains("rawDataHistogram is missing"));
        for bad in [
            r#"[[[[-1,1]]]]"#,
            r#"[[[[1,-1]]]]"#,
            r#"[[[[1,1.5]]]]"#,
            r#"[[[[1]]]]"#,
            r#"[[[[1,1,1]]]]"#,
            r#"[[[["1",1]]]]"#,
            r#"[[[[4e9,1]]]]"#,
        ] {
            let e = err(&entry(
                "sample",
                &format!(r#"{{"score":1,"scoreUnit":"s/op","rawDataHistogram":{bad}}}"#),
            ));
            assert!(
                e.contains("[0].primaryMetric.rawDataHistogram[0][0][0] must be [value, count]"),
                "{bad}: {e}"
            );
        }
        assert!(err(&entry(
            "sample",
            r#"{"score":1,"scoreUnit":"s/op","rawDataHistogram":[1]}"#
        ))
        .contains("rawDataHistogram[0] must be an array of iterations"));
        let twice = format!(
            "[{},{}]",
            &entry("thrpt", r#"{"score":1,"scoreUnit":"ops/s"}"#)[1..].trim_end_matches(']'),
            &entry("thrpt", r#"{"score":2,"scoreUnit":"ops/s"}"#)[1..].trim_end_matches(']')
        );
        assert!(err(&twice).contains("[0] and [1] are both thrpt results"));
        let huge = vec![b' '; (MAX_RESULT_BYTES + 1) as usize];
        assert!(parse(&huge, NAME).unwrap_err().contains("byte limit"));
    }
}
