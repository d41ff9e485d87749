//! Progress: an indicatif bar on a terminal, plain lines in CI logs.

use indicatif::{ProgressBar, ProgressStyle};

use crate::metric::TrialMetrics;
use crate::report::untrusted;

pub struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    label: String,
}

impl Progress {
    /// `bar`: draw one (the edge decides: a terminal, outside CI); else a
    /// line per trial, none when `quiet`.
    pub fn new(total: u64, quiet: bool, bar: bool) -> Progress {
        let bar = (bar && !quiet).then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} trials  {msg}")
                    .expect("static template"),
            );
            bar
        });
        Progress {
            bar,
            quiet,
            label: String::new(),
        }
    }

    pub fn start(&mut self, scenario: &str, client: &str, round: u32, rounds: u32) {
        self.label = format!("{scenario} / {client} round {round}/{rounds}");
        if let Some(bar) = &self.bar {
            bar.set_message(self.label.clone());
        }
    }

    pub fn finish_trial(&mut self, metrics: Option<&TrialMetrics>, failure: Option<&str>) {
        let line = match (metrics, failure) {
            (Some(m), _) => format!(
                "{}: {} req/s, p50 {}, errors {}",
                self.label,
                m.throughput_rps.map_or("n/a".into(), |v| format!("{v:.0}")),
                m.latency_p50_us
                    .map_or("n/a".into(), |v| format!("{v:.0}us")),
                m.errors.total()
            ),
            // A failure may quote a program's output (a setup log's tail):
            // its later lines are quoted, to tell them from benchgate's.
            (None, Some(f)) => format!("{}: FAILED: {f}", self.label),
            (None, None) => format!("{}: done", self.label),
        };
        // The label names the scenario and the client, from the config.
        let line = untrusted::for_log(&line);
        match &self.bar {
            Some(bar) => {
                if failure.is_some() {
                    bar.println(line);
                }
                bar.inc(1);
            }
            None if !self.quiet => crate::stderrln!("{line}"),
            None => {}
        }
    }

    /// `n` more trials than planned (extra rounds).
    pub fn extend(&mut self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc_length(n);
        }
    }

    pub fn done(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
