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

fn node(spanned: Spanned<Value>) -> Node {
    let span = spanned.span();
    Node {
        value: spanned.into_inner(),
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
        while let Some(item) = seq.next_element::<Spanned<Value>>()? {
            items.push(node(item));
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            let span = key.span();
            let key = Key {
                name: key.into_inner(),
                span,
            };
            let value = node(map.next_value::<Spanned<Value>>()?);
            entries.push((key, value));
        }
        Ok(Value::Table(entries))
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
    fn syntax_errors_carry_a_span() {
        let err = parse("a = 1\nb = [1,\n").unwrap_err();
        assert!(err.span().is_some());
    }
}
