//! The window loop's vocabulary (WINDOW-LOOP.md; issue 52 points 1-3): the
//! words benchgate writes on a client's stdin and the lines the client
//! answers on its stdout, a parser for each, and the record of one window
//! with the sum that turns a fork's windows into its value.
//!
//! One process (a fork) stays alive across its W windows and pays its warmup
//! once; the fork, not the window, is the statistical unit: its value is the
//! sum over its windows (requests ÷ summed window time, CPU ÷ requests,
//! errors summed, histograms merged), [`fork_value`]. The built-in driver
//! (`benchgate __drive --loop`) and command clients that declare the loop
//! speak the same words, so one parent-side path drives both.

use serde::{Deserialize, Serialize};

use crate::measure::resources::CpuTimes;
use crate::measure::schedstat::Starvation;
use crate::measure::{Counts, LatencyHistogram};
use crate::metric::trial::Throughput;
use crate::results::WindowFigures;
use crate::server::ServerCounters;

/// The variable benchgate offers the loop in, and its value.
pub const OFFER_VAR: &str = "BENCHGATE_WINDOWS";
pub const OFFER: &str = "loop";

/// Client → benchgate: the client speaks the loop (its first protocol line).
pub const DECLARE: &str = "BENCHGATE-WINDOWS-LOOP";
/// Client → benchgate: warmup done, workers sending unmeasured.
pub const READY: &str = "BENCHGATE-READY";
/// Client → benchgate: `BENCHGATE-WINDOW-RESULT <json>`, the answer to a close.
pub const RESULT: &str = "BENCHGATE-WINDOW-RESULT";
/// Client → benchgate: workers stopped, nothing in flight.
pub const PAUSED: &str = "BENCHGATE-PAUSED";

/// benchgate → client: `BENCHGATE-WINDOW-OPEN <k>`.
pub const OPEN: &str = "BENCHGATE-WINDOW-OPEN";
/// benchgate → client: `BENCHGATE-WINDOW-CLOSE <k>`.
pub const CLOSE: &str = "BENCHGATE-WINDOW-CLOSE";
pub const PAUSE: &str = "BENCHGATE-PAUSE";
pub const RESUME: &str = "BENCHGATE-RESUME";
pub const EXIT: &str = "BENCHGATE-EXIT";

/// A line longer than this is quoted shortened in an error.
const QUOTE_MAX: usize = 200;

/// What benchgate writes on a client's stdin, one line each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Window k (1, 2, ...) is open: count from now.
    Open(u32),
    /// Stop counting window k and answer with its result.
    Close(u32),
    /// Finish what is in flight, start nothing, answer [`PAUSED`].
    Pause,
    /// Send again, unmeasured until the next open.
    Resume,
    /// Stop and exit 0.
    Exit,
}

impl Command {
    /// The line, without its line end.
    pub fn line(&self) -> String {
        match self {
            Command::Open(k) => format!("{OPEN} {k}"),
            Command::Close(k) => format!("{CLOSE} {k}"),
            Command::Pause => PAUSE.to_string(),
            Command::Resume => RESUME.to_string(),
            Command::Exit => EXIT.to_string(),
        }
    }

    /// Reads a command line (a client's side: the built-in driver's).
    pub fn parse(line: &str) -> Result<Command, String> {
        let line = line.trim();
        let (word, arg) = line.split_once(' ').unwrap_or((line, ""));
        let window = |arg: &str| {
            arg.trim()
                .parse::<u32>()
                .ok()
                .filter(|k| *k > 0)
                .ok_or_else(|| {
                    format!(
                        "a window number (1, 2, ...) after {word}, in {}",
                        quote(line)
                    )
                })
        };
        match word {
            OPEN => window(arg).map(Command::Open),
            CLOSE => window(arg).map(Command::Close),
            PAUSE if arg.is_empty() => Ok(Command::Pause),
            RESUME if arg.is_empty() => Ok(Command::Resume),
            EXIT if arg.is_empty() => Ok(Command::Exit),
            _ => Err(format!("not a window-loop command: {}", quote(line))),
        }
    }
}

/// What a client answers on its stdout, one line each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Declare,
    Ready,
    /// Window `window`'s record, `json` as the client wrote it (one line):
    /// for a command client the result-file format with `"window": k`
    /// ([`strip_window`] leaves what `external::parse` reads); for the
    /// built-in driver its `DriverWindow`.
    Result {
        window: u32,
        json: String,
    },
    Paused,
}

/// Reads one line of a client's stdout: `None` when it is no reply (the
/// client's own output, the one-window markers included); `Some(Err)` when
/// it starts with a reply word but is malformed, the message quoting the
/// line (escaped, shortened).
pub fn parse_reply(line: &str) -> Option<Result<Reply, String>> {
    let line = line.trim_end_matches(['\r', '\n']);
    let bare = line.trim();
    let whole = |word: &str, reply: Reply| {
        (bare == word).then_some(Ok(reply)).or_else(|| {
            Some(Err(format!(
                "{word} must be alone on its line, found {}",
                quote(line)
            )))
        })
    };
    if bare.starts_with(DECLARE) {
        return whole(DECLARE, Reply::Declare);
    }
    if bare.starts_with(READY) {
        return whole(READY, Reply::Ready);
    }
    if bare.starts_with(PAUSED) {
        return whole(PAUSED, Reply::Paused);
    }
    let rest = bare.strip_prefix(RESULT)?;
    Some(parse_result(rest).map_err(|e| format!("{e}, in the line {}", quote(line))))
}

/// The JSON after [`RESULT`]: one object with a positive integer `window`.
fn parse_result(rest: &str) -> Result<Reply, String> {
    let json = rest
        .strip_prefix(' ')
        .map(str::trim)
        .filter(|j| !j.is_empty())
        .ok_or_else(|| format!("{RESULT} must be followed by a space and one JSON object"))?;
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("the window's result is not JSON ({e})"))?;
    let window = value
        .get("window")
        .and_then(serde_json::Value::as_u64)
        .and_then(|k| u32::try_from(k).ok())
        .filter(|k| *k > 0)
        .ok_or("the window's result has no `window` (a positive integer)")?;
    Ok(Reply::Result {
        window,
        json: json.to_string(),
    })
}

/// A window result's JSON without its `window` key: what the result-file
/// reader (`external::parse`) takes.
pub fn strip_window(json: &str) -> Result<Vec<u8>, String> {
    let mut value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("the window's result is not JSON ({e})"))?;
    if let Some(map) = value.as_object_mut() {
        map.remove("window");
    }
    serde_json::to_vec(&value).map_err(|e| e.to_string())
}

/// `line` escaped (control characters and quotes) and cut to a readable
/// length, in quotes: how an error shows a client's line.
pub fn quote(line: &str) -> String {
    let escaped = line.escape_debug().to_string();
    if escaped.chars().count() > QUOTE_MAX {
        let cut: String = escaped.chars().take(QUOTE_MAX).collect();
        format!("\"{cut}...\" ({} bytes)", line.len())
    } else {
        format!("\"{escaped}\"")
    }
}

/// What benchgate measured of one window of a fork, on both sides.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WindowRecord {
    /// 1-based, within its fork.
    pub window: u32,
    /// When benchgate opened it (RFC 3339, UTC, µs), where it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_at: Option<String>,
    /// The client's counts in the window.
    pub counts: Counts,
    /// The window's length at benchgate's side (open to close), seconds.
    pub elapsed_s: f64,
    /// The client's CPU in the window, the gated figure; `None`: not read
    /// (the fork then has no CPU figure, never a partial one).
    pub cpu: Option<CpuTimes>,
    /// The client's process group's CPU, read by the parent at the window's
    /// edges (the gated figure of a command client; a built-in driver's
    /// cross-check of its own in-process reading).
    pub group_cpu: Option<CpuTimes>,
    /// The reference server's counters for the window.
    pub server: Option<ServerCounters>,
    /// The server's CPU in the window.
    pub server_cpu: Option<CpuTimes>,
    pub latency: Option<LatencyHistogram>,
    /// Open loop: latency from the actual send.
    pub latency_uncorrected: Option<LatencyHistogram>,
    /// What the machine withheld from the client in the window.
    pub starvation: Option<Starvation>,
    /// Interleaved schedule: the other (frozen) side's CPU while this window
    /// was open; it must be ~0.
    pub peer_cpu: Option<CpuTimes>,
}

impl WindowRecord {
    /// This window's figures in its fork's `values` (their trend within the
    /// fork), its CPU per request as the caller read it and its throughput
    /// read as `throughput` says.
    pub fn figures(
        &self,
        cpu_us_per_request: Option<f64>,
        throughput: Throughput,
    ) -> WindowFigures {
        WindowFigures {
            requests: self.counts.requests(),
            server_requests: self.server.as_ref().map_or(0, |s| s.requests),
            throughput_rps: throughput.rate(&self.counts, self.elapsed_s).unwrap_or(0.0),
            cpu_us_per_request,
            opened_at: self.opened_at.clone(),
        }
    }

    /// A program's window (or windows, summed) counted at benchgate's edges
    /// of it: the reference server's count there, where it has one
    /// ([`Throughput::ServerEdges`]).
    pub fn at_server_edges(&self) -> Throughput {
        match &self.server {
            Some(s) => Throughput::ServerEdges { served: s.requests },
            None => Throughput::Window,
        }
    }

    /// Adds `other` (a later window of the same fork) to this sum.
    pub fn add(&mut self, other: &WindowRecord) {
        self.window = self.window.max(other.window);
        self.counts.merge(&other.counts);
        self.elapsed_s += other.elapsed_s;
        self.cpu = sum_cpu(self.cpu, other.cpu);
        self.group_cpu = sum_cpu(self.group_cpu, other.group_cpu);
        self.server_cpu = sum_cpu(self.server_cpu, other.server_cpu);
        self.peer_cpu = sum_cpu(self.peer_cpu, other.peer_cpu);
        self.server = match (self.server.take(), &other.server) {
            (Some(mut a), Some(b)) => {
                a.merge(b);
                Some(a)
            }
            _ => None,
        };
        self.latency = merge_hist(self.latency.take(), other.latency.as_ref());
        self.latency_uncorrected = merge_hist(
            self.latency_uncorrected.take(),
            other.latency_uncorrected.as_ref(),
        );
        self.starvation = match (self.starvation, other.starvation) {
            (Some(a), Some(b)) => Some(Starvation {
                span_s: a.span_s + b.span_s,
                run_delay_ns: sum_opt(a.run_delay_ns, b.run_delay_ns),
                involuntary_switches: sum_opt(a.involuntary_switches, b.involuntary_switches),
                steal_ms: a.steal_ms.zip(b.steal_ms).map(|(a, b)| a + b),
            }),
            _ => None,
        };
    }
}

/// A fork's value: the sum of its windows (`window` = how many). `None`
/// without windows.
pub fn fork_value(windows: &[WindowRecord]) -> Option<WindowRecord> {
    let (first, rest) = windows.split_first()?;
    let mut sum = first.clone();
    for w in rest {
        sum.add(w);
    }
    sum.window = windows.len() as u32;
    Some(sum)
}

fn sum_cpu(a: Option<CpuTimes>, b: Option<CpuTimes>) -> Option<CpuTimes> {
    let (a, b) = (a?, b?);
    Some(CpuTimes {
        user_us: a.user_us + b.user_us,
        sys_us: a.sys_us + b.sys_us,
    })
}

fn sum_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a? + b?)
}

/// Histograms merge where both windows have one; a window without one
/// (it measured no latency) adds nothing.
fn merge_hist(
    a: Option<LatencyHistogram>,
    b: Option<&LatencyHistogram>,
) -> Option<LatencyHistogram> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a.merge(b);
            Some(a)
        }
        (a, b) => a.or_else(|| b.cloned()),
    }
}

#[cfg(test)]
#[path = "window_loop_tests.rs"]
mod tests;
