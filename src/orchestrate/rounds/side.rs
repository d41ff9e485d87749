//! A side of an interleaved round ([`super::pair`]): a built-in client's
//! fork ([`trial::Started`]) or a command client's ([`command::Started`]),
//! asked for the same steps. Each keeps its own failure for its `finish`.

use std::path::Path;

use crate::config::ClientKind;
use crate::metric::TrialMetrics;
use crate::orchestrate::driver::TrialSpec;
use crate::orchestrate::target::Target;
use crate::orchestrate::trial::{self, Latencies};
use crate::orchestrate::{command, trial_loop::Loop};
use crate::results::Trial;

/// Boxed: a started fork is large, and two per round are alive.
pub(super) enum Side<'a> {
    Driver(Box<trial::Started<'a>>),
    Program(Box<command::Started<'a>>),
}

impl<'a> Side<'a> {
    /// Starts the fork of `spec`'s client, its files in `scratch`.
    pub(super) fn spawn(
        exe: &Path,
        spec: &'a TrialSpec,
        target: &'a Target<'a>,
        cpus: &[usize],
        scratch: &Path,
        log: &'a Path,
    ) -> anyhow::Result<Side<'a>> {
        Ok(match &spec.client.kind {
            ClientKind::Command(cmd) => Side::Program(Box::new(command::Started::spawn(
                cmd, spec, target, cpus, scratch, log,
            )?)),
            _ => Side::Driver(Box::new(trial::Started::spawn(
                exe, spec, target, cpus, scratch, log,
            )?)),
        })
    }

    /// Another fork runs beside this one: the reference server's figures
    /// are no longer its alone.
    pub(super) fn beside_another(&mut self) {
        match self {
            Side::Driver(s) => s.beside_another(),
            Side::Program(s) => s.beside_another(),
        }
    }

    /// Waits for its READY (a command client's declaration of the loop first).
    pub(super) fn ready(&mut self) -> bool {
        match self {
            Side::Driver(s) => s.step(Loop::ready),
            Side::Program(s) => s.ready_beside(),
        }
    }

    /// Pauses it and stops its group.
    pub(super) fn freeze(&mut self) -> bool {
        match self {
            Side::Driver(s) => s.step(|l| l.fork().freeze()),
            Side::Program(s) => s.step(|l| l.freeze()),
        }
    }

    /// Continues its group and resumes it.
    pub(super) fn thaw(&mut self) -> bool {
        match self {
            Side::Driver(s) => s.step(|l| l.fork().thaw()),
            Side::Program(s) => s.step(|l| l.thaw()),
        }
    }

    /// Measures its next window, `peer`'s group CPU read at its edges.
    pub(super) fn window(&mut self, target: &Target, peer: Option<u32>) -> bool {
        match self {
            Side::Driver(s) => s.step(|l| l.window(target, peer)),
            Side::Program(s) => s.step(|l| l.window(peer)),
        }
    }

    /// Its fork's process group, while its loop is alive.
    pub(super) fn pgid(&self) -> Option<u32> {
        match self {
            Side::Driver(s) => s.pgid(),
            Side::Program(s) => s.pgid(),
        }
    }

    /// Windows its fork is to measure.
    pub(super) fn planned_windows(&self) -> u32 {
        match self {
            Side::Driver(s) => s.planned_windows(),
            Side::Program(s) => s.planned_windows(),
        }
    }

    /// Ends its fork and turns what it measured into its trial's figures.
    pub(super) fn finish(self, trial: &mut Trial) -> anyhow::Result<(TrialMetrics, Latencies)> {
        match self {
            Side::Driver(s) => s.finish(trial),
            Side::Program(s) => s.finish(trial),
        }
    }
}
