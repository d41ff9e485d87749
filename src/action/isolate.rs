//! The `all` step (the container image's `benchgate action`): lookup,
//! measure and publish in one job, as the composite action runs them, with
//! the measuring part in a process that cannot reach the token.
//!
//! The container gets the token in its environment (`INPUT_GITHUB-TOKEN`),
//! and so does every process of it that was started with that environment:
//! tini (PID 1) and this one. A benchmarked program (a command client, a
//! `setup`, a server under test) may read `/proc/<pid>/environ` of any
//! process of its own user, and a non-dumpable process's only when it has
//! `CAP_SYS_PTRACE`. So:
//!
//! - this process (which looks up, compares, comments and stores with the
//!   token) makes itself non-dumpable before it starts anything;
//! - the measure step runs as a child ([`measure_child`]) without any
//!   variable that may hold a credential ([`secret_vars`], as the composite
//!   action's measure step), so neither it nor its programs hold the token
//!   (its programs lose the runner's file commands too, as always);
//! - and, when benchgate runs as root and the working directory belongs to
//!   another user (the runner's workspace, mounted into the container), the
//!   child runs as that user ([`measure_user`]): a process of another user
//!   without capabilities cannot read root's `/proc/1/environ` either, and
//!   the workspace stays writable for its builds. Otherwise (benchgate not
//!   root, or a root-owned workspace) the child keeps benchgate's user, and
//!   the log says what that leaves readable.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Context as _;

use crate::cli::ActionStep;
use crate::interrupt;
use crate::orchestrate::child_env::secret_vars;

/// The user the measure step runs as: `Ok((uid, gid))` to switch to, or
/// `Err` with the reason (for the log) to keep this process's user.
pub(crate) fn measure_user(euid: u32, workdir_owner: (u32, u32)) -> Result<(u32, u32), String> {
    match (euid, workdir_owner) {
        (0, (0, _)) => Err(
            "the working directory belongs to root, so the measure step runs as root: \
             a benchmarked program can read the token from PID 1's environment (tini). Own the \
             workspace by an unprivileged user (benchgate then measures as that user), or use the \
             composite action (action.yml)"
                .into(),
        ),
        (0, owner) => Ok(owner),
        (uid, _) => Err(format!(
            "benchgate runs as uid {uid}, not root, so the measure step keeps that user: a \
             benchmarked program can read the token from the environment of the processes that \
             started benchgate (tini, a shell). Run the container as root (benchgate then measures \
             as the workspace's owner), or use the composite action (action.yml)"
        )),
    }
}

/// The three steps of the action, the measuring one in a child process
/// ([`measure_child`]). Each step's code ends the run when it is not 0.
pub(crate) fn all_steps(env: &BTreeMap<String, String>) -> anyhow::Result<u8> {
    // SAFETY: prctl(2) on this process only. Non-dumpable: its /proc files
    // (environ, mem) are closed to processes without CAP_SYS_PTRACE.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        anyhow::bail!(
            "making the token-holding process non-dumpable: {}",
            std::io::Error::last_os_error()
        );
    }
    let workdir = super::working_dir(
        &super::inputs::from_env(env)?,
        &super::event::from_env(env)?,
    )?;
    let code = super::run(env, ActionStep::Lookup)?;
    if code != 0 {
        return Ok(code);
    }
    let code = measure_child(&workdir)?;
    if code != 0 {
        return Ok(code);
    }
    super::run(env, ActionStep::Publish)
}

/// Runs `benchgate action --step measure` with this process's environment
/// minus what [`secret_vars`] names, as [`measure_user`]'s user; forwards
/// SIGINT/SIGTERM to it and returns its exit code.
fn measure_child(workdir: &Path) -> anyhow::Result<u8> {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let removed = secret_vars(&vars);
    let exe = std::env::current_exe().context("finding the benchgate executable")?;
    let mut cmd = Command::new(exe);
    cmd.args(["action", "--step", "measure"])
        .current_dir(workdir)
        .env_clear()
        .envs(vars.into_iter().filter(|(k, _)| !removed.contains(k)));
    let meta = std::fs::metadata(workdir)
        .with_context(|| format!("reading the owner of {}", workdir.display()))?;
    // SAFETY: geteuid(2) cannot fail.
    let euid = unsafe { libc::geteuid() };
    match measure_user(euid, (meta.uid(), meta.gid())) {
        Ok((uid, gid)) => {
            crate::stderrln!(
                "benchgate: the measure step runs as uid {uid} (the owner of {}), without {} variable(s) that may hold credentials",
                workdir.display(),
                removed.len()
            );
            // std drops the supplementary groups (setgroups) before setuid.
            cmd.uid(uid).gid(gid);
        }
        Err(why) => {
            crate::stderrln!(
                "benchgate: the measure step runs without {} variable(s) that may hold credentials; warning: {why}",
                removed.len()
            );
        }
    }
    let mut child = cmd
        .spawn()
        .context("starting the measure step (`benchgate action --step measure`)")?;
    let mut forwarded = false;
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for the measure step")? {
            break status;
        }
        if let (Some(signal), false) = (interrupt::received(), forwarded) {
            // A closed pipe is no signal the child would act on (it ignores
            // SIGPIPE): it is stopped as by SIGTERM.
            let raw = match signal {
                interrupt::Signal::Pipe => libc::SIGTERM,
                other => other.raw(),
            };
            // SAFETY: kill(2) of our own child, which has not been reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, raw) };
            forwarded = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    use std::os::unix::process::ExitStatusExt as _;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code).unwrap_or(2),
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_measures_as_the_workspace_owner_and_says_why_when_it_cannot() {
        assert_eq!(measure_user(0, (1001, 121)), Ok((1001, 121)));
        let root_owned = measure_user(0, (0, 0)).unwrap_err();
        assert!(root_owned.contains("belongs to root"), "{root_owned}");
        let not_root = measure_user(1001, (1001, 121)).unwrap_err();
        assert!(not_root.contains("uid 1001, not root"), "{not_root}");
    }
}
