//! `benchgate calibrate` end to end with the hidden mock driver (scripted
//! latencies, no network noise): A/A runs, the noise table, the `[gate]`
//! snippet, `--write` keeping the rest of the file (comments and layout too), and
//! `--results`.

use crate::common;

use std::process::Command;

use benchgate::config::Suite;
use common::exe;

const CONFIG: &str = r#"# my suite: this comment and the layout must survive --write
[run]
rounds = 4
warmup = "20ms"
requests = 40   # short

[[client]]
name = "scripted"
kind = "hyper"

[[scenario]]
name = "mocked"
path = "/bytes/1"
concurrency = 2

[gate]
alpha = 0.05
throughput_rps = "-5%" # was here
"#;

fn calibrate(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    Command::new(exe())
        .arg("calibrate")
        .arg("--config")
        .arg(dir.join("benchgate.toml"))
        .args(["--no-pin", "--quiet", "--mock-latencies-us", "1000,1100"])
        .args(extra)
        .env("CI", "true")
        .output()
        .unwrap()
}

#[test]
fn calibrate_prints_noise_and_a_gate_snippet_and_writes_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("benchgate.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let keep = dir.path().join("runs");
    let out = calibrate(
        dir.path(),
        &[
            "--runs",
            "3",
            "--write",
            "--keep-runs",
            keep.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "throughput_rps",
        "cpu_us_per_request",
        "ordered A/A comparisons",
        "[gate]",
        "3 A/A runs",
    ] {
        assert!(stdout.contains(needle), "{needle:?} missing:\n{stdout}");
    }
    // The runs were kept, and every other byte of the config survived.
    assert_eq!(std::fs::read_dir(&keep).unwrap().count(), 3);
    let written = std::fs::read_to_string(&config).unwrap();
    let head = CONFIG.split("[gate]").next().unwrap();
    assert!(
        written.starts_with(&format!("{head}[gate]\nalpha = 0.05\n")),
        "{written}"
    );
    assert!(
        written.contains("throughput_rps = { fail = \"-"),
        "{written}"
    );
    assert!(written.contains(" # was here\n"), "{written}");
    let suite = Suite::from_file(&config).expect("the rewritten config parses");
    let g = |m: &str| suite.gate.metrics.iter().find(|g| g.metric == m).unwrap();
    assert!(g("throughput_rps").fail.unwrap().relative >= 0.02);
    assert!(g("cpu_us_per_request").gating);
    assert_eq!(g("latency_p99_us").fail.unwrap().absolute, Some(2000.0));
    // No stray temporary files next to the config.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");

    // --results analyses the kept runs without running anything.
    let files: Vec<String> = std::fs::read_dir(&keep)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    let mut args = Vec::new();
    for f in &files {
        args.push("--results");
        args.push(f.as_str());
    }
    let again = calibrate(dir.path(), &args);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(String::from_utf8_lossy(&again.stdout).contains("3 A/A runs"));
}

#[test]
fn calibrate_rejects_one_run_and_write_without_a_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("benchgate.toml"), CONFIG).unwrap();
    let out = calibrate(dir.path(), &["--runs", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--runs 1"));

    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(exe())
        .current_dir(empty.path())
        .args(["calibrate", "--write", "--runs", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--write needs a config file"));
}

/// `[gate]` laid out by hand: a comment on its header, a comment line inside
/// it, and a metric written as a sub-table with its own comments.
const LAID_OUT: &str = r#"# hand-tuned
[run]
rounds = 4
warmup = "20ms"
requests = 40

[[client]]
name = "scripted"
kind = "hyper"

[[scenario]]
name = "mocked"
path = "/bytes/1"
concurrency = 2

[gate] # thresholds: see docs/gate.md
# informative only
alpha = 0.05

# cpu: tuned in PR 12
[gate.cpu_us_per_request]
fail = "+10%"   # from the A/A runs
gating = true
"#;

#[test]
fn write_keeps_comments_and_sets_a_metric_written_as_a_sub_table() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("benchgate.toml");
    std::fs::write(&config, LAID_OUT).unwrap();
    let out = calibrate(dir.path(), &["--runs", "2", "--write"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&config).unwrap();
    let head = LAID_OUT.split("# informative").next().unwrap();
    assert!(
        written.starts_with(&format!("{head}# informative only\nalpha = 0.05\n")),
        "{written}"
    );
    // One [gate] table; the sub-table keeps its place, comments and `gating`.
    assert_eq!(written.matches("[gate]").count(), 1, "{written}");
    assert!(
        written.contains("\n\n# cpu: tuned in PR 12\n[gate.cpu_us_per_request]\nfail = \"+"),
        "{written}"
    );
    assert!(
        written.contains("%\"   # from the A/A runs\ngating = true\nwarn = \"+"),
        "{written}"
    );
    let suite = Suite::from_file(&config).expect("the rewritten config parses");
    let g = |m: &str| suite.gate.metrics.iter().find(|g| g.metric == m).unwrap();
    assert!(g("cpu_us_per_request").warn.is_some());
    assert!(g("throughput_rps").fail.unwrap().relative >= 0.02);
}

/// A config that compares within the run is told what calibration measures
/// for it: each run is an A/A comparison of its own, and the suggestions are
/// the thresholds its rounds can check.
#[test]
fn calibrate_says_what_it_measures_for_a_side_by_side_config() {
    let dir = tempfile::tempdir().unwrap();
    let config = CONFIG.replace("rounds = 4", "rounds = 8").replace(
        "[[scenario]]",
        "[[client]]\nname = \"other\"\nkind = \"hyper\"\n\n[compare]\nbaseline_client = \"scripted\"\n\n[[scenario]]",
    );
    assert_ne!(config, CONFIG);
    std::fs::write(dir.path().join("benchgate.toml"), config).unwrap();
    let out = calibrate(dir.path(), &["--runs", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("compares within the run ([compare]), paired by round"),
        "{stdout}"
    );
    assert!(
        stdout.contains("checkable") && stdout.contains("% @8 "),
        "{stdout}"
    );
    assert!(stdout.contains("at 93% power"), "{stdout}");
    // A config without [compare] gets no such note, nor the column.
    std::fs::write(dir.path().join("benchgate.toml"), CONFIG).unwrap();
    let out = calibrate(dir.path(), &["--runs", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("compares within the run"), "{stdout}");
    assert!(!stdout.contains("checkable"), "{stdout}");
}

/// Forks of several windows (`[run] windows`) compared within the run: the
/// variance components of their windows, and the windows per fork they ask
/// for (issue 52, point 3), from two A/A results files.
#[test]
fn calibrate_names_the_windows_per_fork_for_windowed_forks() {
    let toml = "[run]\nrounds = 6\nduration = \"1s\"\nwindows = 3\n\
        \n[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
        \n[[client]]\nname = \"b\"\nkind = \"hyper\"\n\
        \n[compare]\nbaseline_client = \"a\"\n\
        \n[[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\n";
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("benchgate.toml");
    std::fs::write(&config, toml).unwrap();
    let suite = Suite::from_toml(toml, "benchgate.toml").unwrap();
    let mut files = Vec::new();
    for k in 0..2u32 {
        let mut run = common::synthetic::run(suite.clone(), 6, |_, _, _| {
            Some(common::synthetic::metrics(1000.0, 2000.0, 50.0))
        });
        for cell in &mut run.results {
            let (first, side) = if cell.client == "b" {
                (0, 1.0)
            } else {
                (5, 0.0)
            };
            for t in &mut cell.trials {
                let r = t.round;
                let at = first + 10 * r;
                t.started_at = Some(format!("2026-12-06T10:{:02}:{:02}Z", at / 60, at % 60));
                t.window_actual_s = Some(3.0);
                // b's windows off a's by a fork-level and a window-level part.
                let values = (0..3u32)
                    .map(|j| {
                        let d = side * (0.01 * f64::from((r + k) % 3) + 0.02 * f64::from(j % 2));
                        benchgate::results::WindowFigures {
                            throughput_rps: 1000.0 * d.exp(),
                            ..Default::default()
                        }
                    })
                    .collect();
                t.windows = Some(benchgate::results::ForkWindows {
                    count: 3,
                    values,
                    ..Default::default()
                });
            }
        }
        let path = dir.path().join(format!("run-{k}.json"));
        run.write_atomic(&path).unwrap();
        files.push(path);
    }
    let out = Command::new(exe())
        .args(["calibrate", "--config"])
        .arg(&config)
        .args(
            files
                .iter()
                .flat_map(|f| [std::ffi::OsStr::new("--results"), f.as_os_str()]),
        )
        .env("CI", "true")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let log = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{log}");
    let (_, windows) = stdout
        .split_once("Windows per fork")
        .unwrap_or_else(|| panic!("no windows table: {log}"));
    let row = windows
        .lines()
        .find(|l| l.starts_with("get ") && l.contains("throughput_rps"))
        .unwrap_or_else(|| panic!("no row of b's throughput: {log}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1..5], ["b", "throughput_rps", "3", "12"], "{row}");
    assert!(windows.contains("suggested: [run] windows = "), "{log}");
    // Without --config, where no ./benchgate.toml is: the config the files
    // recorded, not the built-in suite (which would compare the runs with
    // one another and find no windows to read).
    let elsewhere = tempfile::tempdir().unwrap();
    let out = Command::new(exe())
        .arg("calibrate")
        .args(
            files
                .iter()
                .flat_map(|f| [std::ffi::OsStr::new("--results"), f.as_os_str()]),
        )
        .current_dir(elsewhere.path())
        .env("CI", "true")
        .output()
        .unwrap();
    let recorded = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{recorded}");
    assert!(
        recorded.contains("the runs are judged by the config")
            && recorded.contains("run-0.json recorded"),
        "{recorded}"
    );
    assert_eq!(
        recorded.split_once("Windows per fork").map(|(_, w)| w),
        Some(windows),
        "{recorded}"
    );
}
