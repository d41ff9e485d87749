//! A driver process that failed, told in one line.
//!
//! The driver's output (a panic's message, location and backtrace, or its
//! error; of a flood, its head and tail: [`super::capture`]) is kept in a
//! per-trial log file; the trial's failure, which the
//! progress line, the results file and the reports show, is one line: what
//! happened (`the driver panicked: MESSAGE`, `was killed by signal …`, `exited
//! with status …: ERROR`) and where the full output is.

use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use super::capture::Output;

/// Longest message (characters) quoted from the driver's output.
const MAX_MESSAGE_CHARS: usize = 240;
/// Longest part of a log file name taken from one scenario, client or server name.
const MAX_NAME_CHARS: usize = 60;

/// What went wrong, from the exit status and the output: one line without
/// the log path.
pub fn describe(status: ExitStatus, output: &str) -> String {
    if let Some(message) = panic_message(output) {
        return format!("the driver panicked: {message}");
    }
    if let Some(signal) = status.signal() {
        return format!(
            "the driver was killed by signal {signal} ({})",
            signal_name(signal)
        );
    }
    let code = status
        .code()
        .map_or_else(|| status.to_string(), |c| c.to_string());
    match last_error(output) {
        Some(error) => format!("the driver exited with status {code}: {error}"),
        None => format!("the driver exited with status {code} and printed nothing"),
    }
}

/// The message of the first panic in `output` (Rust's `thread '…' panicked
/// at FILE:LINE:COL:` then the message), without location or backtrace, on
/// one line.
pub fn panic_message(output: &str) -> Option<String> {
    let mut lines = output.lines();
    lines.find(|l| l.starts_with("thread '") && l.contains(" panicked at "))?;
    let message: Vec<&str> = lines
        .take_while(|l| {
            !(l.starts_with("note: ")
                || l.starts_with("stack backtrace:")
                || l.starts_with("thread '"))
        })
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if message.is_empty() {
        return Some("(no message)".into());
    }
    Some(one_line(&message.join(" ")))
}

/// The driver's own error (`benchgate: error: …`), or its last line.
fn last_error(output: &str) -> Option<String> {
    let lines = || output.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .rev()
        .find_map(|l| l.strip_prefix("benchgate: error: "))
        .or_else(|| lines().next_back())
        .map(one_line)
}

/// Control characters out, long messages cut.
fn one_line(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let clean = clean.trim();
    if clean.chars().count() <= MAX_MESSAGE_CHARS {
        return clean.to_string();
    }
    let cut: String = clean.chars().take(MAX_MESSAGE_CHARS).collect();
    format!("{cut}…")
}

fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGKILL => "SIGKILL, e.g. out of memory".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGTERM => "SIGTERM".into(),
        other => format!("signal {other}"),
    }
}

/// Where the run keeps the full output of failed trials: `<stem>-logs/<run id>/`
/// next to the results file.
pub fn log_dir(results: &Path, run_id: &str) -> PathBuf {
    let stem = results
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("benchgate-results");
    let parent = results.parent().unwrap_or(Path::new(""));
    parent.join(format!("{stem}-logs")).join(run_id)
}

/// A fresh log file name in `dir` for one trial (names made file-safe; a
/// number added if two trials would share one).
pub fn log_path(
    dir: &Path,
    scenario: &str,
    client: &str,
    server: Option<&str>,
    round: u32,
) -> PathBuf {
    let mut stem = format!("{}--{}", safe(scenario), safe(client));
    if let Some(server) = server {
        stem = format!("{stem}--{}", safe(server));
    }
    stem = format!("{stem}--round-{round}");
    let mut path = dir.join(format!("{stem}.log"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.log"));
        n += 1;
    }
    path
}

fn safe(name: &str) -> String {
    let s: String = name
        .chars()
        .take(MAX_NAME_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match s.trim_start_matches('.') {
        "" => "_".into(),
        t => t.to_string(),
    }
}

/// Keeps the driver's output in `log` and returns the one-line failure.
pub fn report(status: ExitStatus, output: &Output, log: &Path) -> String {
    let text = output.text();
    format!("{} {}", describe(status, &text), keep(&text, log))
}

/// Writes a failed trial's output (what its capture kept, [`Output::text`])
/// to `log`; says where it is, in parentheses.
pub fn keep(output: &str, log: &Path) -> String {
    let kept = log
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(log, output));
    match kept {
        Ok(_) => format!("(full output: {})", log.display()),
        Err(e) => format!(
            "(its full output could not be kept in {}: {e})",
            log.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    const PANIC: &str = "\
thread 'main' (4242) panicked at /root/.cargo/registry/src/x/hyper-rustls-0.27.10/src/connector/builder.rs:61:9:
ALPN protocols should not be pre-defined
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/abc/library/std/src/panicking.rs:689:5
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
";

    #[test]
    fn a_panic_is_its_message_only() {
        assert_eq!(
            describe(exited(101), PANIC),
            "the driver panicked: ALPN protocols should not be pre-defined"
        );
        let plain = "some log line\nthread 'tokio-runtime-worker' panicked at src/a.rs:1:2:\nfirst\nsecond\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(panic_message(plain).unwrap(), "first second");
        assert_eq!(
            panic_message("thread 'main' panicked at src/a.rs:1:2:\n").unwrap(),
            "(no message)"
        );
        assert_eq!(panic_message("benchgate: error: no\n"), None);
    }

    #[test]
    fn other_exits_name_the_signal_or_the_error() {
        assert_eq!(
            describe(ExitStatus::from_raw(libc::SIGABRT), "half a line"),
            "the driver was killed by signal 6 (SIGABRT)"
        );
        assert_eq!(
            describe(
                exited(2),
                "warming up\nbenchgate: error: invalid target URL x: bad\n"
            ),
            "the driver exited with status 2: invalid target URL x: bad"
        );
        assert_eq!(
            describe(exited(3), "\nlast words\n\n"),
            "the driver exited with status 3: last words"
        );
        assert_eq!(
            describe(exited(1), ""),
            "the driver exited with status 1 and printed nothing"
        );
    }

    #[test]
    fn messages_are_one_bounded_line() {
        let long = format!(
            "thread 'main' panicked at a.rs:1:1:\n{}\u{1b}[0m\n",
            "x".repeat(500)
        );
        let m = panic_message(&long).unwrap();
        assert!(!m.chars().any(char::is_control), "{m:?}");
        assert_eq!(m.chars().count(), MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn log_files_are_named_safely_next_to_the_results() {
        let dir = log_dir(Path::new("out/results.json"), "RUN");
        assert_eq!(dir, Path::new("out/results-logs/RUN"));
        assert_eq!(log_dir(Path::new("r.json"), "RUN"), Path::new("r-logs/RUN"));
        let tmp = tempfile::tempdir().unwrap();
        let p = log_path(tmp.path(), "get 22b", "../evil/x", Some("srv"), 3);
        assert_eq!(p.file_name().unwrap(), "get_22b--_evil_x--srv--round-3.log");
        std::fs::write(&p, "").unwrap();
        let again = log_path(tmp.path(), "get 22b", "../evil/x", Some("srv"), 3);
        assert_eq!(
            again.file_name().unwrap(),
            "get_22b--_evil_x--srv--round-3-2.log"
        );
    }

    #[test]
    fn report_keeps_the_whole_output() {
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("logs/RUN/get--c--round-1.log");
        let line = report(exited(101), &Output::of(PANIC.as_bytes()), &log);
        assert_eq!(
            line,
            format!(
                "the driver panicked: ALPN protocols should not be pre-defined (full output: {})",
                log.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&log).unwrap(), PANIC);
    }
}
