//! A parsed TOML document as a tree of values that remember where they are in the
//! text (byte spans), so every later error can point at a line and column.
//!
//! toml's own `Value` drops spans; `toml::Spanned` keeps them for one value. This
//! tree wraps every key and value in a span, recursively.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

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
    let root: Spanned<Value> = toml::from_str(text)?;
    match root.into_inner() {
        Value::Table(entries) => Ok(entries),
        // A document is always a table.
        _ => Ok(Vec::new()),
    }
}

/// A node from a value whose span toml may not know: an implicit table (`publish`
/// in `[publish.cloudwatch]`) spans its entries.
fn node(v: MaybeSpanned) -> Node {
    let span = v.span.unwrap_or_else(|| match &v.value {
        Value::Table(entries) if !entries.is_empty() => {
            let start = entries.iter().map(|(k, n)| k.span.start.min(n.span.start));
            let end = entries.iter().map(|(k, n)| k.span.end.max(n.span.end));
            start.min().unwrap_or(0)..end.max().unwrap_or(0)
        }
        _ => 0..0,
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

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let first = map.next_key::<KeyName>()?;
        table(first, map)
    }
}

/// A table's entries, the first key already read.
fn table<'de, A: MapAccess<'de>>(first: Option<KeyName>, mut map: A) -> Result<Value, A::Error> {
    let mut entries = Vec::new();
    let mut key = first;
    while let Some(k) = key {
        let value = node(map.next_value::<MaybeSpanned>()?);
        // toml gives no span for the implicit part of a dotted key (`b` in
        // `a.b.c = 1`): point at its value instead.
        let span = k.span.unwrap_or(value.span.start..value.span.start);
        entries.push((Key { name: k.name, span }, value));
        key = map.next_key::<KeyName>()?;
    }
    Ok(Value::Table(entries))
}

/// serde_spanned's private struct protocol, which `toml::Spanned` uses. Spelled
/// out here because `Spanned` refuses values and keys toml has no span for (the
/// implicit tables and keys of `[publish.cloudwatch]` or `a.b.c = 1`), while
/// these types accept them without a span.
const SPANNED: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];

/// A value with its span, when toml knows it.
struct MaybeSpanned {
    value: Value,
    span: Option<Range<usize>>,
}

impl<'de> Deserialize<'de> for MaybeSpanned {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<MaybeSpanned, D::Error> {
        deserializer.deserialize_struct(SPANNED, SPANNED_FIELDS, MaybeSpannedVisitor)
    }
}

struct MaybeSpannedVisitor;

fn unspanned<E>(value: Result<Value, E>) -> Result<MaybeSpanned, E> {
    value.map(|value| MaybeSpanned { value, span: None })
}

impl<'de> Visitor<'de> for MaybeSpannedVisitor {
    type Value = MaybeSpanned;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a TOML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<MaybeSpanned, E> {
        unspanned(ValueVisitor.visit_bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<MaybeSpanned, E> {
        unspanned(ValueVisitor.visit_i64(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<MaybeSpanned, E> {
        unspanned(ValueVisitor.visit_u64(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<MaybeSpanned, E> {
        unspanned(ValueVisitor.visit_f64(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<MaybeSpanned, E> {
        unspanned(ValueVisitor.visit_str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MaybeSpanned, A::Error> {
        unspanned(ValueVisitor.visit_seq(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MaybeSpanned, A::Error> {
        let first = map.next_key::<KeyName>()?;
        match first {
            Some(k) if k.span.is_none() && k.name == SPANNED_START => {
                let start = map.next_value::<usize>()?;
                let mut end = None;
                let mut value = None;
                while let Some(k) = map.next_key::<KeyName>()? {
                    match k.name.as_str() {
                        SPANNED_END => end = Some(map.next_value::<usize>()?),
                        SPANNED_VALUE => value = Some(map.next_value::<Value>()?),
                        other => return Err(de::Error::unknown_field(other, SPANNED_FIELDS)),
                    }
                }
                let value = value.ok_or_else(|| de::Error::missing_field(SPANNED_VALUE))?;
                let end = end.ok_or_else(|| de::Error::missing_field(SPANNED_END))?;
                Ok(MaybeSpanned {
                    value,
                    span: Some(start..end),
                })
            }
            // An implicit table: no span, its entries follow.
            first => unspanned(table(first, map)),
        }
    }
}

/// A table key, with its span when toml knows it.
struct KeyName {
    name: String,
    span: Option<Range<usize>>,
}

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<KeyName, D::Error> {
        deserializer.deserialize_struct(SPANNED, SPANNED_FIELDS, KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = KeyName;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a table key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyName, E> {
        // toml's own private markers (a datetime is `$__toml_private_datetime`)
        // stay errors that name them, as `Spanned<String>` made them.
        if v.starts_with("$__toml_private") {
            return Err(E::invalid_value(de::Unexpected::Str(v), &"a table key"));
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
                SPANNED_START => start = Some(map.next_value::<usize>()?),
                SPANNED_END => end = Some(map.next_value::<usize>()?),
                SPANNED_VALUE => name = Some(map.next_value::<String>()?),
                other => return Err(de::Error::unknown_field(other, &[])),
            }
        }
        let name = name.ok_or_else(|| de::Error::missing_field(SPANNED_VALUE))?;
        let span = start.zip(end).map(|(s, e)| s..e);
        Ok(KeyName { name, span })
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
    fn dotted_keys_and_headers_parse() {
        let text = "[publish.cloudwatch]\nnamespace = \"x\"\n[a]\nb.c = 1\n";
        let root = parse(text).unwrap();
        assert_eq!(root[0].0.name, "publish");
        let Value::Table(publish) = &root[0].1.value else {
            panic!("publish is a table")
        };
        assert_eq!(publish[0].0.name, "cloudwatch");
        let Value::Table(cw) = &publish[0].1.value else {
            panic!("cloudwatch is a table")
        };
        assert_eq!(&text[cw[0].0.span.clone()], "namespace");
        let Value::Table(a) = &root[1].1.value else {
            panic!("a is a table")
        };
        assert_eq!(a[0].0.name, "b");
    }

    #[test]
    fn syntax_errors_carry_a_span() {
        let err = parse("a = 1\nb = [1,\n").unwrap_err();
        assert!(err.span().is_some());
    }
}
