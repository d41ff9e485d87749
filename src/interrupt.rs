//! SIGINT and SIGTERM during a run: stop the load, keep what was measured.
//!
//! GitHub cancels a job by sending SIGINT, then SIGTERM, then SIGKILL about
//! ten seconds later; a container's PID 1 (the action's entrypoint) ignores
//! every signal it has no handler for. While [`super::run`] runs, a
//! [`Handler`] records the first of these signals instead of dying: the run
//! loop and the trial watchers poll [`received`], kill the running trial's
//! process (the driver, or a command client's whole process group), record
//! that trial as failed ("interrupted by SIGTERM"), start no further trial and
//! write the results file marked `interrupted`. The caller then exits with
//! [`Signal::exit_code`] (130 for SIGINT, 143 for SIGTERM).
//!
//! `benchgate action` installs a [`Handler`] from its start to its exit (the
//! run's own one nests inside it), so that a signal during the baseline
//! lookup, the store or the comment is not ignored either: the GitHub client
//! polls [`received`] while it waits and abandons the request in flight, and
//! the step ends with the same exit codes (`crate::action`'s `cancel`).
//!
//! The flag is never cleared: a process that received one of these signals is
//! on its way out. Child processes start with the default dispositions again
//! (exec resets handled signals).
//!
//! A closed stdout or stderr stops benchgate the same way (issue 54, point
//! 4): `benchgate run … 2>&1 | head -2` leaves no reader. Rust ignores
//! SIGPIPE (a write to a child's closed stdin, or to a peer that hung up, is
//! an error to handle, not a death), so the standard print macros panic on
//! the EPIPE instead (exit 101). benchgate prints with [`crate::stdoutln!`] and
//! [`crate::stderrln!`] (and [`crate::stdout!`], [`crate::stderr!`]) instead, which on a closed
//! pipe point that stream at `/dev/null` (nothing more is printed, and
//! nothing panics) and record [`Signal::Pipe`] as if SIGPIPE had arrived: the
//! run stops as for SIGINT, keeping what was measured, and benchgate exits
//! with 141 (128 + SIGPIPE, the shell's code for a writer whose reader went
//! away), printing nothing more.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// How a trial that SIGINT/SIGTERM cut short records its failure:
/// `interrupted by SIGTERM`. Such a trial measured nothing, and it says
/// nothing about the client either ([`crate::results::Trial::interrupted`]).
pub const INTERRUPTED_PREFIX: &str = "interrupted by ";

/// The first SIGINT/SIGTERM received while a [`Handler`] was installed (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// A signal that stops a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C, or the first step of GitHub's cancellation.
    Interrupt,
    /// SIGTERM: `docker stop`, GitHub's second step.
    Terminate,
    /// SIGPIPE's meaning, without the signal (benchgate ignores it): the
    /// reader of benchgate's stdout or stderr closed it ([`crate::stdoutln!`]).
    Pipe,
}

impl Signal {
    fn from_raw(signal: i32) -> Option<Signal> {
        match signal {
            libc::SIGINT => Some(Signal::Interrupt),
            libc::SIGTERM => Some(Signal::Terminate),
            libc::SIGPIPE => Some(Signal::Pipe),
            _ => None,
        }
    }

    /// The signal's number.
    pub fn raw(self) -> i32 {
        match self {
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
            Signal::Pipe => libc::SIGPIPE,
        }
    }

    /// `SIGINT` or `SIGTERM`, as recorded in the results file.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::Pipe => "SIGPIPE",
        }
    }

    /// The shell's convention for a process stopped by the signal: 128 + its number.
    pub fn exit_code(self) -> u8 {
        (128 + self.raw()) as u8
    }

    /// Why the trial this signal cut short failed.
    pub fn reason(self) -> String {
        format!("{}{}", INTERRUPTED_PREFIX, self.name())
    }
}

/// The signal received, if any.
pub fn received() -> Option<Signal> {
    Signal::from_raw(RECEIVED.load(Ordering::SeqCst))
}

/// How many [`Handler`]s are alive; while none is, the signals act as by default.
static ARMED: AtomicUsize = AtomicUsize::new(0);

/// What SIGINT and SIGTERM do: atomics and emulate_default_handler only
/// (async-signal-safe).
fn action(signal: i32) {
    if ARMED.load(Ordering::SeqCst) == 0 {
        let _ = signal_hook::low_level::emulate_default_handler(signal);
    } else {
        record(signal);
    }
}

/// Records `signal` unless one came before it (the first wins):
/// async-signal-safe.
fn record(signal: i32) {
    let _ = RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

/// SIGINT and SIGTERM recorded instead of fatal, until dropped.
pub struct Handler(());

impl Handler {
    /// Arms the recording; [`action`] is registered with signal-hook once per
    /// process (SA_RESTART: blocking calls resume; the watchers poll the flag).
    pub fn install() -> std::io::Result<Handler> {
        static FAILED: OnceLock<Option<std::io::ErrorKind>> = OnceLock::new();
        let failed = FAILED.get_or_init(|| {
            [libc::SIGINT, libc::SIGTERM]
                .into_iter()
                .find_map(|signal| {
                    // SAFETY: the action is async-signal-safe.
                    unsafe { signal_hook::low_level::register(signal, move || action(signal)) }
                        .err()
                        .map(|e| e.kind())
                })
        });
        if let Some(kind) = failed {
            return Err((*kind).into());
        }
        ARMED.fetch_add(1, Ordering::SeqCst);
        Ok(Handler(()))
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        ARMED.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Which standard stream a print goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Writes `args` to `stream` as the standard print macros do, but never
/// panics: a closed pipe there (EPIPE) points the stream at `/dev/null` and
/// stops benchgate as a signal would ([`Signal::Pipe`], module docs); any
/// other error is ignored, as there is nowhere left to say it. What
/// [`crate::stdoutln!`] and the other print macros call.
pub fn write(stream: Stream, args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let written = match stream {
        Stream::Stdout => std::io::stdout().lock().write_fmt(args),
        Stream::Stderr => std::io::stderr().lock().write_fmt(args),
    };
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            pipe_closed(stream);
        }
    }
}

/// The reader of `stream` went away: later writes to it go to `/dev/null`,
/// and [`received`] says [`Signal::Pipe`] from now on (unless a signal came
/// first).
fn pipe_closed(stream: Stream) {
    let fd = match stream {
        Stream::Stdout => libc::STDOUT_FILENO,
        Stream::Stderr => libc::STDERR_FILENO,
    };
    // SAFETY: open(2) of a constant path, dup2(2) onto a standard stream
    // this process owns, close(2) of the descriptor just opened.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, fd);
            libc::close(null);
        }
    }
    record(libc::SIGPIPE);
}

/// `println!` that never panics ([`write`]): a closed stdout stops benchgate
/// quietly.
#[macro_export]
macro_rules! stdoutln {
    () => {
        $crate::interrupt::write($crate::interrupt::Stream::Stdout, format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::interrupt::write(
            $crate::interrupt::Stream::Stdout,
            format_args!("{}\n", format_args!($($arg)*)),
        )
    };
}

/// `print!` that never panics ([`write`]).
#[macro_export]
macro_rules! stdout {
    ($($arg:tt)*) => {
        $crate::interrupt::write($crate::interrupt::Stream::Stdout, format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics ([`write`]): a closed stderr stops
/// benchgate quietly.
#[macro_export]
macro_rules! stderrln {
    () => {
        $crate::interrupt::write($crate::interrupt::Stream::Stderr, format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::interrupt::write(
            $crate::interrupt::Stream::Stderr,
            format_args!("{}\n", format_args!($($arg)*)),
        )
    };
}

/// `eprint!` that never panics ([`write`]).
#[macro_export]
macro_rules! stderr {
    ($($arg:tt)*) => {
        $crate::interrupt::write($crate::interrupt::Stream::Stderr, format_args!($($arg)*))
    };
}

/// Makes a child that runs in its own process group (a command client, a
/// server under test) die with SIGKILL when the thread that started it dies,
/// whatever killed benchgate: a SIGKILL to benchgate's own process group (act
/// cancels a step that way, and so does a runner whose signals were ignored)
/// never reaches a child in another group, which would otherwise run on for
/// the rest of its trial. The mark survives `exec`, so a wrapper that execs
/// its program (`sh run.sh` -> `exec java`) passes it on; what the child forks
/// later is stopped with its group by an orderly run.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: prctl(2) only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_exit_codes_follow_the_shell() {
        assert_eq!(Signal::Interrupt.exit_code(), 130);
        assert_eq!(Signal::Terminate.exit_code(), 143);
        assert_eq!(Signal::Terminate.reason(), "interrupted by SIGTERM");
        assert_eq!(Signal::from_raw(libc::SIGINT), Some(Signal::Interrupt));
        assert_eq!(Signal::from_raw(libc::SIGHUP), None);
        assert_eq!(Signal::Pipe.exit_code(), 141);
        assert_eq!(Signal::from_raw(libc::SIGPIPE), Some(Signal::Pipe));
    }
}
