use super::*;

const OPEN: Limits = Limits {
    depth: 64,
    values: 1 << 20,
    key_bytes: 1 << 20,
    text_bytes: 1 << 20,
    items: 1 << 20,
    item_bytes: 0,
    member_bytes: 0,
    extra_bytes: u64::MAX,
    rules: &[],
};

const RULES: &[Rule] = &[
    Rule {
        path: &["results"],
        cap: Cap::Items {
            max: 3,
            unit: "cells",
            bytes: 1000,
        },
    },
    Rule {
        path: &["results", "*", "trials"],
        cap: Cap::Items {
            max: 2,
            unit: "trials",
            bytes: 0,
        },
    },
    Rule {
        path: &["results", "*", "client"],
        cap: Cap::Text(4),
    },
    Rule {
        path: &["config", "**"],
        cap: Cap::Text(100),
    },
];

const RESULTS: Limits = Limits {
    depth: 4,
    values: 1000,
    key_bytes: 8,
    text_bytes: 10,
    items: 5,
    item_bytes: 0,
    member_bytes: 0,
    extra_bytes: 1 << 20,
    rules: RULES,
};

fn breach(text: &str, limits: &Limits) -> String {
    scan(text.as_bytes(), limits)
        .expect_err("should be refused")
        .to_string()
}

#[test]
fn accepts_what_serde_json_accepts_and_refuses_with_its_message() {
    let doc = r#" {"a": [1, -2.5e+3, 0.1E-2, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"], "b": {}, "c": [], "": [[{}]]} "#;
    scan(doc.as_bytes(), &OPEN).unwrap();
    // Every byte dropped, doubled or replaced by a troublemaker: the scanner
    // and serde_json agree on what is JSON.
    let bytes = doc.as_bytes();
    let mut variants = Vec::new();
    for i in 0..bytes.len() {
        let mut v = bytes.to_vec();
        v.remove(i);
        variants.push(v);
        let mut v = bytes.to_vec();
        v.insert(i, bytes[i]);
        variants.push(v);
        for c in [b',', b'"', b'}', b']', b'0', b'-', b'\\', b'.', 0x01] {
            let mut v = bytes.to_vec();
            v[i] = c;
            variants.push(v);
        }
    }
    for v in variants {
        let ours = scan(&v, &OPEN);
        let theirs = serde_json::from_slice::<serde::de::IgnoredAny>(&v);
        assert_eq!(
            ours.is_ok(),
            theirs.is_ok(),
            "{:?}: {ours:?}",
            String::from_utf8_lossy(&v)
        );
        if let (Err(Breach::Syntax(ours)), Err(theirs)) = (ours, theirs) {
            assert_eq!(ours, theirs.to_string());
        }
    }
    assert_eq!(
        breach("[1,\n -1e999]", &OPEN),
        "is not valid JSON: number out of range at line 2 column 7"
    );
    scan(b"[1e308, -1e-999, 12345678901234567890123]", &OPEN).unwrap();
    for not_json in [
        "",
        " ",
        "01",
        "1.",
        "-",
        "[1,]",
        "{\"a\"}",
        "nul",
        "\"\\u12\"",
        "{} x",
    ] {
        assert!(
            breach(not_json, &OPEN).starts_with("is not valid JSON: "),
            "{not_json:?}"
        );
    }
}

#[test]
fn nesting_deeper_than_the_limit_is_refused_where_it_happens() {
    scan(br#"{"a": [[{"b": 1}]]}"#, &RESULTS).unwrap();
    assert_eq!(
        breach(r#"{"a": [[{"b": [1]}]]}"#, &RESULTS),
        "a[0][0].b nests more than 4 levels deep, over the limit of 4"
    );
    // Far deeper than the stack would take if it recursed.
    let deep = "[".repeat(1_000_000);
    assert_eq!(
        breach(&deep, &OPEN),
        format!(
            "{} nests more than 64 levels deep, over the limit of 64",
            "[0]".repeat(64)
        )
    );
}

#[test]
fn values_are_counted_in_all() {
    // The array, 1, [2], 2, the object and 3.
    let limits = Limits { values: 6, ..OPEN };
    scan(b"[1, [2], {\"k\": 3}]", &limits).unwrap();
    assert_eq!(
        breach("[1, [2], {\"k\": 3}, 4]", &limits),
        "the document has more than 6 values, over the limit of 6"
    );
}

#[test]
fn strings_and_keys_are_capped_by_place_once_unescaped() {
    // The default cap, 10 bytes: "\u00e9" is 2 bytes, a surrogate pair 4.
    scan(br#"{"run_id": "\u00e9\u00e9\ud83d\ude00xx"}"#, &RESULTS).unwrap();
    assert_eq!(
        breach(r#"{"run_id": "\u00e9\u00e9\ud83d\ude00xxx"}"#, &RESULTS),
        "run_id has 11 bytes, over the limit of 10"
    );
    // A rule's own cap, whatever the key's escapes.
    assert_eq!(
        breach(
            r#"{"results": [{"client": "abc"}, {"cli\u0065nt": "abcde"}]}"#,
            &RESULTS
        ),
        "results[1].client has 5 bytes, over the limit of 4"
    );
    // `**`: anything below.
    scan(
        format!(r#"{{"config": {{"a": [{{"b": "{}"}}]}}}}"#, "x".repeat(100)).as_bytes(),
        &RESULTS,
    )
    .unwrap();
    let long_key = format!(r#"{{"ok": 1, "{}": 2}}"#, "k".repeat(40));
    assert_eq!(
        breach(&long_key, &RESULTS),
        format!(
            "the key starting {:?} has 40 bytes, over the limit of 8",
            "k".repeat(32)
        )
    );
}

#[test]
fn items_are_counted_per_container_with_the_rules_unit() {
    let limits = Limits {
        depth: 8,
        ..RESULTS
    };
    let cells = |n: usize, trials: usize| {
        let trials = vec!["{}"; trials].join(",");
        let cell = format!(r#"{{"trials": [{trials}]}}"#);
        format!(r#"{{"results": [{}]}}"#, vec![cell; n].join(","))
    };
    scan(cells(3, 2).as_bytes(), &limits).unwrap();
    assert_eq!(
        breach(&cells(4, 0), &limits),
        "results has 4 cells, over the limit of 3"
    );
    assert_eq!(
        breach(&cells(2, 3), &limits),
        "results[0].trials has 3 trials, over the limit of 2"
    );
    // Elsewhere the default, for arrays and objects alike.
    assert_eq!(
        breach("[[1, 2, 3, 4, 5, 6]]", &limits),
        "[0] has 6 items, over the limit of 5"
    );
    assert_eq!(
        breach(
            r#"{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6}"#,
            &limits
        ),
        "the document has 6 items, over the limit of 5"
    );
}

#[test]
fn the_memory_of_items_and_strings_is_budgeted_beyond_the_file() {
    let limits = Limits {
        item_bytes: 100,
        member_bytes: 10,
        extra_bytes: 1 << 20,
        ..OPEN
    };
    // 10,000 array items at 100 bytes: under 1 MiB.
    let items = format!("[{}]", vec!["0"; 10_000].join(","));
    scan(items.as_bytes(), &limits).unwrap();
    // 11,000: over.
    let items = format!("[{}]", vec!["0"; 11_000].join(","));
    assert_eq!(
        breach(&items, &limits),
        "its items would take about 2 MiB of memory beyond the file's own size, over the limit of 1 MiB"
    );
    // A string costs its allocation beyond its bytes; members their own cost.
    let strings = format!("[{}]", vec!["\"\""; 8_000].join(","));
    assert!(breach(&strings, &limits).starts_with("its items would take about 2 MiB"));
    // A map's members: their own cost and their keys (5 bytes and 32).
    let members: Vec<String> = (0..25_000).map(|i| format!("\"{i:05}\": 0")).collect();
    let members = format!("{{{}}}", members.join(","));
    assert!(breach(&members, &limits).starts_with("its items would take about 2 MiB"));
}

#[test]
fn a_maps_keys_and_first_node_are_counted_a_structs_fields_not() {
    let map = Limits {
        member_bytes: 100,
        extra_bytes: 1 << 30,
        ..OPEN
    };
    let members = |n: usize, key: usize| {
        let m: Vec<String> = (0..n)
            .map(|i| format!("\"{}{i:05}\": 0", "k".repeat(key)))
            .collect();
        format!("{{{}}}", m.join(","))
    };
    // n members with keys of 5 + key bytes: (n + 4) entries, n keys.
    for (n, key) in [(1, 0), (10, 0), (1_000, 50)] {
        let want = (n as u64 + 4) * 100 + n as u64 * (5 + key as u64 + STRING_BYTES);
        assert_eq!(
            estimate(members(n, key).as_bytes(), &map),
            Ok(want),
            "{n} {key}"
        );
    }
    // A struct's fields (members of no cost) cost nothing, keys included.
    let fields = Limits {
        member_bytes: 0,
        ..map
    };
    assert_eq!(estimate(members(1_000, 50).as_bytes(), &fields), Ok(0));
}
