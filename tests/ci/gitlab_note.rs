//! examples/gitlab/benchgate-gitlab.sh (the merge-request note and the Free-tier
//! baseline of docs/gitlab.md) against fixtures/gitlab/notes_api.py, a local
//! stand-in for GitLab's notes, user and job-artifacts API on 127.0.0.1. Each
//! case starts its own stand-in from a seed, runs the script with `sh` in a clean
//! environment (GitLab's predefined variables pointing at the stand-in), and
//! reads the stand-in's notes and request log back.
//! Needs sh, curl, jq and python3 (scripts/install-test-deps.sh installs them).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const TOKEN: &str = "glpat-stand-in-token";
const MARKER: &str = "<!-- benchgate:gitlab -->";
const BOT: u64 = 11; // the token's user in the stand-in
const REVIEWER: u64 = 12;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Fails, never skips, when a tool is missing.
fn require_tools() {
    for (tool, arg) in [
        ("sh", "-c"),
        ("curl", "--version"),
        ("jq", "--version"),
        ("python3", "--version"),
    ] {
        let mut cmd = Command::new(tool);
        cmd.arg(arg);
        if arg == "-c" {
            cmd.arg("true");
        }
        let ok = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "{tool} is missing; scripts/install-test-deps.sh installs it (scripts/test.sh runs it)"
        );
    }
}

/// fixtures/gitlab/notes_api.py, running, killed on drop.
struct StandIn {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl StandIn {
    fn start(seed: Value) -> StandIn {
        require_tools();
        let dir = tempfile::tempdir().unwrap();
        let seed_path = dir.path().join("seed.json");
        std::fs::write(&seed_path, seed.to_string()).unwrap();
        let mut child = Command::new("python3")
            .arg(repo("fixtures/gitlab/notes_api.py"))
            .arg(&seed_path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("the stand-in printed no port: {line:?}")
        });
        StandIn { child, port, dir }
    }

    /// {"notes": [...], "requests": [...]} (GET /_state over a plain socket).
    fn state(&self) -> Value {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /_state HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).unwrap();
        let body = raw.split_once("\r\n\r\n").expect("an HTTP answer").1;
        serde_json::from_str(body).unwrap()
    }

    fn notes_by(&self, author: u64) -> Vec<Value> {
        let state = self.state();
        state["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["author"]["id"] == author)
            .cloned()
            .collect()
    }

    /// The API requests (not the test's own /_state reads).
    fn api_requests(&self) -> Vec<Value> {
        let state = self.state();
        state["requests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["path"] != "/_state")
            .cloned()
            .collect()
    }

    /// Runs the script; `scan` is called every few milliseconds while it runs.
    fn run_scanning(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        mut scan: impl FnMut(),
    ) -> (i32, String) {
        let home = self.dir.path();
        let log = home.join("out.log");
        let file = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new("sh");
        cmd.arg(repo("examples/gitlab/benchgate-gitlab.sh"))
            .args(args)
            .current_dir(home)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap())
            .env("HOME", home)
            .env("TMPDIR", home)
            .env("BENCHGATE_GITLAB_TOKEN", TOKEN)
            .env(
                "CI_API_V4_URL",
                format!("http://127.0.0.1:{}/api/v4", self.port),
            )
            .env("CI_PROJECT_ID", "5")
            .env("CI_MERGE_REQUEST_IID", "7")
            .env("CI_DEFAULT_BRANCH", "main")
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("benchgate-gitlab.sh ran over 60 s");
            }
            scan();
            std::thread::sleep(Duration::from_millis(5));
        };
        (
            status.code().unwrap_or(-1),
            std::fs::read_to_string(log).unwrap(),
        )
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        self.run_scanning(args, env, || {})
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn seed(notes: Value, faults: Value) -> Value {
    json!({ "project_id": 5, "merge_requests": [7], "notes": notes, "faults": faults, "lifetime_s": 120 })
}

/// Every API request carried the token in its header and none in its URL.
fn token_only_in_headers(s: &StandIn) {
    for r in s.api_requests() {
        assert_eq!(r["token_in_url"], false, "{r}");
        if r["path"].as_str().unwrap().starts_with("/api/v4/") {
            assert_eq!(r["token_header"], true, "{r}");
        }
    }
}

#[test]
fn creates_one_note_then_updates_it_leaving_other_notes_alone() {
    let quoted = format!("{MARKER}\nthe report, pasted by hand");
    let s = StandIn::start(seed(
        json!([
            { "iid": 7, "author_id": REVIEWER, "body": "Looks good to me" },
            { "iid": 7, "author_id": REVIEWER, "body": quoted },
        ]),
        json!([]),
    ));
    let first = "## benchgate\n\nThe gate **passed**.\n";
    let report = s.write("benchgate-report.md", first);
    let (code, out) = s.run(&["note", &report], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("created note"), "{out}");
    let mine = s.notes_by(BOT);
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["body"], format!("{MARKER}\n{first}"));
    let id = mine[0]["id"].clone();

    // The second pipeline: a report near the 65,536-character limit, with the
    // characters form encoding must carry (& + % = # newlines, non-ASCII).
    let mut second = String::from(
        "## benchgate\n\nThe gate **failed**: p99 +12% & rate -3% (a+b=c, 100%) ±µ ✓\n",
    );
    while second.len() < 65_000 {
        second.push_str("| cell | 1.0 ms ± 2% | <b>x</b> |\n");
    }
    let report = s.write("benchgate-report.md", &second);
    let (code, out) = s.run(&["note", &report], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("updated note {id}")), "{out}");
    let mine = s.notes_by(BOT);
    assert_eq!(mine.len(), 1, "still one note: {}", mine.len());
    assert_eq!(mine[0]["id"], id);
    assert_eq!(
        mine[0]["body"].as_str().unwrap(),
        format!("{MARKER}\n{second}")
    );

    let theirs = s.notes_by(REVIEWER);
    let bodies: Vec<&str> = theirs.iter().map(|n| n["body"].as_str().unwrap()).collect();
    assert_eq!(bodies, ["Looks good to me", quoted.as_str()]);
    assert!(
        !s.api_requests().iter().any(|r| r["method"] == "PUT"
            && theirs.iter().any(|n| r["path"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/{}", n["id"])))),
        "a reviewer's note was written to"
    );
    token_only_in_headers(&s);
}

#[test]
fn finds_its_note_on_the_second_page() {
    let mut notes: Vec<Value> = (0..150)
        .map(|i| json!({ "iid": 7, "author_id": REVIEWER, "body": format!("comment {i}") }))
        .collect();
    notes.push(json!({ "iid": 7, "author_id": BOT, "body": format!("{MARKER}\nold report") }));
    let s = StandIn::start(seed(json!(notes), json!([])));
    let report = s.write("r.md", "new report\n");
    let (code, out) = s.run(&["note", &report], &[]);
    assert_eq!(code, 0, "{out}");
    let mine = s.notes_by(BOT);
    assert_eq!(mine.len(), 1, "updated, not created: {out}");
    assert_eq!(mine[0]["body"], format!("{MARKER}\nnew report\n"));
    let reqs = s.api_requests();
    let pages: Vec<&str> = reqs
        .iter()
        .filter(|r| r["method"] == "GET" && r["path"].as_str().unwrap().ends_with("/notes"))
        .map(|r| r["query"]["page"].as_str().unwrap())
        .collect();
    assert_eq!(pages, ["1", "2"]);
    assert!(reqs.iter().all(|r| r["method"] != "POST"), "{reqs:?}");
}

#[test]
fn without_pagination_headers_a_full_page_means_read_on() {
    let mut notes: Vec<Value> = (0..100)
        .map(|i| json!({ "iid": 7, "author_id": REVIEWER, "body": format!("comment {i}") }))
        .collect();
    notes.push(json!({ "iid": 7, "author_id": BOT, "body": format!("{MARKER}\nold report") }));
    let mut sd = seed(json!(notes), json!([]));
    sd["pagination_headers"] = json!(false);
    let s = StandIn::start(sd);
    let report = s.write("r.md", "new report\n");
    let (code, out) = s.run(&["note", &report], &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(s.notes_by(BOT).len(), 1, "updated, not created: {out}");
    assert_eq!(
        s.notes_by(BOT)[0]["body"],
        format!("{MARKER}\nnew report\n")
    );
}

#[test]
fn a_401_fails_with_a_message_and_never_shows_the_token() {
    let s = StandIn::start(seed(json!([]), json!([])));
    let report = s.write("r.md", "report\n");
    let secret = "glpat-revoked-XyZ123secret";
    let (code, out) = s.run(&["note", &report], &[("BENCHGATE_GITLAB_TOKEN", secret)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("401 Unauthorized") && out.contains("BENCHGATE_GITLAB_TOKEN"),
        "{out}"
    );
    assert!(!out.contains(secret), "the token was printed: {out}");
    assert!(s.state()["notes"].as_array().unwrap().is_empty());
    token_only_in_headers(&s);
}

#[test]
fn retries_busy_answers_and_never_posts_twice() {
    // 429 on the first list; the create is done but its answer lost (502).
    let s = StandIn::start(seed(
        json!([]),
        json!([
            { "method": "GET", "path": "/notes", "status": 429, "retry_after": 0, "count": 1 },
            { "method": "POST", "path": "/notes", "status": 502, "retry_after": 0, "count": 1, "apply": true },
        ]),
    ));
    let report = s.write("r.md", "report\n");
    let (code, out) = s.run(&["note", &report], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("HTTP 429") && out.contains("HTTP 502"),
        "{out}"
    );
    assert_eq!(s.notes_by(BOT).len(), 1, "{out}");
    let posts = s
        .api_requests()
        .iter()
        .filter(|r| r["method"] == "POST")
        .count();
    assert_eq!(posts, 1, "looked again instead of posting again: {out}");
}

#[test]
fn gives_up_after_four_attempts() {
    let s = StandIn::start(seed(
        json!([]),
        json!([{ "method": "GET", "path": "/user", "status": 503, "retry_after": 0, "count": 10 }]),
    ));
    let report = s.write("r.md", "report\n");
    let (code, out) = s.run(&["note", &report], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("HTTP 503"), "{out}");
    let tries = s
        .api_requests()
        .iter()
        .filter(|r| r["path"] == "/api/v4/user")
        .count();
    assert_eq!(tries, 4);
}

#[test]
fn without_a_report_the_note_says_so_and_the_job_fails() {
    let s = StandIn::start(seed(
        json!([{ "iid": 7, "author_id": BOT, "body": format!("{MARKER}\nan older, passing report") }]),
        json!([]),
    ));
    let url = "https://gitlab.example/team/service/-/pipelines/99";
    let (code, out) = s.run(&["note", "no-such-report.md"], &[("CI_PIPELINE_URL", url)]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no report at no-such-report.md"), "{out}");
    let mine = s.notes_by(BOT);
    assert_eq!(mine.len(), 1);
    let body = mine[0]["body"].as_str().unwrap();
    assert!(
        body.starts_with(MARKER) && body.contains("wrote no report") && body.contains(url),
        "{body}"
    );
}

#[test]
fn the_token_is_never_on_a_command_line() {
    // GET /user answers after a second, so curl is caught running.
    let s = StandIn::start(seed(
        json!([]),
        json!([{ "method": "GET", "path": "/user", "delay_s": 1.0, "count": 1 }]),
    ));
    let report = s.write("r.md", "report\n");
    let target = format!("127.0.0.1:{}", s.port);
    let (mut seen_curl, mut leaks) = (false, Vec::new());
    let (code, out) = s.run_scanning(&["note", &report], &[], || {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let line = String::from_utf8_lossy(&raw).replace('\0', " ");
            seen_curl |= line.starts_with("curl ") && line.contains(&target);
            if line.contains(TOKEN) {
                leaks.push(line);
            }
        }
    });
    assert_eq!(code, 0, "{out}");
    assert!(
        seen_curl,
        "the scan never saw curl running, so it proves nothing"
    );
    assert!(leaks.is_empty(), "the token on a command line: {leaks:?}");
}

#[test]
fn baseline_downloads_the_default_branch_artifact() {
    let results = r#"{"schema_version":1,"cells":[]}"#;
    let mut sd = seed(json!([]), json!([]));
    sd["artifacts"] = json!([
        { "ref": "main", "job": "benchmark-main", "path": "benchgate-results.json", "content": results, "redirect": true },
        { "ref": "main", "job": "bench", "path": "out/results.json", "content": "{\"direct\":true}" },
    ]);
    let s = StandIn::start(sd);

    // Through a redirect (object storage, GitLab.com's CDN): followed without the token.
    let (code, out) = s.run(&["baseline", "baseline.json"], &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(s.dir.path().join("baseline.json")).unwrap(),
        results
    );
    let reqs = s.api_requests();
    let storage: Vec<&Value> = reqs
        .iter()
        .filter(|r| r["path"].as_str().unwrap().starts_with("/_storage/"))
        .collect();
    assert_eq!(storage.len(), 1, "{reqs:?}");
    assert_eq!(
        storage[0]["token_header"], false,
        "the token went to the redirect's host"
    );
    let first = &reqs[0];
    assert_eq!(
        first["path"],
        "/api/v4/projects/5/jobs/artifacts/main/raw/benchgate-results.json"
    );
    assert_eq!(first["query"]["job"], "benchmark-main");

    // Another job and path, served directly.
    let env = [
        ("BENCHGATE_BASELINE_JOB", "bench"),
        ("BENCHGATE_BASELINE_FILE", "out/results.json"),
    ];
    let (code, out) = s.run(&["baseline", "b2.json"], &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(s.dir.path().join("b2.json")).unwrap(),
        "{\"direct\":true}"
    );

    // None yet (no successful pipeline on the branch): a failure that says what to do.
    let (code, out) = s.run(&["baseline", "b3.json"], &[("CI_DEFAULT_BRANCH", "trunk")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("404") && out.contains("benchmark-main") && out.contains("success"),
        "{out}"
    );
    assert!(!s.dir.path().join("b3.json").exists());
    token_only_in_headers(&s);
}
