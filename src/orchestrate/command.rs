//! External command clients (`kind = "command"`): any program, in any
//! language, run once per trial in a fresh process group.
//!
//! The program gets the workload in `BENCHGATE_*` variables
//! (docs/external-clients.md). benchgate does not trust it to exclude its
//! warmup: the parent watches the reference server for the program's first
//! request, opens the server's window `warmup` later and closes it `duration`
//! after that (or when the program exits, for a request-count stop). The
//! program's own result file, if it writes one, supplies counts and latency;
//! without one, throughput and status errors come from the server's window and
//! latency is absent ("n/a"), never invented. CPU, RSS and threads are those of
//! the whole process group (a shell wrapper and its JVM alike), from /proc;
//! its CPU in the window is read at the window's edges, or at the last sample
//! before the close when the program exits as it closes ([`super::window_cpu`]).
//! What the program does before its window (start-up, warmup) is reported
//! apart, as start-up metrics: the time from spawn to the first request the
//! server answered, and the group's CPU until the window opened. The
//! group's starvation counters (run delay, involuntary context switches, and
//! the host's steal) are read by the parent where it opens and closes the
//! window.
//! Its stdout and stderr are captured, capped ([`super::capture`]); stdout's
//! every line goes past the window markers' watch ([`super::markers`]). A
//! failed trial quotes their tails and keeps what was captured in a log file.
//! On SIGINT/SIGTERM ([`super::interrupt`]) the group is killed at once.
//! A program that declares the window loop (offered with a duration, not
//! to JMH) measures several windows in one process ([`super::command_loop`]).
//! The program and its setup run without benchgate's credentials, the Actions
//! runtime and the runner's file commands ([`super::child_env`]).

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use super::capture::{Capture, Sink};
use super::child::{Sampled, TrialProcess};
use super::child_env;
use super::command_loop::{self, Acks, Broken, Loop, Stop, STARTUP_ALLOWANCE};
use super::command_result::{fork_figures, read_result, Window};
use super::driver::TrialSpec;
use super::jmh;
use super::markers::{self, Mark, Markers, ACK_CLOSED, ACK_OPENED};
pub use super::markers::{MARK_CLOSE, MARK_OPEN};
use super::server_proc::ServerProcess;
use super::target::{window_cpu, with_server_figures, PeakWatch, ServerWatch, Target};
use super::trial::Latencies;
use super::window_cpu;
use super::window_loop::{OFFER, OFFER_VAR};
use crate::config::{CommandSpec, HttpVersion, Load, ResultFormat, StopRule};
use crate::interrupt;
use crate::measure::resources::{group_members, sample_group, CpuSample};
use crate::measure::schedstat::Edge;
use crate::measure::Counts;
use crate::metric::TrialMetrics;
use crate::results::Trial;
use crate::server::ServerCounters;

/// Bytes of a program's stdout/stderr shown when it fails.
pub const TAIL_BYTES: usize = 2048;
/// How long the trial waits for a window marker between its other checks.
const POLL_EVERY: Duration = Duration::from_millis(2);

/// Whether a trial offers the window loop: with several windows per fork
/// (`[run] windows`), a duration (a request count ends at the program's
/// exit), to a program that is not JMH.
fn loop_offered(cmd: &CommandSpec, spec: &TrialSpec) -> bool {
    spec.windows > 1
        && matches!(spec.scenario.stop, StopRule::Duration(_))
        && !matches!(cmd.result, ResultFormat::Jmh { .. })
}

/// The `BENCHGATE_*` environment of one trial; `offer`: the window loop
/// (`BENCHGATE_WINDOWS=loop`).
pub fn environment(spec: &TrialSpec, result_path: &Path, offer: bool) -> Vec<(String, String)> {
    let s = &spec.scenario;
    let ms = |d: Duration| d.as_millis().to_string();
    let (concurrency, rate) = match s.load {
        Load::Closed { concurrency } => (concurrency, 0.0),
        Load::Open {
            rate,
            max_in_flight,
        } => (max_in_flight, rate),
    };
    let (duration, requests) = match s.stop {
        StopRule::Duration(d) => (ms(d), "0".to_string()),
        StopRule::Requests(n) => ("0".to_string(), n.to_string()),
    };
    let base = spec.base_url.trim_end_matches('/');
    [
        ("BENCHGATE_URL", format!("{base}{}", s.path)),
        ("BENCHGATE_BASE_URL", base.to_string()),
        ("BENCHGATE_METHOD", s.method.as_str().to_string()),
        ("BENCHGATE_PATH", s.path.clone()),
        ("BENCHGATE_BODY_BYTES", s.body.to_string()),
        ("BENCHGATE_CONCURRENCY", concurrency.to_string()),
        ("BENCHGATE_RATE", rate.to_string()),
        ("BENCHGATE_WARMUP_MS", ms(s.warmup)),
        ("BENCHGATE_DURATION_MS", duration),
        ("BENCHGATE_REQUESTS", requests),
        ("BENCHGATE_TIMEOUT_MS", ms(s.timeout)),
        (
            "BENCHGATE_HTTP_VERSION",
            match spec.client.http {
                HttpVersion::Http1 => "1.1",
                HttpVersion::Http2 => "2",
            }
            .to_string(),
        ),
        (
            "BENCHGATE_TLS",
            if spec.client.tls { "1" } else { "0" }.to_string(),
        ),
        ("BENCHGATE_RESULT_PATH", result_path.display().to_string()),
        // The window markers are acknowledged on stdin (ACK_OPENED, ACK_CLOSED).
        ("BENCHGATE_WINDOW_ACK", "stdin".to_string()),
        ("BENCHGATE_SCENARIO", s.name.clone()),
        ("BENCHGATE_CLIENT", spec.client.name.clone()),
        ("BENCHGATE_ROUND", spec.round.to_string()),
    ]
    .into_iter()
    .chain(offer.then(|| (OFFER_VAR, OFFER.to_string())))
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Checks that `cmd`'s program can be started before any trial is: a path
/// (with a `/`) must be an executable file, relative to the client's `cwd`; a
/// bare name must be one in a directory of the `PATH` the program gets (its
/// `env`'s, else benchgate's), as the spawn looks it up.
pub fn find_program(cmd: &CommandSpec) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(program) = cmd.command.first() else {
        bail!("its command is empty");
    };
    let runnable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = Path::new(&cmd.cwd).join(program);
        if !runnable(&path) {
            bail!(
                "its program {program:?} is {} ({}): build it in the client's `setup`, or fix `command`",
                if path.exists() { "not an executable file" } else { "missing" },
                path.display()
            );
        }
        return Ok(());
    }
    let path = super::child_env::program_path(cmd.env.get("PATH").map(String::as_str));
    if !std::env::split_paths(&path).any(|dir| runnable(&dir.join(program))) {
        bail!(
            "its program {program:?} is in no directory of the PATH: install it, or give its path in `command`"
        );
    }
    Ok(())
}

/// How long a trial may run before its process group is killed: the
/// client's `timeout`, else a built-in driver's limit, and for a window
/// loop twice its further windows (an interleaved round's fork waits
/// frozen through its partner's).
fn time_limit(cmd: &CommandSpec, spec: &TrialSpec) -> Duration {
    cmd.timeout.unwrap_or_else(|| {
        let windows = match (loop_offered(cmd, spec), spec.scenario.stop) {
            (true, StopRule::Duration(d)) => d * 2 * (spec.windows - 1),
            _ => Duration::ZERO,
        };
        super::trial::trial_limit(spec) + windows
    })
}

fn kill_group(pgid: u32) {
    // SAFETY: kill(2) on the process group we created for this trial.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
    }
}

/// Kills a trial's process group, and the processes that left it
/// ([`super::escapees`]), when dropped, unless already killed.
struct GroupKiller(Option<(u32, super::escapees::Tag)>);

impl GroupKiller {
    fn kill_now(&mut self) {
        if let Some((pgid, tag)) = self.0.take() {
            kill_group(pgid);
            tag.kill_tagged();
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Where a setup step runs: a command client's or a server under test's
/// working directory, extra environment and passed-through variables.
pub struct SetupPlace<'a> {
    pub cwd: &'a str,
    pub env: &'a std::collections::BTreeMap<String, String>,
    pub pass_env: &'a [String],
}

impl<'a> From<&'a CommandSpec> for SetupPlace<'a> {
    fn from(c: &'a CommandSpec) -> SetupPlace<'a> {
        SetupPlace {
            cwd: &c.cwd,
            env: &c.env,
            pass_env: &c.pass_env,
        }
    }
}

impl<'a> From<&'a crate::config::ServerCommand> for SetupPlace<'a> {
    fn from(c: &'a crate::config::ServerCommand) -> SetupPlace<'a> {
        SetupPlace {
            cwd: &c.cwd,
            env: &c.env,
            pass_env: &c.pass_env,
        }
    }
}

/// Runs `argv` once (a client's or a server's setup step), output captured
/// to `log` ([`capture`]), in a process group of its own. What it leaves
/// running (a daemon the trials use) runs on until the run ends it
/// ([`super::escapees::RunEnd`]); a setup that fails is ended at once.
pub fn run_setup(
    argv: &[String],
    place: SetupPlace<'_>,
    log: &Path,
) -> anyhow::Result<super::escapees::Leftover> {
    let (sink, out) = Sink::create(log)?;
    let capture = Capture::start([sink])?;
    let tag = super::escapees::Tag::new();
    let mut command = Command::new(&argv[0]);
    child_env::scrub(&mut command, place.pass_env);
    command
        .args(&argv[1..])
        .current_dir(place.cwd)
        .envs(place.env)
        .env(tag.env().0, tag.env().1)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .process_group(0);
    crate::interrupt::die_with_parent(&mut command);
    let mut child = command
        .spawn()
        .with_context(|| format!("starting setup {:?} in {}", argv, place.cwd))?;
    let setup = super::escapees::Leftover::new(child.id(), tag, capture);
    // Its own group: a terminal's Ctrl-C reaches benchgate, which ends it.
    let status = loop {
        if let Some(signal) = interrupt::received() {
            let output = setup.end();
            let _ = child.wait();
            bail!(
                "setup {:?} {}:\n{}",
                argv,
                signal.reason(),
                output.excerpt(TAIL_BYTES)
            );
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                setup.end();
                return Err(e).context("waiting for setup");
            }
        }
    };
    if !status.success() {
        bail!(
            "setup {:?} failed ({status}):\n{}",
            argv,
            setup.end().excerpt(TAIL_BYTES)
        );
    }
    Ok(setup)
}

/// Runs one trial of an external program. `log`: where its output is kept
/// if the trial fails (the failure names it). What the trial saw of its
/// window goes into `trial` once it measured, as for a built-in client
/// ([`super::trial::run_trial`]). A loop's windows are measured back to
/// back.
pub fn run_trial(
    cmd: &CommandSpec,
    spec: &TrialSpec,
    target: &Target,
    cpus: &[usize],
    scratch: &Path,
    log: &Path,
    trial: &mut Trial,
) -> anyhow::Result<(TrialMetrics, Latencies)> {
    let mut started = Started::spawn(cmd, spec, target, cpus, scratch, log)?;
    started.first_request()?;
    if started.looping() {
        started.step(|l| l.ready());
        while started.wants_window() {
            started.step(|l| l.window(None));
        }
    } else {
        started.one_window()?;
    }
    started.finish(trial)
}

/// A command client's trial whose program is running: its first request
/// awaited ([`Started::first_request`]), then its one window
/// ([`Started::one_window`]) or, for a program that declared the window
/// loop, READY and its windows asked for by the caller ([`Started::step`]:
/// back to back in [`run_trial`]); then [`Started::finish`].
pub(super) struct Started<'a> {
    // Dropped in this order on a way out: its stdin closed, its group killed.
    acks: Acks,
    group: GroupKiller,
    program: TrialProcess,
    capture: Capture<2>,
    marks: Markers,
    server_peaks: PeakWatch,
    cmd: &'a CommandSpec,
    spec: &'a TrialSpec,
    server: &'a ServerProcess,
    watch: Option<ServerWatch>,
    log: &'a Path,
    result_path: PathBuf,
    limit: Duration,
    /// The server's counters at the spawn, while no other fork runs beside
    /// it ([`Started::beside_another`]).
    before: Option<ServerCounters>,
    started: Instant,
    first_request: Option<Instant>,
    /// The one window's figures, once measured.
    window: Option<Window>,
    /// The window loop, once declared, or why it stopped.
    fork: Option<Result<command_loop::Fork, Stop>>,
}

impl<'a> Started<'a> {
    /// Starts the program in a process group of its own (`scratch` holds
    /// its files), its output captured and watched for markers.
    pub(super) fn spawn(
        cmd: &'a CommandSpec,
        spec: &'a TrialSpec,
        target: &Target<'a>,
        cpus: &[usize],
        scratch: &Path,
        log: &'a Path,
    ) -> anyhow::Result<Started<'a>> {
        // Validation rejects a command client against a server under test; a
        // suite built in code may not.
        let Some(server) = target.reference else {
            bail!("{}", crate::config::server::NO_COMMAND_CLIENTS)
        };
        let result_path = scratch.join("client-result.json");
        let (stdout_path, stderr_path) =
            (scratch.join("client.stdout"), scratch.join("client.stderr"));
        let _ = std::fs::remove_file(&result_path);
        let argv = jmh::argv(&cmd.command, &cmd.result, spec, &result_path)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let before = Some(server.counters()?);
        let server_peaks = PeakWatch::start(target.watch);
        // Every line of stdout goes past the markers' watch as it is folded.
        let (out, out_file) = Sink::create(&stdout_path)?;
        let (err, err_file) = Sink::create(&stderr_path)?;
        let offer = loop_offered(cmd, spec);
        let (watch_lines, marks) = markers::channel(offer);
        let marks = marks.lagging(spec.marker_lag);
        let capture = Capture::start([out.watch_lines(watch_lines), err])?;

        let tag = super::escapees::Tag::new();
        let mut command = Command::new(&argv[0]);
        child_env::scrub(&mut command, &cmd.pass_env);
        command
            .args(&argv[1..])
            .current_dir(&cmd.cwd)
            .envs(&cmd.env)
            .envs(environment(spec, &result_path, offer))
            .env(tag.env().0, tag.env().1)
            .stdin(Stdio::piped())
            .stdout(out_file)
            .stderr(err_file)
            .process_group(0);
        crate::interrupt::die_with_parent(&mut command);
        let started = Instant::now();
        let (program, mut child) = TrialProcess::spawn(&mut command, cpus, Sampled::Group)
            .with_context(|| format!("starting {:?} in {}", cmd.command, cmd.cwd))?;
        // From here on, every way out (an error on the way included) kills the group.
        let group = GroupKiller(Some((program.pid, tag)));
        Ok(Started {
            acks: Acks(child.stdin.take()),
            group,
            program,
            capture,
            marks,
            server_peaks,
            cmd,
            spec,
            server,
            watch: target.watch,
            log,
            result_path,
            limit: time_limit(cmd, spec),
            before,
            started,
            first_request: None,
            window: None,
            fork: None,
        })
    }

    fn deadline(&self) -> Instant {
        self.started + self.limit
    }

    /// Waits for the program's first request the server saw (or its open
    /// marker, or its declaration of the window loop); then, unless it
    /// declared the loop or marked its window open, for its warmup.
    pub(super) fn first_request(&mut self) -> anyhow::Result<()> {
        let deadline = self.deadline();
        // Beside another fork, the server's requests are not this one's: its
        // declaration (or open marker) is awaited, as long as its READY is.
        let awaited = match self.before {
            Some(_) => deadline,
            None => deadline.min(self.started + self.spec.scenario.warmup + STARTUP_ALLOWANCE),
        };
        // A watch that gave up (`marks.behind()`) ends the trial at once.
        while self.first_request.is_none()
            && !self.program.exited()
            && !interrupted()
            && !self.marks.behind()
            && Instant::now() < awaited
        {
            let requested = match &self.before {
                Some(b) => self.server.counters()?.total_requests > b.total_requests,
                None => false,
            };
            if self.marks.poll(POLL_EVERY) == Some(Mark::Open) || self.marks.declared || requested {
                self.first_request = Some(Instant::now());
            }
        }
        let Some(first) = self.first_request else {
            return Ok(());
        };
        // A program that prints the markers on stdout has its window
        // bracketed exactly; otherwise it opens `warmup` after the server
        // sees the first request and closes `duration` later (or at exit).
        if !self.marks.opened && !self.marks.declared {
            let open_at = first + self.spec.scenario.warmup;
            wait_for(
                open_at,
                deadline,
                &self.program,
                &mut self.marks,
                Mark::Open,
            );
        }
        if let (true, StopRule::Duration(d)) = (self.marks.declared, self.spec.scenario.stop) {
            self.fork = Some(Ok(command_loop::Fork::new(first, d, self.spec.windows)));
        }
        Ok(())
    }

    /// Whether the program declared the window loop.
    pub(super) fn looping(&self) -> bool {
        self.fork.is_some()
    }

    /// Asks the program's window loop for `what`, unless it stopped already
    /// (why is kept for [`Started::finish`]); whether it is still alive.
    pub(super) fn step(&mut self, what: impl FnOnce(&mut Loop) -> Result<(), Stop>) -> bool {
        let deadline = self.deadline();
        let Some(Ok(fork)) = &mut self.fork else {
            return false;
        };
        let mut run = Loop {
            program: &self.program,
            marks: &mut self.marks,
            acks: &mut self.acks,
            server: Some(self.server),
            watch: self.watch,
            pgid: self.program.pid,
            spec: self.spec,
            deadline,
            fork,
        };
        match what(&mut run) {
            Ok(()) => true,
            Err(e) => {
                self.fork = Some(Err(e));
                false
            }
        }
    }

    /// Another fork runs beside this one (an interleaved round): the
    /// reference server's requests and connections are no longer this
    /// program's alone, and are not read for it.
    pub(super) fn beside_another(&mut self) {
        self.before = None;
    }

    /// For a paired round (interleaved, duet): waits for the program's declaration of
    /// the window loop (a program that does not declare it fails the
    /// round, naming `[run] schedule`), then for its READY; whether its
    /// loop is alive.
    pub(super) fn ready_beside(&mut self) -> bool {
        if let Err(e) = self.first_request() {
            self.fork = Some(Err(Stop::Failed(e)));
        } else if self.fork.is_none() {
            self.fork = Some(Err(Stop::Refused(format!(
                "[run] schedule = \"interleaved\" or \"duet\" measures two live forks window by window, and command client {:?} did not declare the window loop ({} on stdout before its first request, within its warmup and {} s of its start): use a harness that speaks it (docs/external-clients.md, \"The window loop\"), or schedule = \"sequential\"",
                self.spec.client.name,
                super::window_loop::DECLARE,
                STARTUP_ALLOWANCE.as_secs()
            ))));
        }
        self.step(|l| l.ready())
    }

    /// Its program's process group, while its window loop is alive.
    pub(super) fn pgid(&self) -> Option<u32> {
        matches!(self.fork, Some(Ok(_))).then_some(self.program.pid)
    }

    /// Windows its loop is to measure (none without a loop).
    pub(super) fn planned_windows(&self) -> u32 {
        match &self.fork {
            Some(Ok(f)) => f.planned(),
            _ => 0,
        }
    }

    /// Whether its window loop, alive, has windows still to measure.
    pub(super) fn wants_window(&self) -> bool {
        matches!(&self.fork, Some(Ok(f)) if !f.done())
    }

    /// Measures the one window of a program that did not declare the loop:
    /// from now (its warmup over, or its open marker seen) to `duration`
    /// later, its close marker, or its exit.
    pub(super) fn one_window(&mut self) -> anyhow::Result<()> {
        if self.first_request.is_none()
            || self.looping()
            || self.program.exited()
            || interrupted()
            || self.marks.behind()
        {
            return Ok(());
        }
        let (pgid, server, watch) = (self.program.pid, self.server, self.watch);
        let open_at = Instant::now();
        let cpu_start = sample_group(pgid).cpu;
        let starvation_open = Edge::read(&group_members(pgid));
        server.window_start()?;
        let opened = Instant::now();
        self.acks.send(ACK_OPENED);
        let server_cpu_start = watch.and_then(|w| w.cpu());
        let close_at = match (self.spec.scenario.stop, self.marks.opened) {
            (StopRule::Duration(d), false) => Instant::now() + d,
            // Marked programs close their own window; request counts end at exit.
            _ => self.deadline(),
        };
        let deadline = self.deadline();
        wait_for(
            close_at,
            deadline,
            &self.program,
            &mut self.marks,
            Mark::Close,
        );
        self.marks.done();
        // A program that exits as its window closes (or exited before)
        // is gone from /proc when its group is read here: the last sample
        // taken before the close stands in for it (`window_cpu`).
        let open = CpuSample {
            at: open_at,
            cpu: cpu_start,
        };
        let cpu = window_cpu::at_close(&self.program, pgid, open, self.spec.close_lag);
        // The same for its threads' counters: a group gone reads none
        // (n/a); the host's steal is read either way.
        let starvation = Edge::read(&group_members(pgid)).since(&starvation_open);
        let server_cpu = window_cpu(server_cpu_start, watch.and_then(|w| w.cpu()));
        let actual = opened.elapsed().as_secs_f64();
        let counters = server.window_stop()?;
        // The measurement is over: a flood of output from here on (from
        // the acknowledgement on) is held back rather than left to fill
        // the disk.
        self.capture.pause_when_behind(pgid);
        self.acks.send(ACK_CLOSED);
        self.window = Some((counters, cpu_start, cpu, server_cpu, actual, starvation));
        Ok(())
    }

    /// Tells a loop's program to exit, waits for the program's exit (kills
    /// its group at the time limit), and turns what it measured into the
    /// trial's figures.
    pub(super) fn finish(mut self, trial: &mut Trial) -> anyhow::Result<(TrialMetrics, Latencies)> {
        self.step(|l| {
            l.exit();
            Ok(())
        });
        let Started {
            mut acks,
            mut group,
            program,
            capture,
            marks,
            server_peaks,
            cmd,
            spec,
            server,
            log,
            result_path,
            limit,
            before,
            started,
            first_request,
            window,
            fork,
            ..
        } = self;
        let s = &spec.scenario;
        let pgid = program.pid;
        // The window loop: its windows, or why it broke.
        let (fork, mut broken, refused) = match fork {
            None => (None, None, None),
            Some(Ok(fork)) => (Some(fork), None, None),
            Some(Err(Stop::Broken(why))) => (None, Some(why), None),
            Some(Err(Stop::Refused(why))) => (None, None, Some(why)),
            Some(Err(Stop::Failed(e))) => return Err(e),
        };
        let stopped = broken.is_some() || refused.is_some();
        if fork.is_some() || stopped {
            marks.done();
            capture.pause_when_behind(pgid);
            drop(std::mem::replace(&mut acks, Acks(None))); // end of file on its stdin
            if stopped {
                group.kill_now();
            }
        }
        // A loop's program has been told to exit: it gets the request timeout
        // and a little more to do so.
        let limit = match &fork {
            Some(_) => limit.min(started.elapsed() + s.timeout + Duration::from_secs(5)),
            None => limit,
        };
        while !program.exited() && !interrupted() && !marks.behind() && started.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(acks); // end of file on its stdin: nothing more will come
        let cut_short = !program.exited();
        capture.stop_pausing();
        group.kill_now(); // stragglers of a finished program, or the whole group
        let stopped_by = interrupt::received().filter(|_| cut_short);
        let behind = marks.behind();
        let timed_out = cut_short && stopped_by.is_none() && !behind && !stopped;
        // A program that declared the loop after its window had opened for one.
        if window.is_some() && marks.declared {
            broken = Some(format!(
                "the program declared it ({}) after its first request, once its warmup had ended: print it before the first request",
                super::window_loop::DECLARE
            ));
        }
        let (usage, (peak_threads, peak_rss_bytes)) = program.finish()?;
        let server_peaks = server_peaks.finish();
        let after = server.counters()?;
        let [stdout, stderr] = capture.finish();

        let output_tail = || {
            let whole = format!(
                "stdout ({} bytes):\n{}\nstderr ({} bytes):\n{}",
                stdout.total(),
                stdout.text(),
                stderr.total(),
                stderr.text()
            );
            format!(
                " {}\nstdout tail:\n{}\nstderr tail:\n{}",
                super::failure::keep(&whole, log),
                stdout.excerpt(TAIL_BYTES),
                stderr.excerpt(TAIL_BYTES)
            )
        };
        if let Some(signal) = stopped_by {
            bail!("{}; its process group was killed", signal.reason());
        }
        if behind {
            bail!(
                "the program wrote to stdout faster than benchgate could read it for window markers, and the rest was skipped: a marker may have gone unseen, so the window cannot be trusted{}",
                output_tail()
            );
        }
        if let Some(why) = broken {
            return Err(Broken(format!("{why}{}", output_tail())).into());
        }
        if let Some(why) = refused {
            bail!("{why}{}", output_tail());
        }
        if timed_out {
            bail!(
                "the program did not finish within {limit:?}{}; its process group was killed{}",
                match fork {
                    Some(_) => " of the window loop's exit",
                    None => "",
                },
                output_tail()
            );
        }
        if !usage.status.success() {
            bail!("the program failed ({}){}", usage.status, output_tail());
        }
        let (window, figures) = match fork {
            Some(fork) => fork_figures(fork, trial),
            None => (window, None),
        };
        let Some((server_window, cpu_start, cpu, server_cpu, window_actual_s, starvation)) = window
        else {
            bail!(
                "the program never sent a request the reference server saw (or exited before its warmup ended){}",
                output_tail()
            );
        };

        let figures = match figures {
            Some(f) => f,
            None => read_result(&cmd.result, spec, &result_path, &server_window)
                .map_err(|e| anyhow::anyhow!("{e}{}", output_tail()))?,
        };
        let histogram = figures.histogram;
        let (connections_opened, requests_per_connection) = match &before {
            Some(before) => super::trial::server_side(before, &after, &server_window),
            None => (None, None),
        };
        // JMH takes no part in the window handshake: the server's window figures
        // are unavailable for it, never estimated.
        let window = figures.window.then_some(&server_window);
        let window_figures = TrialMetrics::of_window(
            // What the program (or the server, for a black box) counted; the
            // bytes are the server's, in the window it bracketed.
            Counts {
                ok: figures.ok,
                errors: figures.errors,
                bytes_received: window.map_or(0, |w| w.bytes_out),
                bytes_sent: window.map_or(0, |w| w.bytes_in),
                in_flight_at_deadline: 0,
                warmup_requests: 0,
            },
            figures.elapsed_s,
            figures.throughput,
            cpu.cpu,
            // JMH takes no part in the window: its starvation there is not its
            // measurement's.
            Some(&starvation).filter(|_| figures.window),
        )
        .with_latency(histogram.as_ref());
        let metrics = TrialMetrics {
            bytes_per_sec: window
                .map(|w| (w.bytes_in + w.bytes_out) as f64 / w.window_secs.max(f64::MIN_POSITIVE)),
            cpu_us_per_request: window
                .filter(|_| figures.requests > 0)
                .and_then(|w| cpu.per_request(w.requests)),
            peak_rss_bytes: peak_rss_bytes.max(usage.max_rss_bytes),
            peak_threads,
            connections_opened,
            requests_per_connection: requests_per_connection.filter(|_| figures.window),
            // Start-up: spawn to the first request the server answered (or to the
            // open marker, if printed before any), and the group's CPU until the
            // window opened, which `window_cpu` leaves out.
            startup_ms: first_request.map(|t| t.duration_since(started).as_secs_f64() * 1e3),
            startup_cpu_ms: Some(cpu_start.total_us() as f64 / 1e3),
            ..with_server_figures(
                window_figures,
                server_cpu.filter(|_| figures.window),
                server_window.requests,
                server_peaks,
                window.and_then(|w| w.run_delay_ns),
            )
        };
        trial.server = Some(server_window);
        trial.window_actual_s = Some(window_actual_s);
        trial.cpu_source = figures.window.then_some(cpu.source);
        Ok((metrics, (histogram, None)))
    }
}

/// Whether SIGINT/SIGTERM reached benchgate.
fn interrupted() -> bool {
    interrupt::received().is_some()
}

/// Waits until `t` (at most until `limit`), until the program exits, until
/// it prints `mark` or declares the window loop, or until the markers'
/// watch gives up.
fn wait_for(t: Instant, limit: Instant, program: &TrialProcess, marks: &mut Markers, mark: Mark) {
    let end = t.min(limit);
    while Instant::now() < end
        && !program.exited()
        && interrupt::received().is_none()
        && !marks.behind()
        && !marks.declared
    {
        let wait = end
            .saturating_duration_since(Instant::now())
            .min(POLL_EVERY);
        if marks.poll(wait) == Some(mark) {
            return;
        }
    }
}
