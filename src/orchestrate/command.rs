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
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use super::capture::{Capture, Sink};
use super::child::{Sampled, TrialProcess};
use super::child_env;
use super::command_loop::{self, Broken, Loop, Stop};
use super::driver::TrialSpec;
use super::external;
use super::jmh;
use super::markers::{self, Mark, Markers, ACK_CLOSED, ACK_OPENED};
pub use super::markers::{MARK_CLOSE, MARK_OPEN};
use super::target::{window_cpu, with_server_figures, PeakWatch, Target};
use super::trial::Latencies;
use super::window_cpu;
use super::window_loop::{fork_value, OFFER, OFFER_VAR};
use crate::config::{CommandSpec, HttpVersion, Load, ResultFormat, StopRule};
use crate::interrupt;
use crate::measure::resources::{group_members, sample_group, CpuSample};
use crate::measure::schedstat::Edge;
use crate::measure::{Counts, ErrorCounts, LatencyHistogram};
use crate::metric::trial::Throughput;
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
/// client's `timeout`, else a built-in driver's limit.
fn time_limit(cmd: &CommandSpec, spec: &TrialSpec) -> Duration {
    cmd.timeout
        .unwrap_or_else(|| super::trial::trial_limit(spec))
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
/// ([`super::trial::run_trial`]).
pub fn run_trial(
    cmd: &CommandSpec,
    spec: &TrialSpec,
    target: &Target,
    cpus: &[usize],
    scratch: &Path,
    log: &Path,
    trial: &mut Trial,
) -> anyhow::Result<(TrialMetrics, Latencies)> {
    // Validation rejects a command client against a server under test; a
    // suite built in code may not.
    let Some(server) = target.reference else {
        bail!("{}", crate::config::server::NO_COMMAND_CLIENTS)
    };
    let watch = target.watch;
    let result_path = scratch.join("client-result.json");
    let (stdout_path, stderr_path) = (scratch.join("client.stdout"), scratch.join("client.stderr"));
    let _ = std::fs::remove_file(&result_path);
    let limit = time_limit(cmd, spec);
    let argv = jmh::argv(&cmd.command, &cmd.result, spec, &result_path)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let before = server.counters()?;
    let server_peaks = PeakWatch::start(watch);
    // Every line of stdout goes past the markers' watch as it is folded.
    let (out, out_file) = Sink::create(&stdout_path)?;
    let (err, err_file) = Sink::create(&stderr_path)?;
    let offer = loop_offered(cmd, spec);
    let (watch_lines, marks) = markers::channel(offer);
    let mut marks = marks.lagging(spec.marker_lag);
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
    let pgid = program.pid;
    // From here on, every way out (an error on the way included) kills the group.
    let mut group = GroupKiller(Some((pgid, tag)));
    let mut acks = Acks(child.stdin.take());
    let interrupted = || interrupt::received().is_some();

    // The window. A program that prints the markers on stdout has its window
    // bracketed exactly; otherwise it opens `warmup` after the server sees the
    // first request and closes `duration` later (or at exit).
    let s = &spec.scenario;
    let deadline = started + limit;
    let mut first_request = None;
    // A watch that gave up (`marks.behind()`) ends the trial at once.
    while first_request.is_none()
        && !program.exited()
        && !interrupted()
        && !marks.behind()
        && Instant::now() < deadline
    {
        if marks.poll(POLL_EVERY) == Some(Mark::Open)
            || marks.declared
            || server.counters()?.total_requests > before.total_requests
        {
            first_request = Some(Instant::now());
        }
    }
    let mut window = None;
    // The window loop, when the program declared it: its windows, or why
    // it broke.
    let mut fork = None;
    let mut broken = None;
    if let Some(first) = first_request {
        if !marks.opened && !marks.declared {
            wait_for(first + s.warmup, deadline, &program, &mut marks, Mark::Open);
        }
        if let (true, StopRule::Duration(d)) = (marks.declared, s.stop) {
            let mut run = Loop {
                program: &program,
                marks: &mut marks,
                acks: &mut acks,
                server,
                watch,
                pgid,
                spec,
                deadline,
            };
            match run.run(first, d, spec.windows) {
                Ok(f) => fork = Some(f),
                Err(Stop::Broken(why)) => broken = Some(why),
                Err(Stop::Failed(e)) => return Err(e),
            }
            marks.done();
            capture.pause_when_behind(pgid);
            drop(std::mem::replace(&mut acks, Acks(None))); // end of file on its stdin
            if broken.is_some() {
                group.kill_now();
            }
        } else if !program.exited() && !interrupted() && !marks.behind() {
            let open_at = Instant::now();
            let cpu_start = sample_group(pgid).cpu;
            let starvation_open = Edge::read(&group_members(pgid));
            server.window_start()?;
            let opened = Instant::now();
            acks.send(ACK_OPENED);
            let server_cpu_start = watch.and_then(|w| w.cpu());
            let close_at = match (s.stop, marks.opened) {
                (StopRule::Duration(d), false) => Instant::now() + d,
                // Marked programs close their own window; request counts end at exit.
                _ => deadline,
            };
            wait_for(close_at, deadline, &program, &mut marks, Mark::Close);
            marks.done();
            // A program that exits as its window closes (or exited before)
            // is gone from /proc when its group is read here: the last sample
            // taken before the close stands in for it (`window_cpu`).
            let closed_at = Instant::now();
            let before_close = program.latest_group_cpu();
            if let Some(lag) = spec.close_lag {
                std::thread::sleep(lag);
            }
            let open = CpuSample {
                at: open_at,
                cpu: cpu_start,
            };
            let cpu = window_cpu::read(open, before_close, closed_at, sample_group(pgid));
            // The same for its threads' counters: a group gone reads none
            // (n/a); the host's steal is read either way.
            let starvation = Edge::read(&group_members(pgid)).since(&starvation_open);
            let server_cpu = window_cpu(server_cpu_start, watch.and_then(|w| w.cpu()));
            let actual = opened.elapsed().as_secs_f64();
            let counters = server.window_stop()?;
            // The measurement is over: a flood of output from here on (from
            // the acknowledgement on) is held back rather than left to fill
            // the disk.
            capture.pause_when_behind(pgid);
            acks.send(ACK_CLOSED);
            window = Some((counters, cpu_start, cpu, server_cpu, actual, starvation));
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
    let timed_out = cut_short && stopped_by.is_none() && !behind && broken.is_none();
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
    let (connections_opened, requests_per_connection) =
        super::trial::server_side(&before, &after, &server_window);
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

/// What a window (or a loop's windows, summed) measured at benchgate's side:
/// the server's counters, the group's CPU at the first open (start-up) and
/// in the window, the server's CPU, the window's length, the starvation.
type Window = (
    ServerCounters,
    crate::measure::resources::CpuTimes,
    window_cpu::WindowCpu,
    Option<crate::measure::resources::CpuTimes>,
    f64,
    crate::measure::schedstat::Starvation,
);

/// A loop's fork as one trial: its windows summed (the server's counters,
/// CPU, starvation, the program's counts and histograms), each window's
/// figures in `trial.windows` and the planned window all of them.
fn fork_figures(fork: command_loop::Fork, trial: &mut Trial) -> (Option<Window>, Option<Figures>) {
    let cpu = fork.cpu();
    let Some(sum) = fork_value(&fork.windows) else {
        return (None, None);
    };
    trial.window_planned_s = trial
        .window_planned_s
        .map(|p| p * fork.windows.len() as f64);
    let values = fork
        .windows
        .iter()
        .zip(&fork.cpu)
        .map(|(w, c)| w.figures(c.per_request(w.counts.requests())))
        .collect();
    trial.windows = Some(crate::results::ForkWindows {
        count: fork.windows.len() as u32,
        values,
        // A command client's CPU is always its process group's.
        gated_cpu: Some(crate::results::ForkCpu::Group),
        ..Default::default()
    });
    let figures = Figures {
        throughput: Throughput::Window,
        requests: sum.counts.requests(),
        ok: sum.counts.ok,
        errors: sum.counts.errors,
        elapsed_s: sum.elapsed_s,
        histogram: sum.latency,
        window: true,
    };
    let window = sum.server.map(|server| {
        (
            server,
            fork.cpu_at_first_open,
            cpu,
            sum.server_cpu,
            fork.actual_s,
            sum.starvation.unwrap_or_default(),
        )
    });
    (window, Some(figures))
}

/// The program's stdin, on which the window's acknowledgements go.
pub(super) struct Acks(Option<std::process::ChildStdin>);

impl Acks {
    /// Writes `line` and a newline. A program that does not read its stdin
    /// never notices (two short lines fit any pipe buffer); one that closed
    /// it gets nothing more (the write fails with EPIPE, which is ignored:
    /// benchgate does not die of SIGPIPE).
    pub(super) fn send(&mut self, line: &str) {
        use std::io::Write as _;
        if let Some(stdin) = &mut self.0 {
            let sent = stdin
                .write_all(format!("{line}\n").as_bytes())
                .and_then(|()| stdin.flush());
            if sent.is_err() {
                self.0 = None;
            }
        }
    }
}

/// What a trial's result reading gives: the client's own figures, or the
/// server's window for a black box.
struct Figures {
    throughput: Throughput,
    requests: u64,
    ok: u64,
    errors: ErrorCounts,
    elapsed_s: f64,
    histogram: Option<LatencyHistogram>,
    /// Whether the server's window figures (bytes, CPU per request, requests
    /// per connection, server CPU) apply to this client.
    window: bool,
}

/// Reads the trial's result: JMH's file (required) for a JMH client;
/// benchgate's file when the program wrote one; otherwise the server's
/// window (black box).
fn read_result(
    format: &ResultFormat,
    spec: &TrialSpec,
    result_path: &Path,
    server_window: &ServerCounters,
) -> anyhow::Result<Figures> {
    let exists = std::fs::metadata(result_path).is_ok();
    if let ResultFormat::Jmh { benchmark } = format {
        if !exists {
            bail!(
                "JMH wrote no result file at {} (the program must hand the {} argument to JMH, whose -rf json -rff name that file)",
                result_path.display(),
                ResultFormat::JMH_ARGS
            );
        }
        let r = jmh::parse(
            &read_bounded(
                result_path,
                "run fewer benchmarks or shorter SampleTime iterations",
            )?,
            benchmark,
        )
        .map_err(|e| anyhow::anyhow!("JMH result file {}: {e}", result_path.display()))?;
        // JMH reports a rate and sampled latencies, no request counts: those
        // stay 0 and the rate is JMH's own (n/a without a Throughput result).
        let elapsed_s = match spec.scenario.stop {
            StopRule::Duration(d) => d.as_secs_f64(),
            StopRule::Requests(_) => bail!("JMH measures for a time, not a request count"),
        };
        return Ok(Figures {
            throughput: Throughput::Reported(r.throughput_rps),
            requests: 0,
            ok: 0,
            errors: ErrorCounts::default(),
            elapsed_s,
            histogram: r.latency,
            window: false,
        });
    }
    if exists {
        let r = external::parse(&read_bounded(
            result_path,
            "write a latency_histogram instead of a latency_us list",
        )?)
        .map_err(|e| anyhow::anyhow!("result file {}: {e}", result_path.display()))?;
        return Ok(Figures {
            throughput: Throughput::Window,
            requests: r.requests,
            ok: r.ok,
            errors: r.errors,
            elapsed_s: r.elapsed_s,
            histogram: r.latency,
            window: true,
        });
    }
    // Black box: what the server answered in its window.
    let errors = ErrorCounts {
        status_4xx: server_window.status_4xx,
        status_5xx: server_window.status_5xx,
        ..ErrorCounts::default()
    };
    Ok(Figures {
        throughput: Throughput::Window,
        requests: server_window.requests,
        ok: server_window.requests.saturating_sub(errors.total()),
        errors,
        elapsed_s: server_window.window_secs,
        histogram: None,
        window: true,
    })
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

/// The program's result file: written by the benchmarked code, so a FIFO
/// or a device there is refused, not read ([`crate::files::read_untrusted`]);
/// `fix` says what to do when it is too big.
fn read_bounded(path: &Path, fix: &str) -> anyhow::Result<Vec<u8>> {
    crate::files::read_untrusted(path, "result file", external::MAX_RESULT_BYTES).map_err(|e| {
        match e.is_too_big() {
            true => anyhow::anyhow!("{e}; {fix}"),
            false => e.into(),
        }
    })
}
