//! The fold racing a writer: what is kept is exactly the stream's start and
//! end, the rest counted, and the disk given back.

use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::time::Duration;

use super::*;
use crate::orchestrate::markers::{self, Mark};

/// Lines a writer appends: numbered, `MARK_OPEN` and `MARK_CLOSE` among them.
const LINES: u32 = 1_000_000;
const OPEN_AT: u32 = 300_000;
const CLOSE_AT: u32 = 700_000;

fn line(i: u32) -> String {
    match i {
        OPEN_AT => format!("{}\n", markers::MARK_OPEN),
        CLOSE_AT => format!("{}\n", markers::MARK_CLOSE),
        _ => format!("{i:08}\n"),
    }
}

/// The whole stream.
fn stream() -> Vec<u8> {
    (0..LINES).map(line).collect::<String>().into_bytes()
}

/// Appends every line through `program` in writes of 1 to 3000 lines, now
/// and then pausing so that folds land between writes.
fn write_lines(mut program: File) {
    let (mut i, mut seed, mut writes) = (0, 12345u32, 0);
    while i < LINES {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = (seed >> 16) % 3000 + 1;
        let batch: String = (i..(i + n).min(LINES)).map(line).collect();
        program.write_all(batch.as_bytes()).unwrap();
        i += n;
        writes += 1;
        if writes % 16 == 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// Disk blocks the file holds, in bytes.
fn allocated(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks() * 512
}

/// Checks kept output against the stream written so far (`o.total()`
/// bytes of `all`): head and tail are its first and last bytes.
fn check_parts(o: &Output, all: &[u8]) {
    let (head, tail) = o.parts();
    let total = o.total() as usize;
    assert!(total <= all.len(), "{total} bytes counted of {}", all.len());
    same(head, &all[..head.len()], "the head is the stream's start");
    same(
        tail,
        &all[total - tail.len()..total],
        "the tail is the stream's end",
    );
}

/// `kept == want`, or where they first differ.
fn same(kept: &[u8], want: &[u8], what: &str) {
    if let Some(i) = (0..kept.len()).find(|&i| kept[i] != want[i]) {
        let at = |b: &[u8]| {
            String::from_utf8_lossy(&b[i.saturating_sub(20)..(i + 20).min(b.len())]).into_owned()
        };
        panic!(
            "{what}: byte {i} of {} differs: kept {:?}, written {:?}",
            kept.len(),
            at(kept),
            at(want)
        );
    }
}

/// Runs the writer against a capture (watching lines or not) and checks the
/// kept output against what was written: head and tail are its first and
/// last bytes, whole lines, and the omitted count is exactly the rest.
fn race(watch: bool) -> Option<markers::Markers> {
    let all = stream();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let (sink, program) = Sink::create(&path).unwrap();
    let (sink, markers) = if watch {
        let (w, m) = markers::channel(false);
        (sink.watch_lines(w), Some(m))
    } else {
        (sink, None)
    };
    let capture = Capture::start([sink]).unwrap();
    let writer = std::thread::spawn(move || write_lines(program));
    // Snapshots while it writes, as a server's output is read.
    let mut snapshots = 0;
    while !writer.is_finished() {
        check_parts(&capture.snapshot(0), &all);
        snapshots += 1;
        std::thread::sleep(Duration::from_millis(3));
    }
    writer.join().unwrap();
    let [o] = capture.finish();

    assert_eq!(o.total(), all.len() as u64, "every byte counted once");
    assert!(o.omitted() > 0 && snapshots > 0);
    check_parts(&o, &all);
    let (head, tail) = o.parts();
    assert_eq!(head.last(), Some(&b'\n'), "whole lines");
    assert_eq!(all[all.len() - tail.len() - 1], b'\n', "whole lines");
    assert!(head.len() > fold::HEAD_BYTES - 9 && tail.len() > TAIL_BYTES - 9);
    let text = o.text();
    assert!(text.contains(&format!("omitted ({} bytes) …\n", o.omitted())));

    // The file is as long as the stream, its disk given back.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), all.len() as u64);
    assert!(allocated(&path) <= 64 << 10, "{} bytes", allocated(&path));
    markers
}

#[test]
fn a_writer_racing_the_fold_loses_and_repeats_nothing() {
    race(false);
}

#[test]
fn a_watched_stream_is_read_whole_and_its_markers_seen() {
    let mut markers = race(true).unwrap();
    assert_eq!(markers.poll(Duration::ZERO), Some(Mark::Close));
    assert!(markers.opened, "the open marker came first");
}

#[test]
fn a_watch_far_behind_gives_up_and_the_stream_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let (sink, mut program) = Sink::create(&path).unwrap();
    let (watch, mut markers) = markers::channel(false);
    // More than the watch may fall behind, before it reads anything.
    let block = b"x\n".repeat(1 << 19);
    let blocks = MAX_BEHIND / block.len() as u64 + 2;
    for _ in 0..blocks {
        program.write_all(&block).unwrap();
    }
    let capture = Capture::start([sink.watch_lines(watch)]).unwrap();
    let started = std::time::Instant::now();
    while !markers.behind() {
        assert!(started.elapsed() < Duration::from_secs(10), "never gave up");
        std::thread::sleep(Duration::from_millis(1));
    }
    // What was skipped is counted, and the disk given back.
    program.write_all(b"end\n").unwrap();
    let [o] = capture.finish();
    assert_eq!(o.total(), blocks * block.len() as u64 + 4);
    assert!(o.text().ends_with("x\nx\nend\n"));
    assert!(allocated(&path) <= 64 << 10, "{} bytes", allocated(&path));
    // With the watch gone, waiting for a marker still waits.
    let waited = std::time::Instant::now();
    assert_eq!(markers.poll(Duration::from_millis(20)), None);
    assert!(waited.elapsed() >= Duration::from_millis(20));
}

#[test]
fn a_watch_no_longer_wanted_is_skipped_like_any_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, mut program) = Sink::create(&dir.path().join("out")).unwrap();
    let (watch, mut markers) = markers::channel(false);
    markers.done();
    let flood = b"x\n".repeat(MAX_BEHIND as usize);
    program.write_all(&flood).unwrap();
    program.write_all(b"BENCHGATE-WINDOW-OPEN\n").unwrap();
    program.write_all(&flood).unwrap();
    let capture = Capture::start([sink.watch_lines(watch)]).unwrap();
    let [o] = capture.finish();
    assert_eq!(o.total(), 2 * flood.len() as u64 + 22);
    assert!(!markers.behind(), "skipped, not given up");
    assert_eq!(markers.poll(Duration::ZERO), None, "not read");
}

/// Field `n` (1-based, as in proc(5)) of `/proc/PID/stat`.
fn stat_field(pid: u32, n: usize) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The command name, field 2, may hold spaces: count from its end.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split(' ').nth(n - 3).unwrap().to_owned()
}

#[test]
fn a_program_flooding_past_its_window_is_paused_lowered_pinned_and_goes_on() {
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let (sink, program) = Sink::create(&dir.path().join("out")).unwrap();
    let capture = Capture::start([sink]).unwrap();
    const FLOOD: u64 = 6 << 20;
    let mut child = Command::new("sh")
        .args([
            "-c",
            &format!("read go; head -c {FLOOD} /dev/zero; read done || true"),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::from(program))
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = child.id();
    capture.pause_past(pid, 64 << 10);
    // Until its first pause it keeps its priority (what is left of a program
    // that writes little is its exit, which must not starve).
    let own = stat_field(std::process::id(), 19);
    assert_eq!(stat_field(pid, 19), own, "nice before any pause");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go\n").unwrap();
    // And is stopped while what it wrote is folded.
    let started = std::time::Instant::now();
    while capture.pauses() == 0 {
        assert!(started.elapsed() < Duration::from_secs(20), "never paused");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Stopped once, it runs at the lowest priority, on the folding thread's
    // CPU, and only there.
    assert_eq!(stat_field(pid, 19), "19", "nice once paused");
    let cpus = |status: String| {
        let line = status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .unwrap();
        line.split_whitespace().nth(1).unwrap().to_owned()
    };
    let on = cpus(std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap());
    assert!(
        on.parse::<usize>().is_ok(),
        "the program on one CPU, not {on}"
    );
    // (Other tests' folding threads may run too: one of them is ours.)
    let beside = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .any(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            comm.starts_with("benchgate-captu") && !status.is_empty() && cpus(status) == on
        });
    assert!(beside, "the program beside the folding thread, on CPU {on}");
    // No pass leaves it stopped: it reads its line and exits.
    capture.stop_pausing();
    assert_ne!(stat_field(pid, 3), "T", "left stopped");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let [o] = capture.finish();
    assert_eq!(o.total(), FLOOD, "every byte counted once");
}
