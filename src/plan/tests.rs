use super::*;
use crate::compare::Verdict;
use crate::config::gate::default_gate;
use crate::results::synthetic;

fn suite(compare: Option<(&str, Option<&str>)>) -> Suite {
    let mut s = Suite::default_suite();
    s.scenarios.truncate(1);
    s.compare = compare.map(|(client, server)| CompareSettings {
        baseline_client: Some(client.to_string()),
        baseline_server: server.map(str::to_string),
        base: None,
    });
    s
}

fn plan(asked: Asked, config: &Suite) -> anyhow::Result<ComparisonPlan> {
    ComparisonPlan::resolve(asked, config, config, "bench.toml")
}

/// What `p` compares with: its mode, the mode's parameters (baseline
/// client, baseline server, base commit), and whether it holds a stored run.
type Compared<'a> = (Option<ComparisonMode>, [Option<&'a str>; 3], bool);

fn against(p: &ComparisonPlan) -> Compared<'_> {
    let names = [
        p.baseline_client.as_deref(),
        p.baseline_server.as_deref(),
        p.base_ref.as_deref(),
    ];
    (p.mode, names, p.stored.is_some())
}

/// A stored run, none handed over yet.
const STORED: Compared<'static> = (Some(ComparisonMode::Baseline), [None; 3], false);

fn side(client: &str) -> Compared<'_> {
    (
        Some(ComparisonMode::SideBySide),
        [Some(client), None, None],
        false,
    )
}

fn base_vs_head(base_ref: &str) -> Compared<'_> {
    (
        Some(ComparisonMode::BaseVsHead),
        [None, None, Some(base_ref)],
        false,
    )
}

#[test]
fn a_stored_run_asked_for_beats_flags_and_the_config() {
    let asked = Asked {
        stored: true,
        side_by_side_client: Some("hyper".into()),
        ..Asked::default()
    };
    let p = plan(asked, &suite(Some(("reqwest", None)))).unwrap();
    assert_eq!(against(&p), STORED);
    assert!(p.wants_stored());
}

#[test]
fn flags_beat_the_config_and_the_config_beats_the_default() {
    let with_compare = suite(Some(("reqwest", None)));
    let asked = Asked {
        side_by_side_client: Some("hyper".into()),
        otherwise: Otherwise::Stored,
        ..Asked::default()
    };
    assert_eq!(against(&plan(asked, &with_compare).unwrap()), side("hyper"));
    let asked = Asked {
        otherwise: Otherwise::Stored,
        ..Asked::default()
    };
    let p = plan(asked, &with_compare).unwrap();
    assert_eq!(against(&p), side("reqwest"));
    assert!(!p.wants_stored());
}

#[test]
fn each_entry_points_default() {
    let bare = suite(None);
    assert_eq!(
        against(&plan(Asked::default(), &bare).unwrap()),
        (None, [None; 3], false)
    );
    let stored = Asked {
        otherwise: Otherwise::Stored,
        ..Asked::default()
    };
    assert_eq!(against(&plan(stored, &bare).unwrap()), STORED);
    let refuse = Asked {
        otherwise: Otherwise::Refuse("nothing to compare x.json with".into()),
        ..Asked::default()
    };
    let e = plan(refuse, &bare).unwrap_err().to_string();
    assert_eq!(e, "nothing to compare x.json with");
}

#[test]
fn names_on_the_command_line_must_be_in_the_run() {
    let bare = suite(None);
    let asked = Asked {
        side_by_side_client: Some("curl".into()),
        ..Asked::default()
    };
    let e = plan(asked, &bare).unwrap_err().to_string();
    assert_eq!(
        e,
        "--side-by-side \"curl\": bench.toml has no client of that name; it has: hyper, reqwest, reqwest-blocking, hyper-pool10, hyper-pool1"
    );
    let asked = Asked {
        side_by_side_server: Some("nginx".into()),
        ..Asked::default()
    };
    let e = plan(asked, &bare).unwrap_err().to_string();
    assert_eq!(
        e,
        "--side-by-side-server \"nginx\": bench.toml has no server under test of that name; it has: none"
    );
}

#[test]
fn the_gate_is_the_configs() {
    let mut config = suite(None);
    config.gate.alpha = 0.01;
    let run = suite(None);
    let p = ComparisonPlan::resolve(Asked::default(), &config, &run, "x").unwrap();
    assert_eq!(p.gate, config.gate);
    assert_ne!(p.gate, default_gate());
}

/// `get-22b` with hyper and reqwest; reqwest `ratio` times slower.
fn measured(ratio: f64) -> RunResults {
    synthetic::run(suite(None), 10, |_, client, round| {
        let k = if client == "reqwest" { ratio } else { 1.0 };
        let shake = 1.0 + 0.002 * f64::from(round % 3);
        Some(synthetic::metrics(
            10_000.0 / (k * shake),
            300.0,
            10.0 * k * shake,
        ))
    })
}

fn gating_verdicts(c: &Comparison) -> Vec<(String, Verdict)> {
    c.metrics
        .iter()
        .filter(|m| m.gating)
        .map(|m| (m.client.clone(), m.verdict))
        .collect()
}

#[test]
fn the_plan_compares_with_what_it_holds() {
    let current = measured(1.3);
    let nothing = plan(Asked::default(), &suite(None)).unwrap();
    assert!(nothing.compare(&current).is_none());

    // Stored, none handed over: every cell has no baseline.
    let stored = Asked {
        stored: true,
        ..Asked::default()
    };
    let p = plan(stored, &suite(None)).unwrap();
    let c = p.compare(&current).unwrap();
    assert!(!c.metrics.is_empty());
    assert!(c.metrics.iter().all(|m| m.verdict == Verdict::NoBaseline));

    // Handed over: compared with it (the same run: nothing regressed).
    let p = p.with_stored(Some(measured(1.3)));
    assert!(p.stored.is_some());
    let c = p.compare(&current).unwrap();
    assert!(c.metrics.iter().all(|m| m.verdict != Verdict::NoBaseline));
    assert!(c.metrics.iter().all(|m| m.verdict != Verdict::Regressed));

    // Side by side: reqwest against hyper in the same run, 30% slower.
    let p = plan(Asked::default(), &suite(Some(("hyper", None))))
        .unwrap()
        .with_stored(Some(measured(1.0)));
    assert_eq!(p.stored, None, "a side-by-side plan holds no stored run");
    let c = p.compare(&current).unwrap();
    let v = gating_verdicts(&c);
    assert!(!v.is_empty());
    // Only reqwest's cells are compared (hyper is the baseline); its
    // throughput and CPU per request regressed, its latency did not change.
    assert!(v.iter().all(|(client, _)| client == "reqwest"), "{v:?}");
    assert_eq!(
        v.iter().filter(|(_, v)| *v == Verdict::Regressed).count(),
        2,
        "{v:?}"
    );
}

#[test]
fn base_vs_head_from_the_flag_or_the_config() {
    let mut git = suite(Some(("reqwest", None)));
    let asked = Asked {
        compare_base: Some("origin/main".into()),
        ..Asked::default()
    };
    assert_eq!(
        against(&plan(asked, &git).unwrap()),
        base_vs_head("origin/main"),
        "the flag beats [compare]"
    );
    git.compare = Some(CompareSettings {
        base: Some(crate::config::CompareBase::Git),
        ..CompareSettings::default()
    });
    let p = plan(Asked::default(), &git).unwrap();
    assert_eq!(against(&p), base_vs_head(DEFAULT_BASE_REF));
    let stored = Asked {
        stored: true,
        ..Asked::default()
    };
    assert_eq!(against(&plan(stored, &git).unwrap()), STORED);
}

#[test]
fn a_plan_whose_rounds_cannot_reach_alpha_says_so() {
    let mut config = suite(Some(("hyper", None)));
    config.run.rounds = 4;
    config.run.max_rounds = 4;
    let p = plan(Asked::default(), &config).unwrap();
    let why = p.unreachable(&config.run, "bench.toml").unwrap();
    assert_eq!(
        why,
        "bench.toml: a comparison paired by round (side by side, base vs head) of 4 rounds can reach p = 0.125 at best, never p <= 0.05 ([gate] alpha): every gating metric would be inconclusive; set [run] rounds (or max_rounds) to 6 or more"
    );
    // Extra rounds buy the trials.
    config.run.max_rounds = 10;
    assert_eq!(p.unreachable(&config.run, "bench.toml"), None);
    // Against a stored run, 3 vs 3 cannot, 4 vs 4 can.
    let stored = Asked {
        stored: true,
        ..Asked::default()
    };
    let p = plan(stored, &suite(None)).unwrap();
    let mut run = suite(None).run;
    (run.rounds, run.max_rounds) = (3, 3);
    let why = p.unreachable(&run, "x").unwrap();
    assert!(
        why.contains("a comparison with a stored run of 3 rounds can reach p = 0.100"),
        "{why}"
    );
    assert!(why.ends_with("to 4 or more"), "{why}");
    (run.rounds, run.max_rounds) = (4, 4);
    assert_eq!(p.unreachable(&run, "x"), None);
    // Nothing compared, nothing to reach.
    let nothing = plan(Asked::default(), &suite(None)).unwrap();
    assert_eq!(nothing.unreachable(&run, "x"), None);
}

#[test]
fn strict_makes_an_unreachable_plan_an_error() {
    let mut config = suite(Some(("hyper", None)));
    (config.run.rounds, config.run.max_rounds) = (4, 4);
    let p = plan(Asked::default(), &config).unwrap();
    let warning = p.check_reachable(&config.run, "bench.toml").unwrap();
    assert_eq!(warning, p.unreachable(&config.run, "bench.toml"));
    assert!(warning.is_some());
    let mut strict = p.clone();
    strict.gate.strict = true;
    let err = strict
        .check_reachable(&config.run, "bench.toml")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with(&warning.unwrap()), "{err}");
    assert!(err.contains("[gate] strict = true"), "{err}");
    // Reachable: nothing to say, strict or not.
    config.run.max_rounds = 10;
    assert_eq!(
        strict.check_reachable(&config.run, "bench.toml").unwrap(),
        None
    );
}
