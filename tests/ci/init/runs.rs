//! The kits run as init's next steps say: the Java and Node kits, their
//! harness put in bench/ as its build.sh says, build and measure with no
//! failed trial through `benchgate run --compare-base HEAD` (needs a JDK,
//! Debian's libhdrhistogram-java, node and npm: scripts/install-test-deps.sh;
//! nothing leaves the machine), and so does the Java kit with a program of its
//! own; a kit without its harness, and a repository of one commit or none,
//! stop before measuring with one clear error.

use std::path::Path;
use std::process::{Command, Output};

use super::{git, init, ok, text, ROOT};

/// One kit measured as its next steps say, at a time (two runs would share 2 cores).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The kit for `marker` in a new directory, `prepare`d, committed as the
/// repository's only commit.
fn committed_kit(marker: &str, prepare: impl Fn(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(marker), "").unwrap();
    let out = init(p, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    prepare(p);
    git(p, &["init", "-q", "."]);
    git(p, &["add", "-A"]);
    git(p, &["commit", "-qm", "kit"]);
    dir
}

/// `benchgate run ARGS` in `dir` for one short round of one scenario, in CI
/// (a line per trial), writing `dir`/results.json.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .arg("run")
        .args(args)
        .args([
            "--rounds",
            "1",
            "--budget",
            "1s",
            "--scenario",
            "get-22b-c10",
        ])
        .arg("--out")
        .arg(dir.join("results.json"))
        .current_dir(dir)
        .env("CI", "true")
        .output()
        .unwrap()
}

/// The kit for `marker`, its harness put in bench/ by `prepare`, committed, then
/// `benchgate run --compare-base HEAD` (init's next step) for one short round:
/// both sides (built by `setup` in their own trees) measure with no failed trial.
/// `windows`: how many windows each fork measured (the Java and Node kits'
/// harnesses speak the window loop; 0: one window, no loop).
fn kit_measures(marker: &str, client: &str, windows: u32, prepare: impl Fn(&Path)) {
    let dir = committed_kit(marker, prepare);
    let p = dir.path();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let results = p.join("results.json");
    let out = run_in(p, &["--compare-base", "HEAD", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = benchgate::results::RunResults::read(&results).unwrap();
    for name in [client.to_string(), format!("{client}@base")] {
        let c = r
            .cell_at("get-22b-c10", &name, None)
            .unwrap_or_else(|| panic!("no cell {name}"));
        assert!(!c.trials.is_empty(), "{name}: no trial");
        for t in &c.trials {
            assert_eq!(t.failure, None, "{name}: the trial failed");
            assert!(
                t.metrics.as_ref().is_some_and(|m| m.ok > 0),
                "{name}: no request"
            );
            let count = t.windows.as_ref().map_or(0, |w| w.count);
            assert_eq!(count, windows, "{name}: windows of its fork");
        }
    }
}

#[test]
fn the_java_kit_builds_and_measures_at_base_and_head() {
    kit_measures("pom.xml", "java-client", 4, put_java_harness);
}

/// The Java harness's two jars in `p`/bench/lib/, as bench/build.sh asks
/// (the harness built by its own script).
fn put_java_harness(p: &Path) {
    ok(
        "sh harness/java/build.sh (needs a JDK and libhdrhistogram-java)",
        Command::new("sh").arg(Path::new(ROOT).join("harness/java/build.sh")),
    );
    let lib = p.join("bench/lib");
    std::fs::create_dir(&lib).unwrap();
    for jar in [
        Path::new(ROOT).join("harness/java/out/benchgate-harness.jar"),
        Path::new("/usr/share/java/hdrhistogram.jar").to_path_buf(),
    ] {
        std::fs::copy(&jar, lib.join(jar.file_name().unwrap()))
            .unwrap_or_else(|e| panic!("{}: {e}", jar.display()));
    }
}

/// The pull request that adds the Java kit: its base commit has no kit, so
/// the base side's setup fails and the interleaved kit's head forks run
/// alone (said), measured, for the neutral "no baseline" verdict, never a
/// failed run (every round failed with the partner's setup).
#[test]
fn the_pull_request_that_adds_the_java_kit_is_neutral() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("pom.xml"), "").unwrap();
    git(p, &["init", "-q", "."]);
    git(p, &["add", "-A"]);
    git(p, &["commit", "-qm", "before the kit"]);
    let out = init(p, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    put_java_harness(p);
    git(p, &["add", "-A"]);
    git(p, &["commit", "-qm", "the kit"]);
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = run_in(p, &["--compare-base", "HEAD^"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("no baseline"), "{all}");
    assert!(
        all.contains("java-client@base's setup failed, so the other side's forks run alone"),
        "{all}"
    );
    let r = benchgate::results::RunResults::read(&p.join("results.json")).unwrap();
    let head = r.cell_at("get-22b-c10", "java-client", None).unwrap();
    assert!(!head.trials.is_empty());
    for t in &head.trials {
        assert_eq!(t.failure, None, "the head's fork failed");
        assert_eq!(t.windows.as_ref().map(|w| w.count), Some(4));
    }
}

/// A Java program that already speaks benchgate's protocol without the
/// harness: a black box (no result file) that keeps sending the scenario's
/// GETs for the warmup and the duration, measured from the server's side.
const OWN_CLIENT: &str = r#"import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;

public final class Own {
    public static void main(String[] args) throws Exception {
        long ms = Long.parseLong(System.getenv("BENCHGATE_WARMUP_MS"))
                + Long.parseLong(System.getenv("BENCHGATE_DURATION_MS")) + 500;
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(System.getenv("BENCHGATE_URL"))).build();
        // Its clock starts at its first request, as the server's watch does
        // (a JVM's first request can take seconds on a loaded machine).
        client.send(request, BodyHandlers.discarding());
        long end = System.nanoTime() + ms * 1_000_000L;
        Thread[] workers = new Thread[Integer.parseInt(System.getenv("BENCHGATE_CONCURRENCY"))];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        client.send(request, BodyHandlers.discarding());
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            workers[i].start();
        }
        for (Thread w : workers) {
            w.join();
        }
    }
}
"#;

/// Issue 54, point 3: the Java kit's path for a program that already speaks
/// the protocol, as bench/run.sh describes it (its main class named there,
/// QuickStart.java deleted, the schedule sequential: it has no window loop),
/// builds and measures with no jar in bench/lib/.
#[test]
fn the_java_kit_runs_a_program_of_its_own_without_the_harness_jars() {
    // Offered the loop, it never declares it: one window per fork.
    kit_measures("pom.xml", "java-client", 0, |p| {
        std::fs::remove_file(p.join("bench/QuickStart.java")).unwrap();
        std::fs::write(p.join("bench/Own.java"), OWN_CLIENT).unwrap();
        let run = p.join("bench/run.sh");
        let text = std::fs::read_to_string(&run).unwrap();
        assert!(text.contains("\nmain=QuickStart\n"), "{text}");
        std::fs::write(&run, text.replace("\nmain=QuickStart\n", "\nmain=Own\n")).unwrap();
        assert!(text.contains("schedule = \"sequential\""), "{text}");
        let config = p.join("benchgate.toml");
        let toml = std::fs::read_to_string(&config).unwrap();
        let interleaved = "schedule = \"interleaved\"";
        assert!(toml.contains(interleaved), "{toml}");
        let sequential = toml.replace(interleaved, "schedule = \"sequential\"");
        std::fs::write(&config, sequential).unwrap();
        assert!(!p.join("bench/lib").exists());
    });
}

#[test]
fn the_node_kit_builds_and_measures_at_base_and_head() {
    kit_measures("package.json", "node-client", 4, |p| {
        // Node reads the project's package.json when bench/quickstart.mjs imports.
        std::fs::write(
            p.join("package.json"),
            r#"{"name": "app", "version": "1.0.0"}"#,
        )
        .unwrap();
        ok(
            "npm pack of harness/node (needs node and npm)",
            Command::new("npm")
                .args(["pack", "--silent", "--pack-destination"])
                .arg(p.join("bench"))
                .arg(Path::new(ROOT).join("harness/node")),
        );
    });
}

/// Issue 54, point 3: the Java kit run before its harness jars are in bench/lib
/// stops before measuring, with build.sh's message once (it was a failed trial
/// per round and side, exit 1 as if the gate had failed): exit 2, no trial, no
/// results file.
#[test]
fn a_kit_without_its_harness_stops_once_before_measuring() {
    let dir = committed_kit("pom.xml", |_| {});
    let p = dir.path();
    let out = run_in(p, &["--compare-base", "HEAD"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert_eq!(all.matches("bench/build.sh: ").count(), 1, "{all}");
    assert!(
        all.contains("client \"java-client\" cannot run, so nothing was measured"),
        "{all}"
    );
    assert!(!all.contains("round 1/"), "a trial ran: {all}");
    assert!(!p.join("results.json").exists(), "{all}");
}

/// Issue 54, point 3: `benchgate run` in a repository of one commit, where the
/// kit's base (`HEAD^`) cannot exist, says so and gives the command that works
/// there (it said to fetch HEAD^); a repository with no commit says to commit.
#[test]
fn a_repository_of_one_commit_gets_advice_that_works_there() {
    let dir = committed_kit("pom.xml", |_| {});
    let out = run_in(dir.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr.contains("first commit") && stderr.contains("--compare-base HEAD`"),
        "{stderr}"
    );
    assert!(!stderr.contains("fetch"), "{stderr}");

    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("pom.xml"), "").unwrap();
    assert_eq!(init(empty.path(), &[]).status.code(), Some(0));
    git(empty.path(), &["init", "-q", "."]);
    let out = run_in(empty.path(), &["--compare-base", "HEAD"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr.contains("no commit yet") && stderr.contains("git commit"),
        "{stderr}"
    );
}
