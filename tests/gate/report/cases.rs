//! The comparisons every renderer is tested on: a mixed baseline comparison,
//! hostile names, side by side, no baseline, not comparable, and a huge one.

use benchgate::compare::{Comparison, GateOutcome, Tier, Verdict};
use benchgate::results::{CellResult, RunResults};

use super::builder::{cell, comparison, histogram, metric, run};

/// A comparison with its current and (optional) baseline run.
pub struct Case {
    pub cmp: Comparison,
    pub current: RunResults,
    pub baseline: Option<RunResults>,
}

/// Names used throughout one case.
struct Names<'a> {
    scenarios: [&'a str; 2],
    clients: [&'a str; 2],
    failure: &'a str,
    git_ref: &'a str,
    cpu: &'a str,
}

const PLAIN: Names = Names {
    scenarios: ["get-22b", "put-1mib"],
    clients: ["hyper", "reqwest"],
    failure: "exit status 101: panicked at 'connection refused'",
    git_ref: "refs/heads/feature/faster-pool",
    cpu: "AMD EPYC 7763 64-Core Processor",
};

/// Hostile names from issue 4 (point 7) and then some.
const HOSTILE: Names = Names {
    scenarios: ["a|b", "![x](http://e)"],
    clients: ["@org/team", "</details>\nline two `tick` <img src=x>"],
    failure: "<script>alert(1)</script> ping @org/team | [link](http://evil) ```",
    git_ref: "refs/heads/x|<b>y</b>`z`",
    cpu: "Intel | ```rm -rf``` @cpu [x](y)",
};

fn runs(n: &Names) -> (RunResults, RunResults) {
    let cells = |lat: f64| {
        let mut v = Vec::new();
        for (i, sc) in n.scenarios.iter().enumerate() {
            for (j, cl) in n.clients.iter().enumerate() {
                let l = lat * (1.0 + i as f64) * (1.0 + 0.5 * j as f64);
                let fail = (i == 1 && j == 1).then_some((2, n.failure));
                v.push(cell(sc, cl, l, 3, fail, Some(histogram(l))));
            }
        }
        v
    };
    let base = run(
        "20260301T090000Z-base",
        "2026-03-01T09:00:00Z",
        "0123456789abcdef0123456789abcdef01234567",
        "refs/heads/main",
        n.cpu,
        cells(1000.0),
    );
    let cur = run(
        "20260303T121500Z-head",
        "2026-03-03T12:15:00Z",
        "fedcba9876543210fedcba9876543210fedcba98",
        n.git_ref,
        n.cpu,
        cells(1100.0),
    );
    (cur, base)
}

fn mixed_metrics(n: &Names) -> Vec<benchgate::compare::MetricComparison> {
    use Tier::{Fail, Pass, Warn};
    use Verdict::*;
    let [s0, s1] = n.scenarios;
    let [c0, c1] = n.clients;
    vec![
        metric(s0, c0, "throughput_rps", Unchanged, Pass, Some(-0.012)),
        metric(s0, c0, "latency_p99_us", Regressed, Fail, Some(0.123)),
        metric(s0, c0, "cpu_us_per_request", Unchanged, Pass, Some(0.004)),
        metric(s0, c0, "error_rate", Unchanged, Pass, Some(0.0)),
        metric(s0, c0, "latency_p50_us", Unchanged, Pass, Some(0.01)),
        metric(s0, c1, "throughput_rps", Improved, Pass, Some(0.081)),
        metric(s0, c1, "latency_p99_us", Inconclusive, Pass, Some(0.06)),
        metric(s0, c1, "peak_rss_bytes", Regressed, Pass, Some(0.25)),
        metric(s1, c0, "throughput_rps", Unchanged, Pass, Some(0.002)),
        metric(s1, c0, "cpu_us_per_request", Regressed, Warn, Some(0.072)),
        metric(s1, c0, "peak_threads", Unchanged, Pass, Some(0.0)),
        metric(s1, c1, "latency_p99_us", Improved, Pass, Some(-0.153)),
        metric(s1, c1, "error_rate", Unchanged, Pass, Some(0.0)),
    ]
}

/// Two scenarios x two clients: a failing p99, a warning, improvements, an
/// informative regression, an inconclusive metric, a failed trial.
pub fn mixed() -> Case {
    let (cur, base) = runs(&PLAIN);
    let cmp = comparison("baseline", &cur, Some(&base), mixed_metrics(&PLAIN));
    Case {
        cmp,
        current: cur,
        baseline: Some(base),
    }
}

/// The same shape with hostile names everywhere a name can appear.
pub fn hostile() -> Case {
    let (cur, base) = runs(&HOSTILE);
    let mut cmp = comparison("baseline", &cur, Some(&base), mixed_metrics(&HOSTILE));
    cmp.environment_differences = vec![format!("CPU model: {} vs {}", HOSTILE.cpu, "@x/y")];
    Case {
        cmp,
        current: cur,
        baseline: Some(base),
    }
}

/// Two clients of one run: apache5 against apache4, paired by round.
pub fn side_by_side() -> Case {
    use Tier::{Fail, Pass};
    use Verdict::*;
    let cells = vec![
        cell(
            "get-1mib-c10",
            "apache4",
            2000.0,
            3,
            None,
            Some(histogram(2000.0)),
        ),
        cell(
            "get-1mib-c10",
            "apache5",
            1700.0,
            3,
            None,
            Some(histogram(1700.0)),
        ),
        cell(
            "put-1mib-c1",
            "apache4",
            5000.0,
            3,
            None,
            Some(histogram(5000.0)),
        ),
        cell(
            "put-1mib-c1",
            "apache5",
            5600.0,
            3,
            None,
            Some(histogram(5600.0)),
        ),
    ];
    let cur = run(
        "20260303T121500Z-sbs",
        "2026-03-03T12:15:00Z",
        "fedcba9876543210fedcba9876543210fedcba98",
        "refs/pull/42/merge",
        "AMD EPYC 7763 64-Core Processor",
        cells,
    );
    let mut ms = vec![
        metric(
            "get-1mib-c10",
            "apache5",
            "throughput_rps",
            Improved,
            Pass,
            Some(0.176),
        ),
        metric(
            "get-1mib-c10",
            "apache5",
            "latency_p99_us",
            Improved,
            Pass,
            Some(-0.15),
        ),
        metric(
            "put-1mib-c1",
            "apache5",
            "throughput_rps",
            Regressed,
            Fail,
            Some(-0.107),
        ),
        metric(
            "put-1mib-c1",
            "apache5",
            "peak_threads",
            Unchanged,
            Pass,
            Some(0.0),
        ),
    ];
    for m in &mut ms {
        m.baseline_client = "apache4".to_string();
    }
    let cmp = comparison("side_by_side", &cur, None, ms);
    Case {
        cmp,
        current: cur,
        baseline: None,
    }
}

/// No stored baseline: every verdict is `no_baseline`.
pub fn no_baseline() -> Case {
    let (cur, _) = runs(&PLAIN);
    let ms = ["throughput_rps", "latency_p99_us", "peak_rss_bytes"]
        .iter()
        .map(|m| metric("get-22b", "hyper", m, Verdict::NoBaseline, Tier::Pass, None))
        .collect();
    let cmp = comparison("baseline", &cur, None, ms);
    Case {
        cmp,
        current: cur,
        baseline: None,
    }
}

/// The baseline ran on another CPU: not comparable, warned.
pub fn not_comparable() -> Case {
    let (cur, mut base) = runs(&PLAIN);
    base.environment.cpu_model = "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz".into();
    base.environment.cores = 4;
    let ms = ["throughput_rps", "latency_p99_us"]
        .iter()
        .map(|m| {
            let mut x = metric(
                "get-22b",
                "hyper",
                m,
                Verdict::NotComparable,
                Tier::Warn,
                Some(0.2),
            );
            x.ci_low = None;
            x.ci_high = None;
            x
        })
        .collect();
    let mut cmp = comparison("baseline", &cur, Some(&base), ms);
    cmp.outcome = GateOutcome::NotComparable;
    cmp.warnings = 2;
    cmp.environment_differences = vec![
        "CPU model: Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz vs AMD EPYC 7763 64-Core Processor".into(),
        "cores: 4 vs 2".into(),
    ];
    Case {
        cmp,
        current: cur,
        baseline: Some(base),
    }
}

/// `n` scenarios x one client x four gating metrics and two informative ones;
/// every 7th scenario regresses, every 11th improves.
pub fn huge(n: usize, name: impl Fn(usize) -> String) -> Case {
    use Tier::{Fail, Pass};
    use Verdict::*;
    let hist = histogram(1000.0);
    let mut base_cells = Vec::new();
    let mut cur_cells = Vec::new();
    let mut ms = Vec::new();
    for i in 0..n {
        let sc = name(i);
        base_cells.push(cell(&sc, "hyper", 1000.0, 3, None, Some(hist.clone())));
        cur_cells.push(cell(&sc, "hyper", 1050.0, 3, None, Some(hist.clone())));
        let p99 = match (i % 7, i % 11) {
            (0, _) => metric(&sc, "hyper", "latency_p99_us", Regressed, Fail, Some(0.15)),
            (_, 0) => metric(&sc, "hyper", "latency_p99_us", Improved, Pass, Some(-0.12)),
            _ => metric(&sc, "hyper", "latency_p99_us", Unchanged, Pass, Some(0.01)),
        };
        ms.push(p99);
        for m in [
            "throughput_rps",
            "cpu_us_per_request",
            "error_rate",
            "latency_p50_us",
            "peak_rss_bytes",
        ] {
            ms.push(metric(&sc, "hyper", m, Unchanged, Pass, Some(-0.003)));
        }
    }
    let env = "AMD EPYC 7763 64-Core Processor";
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let base = run(
        "base",
        "2026-03-01T09:00:00Z",
        sha,
        "refs/heads/main",
        env,
        base_cells,
    );
    let cur = run(
        "head",
        "2026-03-03T12:15:00Z",
        sha,
        "refs/heads/x",
        env,
        cur_cells,
    );
    let cmp = comparison("baseline", &cur, Some(&base), ms);
    Case {
        cmp,
        current: cur,
        baseline: Some(base),
    }
}

/// `cell` with every trial failed with `what`, each pointing to its own log
/// under `results-logs/<run_id>/`, as the runner writes them.
fn all_failed(run_id: &str, scenario: &str, client: &str, rounds: u32, what: &str) -> CellResult {
    let mut c = cell(scenario, client, 1000.0, rounds, None, None);
    for t in &mut c.trials {
        t.failure = Some(format!(
            "{what} (full output: results-logs/{run_id}/{scenario}--{client}--round-{}.log)",
            t.round
        ));
        t.metrics = None;
    }
    c.summary.clear();
    c
}

/// The gate compared in [`every_trial_failed`]: two gating metrics, one
/// informative, to keep the snapshots short.
fn small_gate() -> benchgate::config::GateConfig {
    let mut gate = benchgate::config::gate::default_gate();
    gate.metrics.retain(|g| {
        matches!(
            g.metric.as_str(),
            "throughput_rps" | "latency_p99_us" | "peak_threads"
        )
    });
    gate
}

/// Every trial of `get-22b / hyper` failed in the current run (a driver
/// panic), one of reqwest's three trials failed: decided by `compare` itself,
/// so the reason is the one users see.
pub fn every_trial_failed() -> Case {
    let failure = "the driver panicked: ALPN protocols should not be pre-defined";
    let base_cells = vec![
        cell("get-22b", "hyper", 1000.0, 3, None, Some(histogram(1000.0))),
        cell(
            "get-22b",
            "reqwest",
            1200.0,
            3,
            None,
            Some(histogram(1200.0)),
        ),
    ];
    let cur_cells = vec![
        all_failed("20260303T121500Z-head", "get-22b", "hyper", 3, failure),
        cell(
            "get-22b",
            "reqwest",
            1250.0,
            3,
            Some((2, PLAIN.failure)),
            Some(histogram(1250.0)),
        ),
    ];
    let env = PLAIN.cpu;
    let base = run(
        "20260301T090000Z-base",
        "2026-03-01T09:00:00Z",
        "0123456789abcdef0123456789abcdef01234567",
        "refs/heads/main",
        env,
        base_cells,
    );
    let cur = run(
        "20260303T121500Z-head",
        "2026-03-03T12:15:00Z",
        "fedcba9876543210fedcba9876543210fedcba98",
        PLAIN.git_ref,
        env,
        cur_cells,
    );
    let cmp = benchgate::compare::compare(Some(&base), &cur, &small_gate());
    assert_eq!(cmp.outcome, GateOutcome::Fail);
    Case {
        cmp,
        current: cur,
        baseline: Some(base),
    }
}

/// Side by side in one run: every trial of the baseline client `hyper`
/// failed; `reqwest` and `ureq` are compared with it.
pub fn every_baseline_trial_failed_side_by_side() -> Case {
    let cells = vec![
        all_failed(
            "20260303T121500Z-sbs",
            "get-22b",
            "hyper",
            4,
            "the driver was killed by signal 6 (SIGABRT)",
        ),
        cell(
            "get-22b",
            "reqwest",
            1200.0,
            4,
            None,
            Some(histogram(1200.0)),
        ),
        cell("get-22b", "ureq", 1300.0, 4, None, Some(histogram(1300.0))),
    ];
    let cur = run(
        "20260303T121500Z-sbs",
        "2026-03-03T12:15:00Z",
        "fedcba9876543210fedcba9876543210fedcba98",
        "refs/pull/42/merge",
        PLAIN.cpu,
        cells,
    );
    let cmp = benchgate::compare::compare_side_by_side(&cur, "hyper", &small_gate());
    assert_eq!(cmp.outcome, GateOutcome::Fail);
    Case {
        cmp,
        current: cur,
        baseline: None,
    }
}

/// What a command client's failed trial says (`orchestrate::command`): a
/// first line, then the tails of its output, here with everything a hostile
/// program could print: backtick runs, HTML, quotes, a tab, mentions,
/// workflow commands, a carriage return and an escape sequence.
pub const OUTPUT_FAILURE: &str = "the program failed (exit status: 1)
stdout tail:
listening on \"http://127.0.0.1:8080\"
````` fenced? ```
```
</details>
stderr tail:
Exception in thread \"main\" java.net.ConnectException: Connection refused
\tat Main.main(Main.java:12)
::add-mask::hunter2
##[error]boom\r  ::set-output name=verdict::pass
ping @org/team \u{1b}[2J done";

/// A command client whose every trial failed with [`OUTPUT_FAILURE`], and
/// another with one such trial, compared by `compare` itself.
pub fn failed_with_output() -> Case {
    let mut all_failed = cell("get-22b", "java", 1000.0, 3, None, None);
    for t in &mut all_failed.trials {
        t.failure = Some(OUTPUT_FAILURE.to_string());
        t.metrics = None;
    }
    all_failed.summary.clear();
    let base = run(
        "20260301T090000Z-base",
        "2026-03-01T09:00:00Z",
        "0123456789abcdef0123456789abcdef01234567",
        "refs/heads/main",
        PLAIN.cpu,
        vec![
            cell("get-22b", "java", 1000.0, 3, None, Some(histogram(1000.0))),
            cell("get-22b", "hyper", 900.0, 3, None, Some(histogram(900.0))),
        ],
    );
    let cur = run(
        "20260303T121500Z-head",
        "2026-03-03T12:15:00Z",
        "fedcba9876543210fedcba9876543210fedcba98",
        PLAIN.git_ref,
        PLAIN.cpu,
        vec![
            all_failed,
            cell(
                "get-22b",
                "hyper",
                900.0,
                3,
                Some((2, OUTPUT_FAILURE)),
                Some(histogram(900.0)),
            ),
        ],
    );
    let cmp = benchgate::compare::compare(Some(&base), &cur, &small_gate());
    assert_eq!(cmp.outcome, GateOutcome::Fail);
    Case {
        cmp,
        current: cur,
        baseline: Some(base),
    }
}
