//! The reference server as a child process (`benchgate serve`), pinned to its
//! own cores, and the parent's calls to its control endpoints.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context as _};

use crate::metrics::resources::pin_command;
use crate::server::ServerCounters;

/// A running reference server process. Dropping it stops the server.
pub struct ServerProcess {
    child: Child,
    /// Held open: the server exits when it reaches EOF (so it dies with us).
    _stdin: Option<ChildStdin>,
    pub http_url: String,
    pub https_url: Option<String>,
    control: reqwest::blocking::Client,
}

impl ServerProcess {
    /// Starts `exe serve` on an ephemeral loopback port, pinned to `cpus` (if any).
    pub fn start(exe: &std::path::Path, cpus: &[usize]) -> anyhow::Result<ServerProcess> {
        let mut cmd = Command::new(exe);
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
        let second = next()?;
        let https_url = second.starts_with("https://").then_some(second);
        let control = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(10))
            .no_proxy()
            .build()?;
        Ok(ServerProcess {
            _stdin: child.stdin.take(),
            child,
            http_url,
            https_url,
            control,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn call(&self, method: reqwest::Method, path: &str) -> anyhow::Result<ServerCounters> {
        let url = format!("{}{path}", self.http_url);
        let resp = self
            .control
            .request(method, &url)
            .send()
            .with_context(|| format!("calling the reference server's control endpoint {path}"))?;
        if !resp.status().is_success() {
            bail!("control endpoint {path} answered {}", resp.status());
        }
        let body = resp.bytes().with_context(|| format!("reading control endpoint {path}"))?;
        serde_json::from_slice(&body)
            .with_context(|| format!("control endpoint {path} answered something other than counters"))
    }

    pub fn window_start(&self) -> anyhow::Result<ServerCounters> {
        self.call(reqwest::Method::POST, "/__benchgate/window/start")
    }

    pub fn window_stop(&self) -> anyhow::Result<ServerCounters> {
        self.call(reqwest::Method::POST, "/__benchgate/window/stop")
    }

    pub fn counters(&self) -> anyhow::Result<ServerCounters> {
        self.call(reqwest::Method::GET, "/__benchgate/counters")
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
