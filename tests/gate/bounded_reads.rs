//! Untrusted files are read without waiting on them and within bounded
//! memory (issue 30, point 1), checked on the debug binary as a user runs
//! it: a FIFO as a results file or a config is refused at once, naming it;
//! hostile results files are refused (or read) with a peak RSS of at most
//! twice the file's size plus 100 MB, measured by `wait4`.
//!
//! The tests write their files a piece at a time: a child started with
//! `vfork` (as `Command::spawn` does) shares its parent's memory until it
//! execs, and the kernel counts the parent's peak as the child's own.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use benchgate::results::RunResults;

use crate::common::synthetic;

const BIN: &str = env!("CARGO_BIN_EXE_benchgate");
const MIB: u64 = 1 << 20;

/// How a child ended: exit code, stderr, peak RSS and wall time.
struct Ended {
    code: Option<i32>,
    stderr: String,
    max_rss: u64,
    took: Duration,
}

/// Runs benchgate with `args` in `dir`, killed after `limit`; its stdout
/// and stderr go to files (a refused file's text is never piped back).
fn benchgate(dir: &Path, args: &[&str], limit: Duration) -> Ended {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let started = Instant::now();
    // Reaped by wait4 below, which also gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: wait4 writes into the zeroed rusage and the status we own.
        let (rc, usage) = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            let rc = libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru);
            (rc, ru)
        };
        assert!(rc >= 0, "wait4: {}", std::io::Error::last_os_error());
        if rc == pid {
            break (status, usage);
        }
        if started.elapsed() > limit {
            // SAFETY: our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ended {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stderr: std::fs::read_to_string(&err).unwrap(),
        max_rss: usage.ru_maxrss as u64 * 1024,
        took: started.elapsed(),
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_fifo_as_results_file_or_config_is_refused_at_once_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results.json");
    mkfifo(&fifo);
    let shown = fifo.display().to_string();
    let end = benchgate(
        dir.path(),
        &["compare", "--current", &shown],
        Duration::from_secs(10),
    );
    assert_eq!(end.code, Some(2), "took {:?}: {}", end.took, end.stderr);
    assert!(
        end.stderr
            .contains(&format!("results file {shown} is a FIFO, not a file")),
        "{}",
        end.stderr
    );
    let fifo = dir.path().join("bench.toml");
    mkfifo(&fifo);
    let shown = fifo.display().to_string();
    let out = dir.path().join("out.json");
    let end = benchgate(
        dir.path(),
        &["run", "--config", &shown, "--out", out.to_str().unwrap()],
        Duration::from_secs(10),
    );
    assert_eq!(end.code, Some(2), "took {:?}: {}", end.took, end.stderr);
    assert!(
        end.stderr.contains(&format!(
            "cannot read config file {shown}: it is a FIFO, not a file"
        )),
        "{}",
        end.stderr
    );
}

/// A valid results document, written with each `(placeholder, bytes)`
/// replaced by a stream of `fill` that long: the file is never in memory.
fn write_with(path: &Path, doc: &str, parts: &[(&str, u64)], fill: &[u8]) -> u64 {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let chunk = fill.repeat((MIB as usize) / fill.len());
    let mut rest = doc;
    for (placeholder, len) in parts {
        let (before, after) = rest.split_once(placeholder).expect(placeholder);
        f.write_all(before.as_bytes()).unwrap();
        let mut left = *len;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            f.write_all(&chunk[..n]).unwrap();
            left -= n as u64;
        }
        rest = after;
    }
    f.write_all(rest.as_bytes()).unwrap();
    f.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

fn small_run() -> RunResults {
    synthetic::run(benchgate::config::Suite::default_suite(), 2, |_, _, _| {
        Some(synthetic::metrics(100.0, 50.0, 10.0))
    })
}

/// The largest peak the issue allows for a file of `size` bytes.
fn allowed(size: u64) -> u64 {
    2 * size + 100 * MIB
}

/// `compare --current FILE`, with `more` arguments; says its peak.
fn compare(dir: &Path, current: &PathBuf, more: &[&str]) -> Ended {
    let mut args = vec!["compare", "--current", current.to_str().unwrap()];
    args.extend(more);
    let end = benchgate(dir, &args, Duration::from_secs(60));
    let size = std::fs::metadata(current).unwrap().len();
    eprintln!(
        "{}: {size} bytes, peak RSS {} MiB, {:?}",
        current.display(),
        end.max_rss / MIB,
        end.took
    );
    end
}

#[test]
fn three_80_mb_free_text_fields_are_refused_within_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = small_run();
    r.run_id = "@RUN_ID@".into();
    r.git.ref_name = Some("@REF@".into());
    r.environment.cpu_model = "@CPU@".into();
    let doc = serde_json::to_string(&r).unwrap();
    let path = dir.path().join("fields.json");
    let field = 80 * 1000 * 1000;
    let size = write_with(
        &path,
        &doc,
        &[("@RUN_ID@", field), ("@REF@", field), ("@CPU@", field)],
        b"x",
    );
    let end = compare(dir.path(), &path, &["--side-by-side", "hyper"]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(end.code, Some(2), "{}", end.stderr);
    assert!(
        end.stderr
            .contains("run_id has 80000000 bytes, over the limit of 4096"),
        "{}",
        end.stderr
    );
    assert!(
        end.stderr.len() < 4096,
        "{} bytes of stderr",
        end.stderr.len()
    );
    let peak = end.max_rss;
    assert!(
        peak < 1 << 30 && peak <= allowed(size),
        "peak RSS {} MiB for a {} MiB file",
        peak / MIB,
        size / MIB
    );
}

#[test]
fn tiny_values_under_an_unknown_key_are_refused_within_bounded_memory() {
    // 64 MiB of `0,` (the 256 MiB file, a quarter the size: the
    // bound is proportional to it).
    let dir = tempfile::tempdir().unwrap();
    let doc = serde_json::to_value(small_run()).unwrap().to_string();
    let doc = format!("{},\"junk\":[@ZEROS@0]}}", &doc[..doc.len() - 1]);
    let path = dir.path().join("values.json");
    let size = write_with(&path, &doc, &[("@ZEROS@", 64 * MIB)], b"0,");
    let end = compare(dir.path(), &path, &[]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(end.code, Some(2), "{}", end.stderr);
    assert!(
        end.stderr
            .contains("the document has more than 16000000 values"),
        "{}",
        end.stderr
    );
    assert!(
        end.max_rss <= allowed(size),
        "peak RSS {} MiB for a {} MiB file",
        end.max_rss / MIB,
        size / MIB
    );
}

/// A results file of `cells` cells of 513 trials of nothing each (each
/// cell's Vec grown to 1,024 slots of 976 bytes), written a cell at a time.
fn trials_of_nothing(dir: &Path, cells: usize) -> PathBuf {
    let mut r = small_run();
    let mut cell = r.results[0].clone();
    cell.trials = vec![Default::default(); 513];
    r.results.clear();
    let doc = serde_json::to_string(&r).unwrap();
    let (before, after) = doc.split_once("\"results\":[]").unwrap();
    let path = dir.join(format!("trials-{cells}.json"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    write!(f, "{before}\"results\":[").unwrap();
    for i in 0..cells {
        cell.scenario = format!("s{}", i / 2);
        cell.client = ["hyper", "reqwest"][i % 2].into();
        let sep = if i == 0 { "" } else { "," };
        write!(f, "{sep}{}", serde_json::to_string(&cell).unwrap()).unwrap();
    }
    write!(f, "]{after}").unwrap();
    f.flush().unwrap();
    path
}

#[test]
fn trials_of_nothing_are_read_or_refused_within_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    // As many as the memory allowance takes: read, and compared.
    let path = trials_of_nothing(dir.path(), 58);
    let size = std::fs::metadata(&path).unwrap().len();
    let end = compare(dir.path(), &path, &["--side-by-side", "hyper"]);
    assert!(matches!(end.code, Some(0 | 1)), "{}", end.stderr);
    assert!(
        end.max_rss <= allowed(size),
        "peak RSS {} MiB for a {} MiB file",
        end.max_rss / MIB,
        size / MIB
    );
    // Four times as many (a 7 MB file that would take 230 MB): refused.
    let path = trials_of_nothing(dir.path(), 232);
    let size = std::fs::metadata(&path).unwrap().len();
    let end = compare(dir.path(), &path, &["--side-by-side", "hyper"]);
    assert_eq!(end.code, Some(2), "{}", end.stderr);
    assert!(
        end.stderr.contains("its items would take about ")
            && end
                .stderr
                .contains(" MiB of memory beyond the file's own size, over the limit of 64 MiB"),
        "{}",
        end.stderr
    );
    assert!(
        end.max_rss <= allowed(size),
        "peak RSS {} MiB for a {} MiB file",
        end.max_rss / MIB,
        size / MIB
    );
}
