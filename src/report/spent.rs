//! How a run spent its `[run] budget` (`results::budget`): per scenario the
//! rounds run, the time used of the time given, the looks taken (each at
//! its alpha) and why the rounds stopped. The MDE each gating metric reached
//! is in the comparison's own table.

use std::fmt::Write as _;

use crate::compare::looks::show_alpha;
use crate::report::escape::{md, md_n};
use crate::results::budget::{ScenarioBudget, Stop};
use crate::results::RunResults;

/// One scenario's cells: scenario, rounds, time used / given, looks, stop.
fn row(b: &ScenarioBudget) -> [String; 5] {
    let looks = if b.looks.is_empty() {
        "none".to_string()
    } else {
        b.looks
            .iter()
            .map(|l| format!("{} (α {})", l.round, show_alpha(l.alpha)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    [
        b.scenario.clone(),
        b.rounds.to_string(),
        format!("{} of {}", seconds(b.elapsed_s), seconds(b.share_s)),
        looks,
        stopped(b),
    ]
}

/// Why the rounds stopped, with the gating metrics that stopped drawing
/// rounds, undecidable within the share: `budget used; undecidable: head
/// throughput_rps (round 8)`.
fn stopped(b: &ScenarioBudget) -> String {
    let why = b.stopped.describe();
    if b.undecidable.is_empty() {
        return why.to_string();
    }
    let which: Vec<String> = b
        .undecidable
        .iter()
        .map(|u| {
            let who = crate::results::client_label(&u.client, u.server.as_deref());
            format!("{who} {} (round {})", u.metric, u.round)
        })
        .collect();
    let which = which.join(", ");
    match b.stopped {
        Stop::Undecidable => format!("{why}: {which}"),
        _ => format!("{why}; undecidable within its share: {which}"),
    }
}

fn seconds(s: f64) -> String {
    if s >= 59.95 {
        let t = s.round() as u64;
        format!("{}m{:02}s", t / 60, t % 60)
    } else {
        format!("{s:.1}s")
    }
}

/// What a run whose configured rounds alone took longer than its budget
/// says, once: `the 10 configured rounds took 9m12s, over the 5m00s budget
/// (they always run): lower `[run] rounds` or raise `[run] budget``. `None`
/// within it, or when they did not all run.
pub fn overrun(run: &RunResults) -> Option<String> {
    let total = run.config.run.budget?.as_secs_f64();
    let took: Option<Vec<f64>> = run.budget.iter().map(|b| b.rounds_s).collect();
    let took: f64 = took.filter(|t| !t.is_empty())?.iter().sum();
    let each = match run.budget.len() {
        1 => String::new(),
        n => format!(" of each of {n} scenarios"),
    };
    (took > total).then(|| {
        format!(
            "the {} configured rounds{each} took {}, over the {} budget (they always run): lower `[run] rounds` or raise `[run] budget`",
            run.config.run.rounds,
            seconds(took),
            seconds(total)
        )
    })
}

/// The markdown section (empty without a budget).
pub fn markdown(run: &RunResults) -> String {
    let (Some(total), false) = (run.config.run.budget, run.budget.is_empty()) else {
        return String::new();
    };
    let used: f64 = run.budget.iter().map(|b| b.elapsed_s).sum();
    let mut body = overrun(run).map_or(String::new(), |o| format!("⚠️ Over budget: {o}.\n\n"));
    body.push_str(
        "Rounds continue while a gating metric is undecided, looking at the evidence at planned rounds only, alpha split across the looks. A gating metric decided at a look keeps that look's decision and alpha, and one that regressed stops its scenario; one the share could not decide stops drawing rounds; the rest are judged at the last look's alpha.\n\n| scenario | rounds | time used | looks (round, α) | stopped |\n|:--|--:|--:|:--|:--|\n",
    );
    for b in &run.budget {
        let [s, r, t, l, why] = row(b);
        let _ = writeln!(
            body,
            "| {} | {r} | {t} | {l} | {} |",
            md(&s),
            md_n(&why, 1000)
        );
    }
    format!(
        "<details><summary>Budget: {} used of {}</summary>\n\n{body}\n</details>\n\n",
        seconds(used),
        seconds(total.as_secs_f64())
    )
}

/// The terminal lines (empty without a budget).
pub fn terminal(run: &RunResults) -> String {
    let Some(total) = run.config.run.budget.filter(|_| !run.budget.is_empty()) else {
        return String::new();
    };
    let used: f64 = run.budget.iter().map(|b| b.elapsed_s).sum();
    let mut out = format!(
        "budget: {} used of {}\n",
        seconds(used),
        seconds(total.as_secs_f64())
    );
    if let Some(o) = overrun(run) {
        let _ = writeln!(out, "  over budget: {o}");
    }
    for b in &run.budget {
        let [s, r, t, l, why] = row(b);
        let _ = writeln!(
            out,
            "  {}: {r} rounds, {t}, looks at {l}; {}",
            s.escape_debug(),
            why.escape_debug()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::budget::Look;

    #[test]
    fn rounds_time_looks_and_stop_are_shown() {
        let mut run =
            crate::results::synthetic::run(crate::config::Suite::default_suite(), 2, |_, _, _| {
                None
            });
        assert_eq!(markdown(&run), "");
        run.config.run.budget = Some(std::time::Duration::from_secs(300));
        run.budget.push(ScenarioBudget {
            scenario: "get-22b".into(),
            share_s: 150.0,
            elapsed_s: 61.5,
            rounds_s: None,
            rounds: 40,
            looks: vec![
                Look {
                    round: 10,
                    alpha: 0.05 / 6.0,
                },
                Look {
                    round: 20,
                    alpha: 0.05 / 6.0,
                },
            ],
            decided: vec![],
            undecidable: vec![],
            stopped: Stop::Decided,
        });
        let md = markdown(&run);
        assert!(md.contains("Budget: 1m02s used of 5m00s"), "{md}");
        assert!(
            md.contains(
                "| get-22b | 40 | 1m02s of 2m30s | 10 (α 0.0083), 20 (α 0.0083) | decided |"
            ),
            "{md}"
        );
        let t = terminal(&run);
        assert!(t.contains("get-22b: 40 rounds, 1m02s of 2m30s"), "{t}");
    }

    #[test]
    fn configured_rounds_over_the_budget_are_said_once() {
        let mut run =
            crate::results::synthetic::run(crate::config::Suite::default_suite(), 2, |_, _, _| {
                None
            });
        run.config.run.rounds = 10;
        run.config.run.budget = Some(std::time::Duration::from_secs(300));
        let b = ScenarioBudget {
            scenario: "get-22b".into(),
            share_s: 300.0,
            elapsed_s: 552.0,
            rounds_s: Some(552.0),
            rounds: 10,
            looks: vec![],
            decided: vec![],
            undecidable: vec![],
            stopped: Stop::Budget,
        };
        run.budget.push(b.clone());
        let said = "the 10 configured rounds took 9m12s, over the 5m00s budget (they always run): lower `[run] rounds` or raise `[run] budget`";
        let t = terminal(&run);
        assert!(
            t.starts_with(&format!(
                "budget: 9m12s used of 5m00s\n  over budget: {said}\n"
            )),
            "{t}"
        );
        assert_eq!(t.matches("configured rounds").count(), 1, "{t}");
        assert!(markdown(&run).contains(&format!("⚠️ Over budget: {said}.")));
        // Two scenarios: their sum.
        run.budget[0].rounds_s = Some(200.0);
        run.budget.push(ScenarioBudget {
            scenario: "get-20kb".into(),
            share_s: 100.0,
            rounds_s: Some(200.0),
            ..b
        });
        assert!(
            terminal(&run).contains(
                "the 10 configured rounds of each of 2 scenarios took 6m40s, over the 5m00s budget"
            ),
            "{}",
            terminal(&run)
        );
        // Within the budget, or not all run: nothing said.
        run.budget[1].rounds_s = Some(99.0);
        assert!(!terminal(&run).contains("configured"));
        run.budget[1].rounds_s = None;
        run.budget[0].rounds_s = Some(900.0);
        assert_eq!(overrun(&run), None);
        assert!(!markdown(&run).contains("configured"));
    }

    #[test]
    fn metrics_that_stopped_drawing_rounds_are_named() {
        let mut run =
            crate::results::synthetic::run(crate::config::Suite::default_suite(), 2, |_, _, _| {
                None
            });
        run.config.run.budget = Some(std::time::Duration::from_secs(300));
        let look = Look {
            round: 8,
            alpha: 0.05 / 6.0,
        };
        let b = ScenarioBudget {
            scenario: "get-22b".into(),
            share_s: 150.0,
            elapsed_s: 7.0,
            rounds_s: None,
            rounds: 8,
            looks: vec![look],
            decided: vec![],
            undecidable: vec![crate::results::budget::Undecidable {
                client: "head|x".into(),
                server: None,
                metric: "throughput_rps".into(),
                round: 8,
                within: 11,
            }],
            stopped: Stop::Undecidable,
        };
        run.budget.push(b.clone());
        run.budget.push(ScenarioBudget {
            scenario: "get-20kb".into(),
            undecidable: vec![],
            stopped: Stop::Failed,
            ..b
        });
        let md = markdown(&run);
        assert!(
            md.contains(
                "| undecidable within its share: head\\|x throughput\\_rps \\(round 8\\) |"
            ),
            "{md}"
        );
        assert!(md.contains("| a gating metric failed |"), "{md}");
        let t = terminal(&run);
        assert!(
            t.contains("; undecidable within its share: head|x throughput_rps (round 8)"),
            "{t}"
        );
    }
}
