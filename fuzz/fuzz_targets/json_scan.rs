//! The scanner that checks untrusted JSON before serde_json builds anything
//! from it (`files::json::scan`: results files, merge shards, baselines and
//! their index, the meta file, event payloads, the lookup file), against
//! serde_json as the reference. The first byte picks the limits: the results
//! file's own, or small ones with rules by place so that every cap is
//! reachable. What must hold:
//! - a document the scanner accepts is JSON to serde_json too (it may
//!   accept invalid UTF-8 and lone surrogates, which the typed parse refuses
//!   next, so the reference here is serde_json's `IgnoredAny`);
//! - a document serde_json reads into a `Value` is never a syntax error to
//!   the scanner (only a breach of a limit);
//! - in a document both accept, every limit holds, checked on the `Value`
//!   with caps found by place independently of the scanner: depth, values,
//!   key and string lengths, items per container.
#![no_main]

use benchgate::files::json::{scan, Breach, Cap, Limits, Rule};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const RULES: &[Rule] = &[
    Rule {
        path: &["results"],
        cap: Cap::Items {
            max: 3,
            unit: "cells",
            bytes: 100,
        },
    },
    Rule {
        path: &["results", "*", "trials"],
        cap: Cap::Items {
            max: 2,
            unit: "trials",
            bytes: 10,
        },
    },
    Rule {
        path: &["results", "*", "client"],
        cap: Cap::Text(4),
    },
    Rule {
        path: &["*", "id"],
        cap: Cap::Text(2),
    },
    Rule {
        path: &["config", "**"],
        cap: Cap::Text(64),
    },
];

const SMALL: Limits = Limits {
    depth: 6,
    values: 200,
    key_bytes: 8,
    text_bytes: 12,
    items: 5,
    item_bytes: 8,
    member_bytes: 0,
    extra_bytes: 1 << 20,
    rules: RULES,
};

/// A step from a value to one inside it.
enum Step {
    Key(String),
    Index,
}

/// The caps of the rules whose path is `at`, in the rules' order (the
/// first of a kind applies), as `files::json::Rule` documents them.
fn caps<'a>(limits: &'a Limits, at: &'a [Step]) -> impl Iterator<Item = Cap> + 'a {
    limits.rules.iter().filter(|r| matches(r.path, at)).map(|r| r.cap)
}

fn matches(path: &[&str], at: &[Step]) -> bool {
    for (i, want) in path.iter().enumerate() {
        if *want == "**" {
            return true;
        }
        match at.get(i) {
            Some(_) if *want == "*" => {}
            Some(Step::Key(k)) if k == *want => {}
            _ => return false,
        }
    }
    path.len() == at.len()
}

/// Walks `v` at `at`, `depth` containers deep; counts its values and
/// asserts every cap on the way.
fn check(v: &Value, at: &mut Vec<Step>, depth: usize, limits: &Limits, values: &mut u64) {
    *values += 1;
    let items_cap = || {
        caps(limits, at)
            .find_map(|c| match c {
                Cap::Items { max, .. } => Some(max),
                Cap::Text(_) => None,
            })
            .unwrap_or(limits.items)
    };
    match v {
        Value::String(s) => {
            let cap = caps(limits, at)
                .find_map(|c| match c {
                    Cap::Text(n) => Some(n),
                    Cap::Items { .. } => None,
                })
                .unwrap_or(limits.text_bytes);
            assert!(s.len() <= cap, "a string of {} bytes passed a cap of {cap}", s.len());
        }
        Value::Array(items) => {
            assert!(depth < limits.depth, "nesting past {} passed", limits.depth);
            let cap = items_cap();
            assert!(items.len() <= cap, "{} items passed a cap of {cap}", items.len());
            for item in items {
                at.push(Step::Index);
                check(item, at, depth + 1, limits, values);
                at.pop();
            }
        }
        Value::Object(members) => {
            assert!(depth < limits.depth, "nesting past {} passed", limits.depth);
            let cap = items_cap();
            // Repeated keys count in the file, once in the map: at most as many.
            assert!(members.len() <= cap, "{} members passed a cap of {cap}", members.len());
            for (k, item) in members {
                assert!(k.len() <= limits.key_bytes, "a key of {} bytes passed", k.len());
                at.push(Step::Key(k.clone()));
                check(item, at, depth + 1, limits, values);
                at.pop();
            }
        }
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, doc)) = data.split_first() else {
        return;
    };
    let limits = match pick % 2 {
        0 => benchgate::results::check::LIMITS,
        _ => SMALL,
    };
    let scanned = scan(doc, &limits);
    if scanned.is_ok() {
        let ignored = serde_json::from_slice::<serde::de::IgnoredAny>(doc);
        assert!(ignored.is_ok(), "the scanner accepted what serde_json refuses: {ignored:?}");
    }
    let Ok(value) = serde_json::from_slice::<Value>(doc) else {
        return;
    };
    if let Err(Breach::Syntax(e)) = &scanned {
        panic!("the scanner calls JSON that serde_json reads a syntax error: {e}");
    }
    if scanned.is_ok() {
        let mut values = 0;
        check(&value, &mut Vec::new(), 0, &limits, &mut values);
        assert!(values <= limits.values, "{values} values passed a limit of {}", limits.values);
    }
});
