//! Checking the errors `Suite::from_toml` gives for an invalid config.

use benchgate::config::{ConfigError, Suite};

/// Line and column (1-based) `err` points at, if it is about the content.
pub fn location(err: &ConfigError) -> Option<(usize, usize)> {
    match err {
        ConfigError::Read { .. } => None,
        ConfigError::Syntax { line, column, .. } | ConfigError::Invalid { line, column, .. } => {
            Some((*line, *column))
        }
    }
}

/// The field path of an `Invalid` error.
pub fn field(err: &ConfigError) -> Option<&str> {
    match err {
        ConfigError::Invalid { field, .. } => Some(field),
        _ => None,
    }
}

/// Asserts that `loaded` (a config read as `file`) failed with an `Invalid`
/// error at `line` on `field` whose message contains `what` and whose fix
/// contains `fix`, shown as `file:line:…`. Returns the error as shown.
#[track_caller]
pub fn invalid(
    loaded: Result<Suite, ConfigError>,
    file: &str,
    line: usize,
    field: &str,
    what: &str,
    fix: &str,
) -> String {
    let err = loaded.expect_err("config should be rejected");
    let shown = err.to_string();
    match &err {
        ConfigError::Invalid {
            source_name,
            line: l,
            field: f,
            message,
            fix: x,
            ..
        } => {
            assert_eq!(source_name, file, "{shown}");
            assert_eq!(*l, line, "line of: {shown}");
            assert_eq!(f, field, "{shown}");
            assert!(message.contains(what), "message lacks {what:?}: {shown}");
            assert!(x.contains(fix), "fix lacks {fix:?}: {shown}");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(shown.starts_with(&format!("{file}:{line}:")), "{shown}");
    shown
}
