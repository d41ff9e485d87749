//! Issue 30, point 2: a histogram that does not decode is loud. `compare`
//! names the cell on stderr (and as a warning annotation under Actions);
//! `merge` refuses a shard that carries one (exit 2, naming the cell).

use crate::common;

use std::path::Path;
use std::process::Command;

const SUITE: &str = r#"
[run]
rounds = 2
warmup = "20ms"
requests = 20
pin = false

[[client]]
name = "a"
kind = "hyper"

[[client]]
name = "b"
kind = "hyper"

[[scenario]]
name = "one"
path = "/bytes/1"
concurrency = 1

[[scenario]]
name = "two"
path = "/bytes/2"
concurrency = 1
"#;

/// Replaces client `b`'s histogram in scenario `scenario` of `file` with a
/// crafted one (valid base64 that is no histogram).
fn craft(file: &Path, scenario: &str) {
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let mut done = false;
    for cell in doc["results"].as_array_mut().unwrap() {
        if cell["scenario"] == scenario && cell["client"] == "b" {
            cell["histogram"] = "AAAAAAAAAAAAAAAA".into();
            done = true;
        }
    }
    assert!(done, "no cell {scenario}/b in {}", file.display());
    std::fs::write(file, serde_json::to_vec(&doc).unwrap()).unwrap();
}

fn benchgate(dir: &Path, args: &[&str], actions: bool) -> std::process::Output {
    let mut cmd = Command::new(common::exe());
    cmd.current_dir(dir).args(args).env_remove("GITHUB_ACTIONS");
    if actions {
        cmd.env("GITHUB_ACTIONS", "true");
    }
    cmd.output().unwrap()
}

#[test]
fn compare_names_the_cell_whose_histogram_was_refused() {
    let run = common::run_config(SUITE, &["--mock-latencies-us", "300"]);
    assert!(run.output.status.success(), "{:?}", run.output);
    craft(&run.out, "two");
    let dir = run.dir.path();
    let out = benchgate(
        dir,
        &[
            "compare",
            "--current",
            "results.json",
            "--side-by-side",
            "a",
        ],
        true,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0..=1)), "{stderr}");
    assert!(
        stderr.contains("benchgate: warning: results.json: the latency histogram of two / b (histogram) was refused: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("::warning title=benchgate%3A latency histogram refused::results.json: the latency histogram of two / b"),
        "{stderr}"
    );
    // Only the crafted cell.
    assert_eq!(stderr.matches("was refused").count(), 2, "{stderr}");
    // Outside Actions: the warning, no annotation.
    let out = benchgate(
        dir,
        &[
            "compare",
            "--current",
            "results.json",
            "--side-by-side",
            "a",
        ],
        false,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("two / b (histogram) was refused"),
        "{stderr}"
    );
    assert!(!stderr.contains("::warning"), "{stderr}");
}

#[test]
fn merge_refuses_a_shard_with_a_refused_histogram() {
    let one = common::run_config(SUITE, &["--mock-latencies-us", "300", "--shard", "1/2"]);
    let two = common::run_config(SUITE, &["--mock-latencies-us", "300", "--shard", "2/2"]);
    assert!(one.output.status.success(), "{:?}", one.output);
    assert!(two.output.status.success(), "{:?}", two.output);
    let shard_two = one.dir.path().join("shard-2.json");
    std::fs::copy(&two.out, &shard_two).unwrap();
    let dir = one.dir.path();
    let merge = |dir: &Path| {
        benchgate(
            dir,
            &[
                "merge",
                "results.json",
                "shard-2.json",
                "--out",
                "merged.json",
            ],
            false,
        )
    };
    // Untouched shards merge.
    let out = merge(dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let crafted: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&shard_two).unwrap()).unwrap();
    let scenario = crafted["results"][0]["scenario"]
        .as_str()
        .unwrap()
        .to_string();
    craft(&shard_two, &scenario);
    std::fs::remove_file(dir.join("merged.json")).unwrap();
    let out = merge(dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "shard-2.json: the latency histogram of {scenario} / b (histogram) was refused"
        )),
        "{stderr}"
    );
    assert!(!dir.join("merged.json").exists());
}
