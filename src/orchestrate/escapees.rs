//! Processes that leave a trial's process group: found by a tag in their
//! environment and killed with the group.
//!
//! A command client or a server under test runs in a process group of its
//! own, and stopping it kills that group. A process that calls `setsid` (or
//! `setpgid`) leaves the group and would outlive the trial, holding ports,
//! CPU and memory through every later trial. Every program benchgate starts
//! for a trial gets `BENCHGATE_TRIAL_TAG=<random>` in its environment, which
//! its descendants inherit whatever session or group they move to; when the
//! group is killed, every process of this user whose environment carries the
//! tag is killed too (read from `/proc/<pid>/environ`). Jenkins finds a
//! build's escaped processes the same way (its `BUILD_ID` variable).
//!
//! A process that also clears or rewrites its environment is found two
//! more ways. One still writing to the output file it inherited is ended
//! when that file's capture finishes ([`end_writers`]). And benchgate is a
//! child subreaper ([`adopt_orphans`], `PR_SET_CHILD_SUBREAPER`): an orphan
//! of a program it started becomes its child, not init's, and at the end of
//! the run every adopted child in another session, or in a group the run
//! started, is killed and reaped by its pid ([`end_adopted`]), never with
//! `waitpid(-1)`, which would take a trial's exit status from the thread
//! that reaps it. What is orphaned after benchgate itself is SIGKILLed is
//! not found: the direct children die with it (`PR_SET_PDEATHSIG`), the
//! runner ends the job's other processes. A container or a cgroup is the
//! hard boundary.

use std::fs::File;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::capture::{Capture, Output};

/// The variable that carries the tag.
pub const TAG_VAR: &str = "BENCHGATE_TRIAL_TAG";

/// One trial's (or one server's) tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag(String);

impl Tag {
    /// A fresh random tag (128 bits, hex).
    pub fn new() -> Tag {
        Tag(format!("{:032x}", rand::random::<u128>()))
    }

    /// The environment entry to give the program.
    pub fn env(&self) -> (&'static str, &str) {
        (TAG_VAR, &self.0)
    }

    /// Sends SIGKILL to every other process whose environment carries this
    /// tag; returns their pids (for tests and logs).
    pub fn kill_tagged(&self) -> Vec<u32> {
        let me = std::process::id();
        let mut killed = Vec::new();
        for pid in processes_with(&format!("{TAG_VAR}={}", self.0)) {
            if pid == me {
                continue;
            }
            // SAFETY: kill(2) on a process that carries this trial's tag.
            if unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) } == 0 {
                killed.push(pid);
            }
        }
        killed
    }
}

impl Default for Tag {
    fn default() -> Tag {
        Tag::new()
    }
}

/// A setup step's processes (a daemon the trials use, say), ended at the
/// end of the run ([`RunEnd`]); its output is folded until then.
pub struct Leftover {
    pgid: u32,
    tag: Tag,
    output: Capture<1>,
}

impl Leftover {
    /// Process group `pgid` (its leader started, tagged `tag`), writing to
    /// `output`.
    pub fn new(pgid: u32, tag: Tag, output: Capture<1>) -> Leftover {
        Leftover { pgid, tag, output }
    }

    fn kill(&self) {
        // SAFETY: kill(2) of the process group created for the setup step.
        unsafe { libc::kill(-(self.pgid as libc::pid_t), libc::SIGKILL) };
        self.tag.kill_tagged();
    }

    /// Ends its processes now; what its output kept.
    pub fn end(self) -> Output {
        self.kill();
        let [output] = self.output.finish();
        output
    }
}

/// What a run ends as it ends (when dropped, whichever way it ends): its
/// setup steps' processes, then the orphans it adopted ([`end_adopted`]),
/// then whoever still writes a setup step's output ([`end_writers`]).
#[derive(Default)]
pub struct RunEnd {
    setups: Vec<Leftover>,
}

impl RunEnd {
    pub fn keep(&mut self, setup: Leftover) {
        self.setups.push(setup);
    }
}

impl Drop for RunEnd {
    fn drop(&mut self) {
        self.setups.iter().for_each(Leftover::kill);
        end_adopted();
        self.setups.drain(..).for_each(|s| drop(s.end()));
    }
}

/// Rounds of looking again: a process killed may have forked just before.
const ROUNDS: usize = 20;

/// Whether this process adopts orphans ([`adopt_orphans`]).
static ADOPTING: AtomicBool = AtomicBool::new(false);

/// Makes this process a child subreaper: the orphans of the programs it
/// starts become its children, which [`end_adopted`] ends at the end of a
/// run. The binary's edge calls it for the commands that run programs; a
/// library user (a test) leaves its orphans to init.
pub fn adopt_orphans() {
    // SAFETY: prctl(2) with an integer argument.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0 {
        ADOPTING.store(true, Ordering::Relaxed);
    }
}

/// Kills and reaps (by pid) the children this process adopted ([`adopted`])
/// until none is left: what escaped a trial's, a setup step's or a server's
/// group and outlived its parent. Nothing unless [`adopt_orphans`] was
/// called. Returns their pids.
pub fn end_adopted() -> Vec<u32> {
    if !ADOPTING.load(Ordering::Relaxed) {
        return Vec::new();
    }
    let mut ended = Vec::new();
    for _ in 0..ROUNDS {
        let found: Vec<u32> = pids(Path::new("/proc"))
            .filter(|&pid| adopted(pid))
            .collect();
        if found.is_empty() {
            break;
        }
        for pid in found {
            // SAFETY: kill(2) of our own (adopted) child, by its pid.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            reap(pid);
            ended.push(pid);
        }
    }
    ended
}

/// Reaps (by pid, without waiting) the adopted children that have already
/// exited: a zombie is still a member of its process group, so a server's
/// orphan adopted here would keep the server's group "alive" until the end
/// of the run, where an init (tini in the image) would have reaped it at
/// once.
pub fn reap_exited_adopted() {
    if !ADOPTING.load(Ordering::Relaxed) {
        return;
    }
    for pid in pids(Path::new("/proc")).filter(|&pid| adopted(pid)) {
        let mut status = 0;
        // SAFETY: waitpid(2) of our own (adopted) child, by its pid, WNOHANG.
        unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
    }
}

/// Whether `pid` is a child this process adopted, not one it started: in
/// another session (benchgate starts none there), or in a process group
/// neither its own nor led by it (benchgate's children are in its group,
/// or lead one of their own).
fn adopted(pid: u32) -> bool {
    let (Some((ppid, pgrp, sid)), Some((_, mine, session))) = (
        stat(&Path::new("/proc").join(pid.to_string())),
        stat(Path::new("/proc/self")),
    ) else {
        return false;
    };
    ppid == std::process::id() && (sid != session || (pgrp != mine && pgrp != pid))
}

/// Reaps child `pid` (killed) by its pid: `waitpid(-1)` would take a trial's
/// exit status from the thread that waits for it.
fn reap(pid: u32) {
    let mut status = 0;
    // SAFETY: waitpid(2) of our own child, by its pid.
    unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
}

/// Kills every other process that holds one of `files` open as it
/// inherited it (without close-on-exec: benchgate's own handles, and a
/// child between fork and exec, have it), until none is left: a program's
/// output file is its own, so whoever still writes it once the program is
/// over escaped its group. An adopted one ([`adopt_orphans`]) is reaped, so
/// that nothing of it is left. Returns their pids.
pub fn end_writers(files: &[&File]) -> Vec<u32> {
    let mut ended = Vec::new();
    for _ in 0..ROUNDS {
        let writers = writers(files);
        if writers.is_empty() {
            break;
        }
        for pid in writers {
            // SAFETY: kill(2) of a process writing a trial's output file.
            if unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) } == 0 {
                ended.push(pid);
            }
            if ADOPTING.load(Ordering::Relaxed) && adopted(pid) {
                reap(pid);
            }
        }
        // Killed, one not ours may hold the file until it has exited.
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    ended
}

/// The other processes that hold one of `files` open as they inherited it
/// (without close-on-exec).
pub fn writers(files: &[&File]) -> Vec<u32> {
    let ids: Vec<(u64, u64)> = files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| (m.dev(), m.ino()))
        .collect();
    let me = std::process::id();
    pids(Path::new("/proc"))
        .filter(|&pid| pid != me && holds(pid, &ids))
        .collect()
}

/// Whether `pid` holds a file of `ids` (device, inode) open without
/// close-on-exec.
fn holds(pid: u32, ids: &[(u64, u64)]) -> bool {
    let base = Path::new("/proc").join(pid.to_string());
    let Ok(fds) = std::fs::read_dir(base.join("fd")) else {
        return false;
    };
    fds.filter_map(Result::ok).any(|fd| {
        let open = std::fs::metadata(fd.path()).is_ok_and(|m| ids.contains(&(m.dev(), m.ino())));
        open && !close_on_exec(&base.join("fdinfo").join(fd.file_name()))
    })
}

/// Whether an fdinfo file says `O_CLOEXEC` (its `flags:` are octal).
fn close_on_exec(fdinfo: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(fdinfo) else {
        return true; // gone, or not ours to read: leave it
    };
    text.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| i64::from_str_radix(f.trim(), 8).ok())
        .is_none_or(|flags| flags & i64::from(libc::O_CLOEXEC) != 0)
}

/// The pids under `proc`.
/// The pids listed in `proc`, each once: /proc's directory listing can name
/// a process twice while processes come and go as it is read.
fn pids(proc: &Path) -> impl Iterator<Item = u32> {
    let mut pids: Vec<u32> = std::fs::read_dir(proc)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids.into_iter()
}

/// A process's parent, process group and session, from its `stat`.
fn stat(dir: &Path) -> Option<(u32, u32, u32)> {
    let text = std::fs::read_to_string(dir.join("stat")).ok()?;
    // The fields after the parenthesised command: state, ppid, pgrp, session.
    let mut f = text.rsplit_once(')')?.1.split_whitespace().skip(1);
    let mut next = || f.next()?.parse::<u32>().ok();
    Some((next()?, next()?, next()?))
}

/// Pids of the processes whose environment holds the entry `entry`
/// (`NAME=value`) exactly: what a tag finds, and how tests check that no
/// process they started is left.
pub fn processes_with(entry: &str) -> Vec<u32> {
    tagged(Path::new("/proc"), entry.as_bytes())
}

/// Pids under `proc` whose environment holds the entry `needle` exactly.
/// Processes that vanish or whose environment cannot be read (another
/// user's) are skipped.
fn tagged(proc: &Path, needle: &[u8]) -> Vec<u32> {
    pids(proc)
        .filter(|pid| {
            std::fs::read(proc.join(pid.to_string()).join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|entry| entry == needle))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    #[test]
    fn a_process_that_left_its_group_is_found_and_killed() {
        let tag = Tag::new();
        let other = Tag::new();
        // `setsid`: a new session, so a new process group too.
        let mut escaped = Command::new("setsid")
            .args(["sleep", "30"])
            .env(tag.env().0, tag.env().1)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let mut bystander = Command::new("sleep")
            .arg("30")
            .env(other.env().0, other.env().1)
            .spawn()
            .unwrap();
        // The tagged environment is visible once the process has exec'd.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut killed = Vec::new();
        while killed.is_empty() && Instant::now() < deadline {
            killed = tag.kill_tagged();
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(killed, vec![escaped.id()]);
        let status = escaped.wait().unwrap();
        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // Another tag's process is left alone.
        assert_eq!(bystander.try_wait().unwrap(), None);
        bystander.kill().unwrap();
        let _ = bystander.wait();
    }

    #[test]
    fn a_process_writing_to_an_inherited_file_is_found_not_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("out")).unwrap();
        // Ours (close-on-exec) only: nobody.
        assert_eq!(writers(&[&file]), Vec::<u32>::new());
        let mut child = Command::new("sleep")
            .arg("30")
            .stdout(file.try_clone().unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut found = Vec::new();
        while found.is_empty() && Instant::now() < deadline {
            found = writers(&[&file]);
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(found, vec![child.id()]);
        // Not adopted: started by this process, in its group.
        assert!(!adopted(child.id()));
        assert_eq!(end_writers(&[&file]), vec![child.id()]);
        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        assert_eq!(writers(&[&file]), Vec::<u32>::new());
    }

    #[test]
    fn only_the_exact_entry_matches() {
        let dir = tempfile::tempdir().unwrap();
        let write = |pid: &str, env: &[u8]| {
            std::fs::create_dir_all(dir.path().join(pid)).unwrap();
            std::fs::write(dir.path().join(pid).join("environ"), env).unwrap();
        };
        write("10", b"A=1\0BENCHGATE_TRIAL_TAG=ab\0");
        write("11", b"BENCHGATE_TRIAL_TAG=abc\0");
        write("12", b"X_BENCHGATE_TRIAL_TAG=ab\0");
        write("self", b"BENCHGATE_TRIAL_TAG=ab\0");
        let mut found = tagged(dir.path(), b"BENCHGATE_TRIAL_TAG=ab");
        found.sort();
        assert_eq!(found, vec![10]);
    }
}
