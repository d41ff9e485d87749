//! Config errors. Every error about the file's content names the input, the line
//! and column, the field path and the fix, in that order:
//!
//! `benchgate.toml:14:8: scenario "put-1mib".body: a body needs method PUT or POST,
//! but method is GET; set method = "PUT" or remove body`
//!
//! Field paths use the entry's name when it has a usable one (`client "hyper".pool`)
//! and its 0-based position otherwise (`scenario[2].rate`).

use std::ops::Range;

use thiserror::Error;

/// Why a config could not be loaded. Callers branch on the variant: `Read` is an
/// I/O problem, `Syntax` is not TOML at all, `Invalid` is TOML that benchgate rejects.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read. The reason is in the message, and not
    /// a source too: a chain of causes shown would say it twice.
    #[error("cannot read config file {path}: {reason}")]
    Read {
        path: String,
        reason: std::io::Error,
    },
    /// The text is not valid TOML (or uses a TOML feature benchgate never accepts).
    #[error("{source_name}:{line}:{column}: TOML syntax error: {message}; {fix}")]
    Syntax {
        /// The file path or other name of the input.
        source_name: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column (in characters) of the error.
        column: usize,
        message: String,
        fix: String,
    },
    /// Valid TOML that does not describe a valid suite.
    #[error("{source_name}:{line}:{column}: {field}: {message}; {fix}")]
    Invalid {
        source_name: String,
        line: usize,
        column: usize,
        /// Path of the offending field, e.g. `scenario "get-22b".rate` or `run.rounds`.
        field: String,
        /// What is wrong.
        message: String,
        /// How to fix it.
        fix: String,
    },
}

impl ConfigError {
    /// Converts a `toml` parse error into `Syntax`.
    pub(crate) fn syntax(err: &toml::de::Error, text: &str, source_name: &str) -> ConfigError {
        let offset = err.span().map_or(0, |s| s.start);
        let (line, column) = line_col(text, offset);
        let raw = err.message().trim();
        let (message, fix) = if raw.contains("$__toml_private_datetime") {
            (
                "a date/time value is not used anywhere in benchgate.toml".to_string(),
                "write durations as quoted strings like \"3s\" and quote text values".to_string(),
            )
        } else if raw.contains("duplicate key") {
            (
                one_line(raw),
                "each key and table may appear once; remove or rename the second one (use [[...]] for repeated tables)"
                    .to_string(),
            )
        } else {
            (
                one_line(raw),
                "check the quotes, brackets, commas and `key = value` form at that position (TOML: https://toml.io)"
                    .to_string(),
            )
        };
        ConfigError::Syntax {
            source_name: source_name.to_string(),
            line,
            column,
            message,
            fix,
        }
    }
}

fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

/// A validation problem before it knows its file: a byte span and the words.
/// `validate` turns it into `ConfigError::Invalid` with line and column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    pub span: Range<usize>,
    pub field: String,
    pub message: String,
    pub fix: String,
}

impl Problem {
    pub fn new(
        span: Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Problem {
        Problem {
            span,
            field: field.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }

    pub fn into_error(self, text: &str, source_name: &str) -> ConfigError {
        let (line, column) = line_col(text, self.span.start);
        ConfigError::Invalid {
            source_name: source_name.to_string(),
            line,
            column,
            field: self.field,
            message: self.message,
            fix: self.fix,
        }
    }
}

/// 1-based line and column (in characters) of a byte offset; offsets past the end
/// point just after the last character.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lines_and_characters() {
        let text = "a = 1\nbé = \"x\"\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 4), (1, 5));
        assert_eq!(line_col(text, 6), (2, 1));
        // `=` after the two-byte `é` is character 4 of line 2.
        assert_eq!(line_col(text, 10), (2, 4));
        assert_eq!(line_col(text, 1000), (3, 1));
    }

    #[test]
    fn invalid_displays_file_line_field_message_fix() {
        let text = "[run]\nrounds = 0\n";
        let err = Problem::new(15..16, "run.rounds", "must be at least 1", "set rounds = 5")
            .into_error(text, "benchgate.toml");
        assert_eq!(
            err.to_string(),
            "benchgate.toml:2:10: run.rounds: must be at least 1; set rounds = 5"
        );
        assert!(
            matches!(&err, ConfigError::Invalid { line: 2, column: 10, field, .. } if field == "run.rounds"),
            "{err:?}"
        );
    }
}
