//! The validity guard: marks on a trial whose figures do not measure what its
//! scenario asked for. A marked trial stays in the results as measured; the
//! comparison will not let a cell with marked trials pass silently
//! (`compare::validity`, `[gate] invalid`).
//!
//! Two rules, both on figures the trial measured (nothing is estimated):
//!
//! - **Rate shortfall** (open loop only): the trial completed fewer than
//!   [`MIN_RATE_SHARE`] (95%) of its target rate, `requests / elapsed_s <
//!   0.95 * rate`, where `requests` counts successes and errors completed in
//!   the window. The load was not the load the scenario describes.
//! - **Client bound** (server under test only, any load model): the load
//!   generator was the bottleneck. Its CPU in the window (`cpu_user_us +
//!   cpu_sys_us`) is at least [`SATURATED_SHARE`] (90%) of its cores times the
//!   window, while the server's (`server_cpu_us_per_request * requests`) is
//!   below 90% of the server's cores times the window. Cores are those of the
//!   pinning plan (client CPUs, server CPUs), or every core of the machine when
//!   nothing is pinned. Unmarked when the server's CPU was not measured (a
//!   `url` server).
//!
//! A closed loop against the reference server saturating its client core is
//! what a client benchmark measures, and is not marked.
//!
//! A third rule is about the machine, not the load: a trial is **starved**
//! when it completed no request in its window, or when a built-in driver's
//! window at the reference server (`server.window_secs`, opened and closed
//! by the driver itself; a command client's is bracketed by the parent
//! reading its markers, whose lag is not the client's) lasted more than
//! [`WINDOW_TOLERANCE`] (10%) off the planned one. A driver's window lasts
//! its duration from when it actually opened, however late
//! (`engine::Schedule::open`), so a driver descheduled past its planned
//! opening is not starved by that alone; longer: it was stalled inside;
//! shorter: the server's window opened late against the driver's (a stall
//! between the driver's opening and its call to the server, or a command
//! client's markers read late). The built-in drivers' own window
//! (`window_actual_s`) is recorded but not read here: the server's brackets
//! it (opened just after it, closed just after it), so a stall inside it
//! lengthens the server's too. In the window loop the parent brackets the
//! server's window and the driver counts from reading its open to reading its
//! close, so there each window's length at the driver is held to the plan too
//! (`orchestrate::trial_loop`). A starved trial's figures
//! describe the neighbour, not the code: the round is run again (at most
//! [`MAX_STARVED_RERUNS`] times, `orchestrate::rounds`); a trial still starved
//! keeps this mark and enters no median and no comparison.

use serde::{Deserialize, Serialize};

use super::TrialMetrics;
use crate::config::Load;

/// An open-loop trial is marked below this share of its target rate.
pub const MIN_RATE_SHARE: f64 = 0.95;
/// A CPU share of `cores × window` at or above which a side counts as saturated.
pub const SATURATED_SHARE: f64 = 0.90;
/// A window further than this share from its planned length starves its trial.
pub const WINDOW_TOLERANCE: f64 = 0.10;
/// How many times a round with a starved trial is run again.
pub const MAX_STARVED_RERUNS: u32 = 2;

/// Why a trial does not measure what its scenario asked for, with the
/// measured figures that decided it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum InvalidMark {
    /// Open loop: completed requests per second fell below 95% of the rate.
    RateShortfall {
        /// The scenario's `rate`, requests per second.
        target_rps: f64,
        /// Requests completed in the window (successes and errors) per second.
        achieved_rps: f64,
    },
    /// Server under test: the client's cores were saturated, the server's not.
    ClientBound {
        /// Client CPU in the window / (its cores × window), 1.0 = all busy.
        client_cpu_share: f64,
        client_cores: u32,
        /// Server CPU in the window / (its cores × window).
        server_cpu_share: f64,
        server_cores: u32,
    },
    /// The machine starved the trial (no request in its window, or a window
    /// more than 10% off its planned length) in every attempt of its round.
    Starved {
        /// What was seen, with the figures.
        reason: String,
    },
}

impl InvalidMark {
    /// One short phrase with the figures, for reports.
    pub fn describe(&self) -> String {
        match *self {
            InvalidMark::RateShortfall {
                target_rps,
                achieved_rps,
            } => format!(
                "open loop reached {achieved_rps:.0} of {target_rps:.0} req/s ({:.0}%, under {:.0}%)",
                100.0 * achieved_rps / target_rps,
                100.0 * MIN_RATE_SHARE
            ),
            InvalidMark::ClientBound {
                client_cpu_share,
                client_cores,
                server_cpu_share,
                server_cores,
            } => format!(
                "load generator saturated: client CPU {:.0}% of {client_cores} core(s), server {:.0}% of {server_cores}",
                100.0 * client_cpu_share,
                100.0 * server_cpu_share
            ),
            InvalidMark::Starved { ref reason } => format!("starved by the machine: {reason}"),
        }
    }

    /// Whether this mark keeps the trial out of every median and comparison.
    pub fn is_starved(&self) -> bool {
        matches!(self, InvalidMark::Starved { .. })
    }
}

/// Where a trial ran: whether against a server under test, and how many
/// cores each side could use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    pub server_under_test: bool,
    pub client_cores: usize,
    pub server_cores: usize,
}

/// Every mark the trial earns (empty: valid).
pub fn assess(load: &Load, m: &TrialMetrics, at: Placement) -> Vec<InvalidMark> {
    let mut marks = Vec::new();
    if let Some(mark) = rate_shortfall(load, m) {
        marks.push(mark);
    }
    if at.server_under_test {
        if let Some(mark) = client_bound(m, at.client_cores, at.server_cores) {
            marks.push(mark);
        }
    }
    marks
}

/// The starvation rule (module docs): `None` for a trial that completed a
/// request (or reports a rate without counting them, as JMH does) and whose
/// window at the reference server (`server_window_s`;
/// absent with a server under test) lies within 10% of `window_planned_s`
/// (absent: a request-count stop, only the count is read).
pub fn starved(
    m: &TrialMetrics,
    window_planned_s: Option<f64>,
    server_window_s: Option<f64>,
) -> Option<InvalidMark> {
    // A client that reports a rate without counting requests (JMH) did
    // measure something: only a trial with neither is empty.
    let rate = m.throughput_rps.is_some_and(|r| r > 0.0);
    let reason = if m.requests == 0 && !rate {
        Some("it completed no request in its window".to_string())
    } else {
        window_planned_s.filter(|p| *p > 0.0).and_then(|planned| {
            server_window_s.filter(|w| off_plan(*w, planned)).map(|w| {
                format!(
                    "its window lasted {:.1} ms at the server where {:.1} ms were planned ({})",
                    w * 1e3,
                    planned * 1e3,
                    if w < planned {
                        "it opened late"
                    } else {
                        "it stalled inside"
                    }
                )
            })
        })
    };
    reason.map(|reason| InvalidMark::Starved { reason })
}

/// Whether a window that lasted `actual_s` is more than [`WINDOW_TOLERANCE`]
/// off its planned `planned_s`.
pub fn off_plan(actual_s: f64, planned_s: f64) -> bool {
    (actual_s - planned_s).abs() > WINDOW_TOLERANCE * planned_s
}

/// The rate-shortfall rule (module docs); `None` for a closed loop.
pub fn rate_shortfall(load: &Load, m: &TrialMetrics) -> Option<InvalidMark> {
    let Load::Open { rate, .. } = *load else {
        return None;
    };
    if rate <= 0.0 || m.elapsed_s <= 0.0 {
        return None;
    }
    let achieved = m.requests as f64 / m.elapsed_s;
    (achieved < MIN_RATE_SHARE * rate).then_some(InvalidMark::RateShortfall {
        target_rps: rate,
        achieved_rps: achieved,
    })
}

/// The client-bound rule (module docs); `None` when the server's CPU was not
/// measured.
pub fn client_bound(
    m: &TrialMetrics,
    client_cores: usize,
    server_cores: usize,
) -> Option<InvalidMark> {
    let window_us = m.elapsed_s * 1e6;
    if window_us <= 0.0 || client_cores == 0 || server_cores == 0 {
        return None;
    }
    let server_us = m.server_cpu_us_per_request? * m.requests as f64;
    let client_us = (m.cpu_user_us + m.cpu_sys_us) as f64;
    let client_share = client_us / (client_cores as f64 * window_us);
    let server_share = server_us / (server_cores as f64 * window_us);
    (client_share >= SATURATED_SHARE && server_share < SATURATED_SHARE).then_some(
        InvalidMark::ClientBound {
            client_cpu_share: client_share,
            client_cores: client_cores as u32,
            server_cpu_share: server_share,
            server_cores: server_cores as u32,
        },
    )
}

#[cfg(test)]
#[path = "validity_tests.rs"]
mod tests;
