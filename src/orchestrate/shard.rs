//! `run --shard K/N`: a deterministic, balanced share of the suite.
//!
//! Shards are whole scenarios, so every pair a comparison makes inside a run
//! (two clients side by side, a client and its `NAME@base` twin, two servers
//! under test) stays in one job. Scenarios are assigned by greedy
//! longest-processing-time first (Graham, "Bounds on multiprocessing timing
//! anomalies", SIAM J. Appl. Math. 17(2), 1969): the longest expected
//! scenario goes to the least loaded shard, ties broken by scenario name and
//! then by the lower shard index, so every job of a matrix computes the same
//! assignment from the same config. A shard with no scenario is an error
//! (more shards than scenarios), never an empty results file that would
//! merge into a suite missing nothing.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use sha1::{Digest, Sha1};

use crate::config::{Load, Scenario, StopRule, Suite};
use crate::results::merge::MAX_SHARDS;
use crate::results::ShardInfo;

/// One shard: `index` of `count`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// Balancing only, never reported: the cost of starting one trial (a fresh
/// process, its connections) beyond its warmup and measurement.
const TRIAL_START: Duration = Duration::from_millis(500);

/// Balancing only, never reported: the rate assumed for a closed-loop
/// scenario that stops after a request count (its duration is unknown
/// until it runs).
const ASSUMED_CLOSED_LOOP_RPS: f64 = 10_000.0;

impl FromStr for Shard {
    type Err = anyhow::Error;

    /// `K/N`, 1 <= K <= N <= [`MAX_SHARDS`].
    fn from_str(text: &str) -> anyhow::Result<Shard> {
        let bad = || {
            anyhow::anyhow!(
                "--shard {text:?}: give K/N, shard K of N, with 1 <= K <= N <= {MAX_SHARDS} (e.g. 1/3; in a matrix, ${{{{ matrix.shard }}}}/3)"
            )
        };
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// SHA-1 (hex) of the validated suite's canonical JSON, without its
/// `source` (the path it was read from may be spelled differently in each
/// job): shards of one suite with the same overrides share it.
pub fn config_hash(suite: &Suite) -> String {
    let mut canonical = suite.clone();
    canonical.source = String::new();
    let json = serde_json::to_vec(&canonical).expect("a suite always serializes");
    Sha1::digest(&json)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What one scenario is expected to take: clients x servers x rounds trials,
/// each of warmup + [`TRIAL_START`] + its measurement (a duration stop's
/// `[run] windows` windows); a duet's two sides run at once.
pub fn expected_time(scenario: &Scenario, suite: &Suite) -> Duration {
    let measure = match (&scenario.stop, &scenario.load) {
        (StopRule::Duration(d), _) => *d * suite.run.windows.max(1),
        (StopRule::Requests(n), Load::Open { rate, .. }) if *rate > 0.0 => {
            Duration::from_secs_f64(*n as f64 / rate)
        }
        (StopRule::Requests(n), _) => Duration::from_secs_f64(*n as f64 / ASSUMED_CLOSED_LOOP_RPS),
    };
    let cells = scenario.clients.len() * suite.servers.len().max(1);
    // A duet runs a round's two cells at once (one cell: sequential forks).
    let at_once = if suite.run.schedule.on_lanes() && cells == 2 {
        2
    } else {
        1
    };
    let trials = cells * suite.run.rounds as usize / at_once;
    (scenario.warmup + measure + TRIAL_START) * trials as u32
}

/// The scenario indices of every shard (`count` lists, in suite order), by
/// longest processing time first.
pub fn assign(suite: &Suite, count: u32) -> Vec<Vec<usize>> {
    let mut order: Vec<(Duration, usize)> = suite
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| (expected_time(s, suite), i))
        .collect();
    order.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| suite.scenarios[a.1].name.cmp(&suite.scenarios[b.1].name))
    });
    let mut load = vec![Duration::ZERO; count as usize];
    let mut shards = vec![Vec::new(); count as usize];
    for (time, i) in order {
        let lightest = (0..load.len())
            .min_by_key(|&k| (load[k], k))
            .expect("at least one shard");
        load[lightest] += time;
        shards[lightest].push(i);
    }
    for s in &mut shards {
        s.sort_unstable();
    }
    shards
}

/// The suite cut to `shard`'s scenarios, and the header its results record.
/// More shards than scenarios is refused: some shard would run nothing.
/// `input` names where the shard came from in errors (`--shard`, input
/// `shard`).
pub fn select(mut suite: Suite, shard: Shard, input: &str) -> anyhow::Result<(Suite, ShardInfo)> {
    let n = suite.scenarios.len();
    anyhow::ensure!(
        shard.count as usize <= n,
        "{input} {shard}: {} has {n} scenario(s), so {} shards would leave some empty; use at most {n} shards (a shard runs whole scenarios)",
        suite.source,
        shard.count
    );
    let info = ShardInfo {
        index: Some(shard.index),
        count: shard.count,
        config_hash: config_hash(&suite),
        merged: Vec::new(),
    };
    let mine = assign(&suite, shard.count).swap_remove(shard.index as usize - 1);
    let mut i = 0;
    suite.scenarios.retain(|_| {
        i += 1;
        mine.contains(&(i - 1))
    });
    Ok((suite, info))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(durations: &[(&str, u64)]) -> Suite {
        let mut text =
            String::from("[run]\nrounds = 3\n\n[[client]]\nname = \"h\"\nkind = \"hyper\"\n");
        for (name, secs) in durations {
            text.push_str(&format!(
                "\n[[scenario]]\nname = \"{name}\"\npath = \"/bytes/22\"\nwarmup = \"0s\"\nduration = \"{secs}s\"\n"
            ));
        }
        Suite::from_toml(&text, "bench.toml").unwrap()
    }

    fn names(s: &Suite) -> Vec<&str> {
        s.scenarios.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn parses_k_of_n() {
        assert_eq!(
            "2/3".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 3 }
        );
        for bad in ["0/3", "4/3", "3", "a/b", "1/257", ""] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("give K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn longest_first_balances_and_covers_every_scenario_once() {
        let s = suite(&[("a", 1), ("b", 9), ("c", 4), ("d", 5), ("e", 2)]);
        // LPT: b(9) -> 1, d(5) -> 2, c(4) -> 2, e(2) -> 1, a(1) -> 2.
        let (one, _) = select(s.clone(), Shard { index: 1, count: 2 }, "--shard").unwrap();
        let (two, _) = select(s.clone(), Shard { index: 2, count: 2 }, "--shard").unwrap();
        assert_eq!(names(&one), ["b", "e"]);
        assert_eq!(names(&two), ["a", "c", "d"]);
        // Deterministic: the same config cuts the same way every time.
        assert_eq!(assign(&s, 2), assign(&s.clone(), 2));
    }

    #[test]
    fn a_fork_counts_its_windows_and_a_duet_its_sides_at_once() {
        let mut s = suite(&[("a", 1)]);
        s.scenarios[0].clients.push("r".into());
        // 2 clients x 3 rounds of (1 s + 0.5 s).
        assert_eq!(expected_time(&s.scenarios[0], &s), Duration::from_secs(9));
        s.run.windows = 4;
        assert_eq!(expected_time(&s.scenarios[0], &s), Duration::from_secs(27));
        s.run.schedule = crate::config::Schedule::Duet;
        assert_eq!(
            expected_time(&s.scenarios[0], &s),
            Duration::from_secs_f64(13.5)
        );
    }

    #[test]
    fn equal_scenarios_tie_by_name() {
        let s = suite(&[("z", 3), ("y", 3), ("x", 3)]);
        let (first, _) = select(s, Shard { index: 1, count: 3 }, "--shard").unwrap();
        assert_eq!(names(&first), ["x"]);
    }

    #[test]
    fn the_hash_is_the_suites_not_the_shards() {
        let s = suite(&[("a", 1), ("b", 2)]);
        let (_, one) = select(s.clone(), Shard { index: 1, count: 2 }, "--shard").unwrap();
        let (_, two) = select(s.clone(), Shard { index: 2, count: 2 }, "--shard").unwrap();
        assert_eq!(one.config_hash, two.config_hash);
        assert_eq!(one.config_hash.len(), 40);
        let mut moved = s.clone();
        moved.source = "other/path.toml".into();
        assert_eq!(
            config_hash(&moved),
            one.config_hash,
            "the path is not the config"
        );
        let mut more = s;
        more.run.rounds = 4;
        assert_ne!(config_hash(&more), one.config_hash);
    }

    #[test]
    fn more_shards_than_scenarios_is_refused_with_the_fix() {
        let e = select(
            suite(&[("a", 1), ("b", 1)]),
            Shard { index: 1, count: 3 },
            "--shard",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "--shard 1/3: bench.toml has 2 scenario(s), so 3 shards would leave some empty; use at most 2 shards (a shard runs whole scenarios)"
        );
    }
}
