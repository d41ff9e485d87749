//! `benchgate run` end to end through the real binary: a real reference server
//! process, real driver processes, real loopback sockets. Each run is small and
//! bounded (well under 10 s).

use crate::common;

use benchgate::measure::LatencyHistogram;
use benchgate::results::RunResults;
use common::{cell, run_config};

const TWO_CLIENTS: &str = r#"
[run]
rounds = 2
warmup = "100ms"
duration = "400ms"

[[client]]
name = "hyper"
kind = "hyper"

[[client]]
name = "reqwest"
kind = "reqwest"

[[client]]
name = "blocking"
kind = "reqwest-blocking"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 4

[[scenario]]
name = "open-200rps"
path = "/bytes/100"
rate = 200
max_in_flight = 8
clients = ["hyper"]

[[scenario]]
name = "put-64k"
method = "PUT"
path = "/upload"
body = "64KiB"
concurrency = 2
clients = ["reqwest"]
"#;

#[test]
fn run_writes_schema_valid_results_that_agree_with_the_server() {
    let run = run_config(TWO_CLIENTS, &[]);
    let output = &run.output;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "benchgate run failed: {stderr}");
    common::assert_results_valid(&run.out);
    let results = RunResults::read(&run.out).unwrap();
    assert!(results.finished_at.is_some());
    assert_eq!(results.results.len(), 5);

    // Rounds interleave clients: the order of cells is config order.
    let order: Vec<_> = results
        .results
        .iter()
        .map(|c| (c.scenario.as_str(), c.client.as_str()))
        .collect();
    assert_eq!(order[0], ("get-22b", "hyper"));
    assert_eq!(order[1], ("get-22b", "reqwest"));

    for c in &results.results {
        assert_eq!(c.trials.len(), 2, "{}/{}", c.scenario, c.client);
        for t in &c.trials {
            assert_eq!(t.failure, None, "{}/{}", c.scenario, c.client);
            let m = t.metrics.as_ref().unwrap();
            let server = t.server.as_ref().unwrap();
            assert!(m.ok > 0 && m.throughput_rps.unwrap() > 0.0);
            assert_eq!(m.errors.total(), 0);
            assert!(m.cpu_us_per_request.unwrap() > 0.0);
            assert!(m.peak_rss_bytes > 1 << 20);
            assert!(m.peak_threads >= 1);
            // The reference server's own cost: one process, read from /proc.
            assert!(m.server_peak_threads.unwrap() >= 1);
            assert!(m.server_peak_rss_bytes.unwrap() > 1 << 20);
            assert!(m.server_cpu_us_per_request.is_some());
            // Start-up: the driver's spawn to its first response, which comes
            // within the 100 ms warmup; its CPU until the window opened.
            let startup = m.startup_ms.unwrap();
            assert!(startup > 0.0 && startup < 5_000.0, "startup_ms {startup}");
            assert!(m.startup_cpu_ms.unwrap() > 0.0);
            // The server's window brackets the client's: the two differ by the
            // requests in flight at the edges, plus what completes while the
            // driver's control call to start or stop the server's window is on
            // its way (bounded here at 10 ms per edge).
            let skew = (m.throughput_rps.unwrap() * 0.010 * 2.0).ceil() as u64;
            let slack = 2 * 8 + m.in_flight_at_deadline + skew;
            assert!(
                server.requests + slack >= m.ok && server.requests <= m.ok + slack,
                "{}/{}: server counted {} requests, client {}",
                c.scenario,
                c.client,
                server.requests,
                m.ok
            );
            let p50 = m.latency_p50_us.unwrap();
            assert!(p50 > 0.0 && p50 <= m.latency_p99_us.unwrap());
            assert!(m.latency_p99_us.unwrap() <= m.latency_max_us.unwrap());
        }
        // A trial starved by a neighbour is marked so, and its latencies
        // (which describe the neighbour) stay out of the cell's histogram.
        let merged = c
            .histogram
            .as_ref()
            .map_or(0, |h| LatencyHistogram::decode(h).unwrap().len());
        let oks: u64 = c
            .trials
            .iter()
            .filter(|t| !t.invalid.iter().any(|m| m.is_starved()))
            .map(|t| t.metrics.as_ref().unwrap().ok)
            .sum();
        assert_eq!(
            merged, oks,
            "merged histogram holds every request of the trials not starved"
        );
        assert!(c.summary.contains_key("throughput_rps"));
    }

    // Keep-alive: a pooled client reuses its connections.
    let get = cell(&results, "get-22b", "hyper");
    let m = get.trials[0].metrics.as_ref().unwrap();
    assert!(
        m.connections_opened.unwrap() <= 4,
        "{:?}",
        m.connections_opened
    );
    assert!(m.requests_per_connection.unwrap() > 10.0);

    // Blocking client: one thread per worker on top of the runtime's.
    let blocking = cell(&results, "get-22b", "blocking").trials[0]
        .metrics
        .as_ref()
        .unwrap();
    assert!(
        blocking.peak_threads > 4,
        "threads {}",
        blocking.peak_threads
    );

    // Open loop: rate is held, both histograms are kept.
    let open = cell(&results, "open-200rps", "hyper");
    assert!(open.histogram_uncorrected.is_some());
    let om = open.trials[0].metrics.as_ref().unwrap();
    assert!(
        (om.throughput_rps.unwrap() - 200.0).abs() < 20.0,
        "open loop rate {}",
        om.throughput_rps.unwrap()
    );
    assert!(om.latency_uncorrected.is_some());

    // Uploads are counted by the server byte for byte. The two windows differ
    // only at their edges: up to `concurrency` requests whose body the server read
    // before its window opened (or whose answer the client got after its window
    // closed) at each edge, plus those completed during the control calls
    // (bounded at 10 ms per edge, as above).
    let put = cell(&results, "put-64k", "reqwest");
    for t in &put.trials {
        let (m, s) = (t.metrics.as_ref().unwrap(), t.server.as_ref().unwrap());
        assert_eq!(m.bytes_sent, m.ok * 65536);
        let edge = (2 * 2 + (m.throughput_rps.unwrap() * 0.010 * 2.0).ceil() as u64) * 65536;
        assert!(s.bytes_in + edge >= m.bytes_sent && s.bytes_in <= m.bytes_sent + edge);
    }

    // The terminal table names every cell.
    let stdout = String::from_utf8_lossy(&output.stdout);
    for name in [
        "get-22b",
        "open-200rps",
        "put-64k",
        "blocking",
        "p99",
        "cpu/req",
        "conns",
    ] {
        assert!(stdout.contains(name), "table lacks {name}:\n{stdout}");
    }
    // The default table is the narrow one (`--wide` has p99.9 and the rest).
    assert!(!stdout.contains("p99.9"), "{stdout}");
    drop(run.dir);
}

#[test]
fn mock_driver_runs_scripted_latencies_through_the_whole_pipeline() {
    let toml = r#"
[run]
rounds = 2
warmup = "50ms"
requests = 40

[[client]]
name = "scripted"
kind = "hyper"

[[scenario]]
name = "mocked"
path = "/bytes/1"
concurrency = 2
"#;
    let run = run_config(
        toml,
        &[
            "--mock-latencies-us",
            "2000,4000",
            "--mock-error-every",
            "10",
        ],
    );
    let output = &run.output;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    common::assert_results_valid(&run.out);
    let r = RunResults::read(&run.out).unwrap();
    let c = cell(&r, "mocked", "scripted");
    for t in &c.trials {
        let m = t.metrics.as_ref().unwrap();
        assert_eq!(m.ok + m.errors.total(), 40);
        assert_eq!(m.errors.status_5xx, m.errors.total(), "only scripted 503s");
        assert!(m.errors.status_5xx >= 3 && m.errors.status_5xx <= 5);
        // A scripted latency is a sleep: never shorter than scripted (the timer
        // and a loaded machine can only add to it).
        assert!(
            m.latency_uncorrected.is_none(),
            "closed loop keeps one histogram"
        );
        let p50 = m.latency_p50_us.unwrap();
        assert!(p50 >= 2000.0, "p50 {p50}");
        assert!(m.latency_max_us.unwrap() >= 4000.0);
    }
}

/// Issue 28, point 7: without a comparison, `--markdown` and `--summary`
/// still write the run's tables (the terminal's figures) and say that
/// nothing was compared and how to compare; `--json` has nothing to write.
#[test]
fn a_run_compared_with_nothing_writes_its_markdown_and_summary() {
    let toml = r#"
[run]
rounds = 2
warmup = "50ms"
requests = 20

[[client]]
name = "scripted"
kind = "hyper"

[[scenario]]
name = "mocked"
path = "/bytes/1"
concurrency = 2
"#;
    let dir = tempfile::tempdir().unwrap();
    let (md, summary, json) = (
        dir.path().join("comment.md"),
        dir.path().join("summary.md"),
        dir.path().join("comparison.json"),
    );
    let run = run_config(
        toml,
        &[
            "--mock-latencies-us",
            "1000",
            "--markdown",
            md.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert!(run.output.status.success(), "{stderr}");
    assert!(!json.exists(), "no comparison, no comparison JSON");
    assert!(
        stderr.contains("no comparison JSON was written"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&run.output.stdout);
    let rps = stdout
        .lines()
        .find(|l| l.starts_with("mocked "))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap_or_else(|| panic!("{stdout}"));
    for path in [&md, &summary] {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("**Nothing to compare**"), "{text}");
        assert!(text.contains("`--baseline FILE`") && text.contains("`[compare]`"));
        assert!(text.contains("### mocked\n"), "{text}");
        assert!(
            text.contains(&format!("| scripted | {rps} ")),
            "the terminal's req/s {rps} in {text}"
        );
    }
}

#[test]
fn bad_config_exits_2_naming_file_line_and_fix() {
    let run = run_config("[[client]]\nname = \"a\"\nkind = \"curl\"\n", &[]);
    let output = &run.output;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("benchgate.toml:3"), "{stderr}");
    assert!(stderr.contains("kind"), "{stderr}");
}

#[test]
fn unknown_scenario_filter_is_an_error() {
    let run = run_config(TWO_CLIENTS, &["--scenario", "nope"]);
    let output = &run.output;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("nope") && stderr.contains("get-22b"),
        "{stderr}"
    );
}

/// The blocking vs non-blocking study of the default suite (README, "What the
/// default suite measures": `c256-blocking-vs-async`), reproduced: 200 concurrent
/// requests cost a thread each in a thread-per-request client, and a handful of
/// threads in an async one.
#[test]
fn blocking_client_at_200_workers_shows_200_threads_async_a_handful() {
    let toml = r#"
[run]
rounds = 1
warmup = "300ms"
duration = "1s"

[[client]]
name = "blocking"
kind = "reqwest-blocking"

[[client]]
name = "async"
kind = "reqwest"

[[scenario]]
name = "c200"
path = "/delay/20"
concurrency = 200
"#;
    let run = run_config(toml, &[]);
    let r = run.results();
    let m = |client: &str| cell(&r, "c200", client).trials[0].metrics.clone().unwrap();
    let (blocking, asynch) = (m("blocking"), m("async"));
    assert!(
        blocking.peak_threads >= 200,
        "blocking threads {}",
        blocking.peak_threads
    );
    assert!(
        asynch.peak_threads <= 8,
        "async threads {}",
        asynch.peak_threads
    );
    assert!(
        blocking.peak_rss_bytes > asynch.peak_rss_bytes,
        "RSS blocking {} vs async {}",
        blocking.peak_rss_bytes,
        asynch.peak_rss_bytes
    );
    // Both really held ~200 connections open at once (the server's view).
    for client in ["blocking", "async"] {
        let s = cell(&r, "c200", client).trials[0].server.clone().unwrap();
        assert!(
            s.peak_open_connections >= 150,
            "{client}: {}",
            s.peak_open_connections
        );
    }
}

/// `[run] max_rounds`: with `[compare]` set, a scenario whose side-by-side
/// comparison is still inconclusive after `rounds` gets more rounds, looked
/// at only at planned looks, even without a budget. Two pairs can never
/// reach p < 0.025 (a look at 2 and one at 4 would split 0.05), so the plan
/// is one look at `max_rounds`, at 0.05: the run goes to 4 rounds and looks
/// once; without `[compare]` the same config stops at `rounds`.
#[test]
fn inconclusive_comparisons_get_more_rounds_up_to_max_rounds() {
    let toml = |compare: &str| {
        format!(
            r#"
[run]
rounds = 2
max_rounds = 4
warmup = "20ms"
requests = 20

[[client]]
name = "a"
kind = "hyper"

[[client]]
name = "b"
kind = "hyper"

[[scenario]]
name = "mocked"
path = "/bytes/1"
concurrency = 2
{compare}
"#
        )
    };
    let rounds_of = |compare: &str| {
        let run = run_config(&toml(compare), &["--mock-latencies-us", "500,900"]);
        assert!(
            run.output.status.success(),
            "{}",
            String::from_utf8_lossy(&run.output.stderr)
        );
        common::assert_results_valid(&run.out);
        let r = RunResults::read(&run.out).unwrap();
        let rounds: Vec<Vec<u32>> = ["a", "b"]
            .iter()
            .map(|c| {
                cell(&r, "mocked", c)
                    .trials
                    .iter()
                    .map(|t| t.round)
                    .collect()
            })
            .collect();
        // The looks taken, recorded for the final comparison (share 0 s:
        // no budget, max_rounds alone).
        let looks: Vec<(f64, Vec<(u32, f64)>)> = (r.budget.iter())
            .map(|b| {
                (
                    b.share_s,
                    b.looks.iter().map(|l| (l.round, l.alpha)).collect(),
                )
            })
            .collect();
        (
            rounds,
            String::from_utf8_lossy(&run.output.stderr).to_string(),
            looks,
        )
    };
    let (extended, log, looks) = rounds_of("[compare]\nbaseline_client = \"a\"\n");
    assert_eq!(extended, vec![vec![1, 2, 3, 4], vec![1, 2, 3, 4]], "{log}");
    assert_eq!(looks, vec![(0.0, vec![(4, 0.05)])], "{log}");
    // Issue 54, point 4: a log says the plan, then one line per look with
    // the paired change so far, never a line per trial; no round reads past
    // its total.
    assert!(
        log.contains("benchgate: 4 trials planned (2 rounds), about "),
        "{log}"
    );
    // One look, planned at max_rounds; none after the rounds before it
    // (a look after every round would be optional stopping).
    for (round, looks) in [(2, 0), (3, 0), (4, 1)] {
        let look = format!("benchgate: mocked: look after {round} rounds: b throughput_rps ");
        assert_eq!(log.matches(&look).count(), looks, "{look}: {log}");
    }
    assert!(log.contains("b cpu_us_per_request "), "{log}");
    assert!(!log.contains("req/s, p50"), "a line per trial: {log}");
    assert!(!log.contains("round 3/"), "{log}");
    let (fixed, log, looks) = rounds_of("");
    assert!(
        looks.is_empty(),
        "nothing compared, nothing spent: {looks:?}"
    );
    assert_eq!(fixed, vec![vec![1, 2], vec![1, 2]], "{log}");
    assert!(!log.contains("look after"), "nothing compared: {log}");
}

/// Issue 16: `benchgate run` with `[compare]` in the config prints the
/// comparison it made during the run and exits with its gate (it used to run
/// the extra rounds, print the table and exit 0 with no verdict). With a
/// budget (issue 29), as a user would write it.
#[test]
fn a_config_with_compare_gets_a_verdict_and_its_exit_code() {
    let toml = |inject: &str| {
        format!(
            r#"
[run]
# Looks after 10, 20 and 40 rounds, alpha 0.05 / 3 each: a loaded machine
# buys rounds until the A/A pass is shown.
rounds = 10
max_rounds = 40
budget = "90s"
warmup = "20ms"
duration = "150ms"
pin = false

[[client]]
name = "base"
kind = "hyper"

[[client]]
name = "head"
kind = "hyper"
inject_cpu = "{inject}"

[[scenario]]
name = "get"
path = "/bytes/22"
concurrency = 1

[compare]
baseline_client = "base"

{gate}"#,
            gate = common::MOCK_AA_GATE
        )
    };
    let run = run_config(&toml("1ns"), &["--mock-latencies-us", "300"]);
    let stdout = String::from_utf8_lossy(&run.output.stdout);
    assert_eq!(run.output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("PASS"), "{stdout}");
    assert!(stdout.contains("head"), "{stdout}");

    let run = run_config(&toml("3ms"), &["--mock-latencies-us", "300"]);
    let stdout = String::from_utf8_lossy(&run.output.stdout);
    assert_eq!(run.output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL"), "{stdout}");
    assert!(stdout.contains("regressed"), "{stdout}");
}
