//! GitHub workflow commands and files, formatted safely.
//!
//! Source: GitHub's "Workflow commands for GitHub Actions" and the runner's
//! `CommandStringConvert`/`ActionCommand` escaping (`%` -> `%25`, CR -> `%0D`,
//! LF -> `%0A` in data; additionally `:` -> `%3A` and `,` -> `%2C` in
//! properties).
//!
//! - `GITHUB_OUTPUT` entries use the multi-line form `name<<DELIM` ... `DELIM`
//!   with a random delimiter per entry, so a value cannot end the entry early
//!   and inject another output;
//! - annotations (`::error`/`::warning`) escape their message and properties;
//! - untrusted text (names from the config or a results file, failure
//!   reasons) is printed between `::stop-commands::TOKEN` and `::TOKEN::`, a
//!   random token, so nothing in it is taken as a workflow command, and
//!   disarmed as well ([`disarm`], the CLI's fence, which the action always
//!   applies: it always runs for a runner).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use rand::Rng as _;

use crate::report::escape::disarm;

/// `ghadelimiter_` and 32 random hex digits (what `@actions/core` uses, with a UUID).
pub fn random_token(prefix: &str) -> String {
    let mut rng = rand::thread_rng();
    let mut s = String::from(prefix);
    for _ in 0..2 {
        let _ = write!(s, "{:016x}", rng.gen::<u64>());
    }
    s
}

/// One `GITHUB_OUTPUT` entry: `name<<DELIM\nvalue\nDELIM\n`. Fails (never
/// writes an ambiguous entry) if the name is odd or the value holds the delimiter.
pub fn output_entry(name: &str, value: &str, delimiter: &str) -> anyhow::Result<String> {
    anyhow::ensure!(
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "output name {name:?} is not a plain name"
    );
    anyhow::ensure!(
        !value.contains(delimiter),
        "the value of output `{name}` contains its delimiter"
    );
    Ok(format!("{name}<<{delimiter}\n{value}\n{delimiter}\n"))
}

/// Appends `outputs` to the `GITHUB_OUTPUT` file, each with its own random delimiter.
pub fn write_outputs(path: &Path, outputs: &[(&str, String)]) -> anyhow::Result<()> {
    let mut text = String::new();
    for (name, value) in outputs {
        text.push_str(&output_entry(name, value, &random_token("ghadelimiter_"))?);
    }
    crate::files::append(path, &text)
        .with_context(|| format!("writing the outputs to GITHUB_OUTPUT={}", path.display()))
}

pub use crate::report::escape::{annotation, escape_data, escape_property, Level};

/// `text` wrapped so the runner executes no command inside it, and
/// disarmed, so that none would run were the fence ever left open.
pub fn untrusted_block(text: &str) -> String {
    let token = random_token("benchgate-");
    let mut out = format!("::stop-commands::{token}\n{}", disarm(text));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "::{token}::");
    out
}

/// Replaces every occurrence of `secret` in `text` by `***` (a last line of
/// defence for error messages from lower layers).
pub fn scrub(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if !s.is_empty() => text.replace(s, "***"),
        _ => text.to_string(),
    }
}

/// The action's error `text` (which may hold untrusted input: a results
/// file's keys, a setup log's tail, a server's output) as log lines, through
/// the one print path for untrusted text ([`crate::report::untrusted`]): its
/// later lines quoted, every control character but the line feed shown
/// escaped (a carriage return, which ends a line for the runner too,
/// included), so that no line is a workflow command (`::set-output`,
/// `::add-mask::` and the rest are recognised only at the start of a line, on
/// stdout and stderr alike) and none can close a `::stop-commands::` fence;
/// the runner's legacy form, `##[add-mask]x`, a command anywhere in a line,
/// is [`disarm`]ed (`## [add-mask]x`), in and out of a GitHub Actions log.
pub fn error_lines(text: &str) -> String {
    let quoted = crate::report::untrusted::quoted(&format!("benchgate: error: {text}"));
    format!("{}\n", disarm(&quoted))
}

/// Prints a workflow command line to stdout, flushed before anything else
/// (child processes write to the same log).
pub fn command(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_never_starts_a_line() {
        let hostile =
            "bad key\n::set-output name=verdict::pass\r::add-mask::x\n  ::error::y ##[add-mask]z";
        let text = error_lines(hostile);
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.starts_with("benchgate: error: bad key\n"), "{text}");
        for line in text.lines().skip(1) {
            assert!(line.starts_with("    | "), "{line:?}");
        }
        assert!(text.contains("\\r::add-mask::x"), "{text}");
        assert!(!text.contains("##["), "{text}");
        assert!(text.contains("## [add-mask]z"), "{text}");
    }

    #[test]
    fn outputs_use_random_delimiters_that_values_cannot_forge() {
        let a = random_token("ghadelimiter_");
        let b = random_token("ghadelimiter_");
        assert_ne!(a, b);
        assert_eq!(a.len(), "ghadelimiter_".len() + 32);
        let e = output_entry("verdict", "pass\nregressions<<EOF\n9\nEOF", &a).unwrap();
        assert_eq!(
            e,
            format!("verdict<<{a}\npass\nregressions<<EOF\n9\nEOF\n{a}\n")
        );
        assert!(output_entry("verdict", &format!("x\n{a}\ny"), &a).is_err());
        assert!(output_entry("bad name", "x", &a).is_err());
    }

    #[test]
    fn outputs_append_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, "earlier=1\n").unwrap();
        write_outputs(
            &path,
            &[("verdict", "pass".into()), ("regressions", "0".into())],
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("earlier=1\nverdict<<ghadelimiter_"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 7);
    }

    #[test]
    fn annotations_escape_message_and_properties() {
        let a = annotation(
            Level::Error,
            "get, p99: 50%",
            "up 50%\r\n::set-output name=x::y",
        );
        // A CR before the LF goes with it (issue 53, point 5).
        assert_eq!(
            a,
            "::error title=get%2C p99%3A 50%25::up 50%25%0A::set-output name=x::y"
        );
        assert_eq!(a.lines().count(), 1);
        // Every other control is shown escaped: a log viewer that renders
        // escape sequences gets none (ESC, OSC 8, a bare CR, BEL, C1, bidi).
        let a = annotation(
            Level::Warning,
            "t\x1b]0;x\x07",
            "a\x1b[2J \x1b]8;;http://e\x1b\\l\x1b]8;;\x1b\\ x\ry \u{9b}1m \u{202e}z",
        );
        assert_eq!(
            a,
            "::warning title=t\\u{1b}]0;x\\u{7}::a\\u{1b}[2J \\u{1b}]8;;http://e\\u{1b}\\l\\u{1b}]8;;\\u{1b}\\ x\\ry \\u{9b}1m \\u{202e}z"
        );
    }

    #[test]
    fn untrusted_text_is_fenced_by_a_random_token() {
        let b = untrusted_block("::error::evil\n::endgroup::");
        let lines: Vec<&str> = b.lines().collect();
        let token = lines[0].strip_prefix("::stop-commands::").unwrap();
        assert!(token.starts_with("benchgate-") && token.len() > 30);
        assert_eq!(lines.last().unwrap(), &format!("::{token}::"));
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn scrub_hides_the_secret() {
        assert_eq!(scrub("auth ghs_x failed", Some("ghs_x")), "auth *** failed");
        assert_eq!(scrub("x", None), "x");
    }
}
