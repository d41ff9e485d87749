//! `benchgate history`'s report: the change points of each gating metric's
//! stored history per cell ([`compare::drift`](crate::compare::drift)), in the
//! terminal and as JSON; the markdown form (with trend charts) is
//! [`markdown::render_drift`](super::markdown::render_drift).

use std::fmt::Write as _;

use serde::Serialize;

use crate::baseline::BaselineKey;
use crate::compare::changepoint::Options;
use crate::compare::drift::{CellHistory, Shift};
use crate::report::format::with_unit;

/// The `schema` field of the JSON form.
pub const HISTORY_SCHEMA: &str = "benchgate-history/1";

/// What a history report shows.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    pub branch: &'a str,
    /// The stored runs, oldest first; [`CellHistory`] indexes into them.
    pub runs: &'a [BaselineKey],
    pub cells: &'a [CellHistory],
    pub opts: Options,
}

impl History<'_> {
    /// The cells that drift, in order.
    pub fn drifting(&self) -> impl Iterator<Item = &CellHistory> {
        self.cells.iter().filter(|c| c.drifting())
    }

    /// Series with at least one change point.
    fn changed(&self) -> impl Iterator<Item = &CellHistory> {
        self.cells.iter().filter(|c| !c.shifts.is_empty())
    }
}

/// A signed percentage: `+10.2%`; `n/a` without a mean before.
pub fn percent(change: Option<f64>) -> String {
    change.map_or("n/a".into(), |c| format!("{:+.1}%", c * 100.0))
}

/// `scenario / client` (`client @ server` with a server under test, as the
/// comparison tables write it).
pub fn who(c: &CellHistory) -> String {
    match &c.server {
        Some(s) => format!("{} / {} @ {}", c.scenario, c.client, s),
        None => format!("{} / {}", c.scenario, c.client),
    }
}

/// What a change point means for its series: `worse, drifting` (the newest
/// and past the warn threshold), `worse`, `worse, within the warn band`,
/// `better`; `environment: worse` or `environment: better` where the
/// environment fingerprint moved at it ([`Shift::environment`] says what).
pub fn shift_words(c: &CellHistory, s: &Shift) -> &'static str {
    if s.environment_moved() {
        return match s.worse {
            true => "environment: worse",
            false => "environment: better",
        };
    }
    match (s.worse, s.past_warn) {
        (true, true) if c.drifting() && c.shifts.last() == Some(s) => "worse, drifting",
        (true, true) => "worse",
        (true, false) => "worse, within the warn band",
        (false, _) => "better",
    }
}

/// The first line: what was read and how it was searched.
pub fn headline(h: &History<'_>) -> String {
    let span = match (h.runs.first(), h.runs.last()) {
        (Some(a), Some(b)) => format!(", commits {} to {}", short(&a.sha), short(&b.sha)),
        _ => String::new(),
    };
    format!(
        "{} stored runs of {}{span}; {} series of gating metrics; change points by E-divisive means (alpha {}, {} permutations, at least {} runs a side)",
        h.runs.len(),
        h.branch,
        h.cells.len(),
        h.opts.alpha,
        h.opts.permutations,
        h.opts.min_size
    )
}

/// A commit sha shortened to 12 characters.
pub fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// Control characters shown escaped, so a name cannot move the cursor.
fn safe(s: &str) -> String {
    s.escape_debug().to_string()
}

/// The terminal report: the headline, then one line per change point.
pub fn terminal(h: &History<'_>) -> String {
    let mut out = format!("benchgate history: {}\n", safe(&headline(h)));
    let mut any = false;
    for c in h.changed() {
        for s in &c.shifts {
            any = true;
            let key = &h.runs[s.run];
            let _ = writeln!(
                out,
                "  {}  {}  at {} (run {} of {})  {} ({} -> {})  p = {:.3}  {}",
                safe(&who(c)),
                c.metric,
                safe(short(&key.sha)),
                s.run + 1,
                h.runs.len(),
                percent(s.point.relative_change()),
                with_unit(&c.metric, s.point.mean_before),
                with_unit(&c.metric, s.point.mean_after),
                s.point.p_value,
                shift_words(c, s)
            );
            if s.environment_moved() {
                let _ = writeln!(
                    out,
                    "    the machine changed there: {}",
                    safe(&s.environment.join("; "))
                );
            }
        }
    }
    if !any {
        out.push_str("  no change points: every series is flat at this significance\n");
    }
    let drifting: Vec<String> = h
        .drifting()
        .map(|c| format!("{} {}", safe(&who(c)), c.metric))
        .collect();
    if !drifting.is_empty() {
        let _ = writeln!(
            out,
            "drifting (the newest change point is worse, past the warn threshold, on the same machine): {}",
            drifting.join(", ")
        );
    }
    out
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    schema: &'static str,
    branch: &'a str,
    alpha: f64,
    permutations: usize,
    min_size: usize,
    runs: Vec<JsonRun<'a>>,
    cells: Vec<JsonCell<'a>>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    sha: &'a str,
    started_at: &'a str,
    run_id: &'a str,
}

#[derive(Serialize)]
struct JsonCell<'a> {
    scenario: &'a str,
    client: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<&'a str>,
    metric: &'a str,
    drifting: bool,
    /// `[run index, median]`, oldest first.
    values: &'a [(usize, f64)],
    change_points: Vec<JsonShift<'a>>,
}

#[derive(Serialize)]
struct JsonShift<'a> {
    /// The commit of the first run after the change.
    sha: &'a str,
    run: usize,
    relative_change: Option<f64>,
    p_value: f64,
    mean_before: f64,
    mean_after: f64,
    worse: bool,
    past_warn: bool,
    /// What moved in the environment fingerprint at the change point.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    environment: &'a [String],
}

/// The JSON form ([`HISTORY_SCHEMA`]), pretty, newline-terminated: every
/// series with its values and change points.
pub fn json(h: &History<'_>) -> String {
    let doc = JsonDoc {
        schema: HISTORY_SCHEMA,
        branch: h.branch,
        alpha: h.opts.alpha,
        permutations: h.opts.permutations,
        min_size: h.opts.min_size,
        runs: h
            .runs
            .iter()
            .map(|k| JsonRun {
                sha: &k.sha,
                started_at: &k.started_at,
                run_id: &k.run_id,
            })
            .collect(),
        cells: h
            .cells
            .iter()
            .map(|c| JsonCell {
                scenario: &c.scenario,
                client: &c.client,
                server: c.server.as_deref(),
                metric: &c.metric,
                drifting: c.drifting(),
                values: &c.values,
                change_points: c
                    .shifts
                    .iter()
                    .map(|s| JsonShift {
                        sha: &h.runs[s.run].sha,
                        run: s.run,
                        relative_change: s.point.relative_change(),
                        p_value: s.point.p_value,
                        mean_before: s.point.mean_before,
                        mean_after: s.point.mean_after,
                        worse: s.worse,
                        past_warn: s.past_warn,
                        environment: &s.environment,
                    })
                    .collect(),
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("a history always serializes");
    s.push('\n');
    s
}
