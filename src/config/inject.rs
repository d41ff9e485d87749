//! The testing knobs of a `[[client]]`: `inject_cpu` (CPU burned per request,
//! [`crate::client::spin`]) and `inject_tail` (a share of requests delayed,
//! [`crate::client::tail`]). Both stand for a change in the code under test, so
//! that the gate-quality scripts can measure what the gates detect; both apply
//! to the built-in clients only.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::Problem;
use super::raw::RawClient;
use super::units::{format_duration, parse_duration};
use super::validate::{int_in, split_fix};
use super::ClientKind;

/// Parts per million in a whole.
pub const PPM: u32 = 1_000_000;

/// `inject_tail = { share = "2%", delay = "1ms" }`, as validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TailInjection {
    /// Share of requests delayed, parts per million (20_000 = 2%).
    pub share_ppm: u32,
    /// Wait before each delayed request, nanoseconds.
    pub delay_ns: u64,
}

/// Longest `inject_cpu`: 1 s per request.
pub const MAX_INJECT_CPU: Duration = Duration::from_secs(1);

/// `inject_cpu` (a duration, ns resolution) or its deprecated spelling
/// `inject_cpu_us` (whole microseconds), in nanoseconds; 0 when neither is set.
pub(super) fn cpu(c: &RawClient, command: bool) -> Result<u64, Problem> {
    let path = |field: &str| format!("{}.{field}", c.label);
    let example = "inject_cpu = \"1300ns\" (or \"1.3us\")";
    if let (Some(_), Some(us)) = (&c.inject_cpu, &c.inject_cpu_us) {
        return Err(Problem::new(
            us.span.clone(),
            path("inject_cpu_us"),
            "inject_cpu and inject_cpu_us are both set (inject_cpu_us is the older spelling of inject_cpu, in whole microseconds)",
            "remove inject_cpu_us and keep inject_cpu",
        ));
    }
    let (field, span) = match (&c.inject_cpu, &c.inject_cpu_us) {
        (Some(v), _) => ("inject_cpu", v.span.clone()),
        (None, Some(v)) => ("inject_cpu_us", v.span.clone()),
        (None, None) => return Ok(0),
    };
    if command {
        return Err(Problem::new(
            span,
            path(field),
            format!("{field} applies to the built-in clients only"),
            "remove it; add the cost inside your program instead",
        ));
    }
    if let Some(us) = &c.inject_cpu_us {
        let max_us = MAX_INJECT_CPU.as_micros() as i64;
        let us = int_in(us, &path(field), 0, max_us, "inject_cpu = \"50us\"")?;
        return Ok(us as u64 * 1_000);
    }
    let v = c.inject_cpu.as_ref().expect("matched above");
    let d = parse_duration(&v.value).map_err(|msg| {
        let (message, _) = split_fix(&msg, "");
        Problem::new(
            span.clone(),
            path(field),
            message,
            format!("write it like {example}, in ns, us, ms or s"),
        )
    })?;
    if d > MAX_INJECT_CPU {
        return Err(Problem::new(
            span,
            path(field),
            format!(
                "must be at most {} per request, got {}",
                format_duration(MAX_INJECT_CPU),
                v.value.trim()
            ),
            format!("set a smaller amount, like {example}"),
        ));
    }
    Ok(d.as_nanos() as u64)
}

/// Longest `inject_tail` delay: 10 s.
pub const MAX_INJECT_TAIL_DELAY: Duration = Duration::from_secs(10);
/// Largest `inject_tail` share: half the requests (beyond that it is no tail).
pub const MAX_INJECT_TAIL_SHARE_PPM: u32 = PPM / 2;

/// `inject_tail = { share = "2%", delay = "1ms" }`: `None` when absent.
pub(super) fn tail(c: &RawClient, kind: &ClientKind) -> Result<Option<TailInjection>, Problem> {
    let Some(table) = &c.inject_tail else {
        return Ok(None);
    };
    let path = format!("{}.inject_tail", c.label);
    let example = "inject_tail = { share = \"2%\", delay = \"1ms\" }";
    let refused = match kind {
        ClientKind::Command(_) => Some((
            "inject_tail applies to the built-in clients only",
            "remove it; add the delay inside your program instead",
        )),
        ClientKind::H1Lean => Some((
            "inject_tail is not available with kind = \"h1-lean\" (its event loop has no per-request wait)",
            "remove it, or use kind = \"hyper\" to validate a tail gate",
        )),
        _ => None,
    };
    if let Some((message, fix)) = refused {
        return Err(Problem::new(table.span.clone(), path, message, fix));
    }
    let (mut share, mut delay) = (None, None);
    for (key, value) in &table.value {
        let at = format!("{path}.{}", key.value);
        match key.value.as_str() {
            "share" => {
                share = Some(parse_share(&value.value).map_err(|msg| {
                    Problem::new(
                        value.span.clone(),
                        at,
                        msg,
                        format!("write it like {example}"),
                    )
                })?)
            }
            "delay" => {
                let d = parse_duration(&value.value).map_err(|msg| {
                    let (message, _) = split_fix(&msg, "");
                    Problem::new(
                        value.span.clone(),
                        at.clone(),
                        message,
                        format!("write it like {example}"),
                    )
                })?;
                if d.is_zero() || d > MAX_INJECT_TAIL_DELAY {
                    return Err(Problem::new(
                        value.span.clone(),
                        at,
                        format!(
                            "must be more than 0 and at most {}, got {}",
                            format_duration(MAX_INJECT_TAIL_DELAY),
                            value.value.trim()
                        ),
                        format!("write it like {example}"),
                    ));
                }
                delay = Some(d);
            }
            other => {
                return Err(Problem::new(
                    key.span.clone(),
                    at,
                    format!("unknown key {other:?} (inject_tail takes share and delay)"),
                    format!("write it like {example}"),
                ))
            }
        }
    }
    match (share, delay) {
        (Some(share_ppm), Some(d)) => Ok(Some(TailInjection {
            share_ppm,
            delay_ns: d.as_nanos() as u64,
        })),
        (None, _) | (_, None) => Err(Problem::new(
            table.span.clone(),
            path,
            format!(
                "needs both share and delay, got {}",
                if share.is_some() {
                    "no delay"
                } else if delay.is_some() {
                    "no share"
                } else {
                    "neither"
                }
            ),
            format!("write it like {example}"),
        )),
    }
}

/// `"2%"` or `"0.5%"` as parts per million, above 0 and at most 50%.
fn parse_share(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let number = t
        .strip_suffix('%')
        .ok_or_else(|| format!("share {t:?} is not a percentage (no %)"))?;
    let pct: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("share {t:?} is not a number of percent"))?;
    let ppm = (pct * 10_000.0).round();
    if !pct.is_finite() || ppm < 1.0 || ppm > f64::from(MAX_INJECT_TAIL_SHARE_PPM) {
        return Err(format!(
            "share {t:?} is out of range: it must be more than 0% and at most {}%",
            MAX_INJECT_TAIL_SHARE_PPM / 10_000
        ));
    }
    Ok(ppm as u32)
}

#[cfg(test)]
mod tests {
    use super::parse_share;

    #[test]
    fn shares_parse_as_parts_per_million() {
        assert_eq!(parse_share("2%"), Ok(20_000));
        assert_eq!(parse_share(" 0.5 %"), Ok(5_000));
        assert_eq!(parse_share("50%"), Ok(500_000));
        assert!(parse_share("2").unwrap_err().contains("no %"));
        assert!(parse_share("0%").unwrap_err().contains("out of range"));
        assert!(parse_share("51%").unwrap_err().contains("out of range"));
        assert!(parse_share("NaN%").unwrap_err().contains("out of range"));
        assert!(parse_share("two%").unwrap_err().contains("not a number"));
    }
}
