//! Every built-in client kind × HTTP version × plain/TLS, end to end through the
//! real binary: one short trial each of a GET and of a PUT with a 64 KiB body
//! against the reference server (127.0.0.1), checked for measured requests,
//! zero errors, and the protocol the server says it served (HTTP version,
//! TLS, negotiated ALPN).
//!
//! The kinds come from `ClientKind::BUILT_IN`, the only list of built-in
//! kinds config validation accepts, so every kind a config can name is run
//! here (a kind that speaks plain HTTP/1.1 only, `h1-lean`, runs that cell;
//! a test checks that config validation refuses the others with the fix); [`expected_kind`] matches the enum exhaustively, so a new kind does
//! not compile here until it is classified, and a test checks `BUILT_IN`
//! against that classification.

use crate::common;

use benchgate::config::{ClientKind, HttpVersion};
use benchgate::results::Trial;
use common::{cell, run_config};

/// Requests measured per trial (after a short warmup).
const REQUESTS: u64 = 200;
const PUT_BODY: u64 = 64 * 1024;

/// Every client kind, classified: the config name of a built-in kind (which
/// must be in `ClientKind::BUILT_IN`, so in the matrix), `None` for the kinds
/// that are not built-in drivers.
fn expected_kind(kind: &ClientKind) -> Option<&'static str> {
    match kind {
        ClientKind::Hyper => Some("hyper"),
        ClientKind::Reqwest => Some("reqwest"),
        ClientKind::ReqwestBlocking => Some("reqwest-blocking"),
        ClientKind::H1Lean => Some("h1-lean"),
        // No sockets: tests/run_e2e.rs runs it.
        ClientKind::Mock(_) => None,
        // External programs: tests/run/command_clients.rs and tests/run/example_clients.rs.
        ClientKind::Command(_) => None,
    }
}

/// The HTTP versions, exhaustively, with their config spelling.
fn http_name(http: HttpVersion) -> &'static str {
    match http {
        HttpVersion::Http1 => "1.1",
        HttpVersion::Http2 => "2",
    }
}

const HTTP_VERSIONS: [HttpVersion; 2] = [HttpVersion::Http1, HttpVersion::Http2];

/// One client of the matrix.
struct Entry {
    name: String,
    kind: &'static str,
    http: HttpVersion,
    tls: bool,
}

/// Every combination of a built-in kind, HTTP version and TLS; `supported`
/// picks those the kind speaks (or those it does not).
fn combinations(supported: bool) -> Vec<Entry> {
    let mut entries = vec![];
    for kind in ClientKind::BUILT_IN.iter() {
        let kind_name = kind.name();
        for http in HTTP_VERSIONS {
            for tls in [false, true] {
                let speaks = !kind.plain_http1_only() || (http == HttpVersion::Http1 && !tls);
                if speaks != supported {
                    continue;
                }
                entries.push(Entry {
                    name: format!(
                        "{kind_name}-h{}-{}",
                        http_name(http),
                        if tls { "tls" } else { "plain" }
                    ),
                    kind: expected_kind(kind).expect("BUILT_IN holds built-in kinds only"),
                    http,
                    tls,
                });
            }
        }
    }
    entries
}

fn matrix() -> Vec<Entry> {
    combinations(true)
}

#[test]
fn built_in_list_agrees_with_the_classification() {
    let mut names: Vec<&str> = ClientKind::BUILT_IN.iter().map(ClientKind::name).collect();
    for kind in ClientKind::BUILT_IN.iter() {
        let name = kind.name();
        assert_eq!(expected_kind(kind), Some(name), "BUILT_IN entry {name}");
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ClientKind::BUILT_IN.len(), "duplicate names");
}

fn config(entries: &[Entry]) -> String {
    let mut toml = String::from("[run]\nrounds = 1\n\n");
    for e in entries {
        toml.push_str(&format!(
            "[[client]]\nname = \"{}\"\nkind = \"{}\"\nhttp = \"{}\"\ntls = {}\n\n",
            e.name,
            e.kind,
            http_name(e.http),
            e.tls
        ));
    }
    toml.push_str(&format!(
        r#"[[scenario]]
name = "get"
path = "/bytes/1000"
concurrency = 2
warmup = "50ms"
requests = {REQUESTS}

[[scenario]]
name = "put-64k"
method = "PUT"
path = "/upload"
body = "{PUT_BODY}"
concurrency = 2
warmup = "50ms"
requests = {REQUESTS}
"#
    ));
    toml
}

/// What the server served for `e` in one trial's window: every request in
/// the expected HTTP version, over TLS with the matching ALPN or in the clear.
fn check_protocol(e: &Entry, scenario: &str, t: &Trial) -> Result<(), String> {
    let s = t.server.as_ref().ok_or("no server counters")?;
    let n = s.requests;
    if n == 0 {
        return Err("the server counted no request in the window".into());
    }
    let (h1, h2) = match e.http {
        HttpVersion::Http1 => (n, 0),
        HttpVersion::Http2 => (0, n),
    };
    let (tls, alpn_h2, alpn_http1) = match (e.tls, e.http) {
        (false, _) => (0, 0, 0),
        (true, HttpVersion::Http1) => (n, 0, n),
        (true, HttpVersion::Http2) => (n, n, 0),
    };
    let got = (
        s.requests_http1,
        s.requests_http2,
        s.requests_tls,
        s.requests_alpn_h2,
        s.requests_alpn_http1,
    );
    let want = (h1, h2, tls, alpn_h2, alpn_http1);
    if got != want {
        return Err(format!(
            "{scenario}: served (http1, http2, tls, alpn h2, alpn http/1.1) = {got:?}, expected {want:?}"
        ));
    }
    Ok(())
}

fn check_trial(e: &Entry, scenario: &str, t: &Trial) -> Result<(), String> {
    if let Some(f) = &t.failure {
        return Err(format!("{scenario}: FAILED: {f}"));
    }
    let m = t.metrics.as_ref().ok_or("no metrics")?;
    if m.requests != REQUESTS || m.ok != REQUESTS || m.errors.total() != 0 {
        return Err(format!(
            "{scenario}: {} requests, {} ok, {} errors (expected {REQUESTS} ok)",
            m.requests,
            m.ok,
            m.errors.total()
        ));
    }
    if scenario == "put-64k" && m.bytes_sent != REQUESTS * PUT_BODY {
        return Err(format!("{scenario}: sent {} bytes", m.bytes_sent));
    }
    check_protocol(e, scenario, t)
}

#[test]
fn every_built_in_client_over_every_http_version_plain_and_tls() {
    let entries = matrix();
    let plain_http1_only = ClientKind::BUILT_IN
        .iter()
        .filter(|k| k.plain_http1_only())
        .count();
    assert_eq!(
        entries.len(),
        (ClientKind::BUILT_IN.len() - plain_http1_only) * HTTP_VERSIONS.len() * 2
            + plain_http1_only
    );
    let run = run_config(&config(&entries), &[]);
    let results = run.results();
    let mut problems = vec![];
    for e in &entries {
        for scenario in ["get", "put-64k"] {
            let c = cell(&results, scenario, &e.name);
            if c.trials.len() != 1 {
                problems.push(format!("{}: {} trials", e.name, c.trials.len()));
                continue;
            }
            if let Err(p) = check_trial(e, scenario, &c.trials[0]) {
                problems.push(format!("{}: {p}", e.name));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} trials went wrong:\n{}",
        problems.len(),
        entries.len() * 2,
        problems.join("\n")
    );
}

/// The cells a plain-HTTP/1.1-only kind does not speak are refused by config
/// validation, naming the field and the fix, instead of running something else.
#[test]
fn unsupported_cells_are_config_errors_with_the_fix() {
    let refused = combinations(false);
    assert!(!refused.is_empty(), "h1-lean refuses HTTP/2 and TLS");
    for e in &refused {
        let text = config(std::slice::from_ref(e));
        let err = benchgate::config::Suite::from_toml(&text, "matrix.toml")
            .expect_err(&e.name)
            .to_string();
        let field = if e.http == HttpVersion::Http2 {
            "http"
        } else {
            "tls"
        };
        assert!(
            err.contains(&format!("{}.{field}", e.name)) || err.contains(&format!(".{field}")),
            "{}: {err}",
            e.name
        );
        assert!(err.contains("kind = \"hyper\""), "{}: {err}", e.name);
    }
}
