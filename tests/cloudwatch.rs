//! `benchgate publish cloudwatch` end to end: round trips through moto's
//! CloudWatch server (started by scripts/test.sh, or here when `moto_server` is on
//! PATH), and throttling, failures and request limits against a fake endpoint.
//! Everything runs on 127.0.0.1 and is bounded in time.

#[cfg(feature = "cloudwatch")]
#[path = "cloudwatch/fake.rs"]
mod fake;
#[cfg(feature = "cloudwatch")]
#[path = "cloudwatch/moto.rs"]
mod moto;
#[cfg(feature = "cloudwatch")]
#[path = "cloudwatch/support.rs"]
mod support;

/// Without the feature the command exists and says how to get it.
#[cfg(not(feature = "cloudwatch"))]
#[test]
fn without_the_feature_publish_says_it_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("b.toml");
    std::fs::write(
        &config,
        "[run]\nrounds = 1\nwarmup = \"10ms\"\nrequests = 10\n[[client]]\nname = \"h\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/bytes/1\"\n",
    )
    .unwrap();
    let results = dir.path().join("r.json");
    let exe = env!("CARGO_BIN_EXE_benchgate");
    let run = std::process::Command::new(exe)
        .args(["run", "-q", "--mock-latencies-us", "100", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    assert!(run.status.success());
    let out = std::process::Command::new(exe)
        .args(["publish", "cloudwatch", "--branch", "main", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("built without the `cloudwatch` feature"),
        "{stderr}"
    );
}
