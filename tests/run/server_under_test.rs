//! Server-under-test mode end to end through the real binary: `[[server]]`
//! entries started as commands (the reference server itself, and a copy of it
//! with `--added-delay 2ms`), a server that never gets ready, one that exits at
//! once, and a `url` server started by the test. Every load is small and
//! bounded; every server process is checked gone afterwards.

use crate::common;

use std::io::BufRead as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use benchgate::orchestrate::escapees;
use benchgate::results::{CellResult, RunResults};
use common::{exe, median, run_config};

/// A mark in the servers' environment, to find any process left behind.
fn mark() -> String {
    format!("sut-test-{}-{}", std::process::id(), rand_suffix())
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Processes (of this user) whose environment holds `mark`, with their
/// command lines.
fn processes_with(mark: &str) -> Vec<String> {
    escapees::processes_with(&format!("SUT_TEST_MARK={mark}"))
        .into_iter()
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            format!("{pid}: {}", String::from_utf8_lossy(&cmd))
        })
        .collect()
}

fn cell<'a>(r: &'a RunResults, client: &str, server: &str) -> &'a CellResult {
    r.cell_at("get-22b", client, Some(server))
        .unwrap_or_else(|| panic!("no cell {client} @ {server}"))
}

/// A terminal row's verdict without the validity guard's suffix: on a quiet
/// machine the client can saturate its core against the fast server, whose
/// trials are then marked client-bound (", invalid trials") while the
/// verdict stays what the statistics decided.
fn verdict(row: &str) -> &str {
    row.trim_end().trim_end_matches(", invalid trials")
}

/// A `[[server]]` running this benchgate's reference server, with extra args.
fn reference_server(name: &str, extra: &str, mark: &str) -> String {
    format!(
        "[[server]]\nname = \"{name}\"\ncommand = [\"{}\", \"serve\", \"--no-tls\", \"--listen\", \"127.0.0.1:{{port}}\"{extra}]\n\
         ready = \"http://127.0.0.1:{{port}}/bytes/1\"\nready_timeout = \"10s\"\nenv = {{ SUT_TEST_MARK = \"{mark}\" }}\n",
        exe()
    )
}

#[test]
fn a_slower_server_is_measured_slower_and_the_gate_says_so() {
    let mark = mark();
    // 6 rounds: the fewest with which a paired comparison can be significant
    // at alpha 0.05 (exact Wilcoxon: 2 / 2^6 = 0.031).
    let toml = format!(
        "[run]\nrounds = 6\nwarmup = \"100ms\"\nduration = \"250ms\"\n\
         [[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\
         [[scenario]]\nname = \"get-22b\"\npath = \"/bytes/22\"\nconcurrency = 4\n\
         {}{}[compare]\nbaseline_server = \"fast\"\n",
        reference_server("fast", "", &mark),
        reference_server("slow", ", \"--added-delay\", \"2ms\"", &mark),
    );
    // --wide: names whole (a table fitted to 120 columns cuts them).
    let run = run_config(&toml, &["--wide"]);
    // With `[compare]` in the config the run itself compares the servers side
    // by side and exits with the gate: 1, the slow server regressed.
    let stdout = String::from_utf8_lossy(&run.output.stdout);
    assert_eq!(
        run.output.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&run.output.stderr)
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("hyper @ slow vs hyper @ fast")
                && l.contains("throughput_rps")
                && verdict(l).ends_with("regressed")),
        "{stdout}"
    );
    let results = benchgate::results::RunResults::read(&run.out).unwrap();
    assert!(
        processes_with(&mark).is_empty(),
        "{:?}",
        processes_with(&mark)
    );
    common::assert_results_valid(&run.out);
    assert_eq!(results.results.len(), 2);
    let (fast, slow) = (
        cell(&results, "hyper", "fast"),
        cell(&results, "hyper", "slow"),
    );
    for c in [fast, slow] {
        assert_eq!(c.trials.len(), 6);
        for t in &c.trials {
            assert_eq!(t.failure, None, "{}", c.label());
            assert!(t.server.is_none(), "no reference-server counters");
            let m = t.metrics.as_ref().unwrap();
            assert!(m.ok > 0 && m.errors.total() == 0, "{}: {m:?}", c.label());
            assert_eq!(m.connections_opened, None);
            assert_eq!(m.requests_per_connection, None);
            // The server's own cost: its process group, from /proc.
            assert!(m.server_peak_threads.unwrap() >= 1);
            assert!(m.server_peak_rss_bytes.unwrap() > 1 << 20);
            assert!(m.server_cpu_us_per_request.unwrap() >= 0.0);
        }
    }
    // A single-threaded server answering 22 bytes spends well over 0 CPU on
    // thousands of requests (10 ms /proc ticks: read the medians).
    assert!(median(fast, "server_cpu_us_per_request") > 0.0);
    let (tf, ts) = (
        median(fast, "throughput_rps"),
        median(slow, "throughput_rps"),
    );
    assert!(ts < 0.6 * tf, "slow {ts} req/s vs fast {tf} req/s");
    let (pf, ps) = (
        median(fast, "latency_p50_us"),
        median(slow, "latency_p50_us"),
    );
    assert!(ps > pf + 1500.0, "p50 slow {ps} us vs fast {pf} us");

    // The run's table labels the cells and says what is absent.
    let table = String::from_utf8_lossy(&run.output.stdout);
    assert!(table.contains("hyper @ slow"), "{table}");
    assert!(
        table.contains("server under test: reference-server counters not available"),
        "{table}"
    );

    // Side by side with baseline_server = "fast" (from the recorded config):
    // the gate fails on the slow server's throughput.
    let md = run.dir.path().join("comment.md");
    let out = Command::new(exe())
        .args(["compare", "--current"])
        .arg(&run.out)
        .arg("--markdown")
        .arg(&md)
        .arg("--wide")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let terminal = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{terminal}");
    let row = terminal
        .lines()
        .find(|l| l.contains("hyper @ slow vs hyper @ fast") && l.contains("throughput_rps"))
        .unwrap_or_else(|| panic!("no throughput row:\n{terminal}"));
    assert!(verdict(row).ends_with("regressed"), "{row}");
    assert!(terminal.contains("reference-server counters not available"));
    let comment = std::fs::read_to_string(&md).unwrap();
    // Markdown escapes the underscore.
    let row = comment
        .lines()
        .find(|l| l.contains("hyper @ slow vs hyper @ fast") && l.contains("throughput\\_rps"))
        .unwrap_or_else(|| panic!("no throughput row:\n{comment}"));
    assert!(row.contains("regressed"), "{row}");
    assert!(comment.contains("reference-server counters not available"));
}

#[test]
fn servers_that_never_get_ready_or_exit_fail_their_trials_and_the_run_goes_on() {
    let mark = mark();
    let toml = format!(
        "[run]\nrounds = 1\nwarmup = \"50ms\"\nduration = \"150ms\"\n\
         [[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\
         [[scenario]]\nname = \"get-22b\"\npath = \"/bytes/22\"\nconcurrency = 2\n\
         [[server]]\nname = \"never\"\ncommand = [\"sh\", \"-c\", \"echo still-warming-up >&2; exec sleep 30\"]\n\
         ready = \"http://127.0.0.1:{{port}}/health\"\nready_timeout = \"500ms\"\nenv = {{ SUT_TEST_MARK = \"{mark}\" }}\n\
         [[server]]\nname = \"exits\"\ncommand = [\"sh\", \"-c\", \"echo bad flag --prot >&2; exit 7\"]\n\
         {}",
        reference_server("ok", "", &mark),
    );
    let started = Instant::now();
    let run = run_config(&toml, &[]);
    let results =
        run.results_with_failed_cells(&["get-22b / hyper @ never", "get-22b / hyper @ exits"]);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        processes_with(&mark).is_empty(),
        "{:?}",
        processes_with(&mark)
    );
    let never = cell(&results, "hyper", "never").trials[0]
        .failure
        .clone()
        .unwrap();
    assert!(
        never.contains("server \"never\" was not ready within 500ms"),
        "{never}"
    );
    assert!(never.contains("http://127.0.0.1:"), "{never}");
    assert!(never.contains("still-warming-up"), "stderr tail: {never}");
    let exits = cell(&results, "hyper", "exits").trials[0]
        .failure
        .clone()
        .unwrap();
    assert!(
        exits.contains("server \"exits\" exited (exit status: 7) before it was ready"),
        "{exits}"
    );
    assert!(exits.contains("bad flag --prot"), "stderr tail: {exits}");
    // The run went on with the server that works.
    let ok = &cell(&results, "hyper", "ok").trials[0];
    assert_eq!(ok.failure, None);
    assert!(ok.metrics.as_ref().unwrap().ok > 0);
    let table = String::from_utf8_lossy(&run.output.stdout);
    assert!(
        table.contains("failed: get-22b / hyper @ never round 1"),
        "{table}"
    );
}

#[test]
fn a_url_server_is_driven_but_has_no_process_figures() {
    let mut server = Command::new(exe())
        .args(["serve", "--no-tls", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Held open to the end: the server writes more lines, and dies of a
    // closed pipe.
    let mut stdout = std::io::BufReader::new(server.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let toml = format!(
        "[run]\nrounds = 2\nwarmup = \"50ms\"\nduration = \"200ms\"\n\
         [[client]]\nname = \"reqwest\"\nkind = \"reqwest\"\n\
         [[scenario]]\nname = \"get-22b\"\npath = \"/bytes/22\"\nconcurrency = 2\n\
         [[server]]\nname = \"running\"\nurl = \"{url}\"\n"
    );
    let run = run_config(&toml, &[]);
    let _ = server.kill();
    let _ = server.wait();
    drop(stdout);
    let results = run.results();
    let c = cell(&results, "reqwest", "running");
    for t in &c.trials {
        assert_eq!(t.failure, None);
        assert!(t.server.is_none());
        let m = t.metrics.as_ref().unwrap();
        assert!(m.ok > 0 && m.errors.total() == 0 && m.latency_p50_us.is_some());
        // No process is known: absent, never invented.
        assert_eq!(m.server_cpu_us_per_request, None);
        assert_eq!(m.server_peak_rss_bytes, None);
        assert_eq!(m.server_peak_threads, None);
        assert_eq!(m.connections_opened, None);
    }
    assert!(!c.summary.contains_key("server_cpu_us_per_request"));
    let table = String::from_utf8_lossy(&run.output.stdout);
    assert!(table.contains("reqwest @ running"), "{table}");
    assert!(!table.contains("srv cpu/req"), "no server columns: {table}");
}

/// `setup` on a `[[server]]` runs once, before the rounds, in the server's
/// `cwd` (here it makes the executable the command starts); a setup that fails
/// fails every round on that server, with its output, and the run goes on.
#[test]
fn a_server_setup_builds_it_once_and_a_failed_setup_fails_its_rounds() {
    let mark = mark();
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().display().to_string();
    let toml = format!(
        "[run]\nrounds = 2\nwarmup = \"50ms\"\nduration = \"150ms\"\n\
         [[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\
         [[scenario]]\nname = \"get-22b\"\npath = \"/bytes/22\"\nconcurrency = 2\n\
         [[server]]\nname = \"built\"\ncwd = \"{cwd}\"\n\
         setup = [\"sh\", \"-c\", \"echo built >> setup-runs; ln -sf {exe} srv\"]\n\
         command = [\"./srv\", \"serve\", \"--no-tls\", \"--listen\", \"127.0.0.1:{{port}}\"]\n\
         ready = \"http://127.0.0.1:{{port}}/bytes/1\"\nready_timeout = \"10s\"\nenv = {{ SUT_TEST_MARK = \"{mark}\" }}\n\
         [[server]]\nname = \"broken\"\ncwd = \"{cwd}\"\n\
         setup = [\"sh\", \"-c\", \"echo cannot find the compiler >&2; exit 3\"]\n\
         command = [\"./srv\", \"serve\", \"--no-tls\", \"--listen\", \"127.0.0.1:{{port}}\"]\n\
         env = {{ SUT_TEST_MARK = \"{mark}\" }}\n",
        exe = exe(),
    );
    let run = run_config(&toml, &[]);
    let results = run.results_with_failed_cells(&["get-22b / hyper @ broken"]);
    assert!(
        processes_with(&mark).is_empty(),
        "{:?}",
        processes_with(&mark)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("setup-runs")).unwrap(),
        "built\n",
        "the setup ran once, not once per round"
    );
    for t in &cell(&results, "hyper", "built").trials {
        assert_eq!(t.failure, None);
        assert!(t.metrics.as_ref().unwrap().ok > 0);
    }
    let broken = &cell(&results, "hyper", "broken").trials;
    assert_eq!(broken.len(), 2);
    for t in broken {
        let f = t.failure.clone().unwrap();
        assert!(f.contains("the server's setup step failed"), "{f}");
        assert!(f.contains("cannot find the compiler"), "{f}");
    }
    common::assert_results_valid(&run.out);
}
