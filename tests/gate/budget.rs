//! Issue 29, point 5: `[run] budget`. Rounds stop at the first planned look
//! that decides every gating metric, continue through the planned looks
//! (rounds, then every doubling, but for the looks that could decide nothing)
//! while one is undecided, and stop when the
//! scenario's share of the budget cannot hold another round, with a last
//! look that spends the alpha left. Every look is in the results file, and
//! the verdict tests at the last look's alpha. Issue 51: a gating metric
//! that fails at a look stops its scenario there, and one the share cannot
//! decide stops drawing rounds.

use crate::common;

use benchgate::results::budget::{ScenarioBudget, Stop};
use benchgate::results::RunResults;

/// Two mock clients side by side, `head` burning `inject` of CPU per
/// request; `throughput` is the gate's throughput threshold, `alpha` the
/// gate's (`None`: the default, 0.05).
fn config(budget: &str, inject: &str, throughput: &str, alpha: Option<f64>) -> String {
    config_up_to(16, budget, inject, throughput, alpha)
}

/// [`config`] with `max_rounds` rounds at most.
fn config_up_to(
    max_rounds: u32,
    budget: &str,
    inject: &str,
    throughput: &str,
    alpha: Option<f64>,
) -> String {
    let alpha = alpha.map_or(String::new(), |a| format!("alpha = {a}\n"));
    format!(
        r#"
[run]
rounds = 8
max_rounds = {max_rounds}
budget = "{budget}"
warmup = "20ms"
requests = 20
pin = false

[[client]]
name = "base"
kind = "hyper"

[[client]]
name = "head"
kind = "hyper"
inject_cpu = "{inject}"

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 1

[compare]
baseline_client = "base"

[gate]
{alpha}cpu_us_per_request = {{ fail = "+200%", gating = false }}
latency_p99_us = {{ fail = "+25%", floor = "1s", gating = false }}
latency_p50_us = {{ fail = "+25%", gating = false }}
throughput_rps = "{throughput}"
"#
    )
}

fn run(toml: &str) -> (RunResults, ScenarioBudget, String) {
    let run = common::run_config(toml, &["--mock-latencies-us", "300"]);
    let stderr = String::from_utf8_lossy(&run.output.stderr).to_string();
    let stdout = String::from_utf8_lossy(&run.output.stdout).to_string();
    assert!(
        matches!(run.output.status.code(), Some(0..=1)),
        "{stderr}\n{stdout}"
    );
    common::assert_results_valid(&run.out);
    let r = RunResults::read(&run.out).unwrap();
    assert_eq!(r.budget.len(), 1, "{:?}", r.budget);
    let b = r.budget[0].clone();
    // Every trial the record counts is in the file, both sides.
    for c in &r.results {
        assert_eq!(c.trials.len() as u32, b.rounds, "{}", c.client);
    }
    (r, b, format!("{stderr}\n{stdout}"))
}

/// The alpha of the A/A runs whose paths stay undecided: at the default
/// 0.05 an A/A (`inject` 1ns) decides at about that rate, "improved" or
/// "regressed" (it did once, head above base in 7 of 8 paired rounds). At
/// 0.0001 split over two or three looks, a look of 8 pairs could decide
/// nothing (the smallest exact p is 2/256), so the plan has none there, and
/// one of 16 decides only when nearly all 16 differ the same way, ranked
/// nearly in order (p at most about 0.00005).
const UNDECIDABLE_ALPHA: f64 = 0.0001;

fn look_rounds(b: &ScenarioBudget) -> Vec<u32> {
    b.looks.iter().map(|l| l.round).collect()
}

fn spent(b: &ScenarioBudget) -> f64 {
    b.looks.iter().map(|l| l.alpha).sum()
}

#[test]
fn configured_rounds_over_the_budget_are_said() {
    // 8 rounds of two clients, each trial warming up for 20 ms: far more
    // than 100 ms, on any machine.
    let (r, b, log) = run(&config("100ms", "1ns", "-25%", None));
    assert_eq!(b.rounds, 8, "{b:?}\n{log}");
    let took = b.rounds_s.unwrap_or_else(|| panic!("{b:?}"));
    assert!(took > 0.1 && took <= b.elapsed_s, "{b:?}");
    let said = "over budget: the 8 configured rounds took ";
    assert_eq!(log.matches(said).count(), 1, "{log}");
    assert!(
        log.contains(", over the 0.1s budget (they always run): lower `[run] rounds` or raise `[run] budget`"),
        "{log}"
    );
    assert!(benchgate::report::spent::overrun(&r).is_some());
}

#[test]
fn a_failure_stops_the_scenario_at_the_first_look() {
    // +3 ms of CPU per 300 µs request: throughput falls far beyond -25%.
    let (r, b, log) = run(&config("2m", "3ms", "-25%", None));
    assert_eq!((b.rounds, b.stopped), (8, Stop::Failed), "{b:?}\n{log}");
    assert_eq!(look_rounds(&b), [8]);
    // Looks planned at 8 and 16: each spends half of 0.05.
    assert!((b.looks[0].alpha - 0.025).abs() < 1e-12, "{b:?}");
    let rps = b
        .decided
        .iter()
        .find(|d| d.client == "head" && d.metric == "throughput_rps")
        .unwrap_or_else(|| panic!("{b:?}"));
    assert_eq!((rps.round, rps.alpha), (8, 0.025));
    assert!(
        log.contains("a gating metric failed at the look after 8 rounds"),
        "{log}"
    );
    assert!(log.contains("FAIL"), "{log}");
    assert!(log.contains("budget:"), "{log}");
    let look = r.budget.iter().find(|b| b.scenario == "get").unwrap();
    assert_eq!(look.alpha(), Some(0.025));
}

#[test]
fn a_metric_the_share_cannot_decide_stops_drawing_rounds() {
    // Looks planned at 8, 16 and 17 (max_rounds) at 0.0001 / 3 each: 8 pairs
    // cannot reach that, so the rounds run on past 8 without a look, and 16
    // and 17 get 0.00005 each. At 16, max_rounds = 17 caps what any share
    // buys, and one more pair cannot bring a throughput threshold of
    // -0.0001% within reach (it would take an A/A estimate about 3 standard
    // errors off zero): undecidable, while the error rate (0 against 0) is
    // decided. (The budget's unit tests run undecided looks on to
    // max_rounds.)
    let toml = config_up_to(17, "2m", "1ns", "-0.0001%", Some(UNDECIDABLE_ALPHA));
    let (_, b, log) = run(&toml);
    assert_eq!(
        (b.rounds, b.stopped),
        (16, Stop::Undecidable),
        "{b:?}\n{log}"
    );
    assert_eq!(look_rounds(&b), [16]);
    assert!((spent(&b) - UNDECIDABLE_ALPHA / 2.0).abs() < 1e-12, "{b:?}");
    let u = &b.undecidable;
    assert_eq!(u.len(), 1, "{b:?}");
    assert_eq!(
        (
            u[0].client.as_str(),
            u[0].metric.as_str(),
            u[0].round,
            u[0].within
        ),
        ("head", "throughput_rps", 16, 17)
    );
    assert!(
        log.contains("cannot be decided within its share of the budget"),
        "{log}"
    );
    assert!(
        log.contains("undecidable within the budget: at the look after round 16, the 17 rounds"),
        "{log}"
    );
}

#[test]
fn a_spent_budget_stops_with_a_last_look_spending_the_alpha_left() {
    // A budget shorter than the configured rounds: they all run, then one
    // look at all of alpha, and no more rounds.
    let (r, b, log) = run(&config("100ms", "1ns", "-0.0001%", Some(UNDECIDABLE_ALPHA)));
    assert_eq!((b.rounds, b.stopped), (8, Stop::Budget), "{b:?}\n{log}");
    assert_eq!(look_rounds(&b), [8]);
    assert!(
        (b.looks[0].alpha - UNDECIDABLE_ALPHA).abs() < 1e-12,
        "{b:?}"
    );
    assert!(b.elapsed_s > b.share_s, "{b:?}");
    let look = r.budget.iter().find(|b| b.scenario == "get").unwrap();
    assert_eq!(look.alpha(), Some(UNDECIDABLE_ALPHA));
}
