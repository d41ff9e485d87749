//! Setting metric entries of `[gate]` in a config file without disturbing the
//! rest of it (`benchgate calibrate --write`). The text goes through toml_edit,
//! which keeps comments, key order, blank lines and the spelling of every value
//! it is not asked to change.
//!
//! Each metric's entry is set where it is, in the form it has:
//!
//! - absent: added as an inline table (`name = { fail = .., warn = .. }`) at the
//!   end of `[gate]`; without a `[gate]` table one is appended to the file;
//! - a threshold string (`name = "-5%"`): replaced by an inline table holding
//!   the new keys, with the entry's trailing comment;
//! - an inline table or a sub-table (`[gate.name]`): the keys are set in place,
//!   other keys (`gating`) and comments kept.
//!
//! `[gate]` itself may be a table, an inline table (`gate = { .. }`) or dotted
//! keys; a metric with a dot (`errors.connect`) is found as a quoted key or as a
//! key of the `errors` table, and added as a dotted key. An existing value of a
//! type the config never accepts there is refused, naming the file, the field
//! and the fix. Line endings follow the file (CRLF in, CRLF out).
//!
//! How a threshold and a floor are written ([`threshold_text`], [`floor_text`],
//! the inverse of `gate_parse`) is here too, shared with calibrate's snippet.

use thiserror::Error;
use toml_edit::{Decor, DocumentMut, InlineTable, Item, Table, TableLike, Value};

use super::gate::Threshold;
use crate::metric::{metric_def, scale_of, Scale};

/// New values for one metric's `[gate]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryUpdate {
    /// The metric (`throughput_rps`, `errors.connect`).
    pub metric: String,
    /// `(key, TOML value text)` in the order a new entry lists them:
    /// `("fail", "\"-5%\"")`, `("floor", "\"2ms\"")`, `("floor", "1048576")`.
    pub set: Vec<(String, String)>,
}

/// Why `[gate]` could not be edited; the file is left as it was.
#[derive(Debug, Error)]
#[error("{source_name}: {field}: {message}; the file is unchanged: {fix}")]
pub struct GateEditError {
    /// The file path or other name of the input.
    pub source_name: String,
    /// Dotted path of the offending value (`gate.throughput_rps`).
    pub field: String,
    pub message: String,
    pub fix: String,
}

/// `text` with every update applied to its `[gate]` table. `source_name` names
/// the input in errors. toml_edit writes `\n`; a text with CRLF line ends gets
/// CRLF throughout.
pub fn set_gate_entries(
    text: &str,
    source_name: &str,
    updates: &[EntryUpdate],
) -> Result<String, GateEditError> {
    let err = |field: &str, message: String, fix: &str| GateEditError {
        source_name: source_name.to_string(),
        field: field.to_string(),
        message,
        fix: fix.to_string(),
    };
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        err(
            "(file)",
            format!("not valid TOML ({})", e.message()),
            "fix the TOML syntax, then run calibrate --write again",
        )
    })?;
    let root = doc.as_table_mut();
    if !root.contains_key("gate") {
        root.insert("gate", Item::Table(Table::new()));
    }
    let (gate, inline) = match root.get_mut("gate") {
        Some(Item::Table(t)) => {
            // `[[gate.override]]` alone leaves `gate` implicit (no header).
            if t.is_implicit() && !t.is_dotted() {
                t.set_implicit(false);
            }
            (t as &mut dyn TableLike, false)
        }
        Some(Item::Value(Value::InlineTable(t))) => (t as &mut dyn TableLike, true),
        other => {
            let found = other.map_or("none", |i| i.type_name());
            return Err(err(
                "gate",
                format!("expected a table, found {}", a(found)),
                "write the gate settings as a [gate] table, then run calibrate --write again (or paste the snippet by hand)",
            ));
        }
    };
    let last = gate.len().checked_sub(1);
    for u in updates {
        let mut values = Vec::new();
        for (key, text) in &u.set {
            let mut v: Value = text.parse().map_err(|_| {
                err(
                    &format!("gate.{}.{key}", u.metric),
                    format!("{text} is not a TOML value"),
                    "report this as a bug in benchgate",
                )
            })?;
            v.decor_mut().clear();
            values.push((key.as_str(), v));
        }
        set_entry(gate, inline, &u.metric, &values)
            .map_err(|(field, found, fix)| err(&field, format!("found {}", a(found)), &fix))?;
    }
    if let Some(Item::Value(Value::InlineTable(t))) = root.get_mut("gate") {
        move_closing_space(t, last);
    }
    let out = doc.to_string();
    Ok(if text.contains("\r\n") {
        out.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        out
    })
}

/// `a table`, `an inline table`, `an integer`.
fn a(type_name: &str) -> String {
    match type_name.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {type_name}"),
        _ => format!("a {type_name}"),
    }
}

/// A refusal: the field, the type found there, the fix.
type Refusal = (String, &'static str, String);

/// Sets `metric`'s entry in `gate` (an inline table when `inline`) to hold `values`.
fn set_entry(
    gate: &mut dyn TableLike,
    inline: bool,
    metric: &str,
    values: &[(&str, Value)],
) -> Result<(), Refusal> {
    let fix = || {
        format!(
            "write it as {metric} = \"<threshold>\" or {metric} = {{ fail = \"<threshold>\" }} (or remove it), then run calibrate --write again"
        )
    };
    // `errors.connect`: a quoted key of `[gate]`, else `connect` of `errors`.
    let (parent, key) = match metric.split_once('.') {
        Some((group, name)) if !gate.contains_key(metric) => {
            if !gate.contains_key(group) {
                gate.insert(group, dotted_table(inline));
            }
            match gate.get(group) {
                Some(item) if item.is_table_like() => {}
                other => {
                    let found = other.map_or("none", Item::type_name);
                    return Err((format!("gate.{group}"), found, fix()));
                }
            }
            let Some(t) = gate.get_mut(group).and_then(Item::as_table_like_mut) else {
                unreachable!("checked to be a table above");
            };
            (t, name)
        }
        _ => (gate, metric),
    };
    let entry = |decor: Option<&Decor>| {
        let mut t = InlineTable::new();
        for (k, v) in values {
            t.insert(*k, v.clone());
        }
        let mut v = Value::InlineTable(t);
        if let Some(d) = decor {
            *v.decor_mut() = d.clone();
        }
        Item::Value(v)
    };
    match parent.get_mut(key) {
        None => {
            parent.insert(key, entry(None));
            Ok(())
        }
        Some(slot @ Item::Value(Value::String(_))) => {
            *slot = entry(slot.as_value().map(Value::decor));
            Ok(())
        }
        Some(Item::Value(Value::InlineTable(t))) => {
            let last = t.len().checked_sub(1);
            set_keys(t, metric, values)?;
            move_closing_space(t, last);
            Ok(())
        }
        Some(Item::Table(t)) => set_keys(t, metric, values),
        Some(other) => Err((format!("gate.{metric}"), other.type_name(), fix())),
    }
}

/// The space before an inline table's `}` belongs to its last value: after
/// keys were appended, moves it from the value that was last (at `was_last`) to
/// the new last one, so `{ a = 1 }` grows into `{ a = 1, b = 2 }`.
fn move_closing_space(t: &mut InlineTable, was_last: Option<usize>) {
    let Some(was_last) = was_last.filter(|i| i + 1 < t.len()) else {
        return;
    };
    let space = t.iter_mut().nth(was_last).and_then(|(_, v)| {
        let space = v.decor().suffix().cloned();
        v.decor_mut().set_suffix("");
        space
    });
    if let (Some(space), Some((_, v))) = (space, t.iter_mut().last()) {
        v.decor_mut().set_suffix(space);
    }
}

/// An empty table for a dotted key (`errors.connect = ..`): inline under an
/// inline table, a dotted table under a table.
fn dotted_table(inline: bool) -> Item {
    if inline {
        let mut t = InlineTable::new();
        t.set_dotted(true);
        Item::Value(Value::InlineTable(t))
    } else {
        let mut t = Table::new();
        t.set_dotted(true);
        Item::Table(t)
    }
}

/// Sets each of `values` in the entry `t` of `metric`, keeping each replaced
/// value's surrounding spaces and comment.
fn set_keys(t: &mut dyn TableLike, metric: &str, values: &[(&str, Value)]) -> Result<(), Refusal> {
    for (k, v) in values {
        match t.get_mut(k) {
            None => {
                t.insert(k, Item::Value(v.clone()));
            }
            Some(Item::Value(old @ (Value::String(_) | Value::Integer(_) | Value::Float(_)))) => {
                let mut new = v.clone();
                *new.decor_mut() = old.decor().clone();
                *old = new;
            }
            Some(other) => {
                return Err((
                    format!("gate.{metric}.{k}"),
                    other.type_name(),
                    format!(
                    "write {k} = \"<threshold>\" (or remove it), then run calibrate --write again"
                ),
                ))
            }
        }
    }
    Ok(())
}

/// A threshold as the config writes it: `"-5%"`, `"+0.01"` (signed in the
/// metric's bad direction).
pub fn threshold_text(metric: &str, t: &Threshold) -> String {
    let sign = metric_def(metric).map_or('+', |d| d.direction.worse_sign());
    match scale_of(metric) {
        Scale::Log => format!("\"{sign}{}%\"", trim_number(t.relative * 100.0)),
        Scale::Absolute => format!("\"{sign}{}\"", trim_number(t.absolute.unwrap_or(0.0))),
    }
}

fn trim_number(v: f64) -> String {
    let s = format!("{:.6}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// An absolute floor as the config writes it: `"2ms"` for µs metrics, a size or
/// a number otherwise.
pub fn floor_text(metric: &str, floor: f64) -> String {
    match metric_def(metric).map_or("", |d| d.unit) {
        "us" => format!(
            "\"{}\"",
            super::units::format_duration(std::time::Duration::from_nanos(
                (floor * 1e3).round() as u64
            ))
        ),
        _ => trim_number(floor),
    }
}

#[cfg(test)]
mod tests;
