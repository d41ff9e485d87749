//! Comparisons of runs with servers under test: cells keyed by (scenario,
//! client, server), side by side across servers, a changed server not comparable.

use super::*;
use crate::config::gate::default_gate;
use crate::config::{ServerSpec, ServerTarget, Suite};
use crate::results::synthetic;

/// One scenario, client `hyper`, on servers `a` and `b`; `b` is `slow_b`
/// times slower. `b_url` is where server `b` was reached.
fn run(rounds: u32, slow_b: f64, b_url: &str) -> RunResults {
    let mut suite = Suite::default_suite();
    suite.scenarios.truncate(1);
    suite.scenarios[0].clients = vec!["hyper".into()];
    let per_server = |k: f64| {
        synthetic::run(suite.clone(), rounds, move |_, _, r| {
            let k = k * (1.0 + 0.01 * f64::from(r % 3));
            Some(synthetic::metrics(10_000.0 / k, 2000.0 * k, 50.0 * k))
        })
    };
    let mut out = per_server(1.0);
    let mut b = per_server(slow_b).results;
    out.results[0].server = Some("a".into());
    b[0].server = Some("b".into());
    out.results.extend(b);
    out.config.servers = [("a", "http://127.0.0.1:1"), ("b", b_url)]
        .iter()
        .map(|(name, url)| ServerSpec {
            name: name.to_string(),
            target: ServerTarget::Url(url.to_string()),
        })
        .collect();
    out
}

/// Side by side with `sides` as the baseline.
fn side_by_side(r: &RunResults, sides: SideBySide<'_>) -> Comparison {
    let pairing = Pairing {
        mode: ComparisonMode::SideBySide,
        stored: None,
        sides,
    };
    compare_cells(pairing, r, &default_gate())
}

fn find<'a>(c: &'a Comparison, server: &str, metric: &str) -> &'a MetricComparison {
    c.metrics
        .iter()
        .find(|m| m.server.as_deref() == Some(server) && m.metric == metric)
        .unwrap_or_else(|| panic!("no {server}/{metric}"))
}

#[test]
fn side_by_side_pairs_servers_by_round() {
    let r = run(6, 1.5, "http://127.0.0.1:2");
    let base = SideBySide {
        client: None,
        server: Some("a"),
    };
    let c = side_by_side(&r, base);
    assert_eq!((c.outcome, c.exit_code), (GateOutcome::Fail, 1));
    assert!(c.metrics.iter().all(|m| m.server.as_deref() == Some("b")));
    let m = find(&c, "b", "throughput_rps");
    assert_eq!(
        (m.client.as_str(), m.baseline_client.as_str()),
        ("hyper", "hyper")
    );
    assert_eq!(m.baseline_server.as_deref(), Some("a"));
    assert_eq!(
        (m.who(), m.baseline_who()),
        ("hyper @ b".into(), "hyper @ a".into())
    );
    assert_eq!(
        (m.verdict, m.tier),
        (Verdict::Regressed, Tier::Fail),
        "{}",
        m.reason
    );
    // A baseline server the run lacks: no baseline, with the reason.
    let none = SideBySide {
        client: None,
        server: Some("c"),
    };
    let c = side_by_side(&r, none);
    let m = find(&c, "a", "throughput_rps");
    assert_eq!(m.verdict, Verdict::NoBaseline);
    assert!(m.reason.contains("on server \"c\""), "{}", m.reason);
}

#[test]
fn baseline_mode_matches_cells_by_server() {
    let base = run(5, 1.0, "http://127.0.0.1:2");
    let cur = run(5, 1.4, "http://127.0.0.1:2");
    let c = compare(Some(&base), &cur, &default_gate());
    let (a, b) = (
        find(&c, "a", "throughput_rps"),
        find(&c, "b", "throughput_rps"),
    );
    assert_eq!(a.verdict, Verdict::Unchanged, "{}", a.reason);
    assert_eq!(b.verdict, Verdict::Regressed, "{}", b.reason);
    assert_eq!(b.baseline_server.as_deref(), Some("b"));
    // The baseline's `b` was another server: its cells are not comparable,
    // `a`'s still are.
    let moved = run(5, 1.0, "http://127.0.0.1:3");
    let c = compare(Some(&moved), &cur, &default_gate());
    let b = find(&c, "b", "throughput_rps");
    assert_eq!(b.verdict, Verdict::NotComparable);
    assert!(b.reason.contains("server differs"), "{}", b.reason);
    assert_eq!(find(&c, "a", "throughput_rps").verdict, Verdict::Unchanged);
}
