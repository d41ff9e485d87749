//! Test knobs: the test suite's hooks into a run, read once at the edge (the
//! command line's process environment, or the action's environment map) into
//! [`TestKnobs`], which the run options carry down to where each one acts.
//!
//! They are compiled in only with the cargo feature `test-knobs`, which
//! `cargo test` turns on (the crate's dev-dependency on itself, Cargo.toml)
//! and every shipped build leaves off (`cargo build --release`, the release
//! archives, the container image): without it [`TestKnobs::read`] returns no
//! knob whatever the environment says, so nobody's run can be steered by a
//! stray variable.

use std::time::Duration;

use anyhow::Context;

/// Milliseconds benchgate waits after seeing a window marker of a command
/// client before acting on it, as a loaded machine's scheduler might; the
/// acknowledgements must keep the counts exact anyway (tests/run/window_ack.rs).
pub const MARKER_LAG_VAR: &str = "BENCHGATE_TEST_MARKER_LAG_MS";

/// Milliseconds benchgate waits, as a command client's window closes, before
/// it samples the process group's CPU there, as a loaded machine's scheduler
/// might: a program that exits meanwhile must keep its CPU per request
/// (tests/run/window_edge.rs).
pub const CLOSE_LAG_VAR: &str = "BENCHGATE_TEST_CLOSE_LAG_MS";

/// How the mock driver's process fails: `[CLIENT=]HOW`, where HOW is
/// `panic:MESSAGE` (it panics with MESSAGE as it is built), `abort` (SIGABRT)
/// or `exit:N` (it exits with status N); with `CLIENT=`, only that client's
/// trials fail. Only the mock driver (`run --mock-latencies-us`, or
/// [`MOCK_LATENCIES_VAR`] in the action) acts on it.
pub const MOCK_FAIL_VAR: &str = "BENCHGATE_MOCK_FAIL";

/// The action replaces every client with the mock driver with these
/// latencies (µs, comma separated), like `run --mock-latencies-us`, so the
/// action's tests run without measurement noise.
pub const MOCK_LATENCIES_VAR: &str = "BENCHGATE_TEST_MOCK_LATENCIES_US";

/// The longest marker (or close) lag a test may ask for.
const MAX_MARKER_LAG: Duration = Duration::from_secs(10);

/// The knobs of one run; all absent in a shipped build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestKnobs {
    /// [`MARKER_LAG_VAR`], at most 10 s; `None` when unset or 0.
    pub marker_lag: Option<Duration>,
    /// [`CLOSE_LAG_VAR`], likewise.
    pub close_lag: Option<Duration>,
    /// [`MOCK_FAIL_VAR`], as given.
    pub mock_fail: Option<String>,
    /// [`MOCK_LATENCIES_VAR`], parsed.
    pub mock_latencies_us: Option<Vec<u64>>,
}

impl TestKnobs {
    /// Whether this build reads knobs at all (the `test-knobs` feature).
    pub const COMPILED: bool = cfg!(feature = "test-knobs");

    /// The knobs `get` gives (a variable's value by name); none without the
    /// `test-knobs` feature. A knob set to something it cannot mean is an
    /// error naming it.
    pub fn read(get: impl Fn(&str) -> Option<String>) -> anyhow::Result<TestKnobs> {
        if !Self::COMPILED {
            return Ok(TestKnobs::default());
        }
        let lag = |var: &str| -> anyhow::Result<Option<Duration>> {
            Ok(get(var)
                .map(|v| {
                    v.trim()
                        .parse::<u64>()
                        .with_context(|| format!("{var}={v:?}: give whole milliseconds"))
                })
                .transpose()?
                .filter(|&ms| ms > 0)
                .map(|ms| Duration::from_millis(ms).min(MAX_MARKER_LAG)))
        };
        let (marker_lag, close_lag) = (lag(MARKER_LAG_VAR)?, lag(CLOSE_LAG_VAR)?);
        let mock_latencies_us = get(MOCK_LATENCIES_VAR)
            .map(|list| {
                list.split(',')
                    .map(|s| s.trim().parse::<u64>())
                    .collect::<Result<Vec<_>, _>>()
                    .with_context(|| {
                        format!("{MOCK_LATENCIES_VAR}={list:?}: give microseconds, comma separated")
                    })
            })
            .transpose()?;
        Ok(TestKnobs {
            marker_lag,
            close_lag,
            mock_fail: get(MOCK_FAIL_VAR),
            mock_latencies_us,
        })
    }

    /// [`TestKnobs::read`] from the process environment.
    pub fn from_process_env() -> anyhow::Result<TestKnobs> {
        Self::read(|name| std::env::var(name).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> anyhow::Result<TestKnobs> {
        TestKnobs::read(|name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn knobs_are_read_only_where_compiled_in() {
        let knobs = read(&[
            (MARKER_LAG_VAR, "250"),
            (CLOSE_LAG_VAR, "400"),
            (MOCK_FAIL_VAR, "hyper=exit:3"),
            (MOCK_LATENCIES_VAR, "100, 200"),
        ])
        .unwrap();
        if TestKnobs::COMPILED {
            assert_eq!(knobs.marker_lag, Some(Duration::from_millis(250)));
            assert_eq!(knobs.close_lag, Some(Duration::from_millis(400)));
            assert_eq!(knobs.mock_fail.as_deref(), Some("hyper=exit:3"));
            assert_eq!(knobs.mock_latencies_us, Some(vec![100, 200]));
        } else {
            assert_eq!(knobs, TestKnobs::default());
        }
    }

    // A compile-time assertion (in `const`), which the declared Rust's clippy
    // (1.91) takes for one optimized out; later ones do not.
    #[allow(clippy::assertions_on_constants)]
    #[test]
    fn cargo_test_compiles_the_knobs_in() {
        // The dev-dependency of the crate on itself turns the feature on for
        // every `cargo test`; without it the tests that steer runs would
        // silently steer nothing.
        const {
            assert!(
                TestKnobs::COMPILED,
                "cargo test builds without `test-knobs`"
            )
        };
    }

    #[test]
    fn a_knob_that_cannot_mean_anything_is_an_error_naming_it() {
        if !TestKnobs::COMPILED {
            return;
        }
        let err = read(&[(MARKER_LAG_VAR, "soon")]).unwrap_err();
        assert!(format!("{err:#}").contains(MARKER_LAG_VAR), "{err:#}");
        let err = read(&[(CLOSE_LAG_VAR, "-1")]).unwrap_err();
        assert!(format!("{err:#}").contains(CLOSE_LAG_VAR), "{err:#}");
        let err = read(&[(MOCK_LATENCIES_VAR, "1,x")]).unwrap_err();
        assert!(format!("{err:#}").contains(MOCK_LATENCIES_VAR), "{err:#}");
        assert_eq!(read(&[(MARKER_LAG_VAR, "0")]).unwrap().marker_lag, None);
        assert_eq!(
            read(&[(MARKER_LAG_VAR, "99999")]).unwrap().marker_lag,
            Some(MAX_MARKER_LAG)
        );
    }
}
