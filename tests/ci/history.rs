//! `benchgate history` end to end (issue 18, point 3): a local store whose
//! history is real A/A noise (fixtures/noise) with a planted shift, read
//! through the binary; each planted 10% shift of CPU per request and
//! throughput (40% of p99, the noisier metric) is found within 1 commit, a
//! flat history gives none, and an empty or missing store is a clear error.

use crate::common;

use std::process::Output;

use benchgate::baseline::LocalStore;
use common::drift::{sha, shuffled, store_history, Noise, Planted};
use serde_json::Value;

fn history(args: &[&str]) -> Output {
    std::process::Command::new(common::exe())
        .arg("history")
        .args(args)
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap()
}

/// The JSON report of `noise` with `shift`, stored in a fresh local store.
fn report(noise: &[Noise], shift: Option<Planted>) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    store_history(&LocalStore::new(dir.path()), noise, shift);
    let json = dir.path().join("history.json");
    let out = history(&[
        "--store",
        dir.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (doc, stdout)
}

fn cell<'a>(doc: &'a Value, metric: &str) -> &'a Value {
    doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric)
        .unwrap_or_else(|| panic!("no series of {metric}"))
}

/// Histories of the real noise, resampled: 100, 60 and 50 runs of both
/// clients.
/// The one change point of `c` within one run of `at`, at that run's commit
/// and significant (`what` names the case in the failure).
fn the_change_point_near<'a>(c: &'a Value, at: usize, what: &str) -> &'a Value {
    let cps = c["change_points"].as_array().unwrap();
    let run = |p: &Value| p["run"].as_u64().unwrap() as usize;
    let found: Vec<usize> = cps.iter().map(run).collect();
    let near: Vec<&Value> = cps.iter().filter(|p| run(p).abs_diff(at) <= 1).collect();
    assert_eq!(near.len(), 1, "{what} at {at}: found {found:?}");
    let p = near[0];
    assert_eq!(p["sha"], sha(run(p)));
    assert!(p["p_value"].as_f64().unwrap() <= 0.05, "{p}");
    p
}

fn windows() -> Vec<(&'static str, Vec<Noise>)> {
    vec![
        ("hyper, shuffle 1", shuffled("hyper", 1)),
        (
            "hyper, shuffle 2, 60 runs",
            shuffled("hyper", 2)[..60].to_vec(),
        ),
        ("twin, shuffle 3", shuffled("hyper-twin", 3)),
        (
            "twin, shuffle 4, 50 runs",
            shuffled("hyper-twin", 4)[..50].to_vec(),
        ),
    ]
}

#[test]
fn each_planted_ten_percent_shift_is_found_within_one_commit() {
    for (name, noise) in windows() {
        for at in [noise.len() / 3, noise.len() / 2, noise.len() - 12] {
            for by in [0.10, -0.10] {
                let (doc, stdout) = report(&noise, Some(Planted { at, by }));
                // CPU per request and throughput shift; p99 too (it is
                // noisier: 8% run to run; its own test plants 40%, below).
                for (metric, worse) in [
                    ("cpu_us_per_request", by > 0.0),
                    ("throughput_rps", by > 0.0),
                ] {
                    let c = cell(&doc, metric);
                    let p = the_change_point_near(c, at, &format!("{name}, {metric}, {by:+}"));
                    let size = p["relative_change"].as_f64().unwrap();
                    let want = if metric == "throughput_rps" {
                        1.0 / (1.0 + by) - 1.0
                    } else {
                        by
                    };
                    assert!(
                        (size - want).abs() < 0.03,
                        "{name}, {metric}: {size} vs {want}"
                    );
                    assert_eq!(p["worse"], worse, "{p}");
                    assert_eq!(
                        c["drifting"],
                        worse && p == c["change_points"].as_array().unwrap().last().unwrap()
                    );
                }
                // The terminal names the commit and the run.
                let line = stdout
                    .lines()
                    .find(|l| l.contains("cpu_us_per_request"))
                    .unwrap_or_default();
                let run = cell(&doc, "cpu_us_per_request")["change_points"][0]["run"]
                    .as_u64()
                    .unwrap() as usize;
                assert!(
                    line.contains(&format!(
                        "at {} (run {} of {})",
                        &sha(run)[..12],
                        run + 1,
                        noise.len()
                    )),
                    "{stdout}"
                );
            }
        }
    }
}

/// p99 is the noisy metric: 8.3% run to run in these A/A runs, against
/// 2.6-2.7% for CPU per request and throughput (docs/measurements.md,
/// "Measured against Apache Otava": 50-64% recall on 3-15% shifts of p99).
/// Its planted shift is 40%, the
/// smallest of 10%, 20%, 30% and 40% that is found within 1 commit in every
/// history and position of the test above (all with the same seeds, so
/// checked once with `benchgate changepoints`): at 10%, 9 of the 24 are
/// missed; at 20% and 30%, one is: the 50-run twin history's runs 35 to 37
/// measured a p99 of 310, 272 and 275 µs (its median is 248), so a rise
/// planted at run 38 is found at run 35, 3 commits early. The size is looser
/// than above: the 60-run hyper history's runs from 24 on read 6% higher
/// than those before (its flat change point below), which moves the
/// measured size by up to 7.4 points. 40% of a 250 µs p99 is still under the default
/// p99 gate's 2 ms floor: a change point, not a drift.
#[test]
fn each_planted_forty_percent_p99_shift_is_found_within_one_commit() {
    for (name, noise) in windows() {
        for at in [noise.len() / 3, noise.len() / 2, noise.len() - 12] {
            for by in [0.40, -0.40] {
                let (doc, _) = report(&noise, Some(Planted { at, by }));
                let c = cell(&doc, "latency_p99_us");
                let p = the_change_point_near(c, at, &format!("{name}, p99, {by:+}"));
                let size = p["relative_change"].as_f64().unwrap();
                assert!((size - by).abs() < 0.1, "{name}, p99: {size} vs {by}");
                assert_eq!(p["worse"], by > 0.0, "{p}");
                assert_eq!(p["past_warn"], false, "{p}");
                assert_eq!(c["drifting"], false, "{c}");
            }
        }
    }
}

/// Flat: the CPU per request and the throughput (2.6% run to run) have no
/// change point. p99 (8% run to run) cannot be held to none: at alpha 0.05
/// a flat series has a false alarm about 1 time in 20 (4-9 of 100 in the
/// measurement against Otava, docs/measurements.md), and two of these
/// resampled histories hold a real step of the noise that the test finds at
/// the alpha level: the 60-run hyper history's runs from 24 on read 6% higher (p 0.045), the 50-run
/// twin history's first 3 runs 14% higher (p 0.05). So a flat p99 has at
/// most one change point, at p 0.04 to 0.05, never past its warn threshold:
/// no series drifts.
#[test]
fn a_flat_history_has_no_change_point() {
    for (name, noise) in windows() {
        let (doc, stdout) = report(&noise, None);
        let cells = doc["cells"].as_array().unwrap();
        assert!(cells.len() >= 3, "{doc}");
        for c in cells {
            assert_eq!(c["values"].as_array().unwrap().len(), noise.len());
            assert_eq!(c["drifting"], false, "{name}: {c}");
            if c["metric"] == "cpu_us_per_request" || c["metric"] == "throughput_rps" {
                assert_eq!(c["change_points"], serde_json::json!([]), "{name}: {c}");
            }
            assert!(
                c["change_points"].as_array().unwrap().len() <= 1,
                "{name}: {c}"
            );
            for p in c["change_points"].as_array().unwrap() {
                // Between 0.04 and alpha: a weak one, and no split the
                // search should have stopped at.
                let p_value = p["p_value"].as_f64().unwrap();
                assert!(
                    (0.04..=0.05).contains(&p_value) && p["past_warn"] == false,
                    "{name}: {c}"
                );
            }
        }
        assert!(!stdout.contains("drifting"), "{stdout}");
    }
}

#[test]
fn the_markdown_report_charts_a_drifting_series_and_fail_on_drift_exits_1() {
    let noise = &shuffled("hyper", 1)[..60];
    let dir = tempfile::tempdir().unwrap();
    store_history(
        &LocalStore::new(dir.path()),
        noise,
        Some(Planted { at: 30, by: 0.10 }),
    );
    let md = dir.path().join("history.md");
    let store = dir.path().to_str().unwrap();
    let out = history(&[
        "--store",
        store,
        "--markdown",
        md.to_str().unwrap(),
        "--fail-on-drift",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("## 📈 benchgate history: "), "{text}");
    assert!(text.contains("🔴 worse, drifting"), "{text}");
    assert!(
        text.contains("get-22b / hyper: cpu_us_per_request"),
        "{text}"
    );
    // Two lines: the history and its segment means.
    let chart = &text[text.find("```mermaid").unwrap()..];
    assert_eq!(
        chart[..chart[3..].find("```").unwrap()]
            .matches("    line [")
            .count(),
        2,
        "{chart}"
    );
    // Only the newest 20 runs: the shift is out of the window.
    let out = history(&["--store", store, "--last", "20", "--fail-on-drift"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout)
        .starts_with("benchgate history: 20 stored runs of main, commits "));
}

#[test]
fn an_empty_or_missing_store_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let out = history(&["--store", missing.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--store") && err.contains("no such directory"),
        "{err}"
    );
    let out = history(&["--store", dir.path().to_str().unwrap(), "--branch", "dev"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("holds no stored baselines of branch \"dev\""),
        "{err}"
    );
    let out = history(&["--store", dir.path().to_str().unwrap(), "--last", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--last 0: read from 1 to"), "{err}");
    let out = history(&["--repository", "o/r"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("set GITHUB_TOKEN"), "{err}");
}
