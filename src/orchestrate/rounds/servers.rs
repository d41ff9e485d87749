//! The rounds of one scenario against the servers under test (`[[server]]`):
//! each started fresh for every round, the servers' order alternating by
//! round.

use anyhow::{bail, Context as _};

use super::cell::CellAcc;
use super::{planned, Rounds};
use crate::config::{Scenario, ServerSpec, ServerTarget};
use crate::interrupt;
use crate::orchestrate::budget::Spend;
use crate::orchestrate::progress::Progress;
use crate::orchestrate::sut::{probe_http, SutProcess};
use crate::orchestrate::target::Target;
use crate::report::untrusted::for_log;
use crate::results::CellResult;

impl Rounds<'_> {
    /// One scenario against every server under test: one cell per (server,
    /// client), servers in config order.
    pub fn servers(
        &self,
        scenario: &Scenario,
        progress: &mut Progress,
        mut spend: Option<&mut Spend>,
    ) -> Vec<CellResult> {
        let servers = &self.suite.servers;
        let mut cells: Vec<Vec<CellAcc>> = servers
            .iter()
            .map(|s| {
                scenario
                    .clients
                    .iter()
                    .map(|c| CellAcc::new(&scenario.name, c, Some(&s.name)))
                    .collect()
            })
            .collect();
        let mut round = 0;
        'rounds: loop {
            round += 1;
            let mut order: Vec<usize> = (0..servers.len()).collect();
            if round % 2 == 0 {
                order.reverse();
            }
            for i in order {
                self.server_round(scenario, i, &mut cells[i], round, progress);
                if interrupt::received().is_some() {
                    break 'rounds;
                }
            }
            if !self.another_round(
                round,
                cells.iter().flatten(),
                progress,
                spend.as_deref_mut(),
            ) {
                break;
            }
        }
        cells.into_iter().flatten().map(CellAcc::finish).collect()
    }

    /// One round on server `index`: start it (command), run every client's
    /// trial, stop it. A server that cannot start fails this round's trials.
    fn server_round(
        &self,
        scenario: &Scenario,
        index: usize,
        cells: &mut [CellAcc],
        round: u32,
        progress: &mut Progress,
    ) {
        let spec = &self.suite.servers[index];
        let started = match self.start_server(spec, index) {
            Ok(s) => s,
            Err(e) => {
                let reason = format!("{e:#}");
                for cell in cells.iter_mut() {
                    progress.start(&scenario.name, &cell.label(), round);
                    progress.finish_trial(None, Some(&reason));
                    cell.fail(planned(scenario, round), reason.clone());
                }
                return;
            }
        };
        let (mut process, url) = match started {
            Started::Process(p) => {
                let url = p.url.clone();
                (Some(p), url)
            }
            Started::Url(url) => (None, url),
        };
        let target = Target {
            name: Some(&spec.name),
            http_url: url,
            https_url: None,
            reference: None,
            watch: process.as_ref().map(SutProcess::watch),
        };
        // A server that dies mid-run fails the trial it died in, and the
        // round's later trials, with its exit status and output (its clients
        // would otherwise just count connection errors).
        let mut gone = || process.as_mut().and_then(SutProcess::exited);
        for cell in cells.iter_mut() {
            self.run_one(scenario, cell, &target, round, progress, &mut gone);
            // Servers under test are not run again: a starved trial keeps
            // its mark and stays out of the medians.
            cell.keep_round(round, 0);
            if interrupt::received().is_some() {
                break;
            }
        }
        if let Some(p) = process {
            if let Err(e) = p.stop() {
                if !self.quiet {
                    // It may quote the server's output.
                    crate::stderrln!("{}", for_log(&format!("benchgate: warning: {e}")));
                }
            }
        }
    }

    fn start_server(&self, spec: &ServerSpec, index: usize) -> anyhow::Result<Started> {
        if let Some(reason) = self.server_setup_failed.get(&spec.name) {
            bail!("the server's setup step failed: {reason}");
        }
        match &spec.target {
            ServerTarget::Command(cmd) => {
                let dir = self.scratch.join(format!("server-{index}"));
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                Ok(Started::Process(SutProcess::start(
                    &spec.name,
                    cmd,
                    &self.pinning.server_cpus,
                    &dir,
                )?))
            }
            ServerTarget::Url(url) => match probe_http(url) {
                Ok(()) => Ok(Started::Url(url.clone())),
                Err(e) => bail!(
                    "server {:?} at {url} does not answer HTTP: {e}",
                    spec.name.escape_debug().to_string()
                ),
            },
        }
    }
}

/// A server under test, ready for a round.
enum Started {
    Process(SutProcess),
    Url(String),
}
