//! The parent's side of the window loop (`window_loop`) for one fork: a
//! process started once and kept warm, whose windows the parent opens and
//! closes. The parent brackets the reference server's counting window and
//! reads the fork's process group CPU at each window's edges; the client
//! counts between the `OPEN` and `CLOSE` lines it reads and answers each
//! close with its window's record. Pause and resume freeze the fork between
//! its windows (its workers finish in flight, then SIGSTOP / SIGCONT of its
//! group). Any reply out of place, malformed, late or missing fails the fork
//! with the line quoted.

use std::io::{BufRead as _, Write as _};
use std::process::ChildStdin;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use super::server_proc::ServerProcess;
use super::target::{window_cpu, ServerWatch};
use super::window_loop::{parse_reply, Command, Reply, WindowRecord};
use crate::measure::resources::{sample_group, CpuTimes};

/// A running fork's pipes and group.
pub struct Fork {
    pub pgid: u32,
    stdin: Option<ChildStdin>,
    replies: Receiver<Result<Reply, String>>,
    /// How long a reply may take (the request timeout + 5 s).
    patience: Duration,
    /// The window loop's next window number.
    next: u32,
    frozen: bool,
}

/// What the parent measured of one window beside the client's record.
pub struct Bracket {
    pub record_json: String,
    pub window: u32,
    /// When the parent opened it: RFC 3339, UTC, microseconds.
    pub opened_at: String,
    /// Open to close at the parent, seconds.
    pub actual_s: f64,
    pub cpu: CpuTimes,
    pub server: Option<crate::server::ServerCounters>,
    pub server_cpu: Option<CpuTimes>,
    /// The frozen peer's group CPU over the window, when there is one.
    pub peer_cpu: Option<CpuTimes>,
}

impl Fork {
    /// Takes the child's pipes: replies are read from `stdout` on a thread.
    pub fn new(
        pgid: u32,
        stdin: ChildStdin,
        stdout: std::process::ChildStdout,
        patience: Duration,
    ) -> Fork {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(reply) = parse_reply(&line) {
                    if tx.send(reply).is_err() {
                        break;
                    }
                }
            }
        });
        Fork {
            pgid,
            stdin: Some(stdin),
            replies: rx,
            patience,
            next: 1,
            frozen: false,
        }
    }

    fn send(&mut self, c: Command) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("the fork's stdin is closed")?;
        writeln!(stdin, "{}", c.line())
            .and_then(|()| stdin.flush())
            .with_context(|| format!("writing {} to the fork", c.line()))
    }

    /// The next reply within `wait`: the fork fails when none comes, or the
    /// fork closed its stdout.
    fn reply(&self, wait: Duration, expected: &str) -> anyhow::Result<Reply> {
        match self.replies.recv_timeout(wait) {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => bail!("expected {expected}: {e}"),
            Err(RecvTimeoutError::Timeout) => {
                bail!("expected {expected} within {wait:?}, none came")
            }
            Err(RecvTimeoutError::Disconnected) => {
                bail!("expected {expected}, but the fork closed its stdout (it exited)")
            }
        }
    }

    /// Waits for the declaration and then READY (start-up and warmup within `wait`).
    pub fn ready(&mut self, wait: Duration) -> anyhow::Result<()> {
        let until = Instant::now() + wait;
        let left = || until.saturating_duration_since(Instant::now());
        match self.reply(left(), "BENCHGATE-WINDOWS-LOOP")? {
            Reply::Declare => {}
            other => bail!("expected BENCHGATE-WINDOWS-LOOP first, got {other:?}"),
        }
        match self.reply(left(), "BENCHGATE-READY")? {
            Reply::Ready => Ok(()),
            other => bail!("expected BENCHGATE-READY, got {other:?}"),
        }
    }

    /// Measures one window of `length`: opens the server's window, reads the
    /// group's CPU, tells the fork, waits, tells it to close, reads the CPU
    /// and the server's window, and takes the fork's record. `peer`: the
    /// process group of another fork, frozen meanwhile, whose CPU is read
    /// at the same edges (it must stay ~0).
    pub fn window(
        &mut self,
        length: Duration,
        server: Option<&ServerProcess>,
        watch: Option<ServerWatch>,
        peer: Option<u32>,
    ) -> anyhow::Result<Bracket> {
        let k = self.next;
        self.next += 1;
        let peer_open = peer.map(|p| sample_group(p).cpu);
        let cpu_open = sample_group(self.pgid).cpu;
        if let Some(s) = server {
            s.window_start()?;
        }
        let opened = Instant::now();
        let opened_at = super::now_rfc3339_micros();
        let server_cpu_open = watch.and_then(|w| w.cpu());
        self.send(Command::Open(k))?;
        std::thread::sleep(length.saturating_sub(opened.elapsed()));
        self.send(Command::Close(k))?;
        let closed = Instant::now();
        let cpu = sample_group(self.pgid).cpu.since(&cpu_open);
        let peer_cpu = peer
            .zip(peer_open)
            .map(|(p, o)| sample_group(p).cpu.since(&o));
        let server_cpu = window_cpu(server_cpu_open, watch.and_then(|w| w.cpu()));
        let counters = server.map(ServerProcess::window_stop).transpose()?;
        let expected = format!("the result of window {k}");
        match self.reply(self.patience, &expected)? {
            Reply::Result { window, json } if window == k => Ok(Bracket {
                record_json: json,
                window: k,
                opened_at,
                actual_s: closed.duration_since(opened).as_secs_f64(),
                cpu,
                server: counters,
                server_cpu,
                peer_cpu,
            }),
            other => bail!("expected {expected}, got {}", describe(&other)),
        }
    }

    /// Pauses the fork (it finishes what is in flight) and stops its group.
    pub fn freeze(&mut self) -> anyhow::Result<()> {
        self.send(Command::Pause)?;
        match self.reply(self.patience, "BENCHGATE-PAUSED")? {
            Reply::Paused => {}
            other => bail!("expected BENCHGATE-PAUSED, got {}", describe(&other)),
        }
        signal_group(self.pgid, libc::SIGSTOP);
        self.frozen = true;
        Ok(())
    }

    /// Continues a frozen fork's group and resumes its workers.
    pub fn thaw(&mut self) -> anyhow::Result<()> {
        if self.frozen {
            signal_group(self.pgid, libc::SIGCONT);
            self.frozen = false;
        }
        self.send(Command::Resume)
    }

    /// Tells the fork to exit and closes its stdin.
    pub fn exit(&mut self) {
        if self.frozen {
            signal_group(self.pgid, libc::SIGCONT);
            self.frozen = false;
        }
        let _ = self.send(Command::Exit);
        self.stdin = None;
    }
}

impl Drop for Fork {
    fn drop(&mut self) {
        if self.frozen {
            signal_group(self.pgid, libc::SIGCONT);
        }
    }
}

fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Result { window, .. } => format!("the result of window {window}"),
        other => format!("{other:?}"),
    }
}

/// Sends `signal` to process group `pgid`.
pub(super) fn signal_group(pgid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on the process group this run created for the fork.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), signal);
    }
}

/// The parent's figures of one window with the fork's own record, as the
/// per-window record the fork's value is summed from.
pub fn record(b: &Bracket, client: super::driver_loop::DriverWindow) -> WindowRecord {
    WindowRecord {
        window: b.window,
        opened_at: Some(b.opened_at.clone()),
        // The group's reading, beside the driver's own (the gated figure).
        group_cpu: Some(b.cpu),
        server: b.server.clone(),
        server_cpu: b.server_cpu,
        peer_cpu: b.peer_cpu,
        starvation: client.starvation,
        ..super::trial::outcome_record(client.outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt as _;
    use std::process::Stdio;

    /// A fork played by `sh -c script`, ready, its first window's answer
    /// the script's: the error the window ends with.
    fn first_window(script: &str) -> Result<String, String> {
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let mut fork = Fork::new(child.id(), stdin, stdout, Duration::from_secs(2));
        fork.ready(Duration::from_secs(5)).unwrap();
        let r = fork.window(Duration::from_millis(5), None, None, None);
        fork.exit();
        let _ = child.kill();
        let _ = child.wait();
        r.map(|b| b.record_json).map_err(|e| format!("{e:#}"))
    }

    fn first_window_err(script: &str) -> String {
        first_window(script).expect_err("the window fails")
    }

    const READY: &str = "echo BENCHGATE-WINDOWS-LOOP; echo BENCHGATE-READY; read open; read close;";

    #[test]
    fn a_malformed_or_missing_result_fails_the_fork_with_the_line_quoted() {
        let e = first_window_err(&format!(
            "{READY} echo 'BENCHGATE-WINDOW-RESULT {{\"window\": 1'"
        ));
        assert!(
            e.contains(r#""BENCHGATE-WINDOW-RESULT {\"window\": 1""#),
            "{e}"
        );
        let e = first_window_err(&format!(
            "{READY} echo 'BENCHGATE-WINDOW-RESULT {{\"window\": 2}}'"
        ));
        assert!(
            e.contains("expected the result of window 1, got the result of window 2"),
            "{e}"
        );
        let e = first_window_err(&format!("{READY} exit 0"));
        assert!(e.contains("closed its stdout"), "{e}");
        let e = first_window_err(&format!("{READY} sleep 5"));
        assert!(e.contains("none came"), "{e}");
        // The commands arrive as the protocol says.
        let ok = first_window(&format!(
            "{READY} [ \"$open\" = 'BENCHGATE-WINDOW-OPEN 1' ] && [ \"$close\" = 'BENCHGATE-WINDOW-CLOSE 1' ] && echo 'BENCHGATE-WINDOW-RESULT {{\"window\": 1, \"ok\": 7}}'"
        ));
        assert_eq!(ok.as_deref(), Ok(r#"{"window": 1, "ok": 7}"#));
    }
}
