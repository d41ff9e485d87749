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
//! Best effort by nature: a process that also clears or rewrites its
//! environment escapes; a container or a cgroup is the hard boundary.

use std::path::Path;

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
    let Ok(dir) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
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
