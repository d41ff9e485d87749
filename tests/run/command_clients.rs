//! External command clients end to end: a program in another language (here
//! Python with only its standard library, and sh) run per trial with the
//! `BENCHGATE_*` protocol; its own figures, the black-box figures, and every
//! way a program can misbehave.

use crate::common;

use common::{cell, median, run_config, PY_CLIENT};

fn config(clients: &str, extra_run: &str) -> String {
    format!(
        "[run]\nrounds = 2\nwarmup = \"300ms\"\nduration = \"1500ms\"\n{extra_run}\n{clients}\n[[scenario]]\nname = \"get\"\npath = \"/bytes/22\"\n"
    )
}

#[test]
fn a_program_reporting_its_own_count_agrees_with_the_server_within_1_percent() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("client.py"), PY_CLIENT).unwrap();
    let clients = format!(
        "[[client]]\nname = \"python\"\nkind = \"command\"\ncommand = [\"python3\", \"client.py\"]\ncwd = {:?}\n",
        dir.path().display().to_string()
    );
    let run = run_config(&config(&clients, ""), &[]);
    let r = run.results();
    let c = cell(&r, "get", "python");
    for t in &c.trials {
        assert_eq!(t.failure, None);
        let (m, s) = (t.metrics.as_ref().unwrap(), t.server.as_ref().unwrap());
        let diff = (m.ok as f64 - s.requests as f64).abs() / m.ok as f64;
        assert!(
            diff <= 0.01,
            "program counted {}, server {} in its window ({:.2}%)",
            m.ok,
            s.requests,
            diff * 100.0
        );
        assert!(m.latency_p50_us.unwrap() > 0.0);
        assert!(m.cpu_us_per_request.unwrap() > 0.0);
        assert!(m.peak_rss_bytes > 1 << 20 && m.peak_threads >= 1);
        assert_eq!(m.connections_opened, Some(1), "one keep-alive connection");
    }
    assert!(c.histogram.is_some());
}

#[test]
fn a_black_box_program_gets_server_side_throughput_and_no_latency() {
    // A shell loop of curl processes: no result file.
    let clients = r#"[[client]]
name = "curl"
kind = "command"
command = ["sh", "-c", "end=$(( $(date +%s) + 3 )); while [ $(date +%s) -lt $end ]; do curl -s -o /dev/null \"$BENCHGATE_URL\"; done"]
"#;
    let run = run_config(&config(clients, ""), &[]);
    let r = run.results();
    let c = cell(&r, "get", "curl");
    for t in &c.trials {
        assert_eq!(t.failure, None);
        let m = t.metrics.as_ref().unwrap();
        assert!(m.throughput_rps.unwrap() > 0.0 && m.ok > 0);
        assert_eq!(m.latency_p50_us, None, "latency is never invented");
        assert!(
            m.connections_opened.unwrap() >= m.ok,
            "curl opens a connection per request"
        );
        assert!(
            m.cpu_us_per_request.unwrap() > 0.0,
            "CPU of the whole tree (sh + curls)"
        );
    }
    assert!(c.histogram.is_none());
    let table = String::from_utf8_lossy(&run.output.stdout);
    let row = table.lines().find(|l| l.contains("curl")).unwrap();
    assert!(row.contains("n/a"), "{row}");
}

#[test]
fn misbehaving_programs_fail_their_trials_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let clients = format!(
        r#"[[client]]
name = "exits-3"
kind = "command"
command = ["sh", "-c", "echo starting; echo boom >&2; exit 3"]

[[client]]
name = "hangs"
kind = "command"
command = ["sh", "-c", "sleep 60 & echo $! > {pid}; wait"]
timeout = "2s"

[[client]]
name = "chatty"
kind = "command"
command = ["sh", "-c", "head -c 5000000 /dev/zero | tr '\\0' x; exit 1"]

[[client]]
name = "never-connects"
kind = "command"
command = ["true"]

[[client]]
name = "bad-result"
kind = "command"
command = ["sh", "-c", "curl -s -o /dev/null \"$BENCHGATE_URL\"; sleep 0.5; echo '{{\"benchgate_result\": 1, \"requests\": -4, \"ok\": 1, \"elapsed_s\": 1}}' > \"$BENCHGATE_RESULT_PATH\""]

[[client]]
name = "good"
kind = "command"
command = ["sh", "-c", "end=$(( $(date +%s) + 2 )); while [ $(date +%s) -lt $end ]; do curl -s -o /dev/null \"$BENCHGATE_URL\"; done"]
"#,
        pid = pidfile.display()
    );
    let started = std::time::Instant::now();
    let run = run_config(
        &config(&clients, "").replace("rounds = 2", "rounds = 1"),
        &[],
    );
    // Exit 2: five cells measured nothing (issue 28, point 5).
    let r = run.results_with_failed_cells(&[
        "get / exits-3",
        "get / hangs",
        "get / chatty",
        "get / never-connects",
        "get / bad-result",
    ]);
    assert!(
        started.elapsed().as_secs() < 40,
        "every failure is bounded in time"
    );
    let failure = |client: &str| {
        cell(&r, "get", client).trials[0]
            .failure
            .clone()
            .unwrap_or_else(|| panic!("{client} should have failed"))
    };
    let f = failure("exits-3");
    assert!(
        f.contains("exit status: 3") && f.contains("boom") && f.contains("starting"),
        "{f}"
    );
    let f = failure("hangs");
    assert!(
        f.contains("did not finish within 2s") && f.contains("killed"),
        "{f}"
    );
    let child: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        killed_within(child, std::time::Duration::from_secs(5)),
        "the hung program's child was killed with its process group"
    );
    let f = failure("chatty");
    assert!(
        f.contains("omitted (") && f.len() < 6000,
        "bounded tail: {} chars",
        f.len()
    );
    let f = failure("never-connects");
    assert!(f.contains("never sent a request"), "{f}");
    let f = failure("bad-result");
    assert!(
        f.contains("result file") && f.contains("`requests` must be a non-negative integer"),
        "{f}"
    );
    let good = cell(&r, "get", "good");
    assert_eq!(good.trials[0].failure, None);
    assert!(good.trials[0].metrics.as_ref().unwrap().ok > 0);
}

/// Issue 54, point 3 (was issue 28, point 5: a failed trial per round, exit
/// 1 side by side as if the gate failed): a command client whose program does
/// not exist, or is not executable, stops the run before it measures
/// anything, with one error naming the client and the program: exit 2, compared
/// with nothing or side by side, and no results file.
#[test]
fn a_program_that_does_not_exist_stops_the_run_once_before_measuring() {
    let short = |clients: &str| {
        config(clients, "")
            .replace("\"300ms\"", "\"50ms\"")
            .replace("\"1500ms\"", "\"100ms\"")
    };
    let client = |command: &str| {
        format!("[[client]]\nname = \"missing\"\nkind = \"command\"\ncommand = [{command:?}]\n")
    };
    for (command, why) in [
        ("./no-such-program", "is missing"),
        ("no-such-program-on-path", "is in no directory of the PATH"),
        ("/dev/null", "is not an executable file"),
    ] {
        for extra in [&[][..], &["--side-by-side", "hyper"]] {
            let both = format!(
                "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n{}",
                client(command)
            );
            let run = run_config(&short(&both), extra);
            let stderr = String::from_utf8_lossy(&run.output.stderr);
            assert_eq!(
                run.output.status.code(),
                Some(2),
                "{command} {extra:?}: {stderr}"
            );
            let errors: Vec<&str> = stderr
                .lines()
                .filter(|l| l.starts_with("benchgate: error:"))
                .collect();
            assert_eq!(errors.len(), 1, "{stderr}");
            assert!(
                errors[0].contains("client \"missing\" cannot run, so nothing was measured")
                    && errors[0].contains(&format!("{command:?} {why}")),
                "{stderr}"
            );
            assert!(!stderr.contains("round 1/"), "a trial ran: {stderr}");
            assert!(!run.out.exists(), "a results file was written");
        }
    }
}

/// Burns one second of CPU (busy loop on the process clock) before the
/// program's first request: a cold start.
const BURN: &str =
    "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0:\n    pass\n";

#[test]
fn cpu_burnt_before_the_window_is_start_up_not_cost_per_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plain.py"), PY_CLIENT).unwrap();
    std::fs::write(dir.path().join("cold.py"), format!("{BURN}{PY_CLIENT}")).unwrap();
    let cwd = dir.path().display().to_string();
    let clients: String = ["plain", "cold"]
        .iter()
        .map(|n| {
            format!("[[client]]\nname = \"{n}\"\nkind = \"command\"\ncommand = [\"python3\", \"{n}.py\"]\ncwd = {cwd:?}\n")
        })
        .collect();
    let run = run_config(&config(&clients, ""), &[]);
    let r = run.results();
    let (plain, cold) = (cell(&r, "get", "plain"), cell(&r, "get", "cold"));
    for t in plain.trials.iter().chain(&cold.trials) {
        assert_eq!(t.failure, None);
    }
    for t in &cold.trials {
        let m = t.metrics.as_ref().unwrap();
        // The whole second is before the first request, in wall time too.
        assert!(m.startup_ms.unwrap() > 900.0, "{:?}", m.startup_ms);
        assert!(
            m.startup_cpu_ms.unwrap() < 5_000.0,
            "{:?}",
            m.startup_cpu_ms
        );
    }
    // The second shows in start-up (both warm up for 300 ms besides) ...
    let extra = median(cold, "startup_cpu_ms") - median(plain, "startup_cpu_ms");
    assert!(extra > 500.0, "start-up CPU {extra:.0} ms more than plain");
    // ... and not per request: spread over the window's ~1.5 s of requests it
    // would at least double the cost of each.
    let (p, c) = (
        median(plain, "cpu_us_per_request"),
        median(cold, "cpu_us_per_request"),
    );
    assert!(c < p * 1.5, "cpu_us_per_request: plain {p:.1}, cold {c:.1}");
}

#[test]
fn a_process_that_leaves_the_group_is_killed_with_it() {
    // The program starts `sleep 60` in a session of its own (setsid: outside
    // the trial's process group), records its pid, then runs one request.
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("escaped.pid");
    let clients = format!(
        r#"[[client]]
name = "escapes"
kind = "command"
command = ["sh", "-c", "setsid sh -c 'echo $$ > \"$0\"; exec sleep 60' {pidfile} </dev/null >/dev/null 2>&1 & end=$(( $(date +%s) + 2 )); while [ $(date +%s) -lt $end ]; do curl -s -o /dev/null \"$BENCHGATE_URL\"; done"]
"#,
        pidfile = pidfile.display()
    );
    let run = run_config(
        &config(&clients, "").replace("rounds = 2", "rounds = 1"),
        &[],
    );
    let r = run.results();
    assert_eq!(cell(&r, "get", "escapes").trials[0].failure, None);
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .expect("the escaped process wrote its pid")
        .trim()
        .parse()
        .unwrap();
    let sid = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    assert!(
        killed_within(pid, std::time::Duration::from_secs(5)),
        "the process that left the group (pid {pid}, stat {sid:?}) outlived the trial"
    );
}

/// Whether process `pid` is gone or dead within `limit`: its /proc entry has
/// vanished, or it is a zombie (killed, waiting for whoever adopted it to reap
/// it; reaping an orphan is asynchronous, so its entry can outlive the kill).
pub(crate) fn killed_within(pid: u32, limit: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            // The state is the field after the parenthesised command name.
            Ok(stat) => {
                let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
                if state.is_some_and(|s| s.starts_with('Z') || s.starts_with('X')) {
                    return true;
                }
            }
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
