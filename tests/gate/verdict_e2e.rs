//! Issue 28: a verdict says no more than was measured. A command client whose
//! CPU per request grows by about 15-20%, measured base vs head at 6 rounds of
//! 100 ms + 300 ms (short windows, as a noisy shared runner affords), must
//! never be reported as a pass: it fails or it is inconclusive. The same
//! client at both commits (A/A) must never fail.

use crate::common;

use common::git_repo::Repo;

/// A Python client that spins `burn_us.txt` microseconds of CPU before each
/// request (the change under test lives in that committed file).
const CLIENT: &str = r#"
import http.client, json, os, time, urllib.parse
burn = float(open("burn_us.txt").read()) / 1e6
u = urllib.parse.urlparse(os.environ["BENCHGATE_URL"])
conn = http.client.HTTPConnection(u.hostname, u.port)
warm = int(os.environ["BENCHGATE_WARMUP_MS"]) / 1000
dur = int(os.environ["BENCHGATE_DURATION_MS"]) / 1000
t0 = time.monotonic()
lat = []
opened = False
while True:
    t = time.monotonic()
    if t - t0 >= warm + dur:
        break
    if t - t0 >= warm and not opened:
        print("BENCHGATE-WINDOW-OPEN", flush=True)
        opened = True
    end = time.thread_time() + burn
    while time.thread_time() < end:
        pass
    conn.request("GET", u.path)
    conn.getresponse().read()
    if opened:
        lat.append(int((time.monotonic() - t) * 1e6))
print("BENCHGATE-WINDOW-CLOSE", flush=True)
out = {"benchgate_result": 1, "requests": len(lat), "ok": len(lat), "elapsed_s": dur, "latency_us": lat}
json.dump(out, open(os.environ["BENCHGATE_RESULT_PATH"], "w"))
"#;

/// 6 rounds of 100 ms + 300 ms, base vs head, the default gate (CPU per
/// request fails at +10%), no extra rounds.
const CONFIG: &str = r#"[run]
rounds = 6
warmup = "100ms"
duration = "300ms"
pin = false

[[client]]
name = "py"
kind = "command"
command = ["python3", "client.py"]

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 1

[compare]
base = "git"
"#;

/// Runs the suite base vs head with `base_us` and `head_us` of CPU per
/// request; the comparison's JSON and the exit code.
fn verdict(base_us: &str, head_us: &str) -> (serde_json::Value, Option<i32>, String) {
    let repo = Repo::new(
        &[
            ("client.py", CLIENT),
            ("benchgate.toml", CONFIG),
            ("burn_us.txt", base_us),
        ],
        &[("burn_us.txt", head_us)],
    );
    let json = repo.path().join("comparison.json");
    let out = repo.run(&["--json", json.to_str().unwrap()]);
    let log = format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {log}"));
    (serde_json::from_str(&text).unwrap(), out.status.code(), log)
}

fn cpu_row(cmp: &serde_json::Value) -> &serde_json::Value {
    cmp["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "cpu_us_per_request" && m["client"] == "py")
        .expect("a cpu_us_per_request row for py")
}

#[test]
fn more_cpu_per_request_is_never_a_pass_and_a_a_never_fails() {
    // 400 -> 500 us of spin on top of the client's own ~100-200 us per
    // request: CPU per request +15-20%.
    let (slower, code, log) = verdict("400", "500");
    let outcome = slower["outcome"].as_str().unwrap();
    assert!(
        matches!(outcome, "fail" | "inconclusive"),
        "a +15-20% CPU change was reported {outcome}:\n{log}"
    );
    assert_eq!(code, Some(u8::from(outcome == "fail").into()), "{log}");
    let cpu = cpu_row(&slower);
    assert!(
        cpu["change"].as_f64().unwrap() > 0.05,
        "the change was not caused: {cpu}\n{log}"
    );
    assert_ne!(cpu["verdict"], "unchanged", "{log}");
    if outcome == "inconclusive" {
        assert!(log.contains("Inconclusive:"), "no headline says so:\n{log}");
        assert!(!log.contains("PASS"), "{log}");
    }

    let (same, code, log) = verdict("400", "400");
    assert_ne!(same["outcome"], "fail", "A/A failed:\n{log}");
    assert_eq!(code, Some(0), "{log}");
}
