//! Process limits a trial needs: the open-file limit for thousands of
//! connections. Linux.

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
        let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|s| s.trim().parse::<libc::rlim_t>().ok());
        for target in [Some(lim.rlim_max), nr_open.map(|n| n.min(lim.rlim_max))]
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
        Some((lim.rlim_cur as u64, lim.rlim_max as u64))
    }
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
}
