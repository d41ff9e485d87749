//! `benchgate history`'s renderers: terminal, JSON and markdown snapshots,
//! hostile names, and the markdown bound (an issue body's size).

use benchgate::baseline::BaselineKey;
use benchgate::compare::changepoint::{ChangePoint, Options};
use benchgate::compare::drift::{CellHistory, Shift};
use benchgate::report::drift::{json, terminal, History};
use benchgate::report::markdown::{render_drift, MAX_COMMENT_CHARS};

use super::check::{assert_balanced, assert_inert};

fn keys(n: usize) -> Vec<BaselineKey> {
    (0..n)
        .map(|i| BaselineKey {
            branch: "main".into(),
            sha: format!("{i:04x}{}", "abcdef".repeat(6)),
            started_at: format!("2026-11-{:02}T03:00:00Z", 1 + i % 28),
            run_id: format!("{}", 9000 + i),
        })
        .collect()
}

/// A series of `n` runs at `before` that moves to `after` at run `at`.
fn cell(scenario: &str, metric: &str, n: usize, at: usize, before: f64, after: f64) -> CellHistory {
    let worse = match metric {
        "throughput_rps" => after < before,
        _ => after > before,
    };
    CellHistory {
        scenario: scenario.into(),
        client: "hyper".into(),
        server: None,
        metric: metric.into(),
        values: (0..n)
            .map(|i| {
                (
                    i,
                    if i < at { before } else { after } * (1.0 + 0.01 * (i % 3) as f64),
                )
            })
            .collect(),
        shifts: vec![Shift {
            point: ChangePoint {
                index: at,
                p_value: 0.005,
                mean_before: before,
                mean_after: after,
            },
            run: at,
            worse,
            past_warn: worse,
            environment: vec![],
        }],
    }
}

fn flat(scenario: &str, n: usize) -> CellHistory {
    CellHistory {
        shifts: vec![],
        ..cell(scenario, "latency_p99_us", n, 0, 250.0, 250.0)
    }
}

fn view<'a>(runs: &'a [BaselineKey], cells: &'a [CellHistory]) -> History<'a> {
    History {
        branch: "main",
        runs,
        cells,
        opts: Options::default(),
    }
}

#[test]
fn drift_reports() {
    let runs = keys(12);
    let cells = vec![
        cell("get-22b", "cpu_us_per_request", 12, 7, 9.0, 9.9),
        cell("get-22b", "throughput_rps", 12, 4, 100_000.0, 110_000.0),
        flat("get-22b", 12),
    ];
    let h = view(&runs, &cells);
    let md = render_drift(&h);
    assert_balanced(&md);
    assert_inert(&md);
    insta::assert_snapshot!("drift_markdown", md);
    insta::assert_snapshot!("drift_terminal", terminal(&h));
    insta::assert_snapshot!("drift_json", json(&h));
}

#[test]
fn a_change_point_where_the_machine_changed_is_marked_environment_not_drift() {
    let runs = keys(12);
    let mut moved = cell("get-22b", "cpu_us_per_request", 12, 7, 9.0, 9.9);
    moved.shifts[0].environment = vec![
        "runner_image differs (\"ubuntu24 20250105.1.0\" vs \"ubuntu24 20250112.1.0\")".into(),
    ];
    let cells = vec![moved];
    let h = view(&runs, &cells);
    assert_eq!(h.drifting().count(), 0, "a new runner image is not drift");
    let md = render_drift(&h);
    assert!(md.starts_with("## ✅ benchgate history: no drift"), "{md}");
    assert!(
        md.contains("| 🖥️ environment: worse (runner\\_image differs ")
            && md.contains("20250112.1.0"),
        "{md}"
    );
    let t = terminal(&h);
    assert!(t.contains("environment: worse"), "{t}");
    assert!(
        t.contains("the machine changed there: runner_image differs"),
        "{t}"
    );
    assert!(!t.contains("drifting ("), "{t}");
    let doc: serde_json::Value = serde_json::from_str(&json(&h)).unwrap();
    let shift = &doc["cells"][0]["change_points"][0];
    assert_eq!(
        shift["environment"][0],
        cells[0].shifts[0].environment[0].as_str()
    );
    assert_eq!(doc["cells"][0]["drifting"], false);
}

#[test]
fn no_drift_says_so() {
    let runs = keys(8);
    let cells = vec![flat("get-22b", 8)];
    let h = view(&runs, &cells);
    let md = render_drift(&h);
    assert!(md.starts_with("## ✅ benchgate history: no drift"), "{md}");
    assert!(md.contains("No change points"), "{md}");
    assert!(!md.contains("```mermaid"), "{md}");
    assert!(terminal(&h).contains("no change points"));
}

#[test]
fn hostile_names_are_inert_in_every_form() {
    let runs = keys(10);
    let evil = "x\"]%%{init: {}}%%|<img src=x>\n## boom\x1b[31m";
    let cells = vec![cell(evil, "cpu_us_per_request", 10, 5, 9.0, 10.0)];
    let h = view(&runs, &cells);
    let md = render_drift(&h);
    assert_balanced(&md);
    assert_inert(&md);
    assert!(!md.contains("\n## boom") && md.contains("\\<img"), "{md}");
    let t = terminal(&h);
    assert!(!t.contains('\x1b') && !t.contains("\n## boom"), "{t}");
    let doc: serde_json::Value = serde_json::from_str(&json(&h)).unwrap();
    assert_eq!(doc["cells"][0]["scenario"], evil);
}

#[test]
fn the_markdown_fits_an_issue_body_however_much_drifts() {
    let runs = keys(100);
    let name = "s".repeat(200);
    let cells: Vec<CellHistory> = (0..400)
        .map(|i| {
            cell(
                &format!("{name}{i}"),
                "cpu_us_per_request",
                100,
                50,
                123_456.789,
                234_567.891,
            )
        })
        .collect();
    let h = view(&runs, &cells);
    let md = render_drift(&h);
    assert_balanced(&md);
    assert!(
        md.chars().count() < MAX_COMMENT_CHARS - 1000,
        "{}",
        md.chars().count()
    );
    assert_eq!(
        md.matches("```mermaid").count(),
        benchgate::report::markdown::MAX_DRIFT_CHARTS
    );
    assert!(md.contains("… and 350 more change points"), "{md}");
    assert!(md.contains("388 more are in the table"), "{md}");
}
