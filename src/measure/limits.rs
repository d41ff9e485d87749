//! Process limits a trial needs: the open-file limit for thousands of
//! connections. Linux.
//!
//! Each connection of a trial is a socket in the driver process and another in
//! the reference server process (separate processes, each with its own
//! RLIMIT_NOFILE, both inheriting benchgate's). So each needs the trial's
//! connections plus [`OPEN_FILE_RESERVE`] descriptors for everything else.
//! Before a run, [`ensure_open_files`] raises the soft limit to the hard one
//! (any process may) and fails with the fix when even the hard limit is too
//! low: only root with CAP_SYS_RESOURCE, the shell's `ulimit -Hn`, systemd's
//! `LimitNOFILE=` or Docker's `--ulimit nofile=` can raise that.

/// Descriptors a driver or the reference server holds besides its
/// connections: stdio, the epoll and timer fds, runtime wake-ups, listeners,
/// control connections, the spec and report files, with room to spare.
pub const OPEN_FILE_RESERVE: u64 = 64;

/// Open files one process needs to hold `connections` connections.
pub fn open_files_needed(connections: u64) -> u64 {
    connections + OPEN_FILE_RESERVE
}

/// Raises this process's soft limit on open files (RLIMIT_NOFILE) to its hard
/// limit, so a trial can hold thousands of connections; returns the new
/// (soft, hard) limits, or `None` if they cannot be read.
pub fn raise_nofile_limit() -> Option<(u64, u64)> {
    // SAFETY: getrlimit/setrlimit on a stack-owned rlimit struct.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        // An unlimited hard limit cannot be the soft one: the kernel caps
        // open files at fs.nr_open.
        for target in [Some(lim.rlim_max), nr_open().map(|n| n.min(lim.rlim_max))]
            .into_iter()
            .flatten()
        {
            if lim.rlim_cur >= target {
                break;
            }
            let raised = libc::rlimit {
                rlim_cur: target,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
                break;
            }
        }
        // `rlim_t` is u64 on the targets benchgate ships, not on every one.
        #[allow(clippy::unnecessary_cast)]
        Some((lim.rlim_cur as u64, lim.rlim_max as u64))
    }
}

/// fs.nr_open: the most open files any process can have.
fn nr_open() -> Option<libc::rlim_t> {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Raises the soft open-file limit to the hard one (the children, the driver
/// and the reference server, inherit it) and checks that it holds `need`
/// files; `what` names what needs them (a scenario and its connections).
pub fn ensure_open_files(need: u64, what: &str) -> Result<(), String> {
    let Some((soft, hard)) = raise_nofile_limit() else {
        return Ok(()); // not readable: nothing to check against (not Linux)
    };
    match limit_problem(soft, hard, need, what) {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// Why a (soft, hard) open-file limit cannot hold `need` files, with the fix.
fn limit_problem(soft: u64, hard: u64, need: u64, what: &str) -> Option<String> {
    if soft >= need {
        return None;
    }
    let raise = if hard < need {
        format!(
            "the hard limit is {hard} and only root with CAP_SYS_RESOURCE can raise it: \
             run `ulimit -Hn {need}; ulimit -Sn {need}` as root before benchgate, set \
             LimitNOFILE={need} in its systemd unit, or start its container with \
             --ulimit nofile={need}:{need}"
        )
    } else {
        format!("the soft limit is {soft} and could not be raised: run `ulimit -n {need}` before benchgate")
    };
    Some(format!(
        "{what} need {need} open files in the driver process and as many in the reference \
         server ({OPEN_FILE_RESERVE} beyond one per connection), but this process may open \
         only {soft}; {raise}; or lower the scenario's concurrency to at most {}",
        soft.saturating_sub(OPEN_FILE_RESERVE)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_file_limit_is_raised() {
        let (soft, hard) = raise_nofile_limit().unwrap();
        assert!(soft <= hard);
        if hard < 1 << 20 {
            assert_eq!(soft, hard, "a finite hard limit becomes the soft one");
        }
        assert_eq!(raise_nofile_limit(), Some((soft, hard)), "idempotent");
    }

    #[test]
    fn a_limit_too_low_names_the_need_the_limit_and_the_fix() {
        let need = open_files_needed(20_000);
        assert_eq!(need, 20_064);
        let p = limit_problem(20_000, 20_000, need, "scenario \"c\" (20000 connections)").unwrap();
        assert!(
            p.starts_with("scenario \"c\" (20000 connections) need 20064 open files"),
            "{p}"
        );
        assert!(p.contains("the hard limit is 20000"), "{p}");
        assert!(p.contains("ulimit -Hn 20064"), "{p}");
        assert!(p.contains("LimitNOFILE=20064"), "{p}");
        assert!(p.contains("at most 19936"), "{p}");
        let soft_only = limit_problem(1024, 65_536, need, "s").unwrap();
        assert!(soft_only.contains("ulimit -n 20064"), "{soft_only}");
        assert_eq!(
            limit_problem(20_064, 20_064, need, "s"),
            None,
            "exactly enough"
        );
    }

    #[test]
    fn what_this_machine_holds_passes_and_more_fails() {
        let (soft, _) = raise_nofile_limit().unwrap();
        assert_eq!(ensure_open_files(soft, "s"), Ok(()));
        if soft < nr_open().unwrap_or(u64::MAX) {
            assert!(ensure_open_files(soft + 1, "s").is_err());
        }
    }
}
