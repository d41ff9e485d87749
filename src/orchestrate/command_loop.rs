//! The window loop of a command client (docs/external-clients.md, "The
//! window loop"; issue 52, point 1): a program that declares it
//! (`BENCHGATE-WINDOWS-LOOP` on stdout, offered by `BENCHGATE_WINDOWS=loop`)
//! stays alive across the fork's windows (`[run] windows`) after one
//! warmup. benchgate opens
//! the reference server's window k, tells the program (`BENCHGATE-WINDOW-OPEN
//! k` on its stdin), closes it `duration` later, tells it, and reads its
//! record of window k on its stdout; the group's CPU is read at each
//! window's edges, as for one window ([`super::window_cpu`]). The windows,
//! back to back in one process, sum to the fork's value
//! ([`super::window_loop::fork_value`]): the fork stays the statistical unit.
//!
//! Between its windows a fork can be frozen ([`Loop::freeze`]: PAUSE, its
//! PAUSED awaited, then its process group stopped) and thawed
//! ([`Loop::thaw`]), so that another fork's window runs beside nothing of
//! it; that window reads the frozen group's CPU at its edges (`peer`).
//!
//! Untrusted input: a missing READY or PAUSED, a record late, malformed or of another
//! window, a reply nobody asked for, fails the fork with the line quoted
//! ([`Broken`]); the round then runs once more (`orchestrate::rounds`).

use std::time::{Duration, Instant};

use super::child::TrialProcess;
use super::driver::TrialSpec;
use super::external;
use super::markers::Markers;
use super::server_proc::ServerProcess;
use super::target::{window_cpu, ServerWatch};
use super::window_cpu::{self as cpu_read, WindowCpu};
use super::window_loop::{quote, strip_window, Command, Reply, WindowRecord, PAUSED, RESULT};
use crate::interrupt;
use crate::measure::resources::{group_members, sample_group, CpuSample, CpuTimes};
use crate::measure::schedstat::Edge;
use crate::measure::Counts;
use crate::results::CpuSource;

/// How long a program may take from its declaration to READY beyond its
/// warmup: a runtime's start (a JVM's, a second or so) and its workers'.
pub(super) const STARTUP_ALLOWANCE: Duration = Duration::from_secs(20);
/// How long a record or PAUSED may come after the request timeout: the
/// requests in flight end by then, the answer follows at once.
const ANSWER_ALLOWANCE: Duration = Duration::from_secs(5);
/// How long the replies a program printed just before it exited are still
/// looked for: its stdout is folded every 2 ms.
const EXIT_GRACE: Duration = Duration::from_millis(200);
const POLL: Duration = Duration::from_millis(2);

/// A window loop that went wrong on the program's side: its fork failed, and
/// the round runs once more before it counts as failed.
#[derive(Debug)]
pub struct Broken(pub String);

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "window loop: {}", self.0)
    }
}

impl std::error::Error for Broken {}

/// A fork's loop so far: what it is to measure, and what it measured: its
/// windows, and what it spent before the first.
pub(super) struct Fork {
    /// When the program declared the loop (its first request at the latest).
    declared: Instant,
    /// Each window's length.
    length: Duration,
    /// Windows it is to measure.
    planned: u32,
    /// Whether its group is stopped ([`Loop::freeze`]).
    frozen: bool,
    pub windows: Vec<WindowRecord>,
    /// The group's CPU in each window, as read.
    pub cpu: Vec<WindowCpu>,
    /// The windows' summed length at benchgate's side, seconds.
    pub actual_s: f64,
    /// The group's CPU when the first window opened: its start-up.
    pub cpu_at_first_open: CpuTimes,
}

impl Fork {
    /// A loop declared at `declared`, to measure `planned` windows of `length`.
    pub fn new(declared: Instant, length: Duration, planned: u32) -> Fork {
        Fork {
            declared,
            length,
            planned,
            frozen: false,
            windows: Vec::new(),
            cpu: Vec::new(),
            actual_s: 0.0,
            cpu_at_first_open: CpuTimes::default(),
        }
    }

    /// Windows it is to measure.
    pub fn planned(&self) -> u32 {
        self.planned
    }

    /// Whether all the planned windows are measured.
    pub fn done(&self) -> bool {
        self.windows.len() >= self.planned as usize
    }

    /// The group's CPU over all windows: the sum when every window's was
    /// read at its close; gone otherwise (never a partial figure).
    pub fn cpu(&self) -> WindowCpu {
        let all_closed = self.cpu.iter().all(|c| c.source == CpuSource::Close);
        match all_closed && !self.cpu.is_empty() {
            true => WindowCpu {
                cpu: self.cpu.iter().fold(CpuTimes::default(), |a, c| CpuTimes {
                    user_us: a.user_us + c.cpu.user_us,
                    sys_us: a.sys_us + c.cpu.sys_us,
                }),
                share: 1.0,
                source: CpuSource::Close,
            },
            false => WindowCpu {
                cpu: CpuTimes::default(),
                share: 0.0,
                source: CpuSource::Gone,
            },
        }
    }
}

/// One fork's loop, from its declaration on: the running program's side
/// of it, asked for one thing at a time ([`super::command::Started::step`]).
pub(super) struct Loop<'a> {
    pub program: &'a TrialProcess,
    pub marks: &'a mut Markers,
    pub acks: &'a mut Acks,
    /// The reference server (none in unit tests).
    pub server: Option<&'a ServerProcess>,
    pub watch: Option<ServerWatch>,
    pub pgid: u32,
    pub spec: &'a TrialSpec,
    /// The trial's time limit.
    pub deadline: Instant,
    pub fork: &'a mut Fork,
}

/// Why the loop stopped early: the program's fault ([`Broken`]'s reason),
/// a program that cannot take part (no loop where an interleaved round
/// needs one: the round fails, it is not run again), or benchgate's (the
/// server's control port).
pub(super) enum Stop {
    Broken(String),
    Refused(String),
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for Stop {
    fn from(e: anyhow::Error) -> Stop {
        Stop::Failed(e)
    }
}

impl Loop<'_> {
    /// Waits for READY (its warmup and start-up after the declaration).
    pub fn ready(&mut self) -> Result<(), Stop> {
        let ready_by = self.fork.declared + self.spec.scenario.warmup + STARTUP_ALLOWANCE;
        match self.answer("BENCHGATE-READY", ready_by)? {
            Reply::Ready => Ok(()),
            other => Err(Stop::Broken(out_of_place(&other, "BENCHGATE-READY"))),
        }
    }

    /// Tells the program to exit (its group continued, if frozen).
    pub fn exit(&mut self) {
        self.continue_group();
        self.acks.send(&Command::Exit.line());
    }

    /// Pauses the program between its windows: it starts no request,
    /// finishes those in flight and answers PAUSED (within the request
    /// timeout and 5 s); then its process group is stopped (SIGSTOP), so
    /// that nothing of it (a JVM's compiler, its GC) runs beside another
    /// fork's window.
    pub fn freeze(&mut self) -> Result<(), Stop> {
        self.acks.send(&Command::Pause.line());
        let by = Instant::now() + self.spec.scenario.timeout + ANSWER_ALLOWANCE;
        match self.answer(PAUSED, by)? {
            Reply::Paused => {}
            other => return Err(Stop::Broken(out_of_place(&other, PAUSED))),
        }
        super::fork::signal_group(self.pgid, libc::SIGSTOP);
        self.fork.frozen = true;
        Ok(())
    }

    /// Continues a frozen program's group (SIGCONT) and resumes its workers.
    pub fn thaw(&mut self) -> Result<(), Stop> {
        self.continue_group();
        self.acks.send(&Command::Resume.line());
        self.check_alive("benchgate resumed it")
    }

    fn continue_group(&mut self) {
        if self.fork.frozen {
            super::fork::signal_group(self.pgid, libc::SIGCONT);
            self.fork.frozen = false;
        }
    }

    /// Measures the next window. `peer`: the process group of another
    /// fork, frozen meanwhile, whose CPU is read at the window's edges (it
    /// must stay ~0).
    pub fn window(&mut self, peer: Option<u32>) -> Result<(), Stop> {
        let k = self.fork.windows.len() as u32 + 1;
        let duration = self.fork.length;
        let peer_open = peer.map(|p| sample_group(p).cpu);
        let open_at = Instant::now();
        let cpu_open = sample_group(self.pgid).cpu;
        if k == 1 {
            self.fork.cpu_at_first_open = cpu_open;
        }
        let starvation_open = Edge::read(&group_members(self.pgid));
        if let Some(server) = self.server {
            server.window_start()?;
        }
        let opened = Instant::now();
        let opened_at = super::now_rfc3339_micros();
        self.acks.send(&Command::Open(k).line());
        let server_cpu_start = self.watch.and_then(|w| w.cpu());
        // Nothing is asked while the window is open: a reply is out of place.
        let end = opened + duration;
        while Instant::now() < end {
            let wait = end.saturating_duration_since(Instant::now()).min(POLL);
            if let Some(reply) = self.marks.reply(wait) {
                return Err(Stop::Broken(match reply {
                    Ok(r) => out_of_place(&r, &format!("nothing while window {k} is open")),
                    Err(e) => e,
                }));
            }
            self.check_alive(&format!("window {k} was open"))?;
        }
        let open = CpuSample {
            at: open_at,
            cpu: cpu_open,
        };
        let cpu = cpu_read::at_close(self.program, self.pgid, open, self.spec.close_lag);
        let peer_cpu = peer
            .zip(peer_open)
            .map(|(p, o)| sample_group(p).cpu.since(&o));
        let starvation = Edge::read(&group_members(self.pgid)).since(&starvation_open);
        let server_cpu = window_cpu(server_cpu_start, self.watch.and_then(|w| w.cpu()));
        let actual = opened.elapsed().as_secs_f64();
        let counters = self.server.map(ServerProcess::window_stop).transpose()?;
        self.acks.send(&Command::Close(k).line());
        let by = Instant::now() + self.spec.scenario.timeout + ANSWER_ALLOWANCE;
        let what = format!("{RESULT} for window {k}");
        let json = match self.answer(&what, by)? {
            Reply::Result { window, json } if window == k => json,
            other => return Err(Stop::Broken(out_of_place(&other, &what))),
        };
        let line = || quote(&format!("{RESULT} {json}"));
        let record = strip_window(&json)
            .and_then(|bytes| external::parse(&bytes))
            .map_err(|e| {
                Stop::Broken(format!("window {k}'s result: {e}, in the line {}", line()))
            })?;
        self.fork.windows.push(WindowRecord {
            window: k,
            opened_at: Some(opened_at),
            counts: Counts {
                ok: record.ok,
                errors: record.errors,
                bytes_received: counters.as_ref().map_or(0, |c| c.bytes_out),
                bytes_sent: counters.as_ref().map_or(0, |c| c.bytes_in),
                ..Counts::default()
            },
            elapsed_s: record.elapsed_s,
            cpu: (cpu.source == CpuSource::Close).then_some(cpu.cpu),
            server: counters,
            server_cpu,
            peer_cpu,
            latency: record.latency,
            starvation: Some(starvation),
            ..WindowRecord::default()
        });
        self.fork.cpu.push(cpu);
        self.fork.actual_s += actual;
        Ok(())
    }

    /// The next reply, by `by` (and the trial's limit): `what` names the
    /// one expected, for the error when none comes.
    fn answer(&mut self, what: &str, by: Instant) -> Result<Reply, Stop> {
        let by = by.min(self.deadline);
        let allowed = by.saturating_duration_since(Instant::now());
        loop {
            if let Some(reply) = self.marks.reply(POLL) {
                return reply.map_err(Stop::Broken);
            }
            if self.program.exited() {
                let grace = Instant::now() + EXIT_GRACE;
                while Instant::now() < grace {
                    if let Some(reply) = self.marks.reply(POLL) {
                        return reply.map_err(Stop::Broken);
                    }
                }
            }
            self.check_alive(&format!("benchgate waited for {what}"))?;
            if Instant::now() >= by {
                return Err(Stop::Broken(format!(
                    "no {what} within {:.1} s",
                    allowed.as_secs_f64()
                )));
            }
        }
    }

    /// Fails the loop when the program exited, the watch gave up or a signal
    /// came: `when` says what was going on.
    fn check_alive(&self, when: &str) -> Result<(), Stop> {
        if self.program.exited() {
            return Err(Stop::Broken(format!("the program exited while {when}")));
        }
        if self.marks.behind() || interrupt::received().is_some() {
            // The caller names the cause.
            return Err(Stop::Broken(String::new()));
        }
        Ok(())
    }
}

/// The program's stdin, on which the window's acknowledgements go.
pub(super) struct Acks(pub Option<std::process::ChildStdin>);

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

/// A reply where `expected` was: named, with the line quoted.
fn out_of_place(reply: &Reply, expected: &str) -> String {
    let line = match reply {
        Reply::Declare => super::window_loop::DECLARE.to_string(),
        Reply::Ready => super::window_loop::READY.to_string(),
        Reply::Paused => super::window_loop::PAUSED.to_string(),
        Reply::Result { json, .. } => format!("{RESULT} {json}"),
    };
    format!("expected {expected}, the program printed {}", quote(&line))
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command as Process, Stdio};

    use super::*;
    use crate::orchestrate::capture::{Capture, Sink};
    use crate::orchestrate::child::Sampled;
    use crate::orchestrate::markers;

    /// A program played by `sh -c script`, started as a trial's is (its own
    /// group, its stdout watched for replies), its loop declared.
    struct Played {
        acks: Acks,
        program: TrialProcess,
        marks: Markers,
        fork: Fork,
        spec: TrialSpec,
        _capture: Capture<1>,
        _dir: tempfile::TempDir,
    }

    impl Played {
        fn start(script: &str) -> Played {
            let dir = tempfile::tempdir().unwrap();
            let (sink, file) = Sink::create(&dir.path().join("out")).unwrap();
            let (watch, marks) = markers::channel(true);
            let capture = Capture::start([sink.watch_lines(watch)]).unwrap();
            let mut cmd = Process::new("sh");
            cmd.arg("-c")
                .arg(script)
                .stdin(Stdio::piped())
                .stdout(file)
                .process_group(0);
            let (program, mut child) = TrialProcess::spawn(&mut cmd, &[], Sampled::Group).unwrap();
            let suite = crate::config::Suite::from_toml(
                "[[client]]\nname = \"c\"\nkind = \"command\"\ncommand = [\"true\"]\n\
                 [[scenario]]\nname = \"s\"\npath = \"/\"\nduration = \"100ms\"\ntimeout = \"100ms\"\n",
                "t.toml",
            )
            .unwrap();
            let spec = TrialSpec {
                scenario: suite.scenarios[0].clone(),
                client: suite.clients[0].clone(),
                base_url: "http://127.0.0.1:1".into(),
                round: 1,
                control_url: None,
                threads: 1,
                server_watch: None,
                windows: 2,
                marker_lag: None,
                close_lag: None,
            };
            Played {
                acks: Acks(child.stdin.take()),
                program,
                marks,
                fork: Fork::new(Instant::now(), Duration::from_millis(100), 2),
                spec,
                _capture: capture,
                _dir: dir,
            }
        }

        /// Asks its loop for `what`.
        fn ask<R>(&mut self, what: impl FnOnce(&mut Loop) -> R) -> R {
            let mut run = Loop {
                program: &self.program,
                marks: &mut self.marks,
                acks: &mut self.acks,
                server: None,
                watch: None,
                pgid: self.program.pid,
                spec: &self.spec,
                deadline: Instant::now() + Duration::from_secs(60),
                fork: &mut self.fork,
            };
            what(&mut run)
        }

        /// Whether its group's leader is stopped, once it settled (2 s at most).
        fn stopped(&self, expected: bool) -> bool {
            let until = Instant::now() + Duration::from_secs(2);
            loop {
                let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.program.pid))
                    .unwrap_or_default();
                let state = stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .next();
                let stopped = state == Some("T");
                if stopped == expected || Instant::now() > until {
                    return stopped;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    impl Drop for Played {
        fn drop(&mut self) {
            super::super::fork::signal_group(self.program.pid, libc::SIGKILL);
        }
    }

    fn broken(r: Result<(), Stop>) -> String {
        match r {
            Ok(()) => panic!("the loop went on"),
            Err(Stop::Broken(why)) => why,
            Err(Stop::Refused(why)) => panic!("refused: {why}"),
            Err(Stop::Failed(e)) => panic!("benchgate's side failed: {e:#}"),
        }
    }

    const READY: &str = "echo BENCHGATE-WINDOWS-LOOP; echo BENCHGATE-READY;";

    #[test]
    fn a_paused_program_is_stopped_until_thawed_and_resumed() {
        // It answers PAUSED to PAUSE, and READY (as a witness) to RESUME.
        let mut p = Played::start(&format!(
            "{READY} read c; [ \"$c\" = BENCHGATE-PAUSE ] && echo BENCHGATE-PAUSED; \
             read c; [ \"$c\" = BENCHGATE-RESUME ] && echo BENCHGATE-READY; sleep 30"
        ));
        p.ask(|l| l.ready()).ok().unwrap();
        p.ask(|l| l.freeze()).ok().unwrap();
        assert!(p.stopped(true), "its group is stopped once paused");
        p.ask(|l| l.thaw()).ok().unwrap();
        assert!(!p.stopped(false), "its group runs again once thawed");
        p.ask(|l| l.ready()).ok().expect("it read BENCHGATE-RESUME");
    }

    #[test]
    fn a_program_that_does_not_answer_paused_fails_its_fork_and_runs_on() {
        let mut p = Played::start(&format!(
            "{READY} read c; echo 'BENCHGATE-WINDOW-RESULT {{\"window\": 9}}'; sleep 30"
        ));
        p.ask(|l| l.ready()).ok().unwrap();
        let why = broken(p.ask(|l| l.freeze()));
        assert!(
            why.contains(r#"expected BENCHGATE-PAUSED, the program printed "BENCHGATE-WINDOW-RESULT {\"window\": 9}""#),
            "{why}"
        );
        assert!(!p.stopped(false), "not stopped: {why}");
        // Silence: the request timeout (100 ms) and 5 s.
        let mut p = Played::start(&format!("{READY} read c; sleep 30"));
        p.ask(|l| l.ready()).ok().unwrap();
        let why = broken(p.ask(|l| l.freeze()));
        assert!(why.contains("no BENCHGATE-PAUSED within 5.1 s"), "{why}");
        assert!(!p.stopped(false), "not stopped: {why}");
    }

    #[test]
    fn a_window_reads_the_frozen_peer_s_group_cpu_at_its_edges() {
        let result = r#"BENCHGATE-WINDOW-RESULT {\"benchgate_result\":1,\"requests\":0,\"ok\":0,\"elapsed_s\":0.1,\"window\":$k}"#;
        let mut p = Played::start(&format!(
            "{READY} for k in 1 2; do read open; read close; echo \"{result}\"; done; sleep 30"
        ));
        // Windows long enough for a spinning peer to show on a loaded machine.
        p.fork.length = Duration::from_millis(500);
        // The peer spins (a child in its group) until it is frozen.
        let mut peer = Played::start(&format!(
            "{READY} (while :; do :; done) & read c; echo BENCHGATE-PAUSED; wait"
        ));
        p.ask(|l| l.ready()).ok().unwrap();
        peer.ask(|l| l.ready()).ok().unwrap();
        let peer_group = peer.program.pid;
        p.ask(|l| l.window(Some(peer_group))).ok().unwrap();
        peer.ask(|l| l.freeze()).ok().unwrap();
        assert!(peer.stopped(true));
        p.ask(|l| l.window(Some(peer_group))).ok().unwrap();
        let [spinning, frozen] = [0, 1].map(|k| p.fork.windows[k].peer_cpu);
        assert!(spinning.is_some_and(|c| c.total_us() > 0), "{spinning:?}");
        assert_eq!(frozen.map(|c| c.total_us()), Some(0));
    }
}
