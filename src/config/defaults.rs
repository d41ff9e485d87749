//! The built-in default suite: what `benchgate run` does without a config file.
//! `fixtures/configs/default.toml` spells out the same suite (a test keeps them equal).
//!
//! It covers the studies users did by hand (README, "What the default suite
//! measures"), one scenario per question:
//!
//! | study (by hand)                         | scenario(s)                              |
//! |-----------------------------------------|------------------------------------------|
//! | HttpClient 3/4: 22 B and 20,000 B GETs  | `get-22b`, `get-20kb`                    |
//! | HttpClient 4 vs 5: PUT 1 MiB, 1 and 10  | `put-1mib-c1`, `put-1mib-c10`            |
//! | 1-second API: pool of 10 vs fewer       | `delay-10ms-c10` (pool 10 vs pool 1)     |
//! | Jetty vs Netty: 8 KiB + SHA-1           | `sha1-8k`                                |
//! | blocking vs async at high concurrency   | `c256-blocking-vs-async` (threads, RSS)  |
//! | coordinated omission (open loop)        | `open-2000rps`                           |
//!
//! Time budget (one fresh process per trial):
//!
//! - 20 rounds of very short trials, because the noise of a shared runner sits
//!   between trials (co-tenants come and go: in a noisy stretch a trial's CPU
//!   per request jumps by 20-50% while its neighbours read normal values), so
//!   the gate needs many trials more than long ones (Kalibera and Jones: spend
//!   repetitions at the level with the most variance). Measured side by side
//!   (docs/measurements.md, "Gate quality, measured"): 20-60 rounds of 0.1 s + 0.15 s caught
//!   a ~10% change where 10-30 rounds of 0.15 s + 0.3 s missed it in 4 of 60
//!   runs. With 20 a side the 95% rank interval drops the most extreme
//!   differences, so one disturbed trial cannot block a verdict. Paired
//!   side-by-side mode needs >= 6 rounds to reach p < 0.05 at all; 3 vs 3
//!   trials never can.
//! - one trial = warmup 0.1 s + measurement 0.15 s + process start ~0.1 s = 0.35 s
//!   (0.15 s is still 15,000 requests at 100,000 req/s: p99 from 150 samples above it)
//! - 8 scenarios x 2 clients each = 16 (scenario, client) pairs
//! - 16 pairs x 20 rounds = 320 trials; 320 x 0.35 s = 112 s
//! - plus the reference server start, in-flight drain at each deadline (at most
//!   one 10 ms delay or one 1 MiB upload) and reporting.
//!
//! Left out to stay in budget: GET 1 MiB at concurrency 1 and 10 (4 more pairs =
//! +22 s), fixed request counts (200,000 requests take an unknown time), soaks and
//! 1000+ connection runs. Write them in a config file.

use std::time::Duration;

use super::{
    ClientKind, ClientSpec, HttpVersion, Load, Method, RunSettings, Scenario, StopRule, Suite,
};

/// `Suite::source` of the built-in suite.
pub const SOURCE: &str = "built-in default suite";

const WARMUP: Duration = Duration::from_millis(100);
const DURATION: Duration = Duration::from_millis(150);
const TIMEOUT: Duration = Duration::from_secs(10);

/// The built-in default suite (see the module docs for what it covers and costs).
pub fn default_suite() -> Suite {
    let both = &["hyper", "reqwest"];
    Suite {
        source: SOURCE.into(),
        run: RunSettings {
            rounds: 20,
            max_rounds: 60,
            pin: true,
            windows: 1,
            schedule: super::Schedule::Sequential,
            anchor: None,
            budget: None,
        },
        clients: vec![
            client("hyper", ClientKind::Hyper, None),
            client("reqwest", ClientKind::Reqwest, None),
            client("reqwest-blocking", ClientKind::ReqwestBlocking, None),
            client("hyper-pool10", ClientKind::Hyper, Some(10)),
            client("hyper-pool1", ClientKind::Hyper, Some(1)),
        ],
        scenarios: vec![
            scenario("get-22b", Method::Get, "/bytes/22", 0, closed(16), both),
            scenario("get-20kb", Method::Get, "/bytes/20000", 0, closed(16), both),
            scenario(
                "put-1mib-c1",
                Method::Put,
                "/upload",
                1 << 20,
                closed(1),
                both,
            ),
            scenario(
                "put-1mib-c10",
                Method::Put,
                "/upload",
                1 << 20,
                closed(10),
                both,
            ),
            scenario(
                "delay-10ms-c10",
                Method::Get,
                "/delay/10",
                0,
                closed(10),
                &["hyper-pool10", "hyper-pool1"],
            ),
            scenario(
                "sha1-8k",
                Method::Get,
                "/sha1?size=8192",
                0,
                closed(10),
                both,
            ),
            scenario(
                "open-2000rps",
                Method::Get,
                "/bytes/22",
                0,
                Load::Open {
                    rate: 2000.0,
                    max_in_flight: 64,
                },
                both,
            ),
            scenario(
                "c256-blocking-vs-async",
                Method::Get,
                "/delay/10",
                0,
                closed(256),
                &["reqwest-blocking", "reqwest"],
            ),
        ],
        gate: super::gate::default_gate(),
        compare: None,
        publish: None,
        servers: Vec::new(),
        jmh: Default::default(),
    }
}

fn client(name: &str, kind: ClientKind, pool: Option<u32>) -> ClientSpec {
    ClientSpec {
        name: name.into(),
        kind,
        pool,
        http: HttpVersion::Http1,
        tls: false,
        inject_cpu_ns: 0,
        inject_tail: None,
    }
}

fn closed(concurrency: u32) -> Load {
    Load::Closed { concurrency }
}

fn scenario(
    name: &str,
    method: Method,
    path: &str,
    body: u64,
    load: Load,
    clients: &[&str],
) -> Scenario {
    Scenario {
        name: name.into(),
        method,
        path: path.into(),
        body,
        load,
        warmup: WARMUP,
        stop: StopRule::Duration(DURATION),
        timeout: TIMEOUT,
        clients: clients.iter().map(|c| c.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_names_existing_clients() {
        let suite = default_suite();
        for s in &suite.scenarios {
            assert!(!s.clients.is_empty(), "{}", s.name);
            for c in &s.clients {
                assert!(
                    suite.client(c).is_some(),
                    "scenario {} names unknown client {c}",
                    s.name
                );
            }
        }
    }

    #[test]
    fn fits_the_time_budget() {
        let suite = default_suite();
        let process_start = 0.1;
        let total: f64 = suite
            .scenarios
            .iter()
            .map(|s| {
                let StopRule::Duration(d) = s.stop else {
                    panic!("{} has no fixed duration", s.name)
                };
                let trial = s.warmup.as_secs_f64() + d.as_secs_f64() + process_start;
                trial * s.clients.len() as f64 * f64::from(suite.run.rounds)
            })
            .sum();
        assert!(total <= 120.0, "default suite takes {total:.1} s");
    }

    #[test]
    fn names_are_unique_and_valid() {
        let suite = default_suite();
        let mut names: Vec<&str> = suite.clients.iter().map(|c| c.name.as_str()).collect();
        names.extend(suite.scenarios.iter().map(|s| s.name.as_str()));
        for n in &names {
            assert!(crate::config::validate::name_problem(n).is_none(), "{n}");
        }
        let clients = suite.clients.len();
        names[..clients].sort_unstable();
        names[clients..].sort_unstable();
        assert!(names[..clients].windows(2).all(|w| w[0] != w[1]));
        assert!(names[clients..].windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn pool_study_compares_pool_10_with_pool_1() {
        let suite = default_suite();
        let s = suite
            .scenarios
            .iter()
            .find(|s| s.name == "delay-10ms-c10")
            .unwrap();
        let pools: Vec<Option<u32>> = s
            .clients
            .iter()
            .map(|c| suite.client(c).unwrap().pool)
            .collect();
        assert_eq!(pools, vec![Some(10), Some(1)]);
        assert_eq!(s.load.workers(), 10);
    }
}
