//! Base vs head (`--compare-base REF`, `[compare] base = "git"`): a command
//! client committed in a temporary git repository, measured at two commits in
//! one run from a git worktree of the base commit, head against base.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::exe;

/// A closed-loop Python client (standard library only) that sleeps the
/// committed `delay_ms.txt` before each request.
const CLIENT: &str = r#"
import http.client, json, os, time, urllib.parse
delay = float(open("delay_ms.txt").read()) / 1000
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
    time.sleep(delay)
    conn.request("GET", u.path)
    conn.getresponse().read()
    if opened:
        lat.append(int((time.monotonic() - t) * 1e6))
print("BENCHGATE-WINDOW-CLOSE", flush=True)
out = {"benchgate_result": 1, "requests": len(lat), "ok": len(lat), "elapsed_s": dur, "latency_us": lat}
json.dump(out, open(os.environ["BENCHGATE_RESULT_PATH"], "w"))
"#;

/// The suite: the client (with `setup`), and a built-in client that has no
/// base side. CPU per request of a sleeping client is scheduler noise.
fn config(compare: &str, setup: &str) -> String {
    format!(
        r#"[run]
rounds = 6
warmup = "100ms"
duration = "600ms"
pin = false

[[client]]
name = "py"
kind = "command"
command = ["python3", "client.py"]
{setup}

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "get"
path = "/bytes/22"
clients = ["py", "hyper"]

[gate]
cpu_us_per_request = {{ fail = "+300%" }}
{compare}
"#
    )
}

/// A repository with the client committed, then `change` applied and
/// committed as head.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new(base: &[(&str, &str)], head: &[(&str, &str)]) -> Repo {
        let r = Repo {
            dir: tempfile::tempdir().unwrap(),
        };
        r.git(&["init", "-q", "-b", "main"]);
        r.write(&[("client.py", CLIENT)]);
        r.write(base);
        r.commit("base");
        r.write(head);
        r.commit("head");
        r
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, files: &[(&str, &str)]) {
        for (name, text) in files {
            std::fs::write(self.path().join(name), text).unwrap();
        }
    }

    fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    fn command(&self, extra: &[&str]) -> Command {
        let mut cmd = Command::new(exe());
        cmd.current_dir(self.path())
            .args(["run", "--quiet", "--config", "benchgate.toml", "--out"])
            .arg(self.results())
            .args(extra);
        cmd
    }

    fn run(&self, extra: &[&str]) -> Output {
        self.command(extra).output().unwrap()
    }

    fn results(&self) -> PathBuf {
        self.path().join("results.json")
    }

    /// The worktrees git knows of: only the repository itself, once the run
    /// is over.
    fn worktrees(&self) -> usize {
        self.git(&["worktree", "list", "--porcelain"])
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count()
    }
}

fn log(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn head_slower_than_base_regresses_and_identical_commits_pass() {
    let slower = Repo::new(
        &[("benchgate.toml", &config("", "")), ("delay_ms.txt", "2")],
        &[("delay_ms.txt", "2.6")],
    );
    let out = slower.run(&["--compare-base", "HEAD^"]);
    assert_eq!(out.status.code(), Some(1), "{}", log(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("py@base"), "{}", log(&out));
    let results = benchgate::results::RunResults::read(&slower.results()).unwrap();
    let clients: Vec<_> = results.results.iter().map(|c| c.client.as_str()).collect();
    assert_eq!(clients, ["py", "py@base", "hyper"]);
    assert_eq!(slower.worktrees(), 1, "the base checkout was left behind");

    // `[compare] base = "git"`: the base is HEAD^ by default.
    let same = Repo::new(
        &[
            ("benchgate.toml", &config("[compare]\nbase = \"git\"\n", "")),
            ("delay_ms.txt", "2"),
        ],
        &[("README.md", "only the docs changed\n")],
    );
    let out = same.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", log(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("base vs head:"), "{}", log(&out));
    assert_eq!(same.worktrees(), 1);
}

#[test]
fn a_base_that_does_not_build_is_neutral_and_a_missing_base_says_how_to_fetch_it() {
    // The setup needs a file that only head has: base fails to build.
    let setup = r#"setup = ["test", "-f", "built"]"#;
    let repo = Repo::new(
        &[
            ("benchgate.toml", &config("", setup)),
            ("delay_ms.txt", "2"),
        ],
        &[("built", "yes\n")],
    );
    let out = repo.run(&["--compare-base", "HEAD^"]);
    assert_eq!(out.status.code(), Some(0), "{}", log(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("no baseline") || stdout.contains("no_baseline"),
        "{}",
        log(&out)
    );
    assert_eq!(repo.worktrees(), 1);

    let out = repo.run(&["--compare-base", "0123456789abcdef0123456789abcdef01234567"]);
    assert_eq!(out.status.code(), Some(2), "{}", log(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not in this clone"), "{}", log(&out));
    assert!(stderr.contains("fetch-depth: 2"), "{}", log(&out));
}

#[test]
fn sigterm_mid_run_removes_the_base_checkout() {
    let repo = Repo::new(
        &[("benchgate.toml", &config("", "")), ("delay_ms.txt", "2")],
        &[("delay_ms.txt", "2.2")],
    );
    let mut child = repo
        .command(&["--compare-base", "HEAD^"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the checkout, then stop the run in its rounds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while repo.worktrees() < 2 {
        assert!(std::time::Instant::now() < deadline, "no base checkout");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert_eq!(repo.worktrees(), 1, "the base checkout was left behind");
}
