//! The reference server as a child process (`benchgate serve`), pinned to its
//! own cores, and the parent's calls to its control endpoints.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context as _};

use super::control;
use crate::measure::resources::pin_command;
use crate::server::ServerCounters;

/// A running reference server process. Dropping it stops the server.
pub struct ServerProcess {
    child: Child,
    /// Held open: the server exits when it reaches EOF (so it dies with us).
    _stdin: Option<ChildStdin>,
    pub http_url: String,
    pub https_url: Option<String>,
    /// The uncounted control port, `http://IP:PORT`.
    pub control_url: String,
}

impl ServerProcess {
    /// Starts `exe serve` on an ephemeral loopback port, pinned to `cpus` (if any).
    pub fn start(exe: &std::path::Path, cpus: &[usize]) -> anyhow::Result<ServerProcess> {
        let mut cmd = Command::new(exe);
        super::child_env::scrub(&mut cmd, &[]);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--exit-on-stdin-eof"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if !cpus.is_empty() {
            pin_command(&mut cmd, cpus);
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting the reference server ({} serve)", exe.display()))?;
        let stdout = child.stdout.take().context("server stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let mut next = || -> anyhow::Result<String> {
            match lines.next() {
                Some(Ok(l)) => Ok(l.trim().to_string()),
                _ => bail!("the reference server exited before printing its address"),
            }
        };
        let http_url = next()?;
        if !http_url.starts_with("http://") {
            bail!("the reference server printed {http_url:?} instead of its http:// address");
        }
        let mut https_url = None;
        let control_url = loop {
            let line = next()?;
            if line.starts_with("https://") {
                https_url = Some(line);
            } else if let Some(url) = line.strip_prefix("control: ") {
                break url.to_string();
            }
        };
        Ok(ServerProcess {
            _stdin: child.stdin.take(),
            child,
            http_url,
            https_url,
            control_url,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn counters(&self) -> anyhow::Result<ServerCounters> {
        control::counters(&self.control_url)
    }

    pub fn window_start(&self) -> anyhow::Result<ServerCounters> {
        control::window_start(&self.control_url)
    }

    pub fn window_stop(&self) -> anyhow::Result<ServerCounters> {
        control::window_stop(&self.control_url)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
