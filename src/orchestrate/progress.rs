//! Progress: time on screen (issue 54, point 4). At the start, the planned
//! trials and time and the budget. On a terminal, an indicatif bar whose
//! total never grows (the budget's time when there is one, else the planned
//! trials), showing the time elapsed, the trials done, the scenario's round
//! and the budget used. In a log (CI), no line per trial: failures, one line
//! per scenario per look (its paired change so far, decided or not) and a
//! heartbeat at most every [`HEARTBEAT`]. Notes (looks, reruns) are printed
//! through the bar, never beside it.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::compare::MetricComparison;
use crate::metric::TrialMetrics;
use crate::report::rows::{change_with_ci, verdict_text};
use crate::report::untrusted;

/// The longest a log goes without a line while trials run.
pub const HEARTBEAT: Duration = Duration::from_secs(30);

/// Most metrics a look's line names (the gating ones, undecided first).
const LOOK_ROWS: usize = 4;

/// What a run plans, as the start line and the bar say it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// Trials of `rounds` rounds of every cell.
    pub trials: u64,
    /// Their expected time (`shard::expected_time` of every scenario).
    pub expected: Duration,
    /// `[run] budget`.
    pub budget: Option<Duration>,
    /// `[run] rounds` and `max_rounds`.
    pub rounds: u32,
    pub max_rounds: u32,
}

pub struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    label: String,
    plan: Plan,
    started: Instant,
    /// When the log last got a line (a log only).
    last_line: Instant,
    done: u64,
}

/// `1h02m`, `4m05s`, `12s`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// A run's rounds as a title says them: `10 rounds`, or `10 rounds, up to
/// 20` when extra rounds may run (`max_rounds`, or a budget's looks), so a
/// log group's title does not lie when they do.
pub fn rounds_title(run: &crate::config::RunSettings) -> String {
    match run.max_rounds > run.rounds {
        true => format!("{} rounds, up to {}", run.rounds, run.max_rounds),
        false => format!("{} rounds", run.rounds),
    }
}

impl Plan {
    /// The line before the first trial.
    pub fn start_line(&self) -> String {
        let budget = match self.budget {
            Some(b) => format!("; budget {}, extra rounds within it", clock(b)),
            None if self.max_rounds > self.rounds => {
                format!(
                    "; up to {} rounds while a comparison is undecided",
                    self.max_rounds
                )
            }
            None => String::new(),
        };
        format!(
            "benchgate: {} trials planned ({} rounds), about {}{budget}",
            self.trials,
            self.rounds,
            clock(self.expected)
        )
    }

    /// Round `round` of a scenario: `3/10` within the planned rounds,
    /// `12 (extra, up to 20)` beyond them.
    pub fn round(&self, round: u32) -> String {
        match round <= self.rounds {
            true => format!("{round}/{}", self.rounds),
            false => format!("{round} (extra, up to {})", self.max_rounds.max(round)),
        }
    }
}

impl Progress {
    /// `bar`: draw one (the edge decides: a terminal, outside CI); else
    /// lines for a log, none when `quiet`. Says the plan first.
    pub fn new(plan: Plan, quiet: bool, bar: bool) -> Progress {
        let bar = (bar && !quiet).then(|| {
            let total = match plan.budget {
                Some(b) => b.as_millis() as u64,
                None => plan.trials,
            };
            let bar = ProgressBar::new(total.max(1));
            bar.set_style(ProgressStyle::with_template("{bar:30} {msg}").expect("static template"));
            bar
        });
        let now = Instant::now();
        let p = Progress {
            bar,
            quiet,
            label: String::new(),
            plan,
            started: now,
            last_line: now,
            done: 0,
        };
        p.note(&plan.start_line());
        p
    }

    /// A line for the reader: through the bar on a terminal, else to the
    /// log; none when quiet. Escaped for a log (names come from the config).
    pub fn note(&self, line: &str) {
        let line = untrusted::for_log(line);
        match &self.bar {
            Some(bar) => bar.println(line),
            None if !self.quiet => crate::stderrln!("{line}"),
            None => {}
        }
    }

    /// The bar's message and the heartbeat: time, trials, the current
    /// trial, the budget used.
    fn status(&self, elapsed: Duration) -> String {
        let extra = self.done.saturating_sub(self.plan.trials);
        let trials = match extra {
            0 => format!("{} of {} trials", self.done, self.plan.trials),
            n => format!(
                "{} trials ({} planned + {n} extra)",
                self.done, self.plan.trials
            ),
        };
        let budget = self.plan.budget.map_or(String::new(), |b| {
            let used = elapsed.as_secs_f64() / b.as_secs_f64().max(1e-9);
            format!(" · budget {:.0}% of {}", used * 100.0, clock(b))
        });
        format!("{} · {trials} · {}{budget}", clock(elapsed), self.label)
    }

    fn redraw(&self) {
        if let Some(bar) = &self.bar {
            let elapsed = self.started.elapsed();
            let pos = match self.plan.budget {
                Some(_) => elapsed.as_millis() as u64,
                None => self.done,
            };
            bar.set_position(pos.min(bar.length().unwrap_or(pos)));
            bar.set_message(untrusted::for_log(&self.status(elapsed)));
        }
    }

    pub fn start(&mut self, scenario: &str, client: &str, round: u32) {
        self.label = format!("{scenario} / {client} round {}", self.plan.round(round));
        self.redraw();
    }

    pub fn finish_trial(&mut self, metrics: Option<&TrialMetrics>, failure: Option<&str>) {
        self.done += 1;
        if let Some(f) = failure {
            // A failure may quote a program's output (a setup log's tail):
            // its later lines are quoted, to tell them from benchgate's.
            self.note(&format!("{}: FAILED: {f}", self.label));
            self.last_line = Instant::now();
        }
        if self.bar.is_some() {
            self.redraw();
            return;
        }
        let now = Instant::now();
        if !self.quiet && self.beat_due(now) {
            let last = metrics.map_or(String::new(), |m| {
                format!(
                    " (last: {} req/s, p50 {})",
                    m.throughput_rps.map_or("n/a".into(), |v| format!("{v:.0}")),
                    m.latency_p50_us
                        .map_or("n/a".into(), |v| format!("{v:.0}us"))
                )
            });
            let line = format!("benchgate: {}{last}", self.status(now - self.started));
            self.note(&line);
            self.last_line = now;
        }
    }

    /// Whether a log's heartbeat is due at `now`.
    fn beat_due(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.last_line) >= HEARTBEAT
    }

    /// A look at `scenario`'s comparison after `round` rounds: one line,
    /// its gating metrics' paired change so far, undecided first, and
    /// whether it measures more.
    pub fn look(&mut self, scenario: &str, round: u32, rows: &[MetricComparison], more: bool) {
        self.note(&look_line(scenario, round, rows, more));
        self.last_line = Instant::now();
    }

    pub fn done(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// [`Progress::look`]'s line.
pub fn look_line(scenario: &str, round: u32, rows: &[MetricComparison], more: bool) -> String {
    let mut gating: Vec<&MetricComparison> = rows.iter().filter(|m| m.gating).collect();
    gating.sort_by_key(|m| !m.undecided());
    let mut said: Vec<String> = gating
        .iter()
        .take(LOOK_ROWS)
        .map(|m| {
            format!(
                "{} {} {} {}",
                m.who(),
                m.metric,
                change_with_ci(m),
                verdict_text(m)
            )
        })
        .collect();
    if gating.len() > LOOK_ROWS {
        said.push(format!("{} more", gating.len() - LOOK_ROWS));
    }
    let what = match said.is_empty() {
        true => "nothing compared yet".to_string(),
        false => said.join("; "),
    };
    let next = match more {
        true => "measuring more",
        false => "decided",
    };
    format!("benchgate: {scenario}: look after {round} rounds: {what}; {next}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(budget: Option<Duration>) -> Plan {
        Plan {
            trials: 40,
            expected: Duration::from_secs(245),
            budget,
            rounds: 10,
            max_rounds: 20,
        }
    }

    #[test]
    fn the_start_says_the_plan_and_rounds_never_read_past_their_total() {
        assert_eq!(
            plan(None).start_line(),
            "benchgate: 40 trials planned (10 rounds), about 4m05s; up to 20 rounds while a comparison is undecided"
        );
        let budgeted = plan(Some(Duration::from_secs(300)));
        assert!(budgeted
            .start_line()
            .ends_with("about 4m05s; budget 5m00s, extra rounds within it"));
        assert_eq!(plan(None).round(10), "10/10");
        assert_eq!(plan(None).round(11), "11 (extra, up to 20)");
        assert_eq!(clock(Duration::from_secs(3725)), "1h02m");
        let mut run = crate::config::Suite::default_suite().run;
        (run.rounds, run.max_rounds) = (10, 20);
        assert_eq!(rounds_title(&run), "10 rounds, up to 20");
        run.max_rounds = 10;
        assert_eq!(rounds_title(&run), "10 rounds");
    }

    #[test]
    fn the_status_counts_extra_trials_beside_the_planned_ones_and_the_budget_used() {
        let mut p = Progress::new(plan(Some(Duration::from_secs(300))), true, false);
        p.start("get-22b", "hyper", 11);
        p.done = 42;
        assert_eq!(
            p.status(Duration::from_secs(150)),
            "2m30s · 42 trials (40 planned + 2 extra) · get-22b / hyper round 11 (extra, up to 20) · budget 50% of 5m00s"
        );
        // A log's heartbeat: at most every 30 s.
        let t0 = p.last_line;
        assert!(!p.beat_due(t0 + Duration::from_secs(29)));
        assert!(p.beat_due(t0 + HEARTBEAT));
    }
}
