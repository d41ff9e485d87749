//! A parsed TOML document as a tree of values that remember where they are in the
//! text (byte spans), so every later error can point at a line and column.
//!
//! toml's own `Value` drops spans; `toml::Spanned` keeps them for one value. This
//! tree wraps every key and value in a span, recursively.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A value with its byte span in the source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub span: Range<usize>,
}

/// A table key with its byte span.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: String,
    pub span: Range<usize>,
}

/// A TOML value; tables keep their keys in document order.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    String(String),
    Integer(i64),
    Float(f64),
    Boolean(bool),
    Array(Vec<Node>),
    Table(Vec<(Key, Node)>),
}

impl Value {
    /// How the value is called in error messages: `a string "abc"`, `an integer 3`.
    pub fn describe(&self) -> String {
        match self {
            Value::String(s) => format!("a string {s:?}"),
            Value::Integer(i) => format!("an integer {i}"),
            Value::Float(f) => format!("a float {f}"),
            Value::Boolean(b) => format!("a boolean {b}"),
            Value::Array(_) => "an array".to_string(),
            Value::Table(_) => "a table".to_string(),
        }
    }
}

/// Parses TOML text into a tree of spanned values; the root is a table.
pub fn parse(text: &str) -> Result<Vec<(Key, Node)>, toml::de::Error> {
    let root: MaybeSpanned = toml::from_str(text)?;
    match root.value {
        Value::Table(entries) => Ok(entries),
        // A document is always a table.
        _ => Ok(Vec::new()),
    }
}

fn node(v: MaybeSpanned) -> Node {
    // Implicit tables (made by dotted keys and headers) have no span of their
    // own: cover their entries.
    let span = v.span.unwrap_or_else(|| {
        let spans: Vec<&Range<usize>> = match &v.value {
            Value::Table(entries) => entries.iter().map(|(_, n)| &n.span).collect(),
            Value::Array(items) => items.iter().map(|n| &n.span).collect(),
            _ => Vec::new(),
        };
        let start = spans.iter().map(|s| s.start).min().unwrap_or(0);
        let end = spans.iter().map(|s| s.end).max().unwrap_or(start);
        start..end
    });
    Node {
        value: v.value,
        span,
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a TOML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Boolean(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Integer(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        i64::try_from(v)
            .map(Value::Integer)
            .map_err(|_| E::custom("integer is too large"))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<MaybeSpanned>()? {
            items.push(node(item));
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        table_entries(map, None).map(Value::Table)
    }
}

/// The entries of a table; `first` is a key the caller already read.
fn table_entries<'de, A: MapAccess<'de>>(
    mut map: A,
    first: Option<KeyName>,
) -> Result<Vec<(Key, Node)>, A::Error> {
    let mut entries = Vec::new();
    let mut next = first;
    loop {
        let key = match next.take() {
            Some(k) => k,
            None => match map.next_key::<KeyName>()? {
                Some(k) => k,
                None => break,
            },
        };
        {
            let value = node(map.next_value::<MaybeSpanned>()?);
            let key = Key {
                name: key.name,
                // Keys of dotted table headers (`[[gate.override]]`) and dotted
                // keys (`errors.timeout = ...`) come without a span: point at the value.
                span: key.span.unwrap_or_else(|| value.span.clone()),
            };
            entries.push((key, value));
        }
    }
    Ok(entries)
}

/// A value with its span when toml provides one (it does not for implicit
/// tables). Like `toml::Spanned`, it asks for toml's span protocol, but it also
/// accepts a value without it.
struct MaybeSpanned {
    value: Value,
    span: Option<Range<usize>>,
}

impl<'de> Deserialize<'de> for MaybeSpanned {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<MaybeSpanned, D::Error> {
        deserializer.deserialize_struct(SPANNED, &SPANNED_FIELDS, MaybeSpannedVisitor)
    }
}

struct MaybeSpannedVisitor;

macro_rules! unspanned {
    ($($name:ident: $ty:ty),*) => {$(
        fn $name<E: de::Error>(self, v: $ty) -> Result<MaybeSpanned, E> {
            Ok(MaybeSpanned { value: ValueVisitor.$name(v)?, span: None })
        }
    )*};
}

impl<'de> Visitor<'de> for MaybeSpannedVisitor {
    type Value = MaybeSpanned;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a TOML value")
    }

    unspanned!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str, visit_string: String);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MaybeSpanned, A::Error> {
        Ok(MaybeSpanned {
            value: ValueVisitor.visit_seq(seq)?,
            span: None,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MaybeSpanned, A::Error> {
        let Some(first) = map.next_key::<KeyName>()? else {
            return Ok(MaybeSpanned {
                value: Value::Table(Vec::new()),
                span: None,
            });
        };
        if first.name != SPANNED_FIELDS[0] {
            return Ok(MaybeSpanned {
                value: Value::Table(table_entries(map, Some(first))?),
                span: None,
            });
        }
        let start: usize = map.next_value()?;
        let (mut end, mut value) = (None, None);
        while let Some(field) = map.next_key::<KeyName>()? {
            if field.name == SPANNED_FIELDS[1] {
                end = Some(map.next_value::<usize>()?);
            } else {
                value = Some(map.next_value::<Value>()?);
            }
        }
        let value = value.ok_or_else(|| de::Error::missing_field(SPANNED_FIELDS[2]))?;
        Ok(MaybeSpanned {
            value,
            span: Some(start..end.unwrap_or(start)),
        })
    }
}

/// A table key, with its span when toml knows it. Deserialized through toml's
/// span protocol (the private struct name and fields of `serde_spanned` 0.6, which
/// `toml::Spanned` uses), but also accepting a plain string, which toml hands out
/// for keys it has no span for.
struct KeyName {
    name: String,
    span: Option<Range<usize>>,
}

const SPANNED: &str = "$__serde_spanned_private_Spanned";
const SPANNED_FIELDS: [&str; 3] = [
    "$__serde_spanned_private_start",
    "$__serde_spanned_private_end",
    "$__serde_spanned_private_value",
];

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<KeyName, D::Error> {
        deserializer.deserialize_struct(SPANNED, &SPANNED_FIELDS, KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = KeyName;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a table key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyName, E> {
        // toml hands a date-time to a visitor as a one-key map with this key;
        // keep the marker in the error so `ConfigError::syntax` can explain it.
        if v == "$__toml_private_datetime" {
            return Err(E::custom("unsupported value $__toml_private_datetime"));
        }
        Ok(KeyName {
            name: v.to_string(),
            span: None,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyName, A::Error> {
        let (mut start, mut end, mut name) = (None, None, None);
        while let Some(field) = map.next_key::<String>()? {
            match field.as_str() {
                f if f == SPANNED_FIELDS[0] => start = Some(map.next_value::<usize>()?),
                f if f == SPANNED_FIELDS[1] => end = Some(map.next_value::<usize>()?),
                _ => name = Some(map.next_value::<String>()?),
            }
        }
        let name = name.ok_or_else(|| de::Error::missing_field(SPANNED_FIELDS[2]))?;
        Ok(KeyName {
            name,
            span: start.zip(end).map(|(s, e)| s..e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_keep_their_spans() {
        let text = "[run]\nrounds = 5\n\n[[client]]\nname = \"h\"\nx = [1, 2.5, true]\n";
        let root = parse(text).unwrap();
        let (run_key, run) = &root[0];
        assert_eq!(&text[run_key.span.clone()], "run");
        let Value::Table(run) = &run.value else {
            panic!("run is a table")
        };
        assert_eq!(run[0].1.value, Value::Integer(5));
        assert_eq!(&text[run[0].1.span.clone()], "5");
        let Value::Array(clients) = &root[1].1.value else {
            panic!("client is an array")
        };
        // An array-of-tables entry spans from its header to its last value.
        assert!(text[clients[0].span.clone()].starts_with("[[client]]"));
        let Value::Table(client) = &clients[0].value else {
            panic!("entry is a table")
        };
        assert_eq!(client[0].0.name, "name");
        assert_eq!(&text[client[1].1.span.clone()], "[1, 2.5, true]");
        let Value::Array(xs) = &client[1].1.value else {
            panic!("x is an array")
        };
        assert_eq!(xs[1].value, Value::Float(2.5));
        assert_eq!(&text[xs[2].span.clone()], "true");
    }

    #[test]
    fn dotted_keys_and_headers_are_read() {
        let text = "[gate]\nerrors.timeout = \"+1\"\n[[gate.override]]\nclient = \"a\"\n";
        let root = parse(text).unwrap();
        let Value::Table(gate) = &root[0].1.value else {
            panic!("gate is a table")
        };
        let names: Vec<&str> = gate.iter().map(|(k, _)| k.name.as_str()).collect();
        assert_eq!(names, ["errors", "override"]);
        let Value::Array(overrides) = &gate[1].1.value else {
            panic!("override is an array")
        };
        assert!(text[overrides[0].span.clone()].contains("client"));
    }

    #[test]
    fn syntax_errors_carry_a_span() {
        let err = parse("a = 1\nb = [1,\n").unwrap_err();
        assert!(err.span().is_some());
    }
}
