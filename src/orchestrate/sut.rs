//! A server under test started from its `command` (`[[server]]`): on a free
//! loopback port benchgate picks (`{port}`, `BENCHGATE_SERVER_PORT`), in a fresh
//! process group, output captured to files, capped ([`super::capture`]; a
//! bounded tail is shown when it fails; a flood stops it while it is folded), ready when its probe answers, and stopped with SIGTERM to the group,
//! then SIGKILL after `stop_timeout`, without benchgate's credentials
//! ([`super::child_env`]). Nothing of the group outlives [`stop`]
//! (or the drop of a [`SutProcess`]).
//!
//! [`stop`]: SutProcess::stop

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use super::capture::{Capture, Sink};
use super::command::TAIL_BYTES;
use super::target::ServerWatch;
use crate::config::ServerCommand;
use crate::measure::resources::pin_command;

/// How often readiness is probed.
const PROBE_EVERY: Duration = Duration::from_millis(20);
/// Time limit of one probe (connect, send, first bytes of the answer).
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// A running server under test. Dropping it stops it.
pub struct SutProcess {
    name: String,
    child: Child,
    /// The process group (the leader's pid).
    pgid: u32,
    /// Finds the processes that left the group ([`super::escapees`]).
    tag: super::escapees::Tag,
    stop_timeout: Duration,
    /// `http://127.0.0.1:PORT`: where the clients send their requests.
    pub url: String,
    /// Its stdout and stderr.
    output: Capture<2>,
    stopped: bool,
}

/// A free loopback TCP port, as the kernel picks one (it stays free until the
/// server binds it, barring a race with another program).
pub fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(l.local_addr()?.port())
}

impl SutProcess {
    /// Starts the server named `name` pinned to `cpus` (if any), its output
    /// captured under `dir`, and waits until it is ready.
    pub fn start(
        name: &str,
        spec: &ServerCommand,
        cpus: &[usize],
        dir: &Path,
    ) -> anyhow::Result<SutProcess> {
        let port = free_port()?;
        let argv = spec.argv(port);
        let (out, stdout) = Sink::create(&dir.join("server.stdout"))?;
        let (err, stderr) = Sink::create(&dir.join("server.stderr"))?;
        let output = Capture::start([out, err])?;
        let tag = super::escapees::Tag::new();
        let mut cmd = Command::new(&argv[0]);
        super::child_env::scrub(&mut cmd, &spec.pass_env);
        cmd.args(&argv[1..])
            .current_dir(&spec.cwd)
            .envs(&spec.env)
            .env("BENCHGATE_SERVER_PORT", port.to_string())
            .env(tag.env().0, tag.env().1)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0);
        if !cpus.is_empty() {
            pin_command(&mut cmd, cpus);
        }
        // If benchgate itself dies (killed, crashed), the server goes with it;
        // an orderly run stops the whole group itself.
        crate::interrupt::die_with_parent(&mut cmd);
        let child = cmd.spawn().with_context(|| {
            format!(
                "starting server {:?}: {argv:?} in {}",
                name.escape_debug().to_string(),
                spec.cwd
            )
        })?;
        // Its output is bounded on disk while it runs, flood or not.
        output.pause_when_far_behind(child.id());
        let mut sut = SutProcess {
            name: name.to_string(),
            pgid: child.id(),
            child,
            tag,
            stop_timeout: spec.stop_timeout,
            url: format!("http://127.0.0.1:{port}"),
            output,
            stopped: false,
        };
        let probe = spec.ready_url(port);
        if let Err(e) = sut.wait_ready(probe.as_deref(), port, spec.ready_timeout) {
            sut.kill_now();
            bail!("{e:#}{}", sut.output_tail());
        }
        Ok(sut)
    }

    /// Its process group, for resource accounting.
    pub fn watch(&self) -> ServerWatch {
        ServerWatch::Group(self.pgid)
    }

    /// Whether the server's main process has exited since it became ready
    /// (a crash mid-run): the reason a trial against it fails, with its exit
    /// status and output; `None` while it runs.
    pub fn exited(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok()??;
        Some(format!(
            "server {:?} exited ({status}) while it was being measured{}",
            self.name.escape_debug().to_string(),
            self.output_tail()
        ))
    }

    /// The tails of its captured stdout and stderr, for failure messages.
    pub fn output_tail(&self) -> String {
        format!(
            "\nserver stdout tail:\n{}\nserver stderr tail:\n{}",
            self.output.snapshot(0).excerpt(TAIL_BYTES),
            self.output.snapshot(1).excerpt(TAIL_BYTES)
        )
    }

    /// Polls until the probe (or, without one, a TCP connect to the port)
    /// succeeds, the server exits, or `limit` passes.
    fn wait_ready(
        &mut self,
        probe: Option<&str>,
        port: u16,
        limit: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + limit;
        let what = match probe {
            Some(url) => format!("its readiness probe {url}"),
            None => format!("a TCP connect to 127.0.0.1:{port}"),
        };
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "server {:?} exited ({status}) before it was ready",
                    self.name.escape_debug().to_string()
                );
            }
            let result = match probe {
                Some(url) => probe_http(url),
                None => TcpStream::connect_timeout(
                    &SocketAddr::from(([127, 0, 0, 1], port)),
                    PROBE_TIMEOUT,
                )
                .map(drop)
                .map_err(|e| e.to_string()),
            };
            let last = match result {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if Instant::now() >= deadline {
                bail!(
                    "server {:?} was not ready within {limit:?} ({what}: {last})",
                    self.name.escape_debug().to_string()
                );
            }
            std::thread::sleep(PROBE_EVERY);
        }
    }

    /// SIGTERM to the process group, SIGKILL after `stop_timeout`; waits until
    /// the leader is reaped and no member of the group is left. Returns how it
    /// ended, for the log (`Err` when it had to be killed).
    pub fn stop(mut self) -> Result<(), String> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<(), String> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        // No SIGCONT after this may reach a group that took its number since.
        self.output.stop_pausing();
        signal_group(self.pgid, libc::SIGTERM);
        let deadline = Instant::now() + self.stop_timeout;
        while Instant::now() < deadline {
            super::escapees::reap_exited_adopted();
            let leader_gone = !matches!(self.child.try_wait(), Ok(None));
            if leader_gone && !group_alive(self.pgid) {
                self.tag.kill_tagged(); // what left the group goes with it
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill_now();
        Err(format!(
            "server {:?} did not stop within {:?} of SIGTERM; its process group was killed",
            self.name.escape_debug().to_string(),
            self.stop_timeout
        ))
    }

    /// SIGKILL to the whole group, then reap the leader and wait (briefly)
    /// for the other members to go.
    fn kill_now(&mut self) {
        self.stopped = true;
        self.output.stop_pausing();
        signal_group(self.pgid, libc::SIGKILL);
        self.tag.kill_tagged();
        let _ = self.child.wait();
        let deadline = Instant::now() + Duration::from_secs(2);
        while group_alive(self.pgid) && Instant::now() < deadline {
            signal_group(self.pgid, libc::SIGKILL);
            super::escapees::reap_exited_adopted();
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for SutProcess {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}

fn signal_group(pgid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on the process group created for this server.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), signal);
    }
}

/// Whether any process of the group is left (zombies included, until reaped).
fn group_alive(pgid: u32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::kill(-(pgid as libc::pid_t), 0) == 0 }
}

/// One readiness probe: `GET` the URL; any HTTP response counts as ready.
pub fn probe_http(url: &str) -> Result<(), String> {
    let rest = url.strip_prefix("http://").ok_or("not an http:// URL")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("the host has no address")?;
    let mut s = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(PROBE_TIMEOUT))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(PROBE_TIMEOUT))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut head = [0u8; 5];
    s.read_exact(&mut head)
        .map_err(|e| format!("no HTTP answer: {e}"))?;
    if &head == b"HTTP/" {
        Ok(())
    } else {
        Err("the answer is not HTTP".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(argv: &[&str], ready: Option<&str>, ready_ms: u64) -> ServerCommand {
        ServerCommand {
            command: argv.iter().map(|s| s.to_string()).collect(),
            setup: None,
            cwd: ".".into(),
            env: Default::default(),
            pass_env: Vec::new(),
            ready: ready.map(String::from),
            ready_timeout: Duration::from_millis(ready_ms),
            stop_timeout: Duration::from_millis(500),
        }
    }

    #[test]
    fn an_exiting_server_fails_with_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let s = spec(&["sh", "-c", "echo bad flag >&2; exit 3"], None, 5_000);
        let started = Instant::now();
        let e = SutProcess::start("x", &s, &[], dir.path())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("exited (exit status: 3) before it was ready"),
            "{e}"
        );
        assert!(e.contains("bad flag"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn a_server_that_never_listens_times_out_and_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        // Ignores SIGTERM: only the SIGKILL of the group ends it.
        let s = spec(
            &["sh", "-c", "trap '' TERM; echo starting; sleep 30"],
            Some("http://127.0.0.1:{port}/health"),
            300,
        );
        let e = SutProcess::start("never", &s, &[], dir.path())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("was not ready within 300ms"), "{e}");
        assert!(e.contains("/health"), "{e}");
        assert!(e.contains("starting"), "{e}");
    }

    #[test]
    fn a_listening_server_is_ready_and_stops() {
        let dir = tempfile::tempdir().unwrap();
        // The "server" is a `sleep`; the probe goes to a listener of this
        // test that answers once with a status line (any status is ready).
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let mut s = spec(&["sleep", "30"], None, 2_000);
        s.ready = Some(format!("http://127.0.0.1:{port}/"));
        // Answer one probe with an HTTP status line, after reading its request:
        // closing a socket with unread bytes sends a reset, which the probe may
        // see before the answer, and its retry would find no listener.
        let answer = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let _ = c.write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n");
        });
        let sut = SutProcess::start("ok", &s, &[], dir.path()).unwrap();
        answer.join().unwrap();
        let pgid = sut.pgid;
        assert!(group_alive(pgid));
        // `sleep` dies of SIGTERM at once.
        assert_eq!(sut.stop(), Ok(()));
        assert!(!group_alive(pgid));
    }
}
