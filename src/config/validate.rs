//! Raw model -> validated [`Suite`]: defaults applied, units parsed, ranges and
//! combinations checked, client references resolved. Each check returns a
//! [`Problem`] at the span of the offending value, with the fix.

use super::{Schedule, MAX_WINDOWS};
use std::collections::HashMap;
use std::ops::Range;
use std::time::Duration;

use super::error::{line_col, Problem};
use super::raw::{self, At, RawClient, RawConfig, RawRun};
use super::units::{format_duration, parse_duration};
use super::{gate_parse, inject, scenario};
use super::{tree, ClientKind, ClientSpec, ConfigError, HttpVersion, RunSettings, StopRule, Suite};

/// `[run] rounds` when absent.
pub const DEFAULT_ROUNDS: u32 = 5;
/// Fewest `[run] rounds` (and `--rounds`).
pub const MIN_ROUNDS: u32 = 1;
/// Most `[run] rounds` (and `--rounds`).
pub const MAX_ROUNDS: u32 = 100;
/// The most rounds a config may ask for (`[run] max_rounds`), and what a
/// budget allows when `max_rounds` is not given.
pub const MAX_MAX_ROUNDS: u32 = 300;
/// The longest `[run] budget`.
pub const MAX_BUDGET: Duration = Duration::from_secs(6 * 3600);
/// Warmup when neither the scenario nor `[run]` sets one.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(1);
/// Measurement duration when no stop rule is set anywhere.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(3);
/// Per-request timeout when none is set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Open-loop worker cap when `max_in_flight` is absent.
pub const DEFAULT_MAX_IN_FLIGHT: u32 = 256;
/// Longest client or scenario name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest scenario path, in characters.
pub const MAX_PATH_CHARS: usize = 2048;
/// Most workers (closed-loop connections, open-loop requests in flight) of a trial.
///
/// Why 50,000: issue 19's 20,000-connection study (the count
/// tests/run/many_connections.rs drives) with room to spare, while the driver and
/// the reference server, one socket per connection each, still fit a 65,536
/// open-file limit (`LimitNOFILE=65536`, `--ulimit nofile=65536`) with
/// [`OPEN_FILE_RESERVE`](crate::measure::limits::OPEN_FILE_RESERVE) to spare.
/// The open-file check before a run
/// ([`crate::measure::limits::ensure_open_files`]) says what this machine holds.
pub const MAX_WORKERS: u32 = 50_000;
/// Highest open-loop rate, requests per second.
pub const MAX_RATE: f64 = 1_000_000.0;

/// Parses and validates TOML text; `source` names the input in errors and becomes
/// [`Suite::source`].
pub fn validate(text: &str, source: &str) -> Result<Suite, ConfigError> {
    let tree = tree::parse(text).map_err(|e| ConfigError::syntax(&e, text, source))?;
    let raw = raw::read(&tree, text.len()).map_err(|p| p.into_error(text, source))?;
    build(&raw, text, source).map_err(|p| p.into_error(text, source))
}

/// Why `name` cannot be a client or scenario name, if it cannot.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars == 0 {
        Some("a name cannot be empty".into())
    } else if chars > MAX_NAME_CHARS {
        Some(format!(
            "the name is {chars} characters long, the limit is {MAX_NAME_CHARS}"
        ))
    } else if name.chars().any(char::is_control) {
        Some(format!("the name {name:?} contains a control character"))
    } else {
        None
    }
}

/// `[run]` after defaults: what scenarios inherit.
pub(super) struct RunDefaults {
    pub warmup: Duration,
    pub stop: StopRule,
    pub timeout: Duration,
}

fn build(raw: &RawConfig, text: &str, source: &str) -> Result<Suite, Problem> {
    let (mut run, inherited) = build_run(&raw.run)?;
    run.anchor = super::anchor::build(raw.run.anchor.as_ref(), raw)?;
    let jmh = super::jmh::build(raw.jmh.as_ref())?;
    // A JMH-only team has no HTTP clients: `[jmh]` or `[gate]` alone gates
    // result files (`config::jmh`).
    let gates_only = raw.clients.is_empty()
        && raw.scenarios.is_empty()
        && raw.servers.is_empty()
        && (raw.jmh.is_some() || raw.gate.is_some());
    if raw.clients.is_empty() && !gates_only {
        return Err(Problem::new(
            raw.clients_span.clone().unwrap_or(raw.end..raw.end),
            "client",
            "no clients are defined",
            format!("add at least one [[client]] table with name = \"...\" and kind = {} (a config that only gates JMH result files needs a [jmh] or [gate] table instead)", built_in_kinds(&[])),
        ));
    }
    let mut clients = Vec::with_capacity(raw.clients.len());
    let mut seen: HashMap<String, Range<usize>> = HashMap::new();
    // Relative paths (a command client's cwd) are relative to the config file.
    let config_dir = std::path::Path::new(source)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    for (i, c) in raw.clients.iter().enumerate() {
        let spec = build_client(c, config_dir)?;
        unique("client", i, &spec.name, c.name.as_ref(), &mut seen, text)?;
        clients.push(spec);
    }
    if raw.scenarios.is_empty() && !gates_only {
        return Err(Problem::new(
            raw.scenarios_span.clone().unwrap_or(raw.end..raw.end),
            "scenario",
            "no scenarios are defined",
            "add at least one [[scenario]] table with name = \"...\" and path = \"/bytes/22\"",
        ));
    }
    let servers = super::server::build(&raw.servers, config_dir, text)?;
    if !servers.is_empty() {
        built_in_clients_only(raw)?;
    }
    let names: Vec<&str> = clients.iter().map(|c| c.name.as_str()).collect();
    let mut scenarios = Vec::with_capacity(raw.scenarios.len());
    let mut seen = HashMap::new();
    for (i, s) in raw.scenarios.iter().enumerate() {
        let scenario = scenario::build_scenario(s, &inherited, &names)?;
        unique(
            "scenario",
            i,
            &scenario.name,
            s.name.as_ref(),
            &mut seen,
            text,
        )?;
        scenarios.push(scenario);
    }
    let scenario_names: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
    let gate = gate_parse::build_gate(raw.gate.as_ref(), &scenario_names, &names)?;
    let server_names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    let compare = gate_parse::build_compare(raw.compare.as_ref(), &names, &server_names)?;
    let publish = match &raw.publish_cloudwatch {
        Some(cw) => Some(super::PublishSettings {
            cloudwatch: Some(super::publish::build_cloudwatch(cw)?),
        }),
        None => None,
    };
    let mut suite = Suite {
        source: source.to_string(),
        run,
        clients,
        scenarios,
        gate,
        compare,
        publish,
        servers,
        jmh,
    };
    super::schedule::check(&suite, raw)?;
    let scenarios_span = raw.scenarios_span.clone().unwrap_or(raw.end..raw.end);
    if let Some(why) = suite.too_many_cells() {
        return Err(Problem::new(
            scenarios_span,
            "scenario",
            why,
            "split the suite into several configs, or give scenarios fewer clients (clients = [...])",
        ));
    }
    if raw.run.max_rounds.is_none() && suite.run.budget.is_some() {
        suite.run.max_rounds = suite.budget_max_rounds();
    }
    let Some(too_many) = suite.too_many_rounds() else {
        return Ok(suite);
    };
    // The key to lower: max_rounds, or rounds when even those are too many.
    let at = |key: &Option<At<i64>>| {
        key.as_ref()
            .map_or(scenarios_span.clone(), |k| k.span.clone())
    };
    let (span, field) = match too_many.fit {
        0 => (scenarios_span.clone(), "scenario"),
        fit if fit < suite.run.rounds => (at(&raw.run.rounds), "run.rounds"),
        _ => (at(&raw.run.max_rounds), "run.max_rounds"),
    };
    let fix = too_many.fix(suite.run.rounds);
    Err(Problem::new(span, field, too_many.why, fix))
}

/// Servers under test are driven over plain HTTP by the built-in clients: a
/// TLS client or a command client cannot run.
fn built_in_clients_only(raw: &RawConfig) -> Result<(), Problem> {
    let command = raw.clients.iter().find_map(|c| {
        c.kind
            .as_ref()
            .filter(|k| k.value == "command")
            .map(|k| (c, k))
    });
    if let Some((c, k)) = command {
        return Err(Problem::new(
            k.span.clone(),
            format!("{}.kind", c.label),
            super::server::NO_COMMAND_CLIENTS,
            format!("drive the server with a built-in client (kind = {}), or benchmark this client against the reference server in a config without [[server]]", built_in_kinds(&[])),
        ));
    }
    let tls = raw
        .clients
        .iter()
        .find_map(|c| c.tls.as_ref().filter(|t| t.value).map(|t| (c, t)));
    match tls {
        None => Ok(()),
        Some((c, t)) => Err(Problem::new(
            t.span.clone(),
            format!("{}.tls", c.label),
            "tls = true is not supported with a server under test ([[server]]): benchgate drives it over plain HTTP",
            "remove tls = true (or the [[server]] tables, to benchmark against the reference server's HTTPS port)",
        )),
    }
}

/// Rejects the second use of a name, pointing at it and naming the first one's line.
pub(super) fn unique(
    section: &str,
    index: usize,
    name: &str,
    at: Option<&At<String>>,
    seen: &mut HashMap<String, Range<usize>>,
    text: &str,
) -> Result<(), Problem> {
    let span = at.map(|a| a.span.clone()).unwrap_or_default();
    if let Some(first) = seen.get(name) {
        let (line, _) = line_col(text, first.start);
        return Err(Problem::new(
            span,
            format!("{section}[{index}].name"),
            format!("the {section} name {name:?} is already used on line {line}"),
            format!("give each {section} a unique name"),
        ));
    }
    seen.insert(name.to_string(), span);
    Ok(())
}

fn build_run(run: &RawRun) -> Result<(RunSettings, RunDefaults), Problem> {
    let rounds = match &run.rounds {
        Some(r) => int_in(
            r,
            "run.rounds",
            i64::from(MIN_ROUNDS),
            i64::from(MAX_ROUNDS),
            "rounds = 5",
        )? as u32,
        None => DEFAULT_ROUNDS,
    };
    let warmup = opt_duration(run.warmup.as_ref(), "run.warmup", false)?.unwrap_or(DEFAULT_WARMUP);
    let stop = stop_rule(run.duration.as_ref(), run.requests.as_ref(), "run", "[run]")?
        .unwrap_or(StopRule::Duration(DEFAULT_DURATION));
    let timeout =
        opt_duration(run.timeout.as_ref(), "run.timeout", true)?.unwrap_or(DEFAULT_TIMEOUT);
    let pin = run.pin.as_ref().is_none_or(|p| p.value);
    let budget = opt_duration(run.budget.as_ref(), "run.budget", true)?;
    if let (Some(b), Some(at)) = (budget, &run.budget) {
        if b > MAX_BUDGET {
            return Err(Problem::new(
                at.span.clone(),
                "run.budget",
                format!(
                    "is {}, longer than the {} a run may take",
                    format_duration(b),
                    format_duration(MAX_BUDGET)
                ),
                "budget = \"5m\" (a pull-request check is usually given a few minutes)",
            ));
        }
    }
    let max_rounds = match &run.max_rounds {
        Some(m) => {
            let fix = format!("max_rounds = {} (at least rounds = {rounds})", rounds * 3);
            int_in(
                m,
                "run.max_rounds",
                i64::from(rounds),
                i64::from(MAX_MAX_ROUNDS),
                &fix,
            )? as u32
        }
        // A budget buys rounds while a comparison is undecided: the budget,
        // not a round count, is what stops them.
        None if budget.is_some() => MAX_MAX_ROUNDS.max(rounds),
        None => rounds,
    };
    let windows = match &run.windows {
        Some(w) => int_in(w, "run.windows", 1, i64::from(MAX_WINDOWS), "windows = 4")? as u32,
        None => 1,
    };
    // What an interleaved schedule needs of the rest of the config:
    // `schedule::check`, once the suite is built.
    let schedule = match &run.schedule {
        Some(s) => Schedule::parse(&s.value).ok_or_else(|| {
            Problem::new(
                s.span.clone(),
                "run.schedule",
                format!("is {:?}, not a schedule this benchgate runs", s.value),
                "schedule = \"sequential\", \"interleaved\" or \"duet\"",
            )
        })?,
        None => Schedule::Sequential,
    };
    Ok((
        RunSettings {
            rounds,
            max_rounds,
            pin,
            anchor: None,
            budget,
            windows,
            schedule,
        },
        RunDefaults {
            warmup,
            stop,
            timeout,
        },
    ))
}

fn build_client(c: &RawClient, config_dir: &std::path::Path) -> Result<ClientSpec, Problem> {
    let path = |field: &str| format!("{}.{field}", c.label);
    let name = required_name(
        c.name.as_ref(),
        &c.span,
        &c.label,
        "client",
        "name = \"hyper\"",
    )?;
    let kind = c.kind.as_ref().ok_or_else(|| {
        missing(
            &c.span,
            &path("kind"),
            "kind",
            &format!("kind = {}", built_in_kinds(&[])),
            "[[client]]",
        )
    })?;
    let built_in = ClientKind::BUILT_IN.iter().find(|k| k.name() == kind.value);
    let kind = match (kind.value.as_str(), built_in) {
        (_, Some(built_in)) => built_in.clone(),
        ("command", None) => ClientKind::Command(super::command::build(c, config_dir)?),
        (other, None) => {
            return Err(Problem::new(
                kind.span.clone(),
                path("kind"),
                format!("unknown client kind {other:?}"),
                format!("use one of {}", built_in_kinds(&["command"])),
            ));
        }
    };
    if !matches!(kind, ClientKind::Command(_)) {
        if let Some((field, span)) = super::command::stray_field(c) {
            return Err(Problem::new(
                span,
                path(field),
                format!("{field} applies to kind = \"command\" clients only"),
                format!("remove {field}, or set kind = \"command\" with a command = [...]"),
            ));
        }
    }
    let pool = match &c.pool {
        Some(p) => Some(int_in(p, &path("pool"), 1, 100_000, "pool = 10")? as u32),
        None => None,
    };
    let http = match c.http.as_ref().map(|h| (h.value.as_str(), h)) {
        None | Some(("1.1", _)) => HttpVersion::Http1,
        Some(("2", _)) => HttpVersion::Http2,
        Some((other, h)) => {
            return Err(Problem::new(
                h.span.clone(),
                path("http"),
                format!("unknown HTTP version {other:?}"),
                "use http = \"1.1\" or http = \"2\"",
            ))
        }
    };
    let tls = c.tls.as_ref().is_some_and(|t| t.value);
    plain_http1_only(c, &kind, http)?;
    let command = matches!(kind, ClientKind::Command(_));
    let inject_cpu_ns = inject::cpu(c, command)?;
    let inject_tail = inject::tail(c, &kind)?;
    Ok(ClientSpec {
        name,
        kind,
        pool,
        http,
        tls,
        inject_cpu_ns,
        inject_tail,
    })
}

/// A driver that speaks HTTP/1.1 over plain TCP only is not asked for
/// HTTP/2 or TLS.
fn plain_http1_only(c: &RawClient, kind: &ClientKind, http: HttpVersion) -> Result<(), Problem> {
    if !kind.plain_http1_only() {
        return Ok(());
    }
    let path = |field: &str| format!("{}.{field}", c.label);
    let name = c.kind.as_ref().map_or("", |k| k.value.as_str());
    if let Some(h) = c.http.as_ref().filter(|_| http != HttpVersion::Http1) {
        return Err(Problem::new(
            h.span.clone(),
            path("http"),
            format!("kind = {name:?} speaks HTTP/1.1 only"),
            "remove http (or set http = \"1.1\"), or use kind = \"hyper\" for HTTP/2",
        ));
    }
    if let Some(t) = c.tls.as_ref().filter(|t| t.value) {
        return Err(Problem::new(
            t.span.clone(),
            path("tls"),
            format!("kind = {name:?} speaks plain TCP only, no TLS"),
            "remove tls = true, or use kind = \"hyper\" for HTTPS",
        ));
    }
    Ok(())
}

pub(super) fn required_name(
    name: Option<&At<String>>,
    table: &Range<usize>,
    label: &str,
    section: &str,
    example: &str,
) -> Result<String, Problem> {
    let name = name.ok_or_else(|| {
        missing(
            table,
            &format!("{label}.name"),
            "name",
            example,
            &format!("[[{section}]]"),
        )
    })?;
    match name_problem(&name.value) {
        None => Ok(name.value.clone()),
        Some(message) => Err(Problem::new(
            name.span.clone(),
            format!("{label}.name"),
            message,
            format!(
                "use 1 to {MAX_NAME_CHARS} characters without control characters, like {example}"
            ),
        )),
    }
}

/// The built-in client kinds, then `also`, as a message lists them, from
/// [`ClientKind::BUILT_IN`]: `"hyper", "reqwest", "reqwest-blocking" or "h1-lean"`.
fn built_in_kinds(also: &[&'static str]) -> String {
    let names: Vec<String> = ClientKind::BUILT_IN
        .iter()
        .map(ClientKind::name)
        .chain(also.iter().copied())
        .map(|name| format!("{name:?}"))
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

pub(super) fn missing(
    table: &Range<usize>,
    field: &str,
    key: &str,
    example: &str,
    section: &str,
) -> Problem {
    Problem::new(
        table.start..table.start,
        field,
        format!("missing required field `{key}`"),
        format!("add {example} to this {section} table"),
    )
}

/// `duration` xor `requests`; `None` when neither is set.
pub(super) fn stop_rule(
    duration: Option<&At<String>>,
    requests: Option<&At<i64>>,
    label: &str,
    section: &str,
) -> Result<Option<StopRule>, Problem> {
    match (duration, requests) {
        (Some(_), Some(r)) => Err(Problem::new(
            r.span.clone(),
            format!("{label}.requests"),
            format!("duration and requests are both set in {section}; a trial stops after one or the other"),
            "remove duration to stop after a request count, or remove requests to stop after a time",
        )),
        (Some(d), None) => Ok(opt_duration(Some(d), &format!("{label}.duration"), true)?.map(StopRule::Duration)),
        (None, Some(r)) => {
            Ok(Some(StopRule::Requests(int_in(r, &format!("{label}.requests"), 1, 1_000_000_000, "requests = 200000")? as u64)))
        }
        (None, None) => Ok(None),
    }
}

/// An integer in `lo..=hi`.
pub(super) fn int_in(
    v: &At<i64>,
    field: &str,
    lo: i64,
    hi: i64,
    example: &str,
) -> Result<i64, Problem> {
    if (lo..=hi).contains(&v.value) {
        Ok(v.value)
    } else {
        Err(Problem::new(
            v.span.clone(),
            field,
            format!("must be from {lo} to {hi}, got {}", v.value),
            format!("set a value in that range, like {example}"),
        ))
    }
}

/// A duration string; `positive` rejects zero.
pub(super) fn opt_duration(
    v: Option<&At<String>>,
    field: &str,
    positive: bool,
) -> Result<Option<Duration>, Problem> {
    let Some(v) = v else { return Ok(None) };
    let key = field.rsplit('.').next().unwrap_or(field);
    let example = format!("write it like {key} = \"3s\" or {key} = \"500ms\"");
    let d = parse_duration(&v.value).map_err(|msg| {
        let (message, fix) = split_fix(&msg, &example);
        Problem::new(v.span.clone(), field, message, fix)
    })?;
    if positive && d.is_zero() {
        return Err(Problem::new(
            v.span.clone(),
            field,
            format!("must be longer than 0, got {}", format_duration(d)),
            example,
        ));
    }
    Ok(Some(d))
}

/// Splits a units message `what; how to fix` into its two halves.
pub(super) fn split_fix(msg: &str, default_fix: &str) -> (String, String) {
    match msg.split_once("; ") {
        Some((what, fix)) => (what.to_string(), fix.to_string()),
        None => (msg.to_string(), default_fix.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rules() {
        assert!(name_problem("get-22b").is_none());
        assert!(
            name_problem(&"é".repeat(64)).is_none(),
            "the limit counts characters, not bytes"
        );
        assert!(name_problem(&"x".repeat(65))
            .unwrap()
            .contains("65 characters"));
        assert!(name_problem("").unwrap().contains("empty"));
        assert!(name_problem("a\nb").unwrap().contains("control character"));
    }

    #[test]
    fn unit_messages_split_into_what_and_fix() {
        let msg = parse_duration("3").unwrap_err();
        let (what, fix) = split_fix(&msg, "default");
        assert_eq!(what, "`3` has no unit");
        assert!(fix.starts_with("write it like"));
        assert_eq!(
            split_fix("`9e99s` is too large", "shorter"),
            ("`9e99s` is too large".into(), "shorter".into())
        );
    }

    #[test]
    fn stop_rule_inherits_when_the_scenario_sets_none() {
        let text = "[run]\nrequests = 7\n[[client]]\nname = \"a\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/\"\n";
        let suite = validate(text, "t.toml").unwrap();
        assert_eq!(suite.scenarios[0].stop, StopRule::Requests(7));
        assert_eq!(suite.source, "t.toml");
    }
}
