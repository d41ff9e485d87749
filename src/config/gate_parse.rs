//! Reading `[gate]` and `[compare]` from the spanned tree into the validated
//! [`GateConfig`] and [`CompareSettings`], with located errors. The keys of
//! `[gate]` are metric names, so this reads the tree directly instead of going
//! through a fixed field list like the rest of `raw`.
//!
//! An entry replaces the metric's default as a whole: fields it leaves out are
//! absent (no warn tier, no floor), and it gates when it has a fail threshold
//! (unless `gating = false`).

use std::ops::Range;

use super::error::Problem;
use super::gate::{
    default_gate, CompareBase, CompareSettings, GateConfig, GateOverride, MetricGate,
};
use super::gate::{
    InconclusivePolicy, InvalidPolicy, MissingBaseline, MissingCellPolicy, NotComparablePolicy,
    PairedTest, Threshold,
};
use super::raw::closest;
use super::tree::{Key, Node, Value};
use super::units::{parse_duration, parse_size};
use crate::metric::{metric_def, Direction, MetricDef, Scale, METRICS};

const GATE_KEYS: &[&str] = &[
    "alpha",
    "missing_baseline",
    "not_comparable",
    "invalid",
    "paired_test",
    "strict",
    "anchored",
    "inconclusive",
    "missing_cell",
    "override",
];
const ENTRY_KEYS: &[&str] = &["fail", "warn", "floor", "gating"];

/// Builds the gate from the `[gate]` table (absent: every default).
pub(super) fn build_gate(
    node: Option<&Node>,
    scenarios: &[&str],
    clients: &[&str],
) -> Result<GateConfig, Problem> {
    let mut gate = default_gate();
    let Some(node) = node else { return Ok(gate) };
    let entries = table(node, "gate", "[gate]")?;
    let mut overrides = None;
    for (key, value) in metric_entries(entries, "gate", true)? {
        match key.name.as_str() {
            "alpha" => gate.alpha = alpha(value)?,
            "missing_baseline" => {
                gate.missing_baseline =
                    match choice(value, "gate.missing_baseline", &["neutral", "fail"])? {
                        "neutral" => MissingBaseline::Neutral,
                        _ => MissingBaseline::Fail,
                    }
            }
            "not_comparable" => {
                gate.not_comparable = match choice(value, "gate.not_comparable", &["warn", "fail"])?
                {
                    "warn" => NotComparablePolicy::Warn,
                    _ => NotComparablePolicy::Fail,
                }
            }
            "invalid" => {
                gate.invalid = match choice(value, "gate.invalid", &["warn", "fail"])? {
                    "warn" => InvalidPolicy::Warn,
                    _ => InvalidPolicy::Fail,
                }
            }
            "inconclusive" => {
                gate.inconclusive =
                    match choice(value, "gate.inconclusive", &InconclusivePolicy::NAMES)? {
                        "fail" => InconclusivePolicy::Fail,
                        "pass" => InconclusivePolicy::Pass,
                        _ => InconclusivePolicy::Neutral,
                    }
            }
            "missing_cell" => {
                gate.missing_cell = match choice(value, "gate.missing_cell", &["warn", "fail"])? {
                    "warn" => MissingCellPolicy::Warn,
                    _ => MissingCellPolicy::Fail,
                }
            }
            "paired_test" => {
                gate.paired_test = match choice(value, "gate.paired_test", &PairedTest::NAMES)? {
                    "sign" => PairedTest::Sign,
                    _ => PairedTest::SignedRank,
                }
            }
            "strict" => match value.value {
                Value::Boolean(b) => gate.strict = b,
                _ => return Err(wrong(value, "gate.strict", "a boolean", "strict = true")),
            },
            "anchored" => match value.value {
                Value::Boolean(b) => gate.anchored = b,
                _ => {
                    return Err(wrong(
                        value,
                        "gate.anchored",
                        "a boolean",
                        "anchored = false",
                    ))
                }
            },
            "override" => overrides = Some(value),
            metric => {
                let g = metric_gate(metric, value, &format!("gate.{metric}"))?;
                let slot = gate.metrics.iter_mut().find(|m| m.metric == metric);
                match slot {
                    Some(slot) => *slot = g,
                    None => gate.metrics.push(g),
                }
            }
        }
    }
    if let Some(node) = overrides {
        let Value::Array(items) = &node.value else {
            return Err(Problem::new(
                node.span.clone(),
                "gate.override",
                format!(
                    "expected an array of tables, found {}",
                    node.value.describe()
                ),
                "write each override as a [[gate.override]] table (double brackets)",
            ));
        };
        for (i, item) in items.iter().enumerate() {
            gate.overrides
                .push(build_override(i, item, scenarios, clients)?);
        }
    }
    Ok(gate)
}

/// Builds `[compare]` (absent: `None`): `base = "git"`, or `baseline_client`,
/// `baseline_server` (a `[[server]]` name), or both; at least one.
pub(super) fn build_compare(
    node: Option<&Node>,
    clients: &[&str],
    servers: &[&str],
) -> Result<Option<CompareSettings>, Problem> {
    const KEYS: &[&str] = &["base", "baseline_client", "baseline_server"];
    let Some(node) = node else { return Ok(None) };
    let entries = table(node, "compare", "[compare]")?;
    let mut settings = CompareSettings::default();
    for (key, value) in entries {
        match key.name.as_str() {
            "baseline_client" => {
                let name = string(
                    value,
                    "compare.baseline_client",
                    "baseline_client = \"hyper\"",
                )?;
                exists(
                    name,
                    clients,
                    &value.span,
                    "compare.baseline_client",
                    "client",
                )?;
                settings.baseline_client = Some(name.to_string());
            }
            "baseline_server" => {
                let field = "compare.baseline_server";
                let name = string(value, field, "baseline_server = \"fast\"")?;
                if servers.is_empty() {
                    return Err(Problem::new(
                        value.span.clone(),
                        field,
                        "baseline_server names a server under test, but the config has no [[server]] tables",
                        "add [[server]] tables (docs/server-under-test.md), or remove baseline_server",
                    ));
                }
                exists(name, servers, &value.span, field, "server")?;
                settings.baseline_server = Some(name.to_string());
            }
            "base" => {
                let field = "compare.base";
                let base = string(value, field, "base = \"git\"")?;
                if base != "git" {
                    return Err(Problem::new(
                        value.span.clone(),
                        field,
                        format!("unknown base {base:?}"),
                        "use base = \"git\" (head against another commit of this repository), or baseline_client / baseline_server",
                    ));
                }
                settings.base = Some(CompareBase::Git);
            }
            _ => return Err(unknown(key, "compare", "[compare]", KEYS)),
        }
    }
    if settings.base.is_some()
        && (settings.baseline_client.is_some() || settings.baseline_server.is_some())
    {
        return Err(Problem::new(
            node.span.start..node.span.start,
            "compare.base",
            "base = \"git\" compares every client and server with its own base-commit build; it cannot be combined with baseline_client or baseline_server",
            "keep base = \"git\" (base vs head), or remove it to compare with a baseline client or server",
        ));
    }
    if settings.base.is_none()
        && settings.baseline_client.is_none()
        && settings.baseline_server.is_none()
    {
        return Err(Problem::new(
            node.span.start..node.span.start,
            "compare.baseline_client",
            "missing required field `baseline_client` (or `baseline_server`, or `base`)",
            "add baseline_client = \"<client name>\" (or baseline_server = \"<server name>\", or base = \"git\") to the [compare] table",
        ));
    }
    Ok(Some(settings))
}

fn build_override(
    index: usize,
    node: &Node,
    scenarios: &[&str],
    clients: &[&str],
) -> Result<GateOverride, Problem> {
    let label = format!("gate.override[{index}]");
    let entries = table(node, &label, "[[gate.override]]")?;
    let mut out = GateOverride {
        scenario: None,
        client: None,
        metrics: Vec::new(),
    };
    for (key, value) in metric_entries(entries, &label, false)? {
        let field = format!("{label}.{}", key.name);
        match key.name.as_str() {
            "scenario" => {
                let name = string(value, &field, "scenario = \"get-22b\"")?;
                if let Some(why) = super::glob::problem(name) {
                    return Err(Problem::new(
                        value.span.clone(),
                        field,
                        why,
                        "write a scenario name, or a pattern with * and ? (scenario = \"org.example.*\")",
                    ));
                }
                // A pattern may match nothing here (a JMH file's benchmarks
                // are known when it is read); a config that only gates
                // result files names no scenarios.
                if !super::glob::is_pattern(name) && !scenarios.is_empty() {
                    exists(name, scenarios, &value.span, &field, "scenario")?;
                }
                out.scenario = Some(name.to_string());
            }
            "client" => {
                let name = string(value, &field, "client = \"hyper\"")?;
                if !clients.is_empty() {
                    exists(name, clients, &value.span, &field, "client")?;
                }
                out.client = Some(name.to_string());
            }
            metric => out.metrics.push(metric_gate(metric, value, &field)?),
        }
    }
    if out.scenario.is_none() && out.client.is_none() {
        return Err(Problem::new(
            node.span.start..node.span.start,
            format!("{label}.scenario"),
            "an override needs a scenario, a client or both",
            "add scenario = \"<name>\" and/or client = \"<name>\" (for every cell, set the metric in [gate])",
        ));
    }
    Ok(out)
}

/// The entries of a `[gate]`-like table with `errors = { connect = ... }` (a
/// dotted key) flattened to `errors.connect`; unknown keys rejected.
fn metric_entries<'a>(
    entries: &'a [(Key, Node)],
    label: &str,
    top: bool,
) -> Result<Vec<(Key, &'a Node)>, Problem> {
    let fixed: &[&str] = if top {
        GATE_KEYS
    } else {
        &["scenario", "client"]
    };
    let mut allowed: Vec<&str> = fixed.to_vec();
    allowed.extend(
        METRICS
            .iter()
            .filter(|m| m.anchored_from.is_none())
            .map(|m| m.name),
    );
    let mut out = Vec::new();
    for (key, value) in entries {
        if let Some(of) = metric_def(&key.name).and_then(|d| d.anchored_from) {
            return Err(Problem::new(
                key.span.clone(),
                format!("{label}.{}", key.name),
                format!(
                    "{} has no gate of its own: compared with an anchored stored run it gates in place of {of}, under {of}'s thresholds",
                    key.name
                ),
                format!("set the thresholds on {of} instead"),
            ));
        }
        if key.name == "errors" {
            if let Value::Table(sub) = &value.value {
                if !sub
                    .iter()
                    .any(|(k, _)| ENTRY_KEYS.contains(&k.name.as_str()))
                {
                    for (k, v) in sub {
                        let name = format!("errors.{}", k.name);
                        let key = Key {
                            name,
                            span: k.span.clone(),
                        };
                        if metric_def(&key.name).is_none() {
                            return Err(unknown(&key, label, "[gate]", &allowed));
                        }
                        out.push((key, v));
                    }
                    continue;
                }
            }
        }
        if !allowed.contains(&key.name.as_str()) {
            return Err(unknown(key, label, "[gate]", &allowed));
        }
        out.push((key.clone(), value));
    }
    Ok(out)
}

/// One metric's entry: `"-5%"` (fail tier) or `{ fail, warn, floor, gating }`.
fn metric_gate(metric: &str, node: &Node, field: &str) -> Result<MetricGate, Problem> {
    let def = metric_def(metric).expect("checked against METRICS");
    let mut fail = None;
    let mut warn = None;
    let mut floor = None;
    let mut gating = None;
    match &node.value {
        Value::String(_) => fail = Some(threshold(def, node, field)?),
        Value::Table(entries) => {
            for (key, value) in entries {
                let sub = format!("{field}.{}", key.name);
                match key.name.as_str() {
                    "fail" => fail = Some(threshold(def, value, &sub)?),
                    "warn" => warn = Some(threshold(def, value, &sub)?),
                    "floor" => floor = Some(floor_value(def, value, &sub)?),
                    "gating" => match value.value {
                        Value::Boolean(b) => gating = Some((b, value.span.clone())),
                        _ => return Err(wrong(value, &sub, "a boolean", "gating = false")),
                    },
                    _ => return Err(unknown(key, field, "a metric's gate", ENTRY_KEYS)),
                }
            }
            if fail.is_none() && warn.is_none() {
                return Err(Problem::new(
                    node.span.clone(),
                    field,
                    "the entry sets no threshold",
                    format!("add fail = \"{}\" and/or warn = ...", example(def)),
                ));
            }
        }
        _ => {
            return Err(wrong(
                node,
                field,
                "a threshold string or a table",
                &format!(
                    "{metric} = \"{}\" or {metric} = {{ fail = \"{}\" }}",
                    example(def),
                    example(def)
                ),
            ))
        }
    }
    let with_floor = |t: Option<Threshold>| {
        t.map(|t| Threshold {
            absolute: t.absolute.or(floor),
            ..t
        })
    };
    let (fail, warn) = (with_floor(fail), with_floor(warn));
    if let (Some(f), Some(w)) = (fail, warn) {
        if w.relative > f.relative || w.absolute.unwrap_or(0.0) > f.absolute.unwrap_or(0.0) {
            return Err(Problem::new(
                node.span.clone(),
                format!("{field}.warn"),
                "the warn threshold is beyond the fail threshold",
                "set warn closer to 0 than fail (warn comes first), or remove it",
            ));
        }
    }
    let gating = match gating {
        Some((true, span)) if fail.is_none() => {
            return Err(Problem::new(
                span,
                format!("{field}.gating"),
                "gating = true needs a fail threshold",
                format!("add fail = \"{}\", or remove gating", example(def)),
            ))
        }
        Some((g, _)) => g,
        None => fail.is_some(),
    };
    Ok(MetricGate {
        metric: metric.to_string(),
        warn,
        fail,
        gating,
    })
}

/// A signed threshold: `"+10%"` (relative) or, for metrics compared on absolute
/// differences, `"+0.01"`. The sign must be the metric's bad direction.
fn threshold(def: &MetricDef, node: &Node, field: &str) -> Result<Threshold, Problem> {
    let text = string(node, field, &format!("fail = \"{}\"", example(def)))?.trim();
    let bad = def.direction.worse_sign();
    let problem =
        |message: String, fix: String| Problem::new(node.span.clone(), field, message, fix);
    let (sign, rest) = match text.chars().next() {
        Some(c @ ('+' | '-')) => (c, text[1..].trim()),
        _ => {
            return Err(problem(
                format!("the threshold {text:?} has no sign"),
                format!(
                    "{} gets worse as it {}; write \"{bad}{text}\"",
                    def.name,
                    worse_word(def)
                ),
            ))
        }
    };
    if sign != bad {
        return Err(problem(
            format!(
                "{} gets worse as it {}, so a threshold of {text:?} points the wrong way",
                def.name,
                worse_word(def)
            ),
            format!("write \"{bad}{rest}\""),
        ));
    }
    let absolute = def.scale == Scale::Absolute;
    let (number, percent) = match rest.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (rest, false),
    };
    if percent == absolute {
        let fix = if absolute {
            format!(
                "{} is compared as an absolute difference: write \"{}\"",
                def.name,
                example(def)
            )
        } else {
            format!(
                "write a percentage like \"{}\"; put an absolute amount in floor = ...",
                example(def)
            )
        };
        return Err(problem(
            format!("{text:?} is not a threshold for {}", def.name),
            fix,
        ));
    }
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0 && (!percent || *v <= 1000.0))
        .ok_or_else(|| {
            problem(
                format!("{text:?} is not a number"),
                format!("write it like \"{}\"", example(def)),
            )
        })?;
    Ok(if absolute {
        Threshold {
            relative: 0.0,
            absolute: Some(value),
        }
    } else {
        Threshold {
            relative: value / 100.0,
            absolute: None,
        }
    })
}

/// The absolute floor in the metric's unit: a duration for `*_us`, a size for
/// bytes, a plain number otherwise.
fn floor_value(def: &MetricDef, node: &Node, field: &str) -> Result<f64, Problem> {
    if def.scale == Scale::Absolute {
        return Err(Problem::new(
            node.span.clone(),
            field,
            format!(
                "{} takes no floor: its thresholds are already absolute",
                def.name
            ),
            "remove floor",
        ));
    }
    let bad = |message: String, fix: &str| Problem::new(node.span.clone(), field, message, fix);
    let value = match (def.unit, &node.value) {
        ("us", Value::String(s)) => parse_duration(s)
            .map(|d| d.as_secs_f64() * 1e6)
            .map_err(|m| bad(m, "write a duration like floor = \"2ms\""))?,
        ("us", other) => {
            return Err(bad(
                format!("expected a duration string, found {}", other.describe()),
                "write it like floor = \"2ms\"",
            ))
        }
        ("bytes" | "B/s", Value::String(s)) => parse_size(s)
            .map(|b| b as f64)
            .map_err(|m| bad(m, "write a size like floor = \"1MiB\""))?,
        (_, Value::Integer(i)) => *i as f64,
        (_, Value::Float(f)) => *f,
        (unit, other) => {
            return Err(bad(
                format!("expected a number of {unit}, found {}", other.describe()),
                "write it like floor = 2",
            ))
        }
    };
    if !value.is_finite() || value < 0.0 {
        return Err(bad(
            format!("the floor must be 0 or more, got {value}"),
            "write it like floor = 2",
        ));
    }
    Ok(value)
}

fn alpha(node: &Node) -> Result<f64, Problem> {
    let v = match node.value {
        Value::Float(f) => f,
        Value::Integer(i) => i as f64,
        _ => return Err(wrong(node, "gate.alpha", "a number", "alpha = 0.05")),
    };
    if !(v > 0.0 && v <= 0.5) {
        return Err(Problem::new(
            node.span.clone(),
            "gate.alpha",
            format!("alpha must be above 0 and at most 0.5, got {v}"),
            "set alpha = 0.05 (or 0.01 for a stricter gate)",
        ));
    }
    Ok(v)
}

fn choice<'a>(node: &'a Node, field: &str, options: &[&str]) -> Result<&'a str, Problem> {
    let fix = format!("use one of {}", quoted(options));
    let s = string(node, field, &fix)?;
    if options.contains(&s) {
        Ok(s)
    } else {
        Err(Problem::new(
            node.span.clone(),
            field,
            format!("unknown value {s:?}"),
            fix,
        ))
    }
}

fn exists(
    name: &str,
    defined: &[&str],
    span: &Range<usize>,
    field: &str,
    what: &str,
) -> Result<(), Problem> {
    if defined.contains(&name) {
        return Ok(());
    }
    Err(Problem::new(
        span.clone(),
        field,
        format!(
            "no {what} is named {name:?}; defined {what}s: {}",
            quoted(defined)
        ),
        format!("use one of the defined names, or add a [[{what}]] with name = {name:?}"),
    ))
}

fn table<'a>(node: &'a Node, field: &str, example: &str) -> Result<&'a [(Key, Node)], Problem> {
    match &node.value {
        Value::Table(entries) => Ok(entries),
        _ => Err(wrong(node, field, "a table", example)),
    }
}

fn string<'a>(node: &'a Node, field: &str, example: &str) -> Result<&'a str, Problem> {
    match &node.value {
        Value::String(s) => Ok(s),
        _ => Err(wrong(node, field, "a string", example)),
    }
}

fn wrong(node: &Node, field: &str, expected: &str, example: &str) -> Problem {
    Problem::new(
        node.span.clone(),
        field,
        format!("expected {expected}, found {}", node.value.describe()),
        format!("write it like {example}"),
    )
}

fn unknown(key: &Key, label: &str, section: &str, allowed: &[&str]) -> Problem {
    let near = closest(&key.name, allowed).or_else(|| {
        allowed
            .iter()
            .find(|a| a.starts_with(key.name.as_str()) || key.name.starts_with(**a))
            .copied()
    });
    let hint = near.map_or(String::new(), |n| format!("did you mean `{n}`? "));
    Problem::new(
        key.span.clone(),
        format!("{label}.{}", key.name),
        format!("unknown field `{}` in {section}", key.name),
        format!("{hint}allowed: {}", allowed.join(", ")),
    )
}

fn worse_word(def: &MetricDef) -> &'static str {
    match def.direction {
        Direction::LowerIsBetter => "rises",
        Direction::HigherIsBetter => "falls",
    }
}

fn example(def: &MetricDef) -> &'static str {
    match (def.scale, def.direction) {
        (Scale::Absolute, _) if def.unit == "ratio" => "+0.01",
        (Scale::Absolute, _) => "+5",
        (_, Direction::LowerIsBetter) => "+10%",
        (_, Direction::HigherIsBetter) => "-5%",
    }
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}
