//! The output of the programs benchgate starts (command clients and their
//! setup steps, servers under test, the built-in drivers): on disk, capped.
//!
//! A program writes its stdout and stderr to a file, never to a pipe: a pipe
//! whose reader is starved (a loaded machine, benchgate descheduled) fills and
//! blocks the program mid-window, which would read as the program's own
//! slowness. The program's handle is append-only (`O_APPEND`), and a thread of
//! benchgate folds what is new in the file into a head, a tail and a count
//! ([`fold`]) every [`FOLD_EVERY`], then gives the disk back by punching a hole
//! (`fallocate(FALLOC_FL_PUNCH_HOLE)`) over exactly the bytes it has read.
//!
//! Why a hole and not `ftruncate`: a write that lands between the fold's last
//! read and the truncate would be erased (with `O_APPEND` the program then
//! goes on at the new end, none the wiser), uncounted, and it might be a
//! window marker. A hole over the range already read cannot touch a byte past
//! it, and the file system orders the punch with the program's appends (both
//! take the inode's lock). The file's length keeps growing (a sparse file);
//! its blocks do not: under a flood the disk holds about what the program
//! wrote since the last fold. On a file system that cannot punch holes the
//! output is folded all the same but not capped on disk, and benchgate says
//! so once.
//!
//! A command client's stdout is read whole, every line of it seen by the
//! window markers' watch ([`super::markers`]), until its window has closed;
//! other streams skip to their last [`fold::TAIL_BYTES`] once the head is
//! full, counting what they skip. Reading every byte costs about what writing
//! it did, so a program flooding stdout on a busy machine can outrun it: past
//! [`MAX_BEHIND`] the watch gives up and the stream is skipped too, the disk
//! stays bounded, and the trial fails, since a marker may have been skipped.
//!
//! Folding keeps the disk bounded only as long as the folding thread gets the
//! CPU: on a loaded machine it may wait tens of milliseconds while a program
//! writes gigabytes a second. Inside a measurement window nothing may slow the
//! program, so there the bound is the thread's scheduling; once a command
//! client's window has closed ([`Capture::pause_when_behind`]), a pass that
//! finds more than [`PAUSE_AT`] not yet folded stops the program's process group
//! (`SIGSTOP`), folds everything, and lets it go on (`SIGCONT`); from its
//! first pause on the group runs at nice 19, so that the folding thread,
//! which shares its scheduling group, wins the CPU from it, and on the
//! folding thread's CPU, so that it cannot write on another CPU while the
//! folding thread waits for one. A program that writes little keeps its
//! priority for what is left of its life, its exit: a JVM's shutdown at nice
//! 19 on a loaded machine outlasted its time limit, and its fork was lost. A
//! process outside the group
//! found writing the file while the group is stopped (it escaped the group)
//! is stopped and resumed with it; once the program is over, whoever still
//! writes the file is killed before the capture finishes
//! ([`super::escapees::end_writers`]). A server under test, measured all
//! along, is stopped only once it is [`SERVER_PAUSE_AT`] ahead.

mod fold;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

pub use fold::Output;
use fold::{Fold, TAIL_BYTES};

use super::escapees;
use super::markers;
use crate::measure::resources;

/// How often new output is folded (and a window marker seen).
const FOLD_EVERY: Duration = Duration::from_millis(2);
/// The most one stream is read in one pass of the folding thread, so that a
/// flood on one stream does not keep the others (and the disk) waiting.
const PASS_BYTES: u64 = 4 << 20;
/// How far reading a watched stream may fall behind the program before it
/// gives up and skips: the disk holds at most about this much more.
const MAX_BEHIND: u64 = 16 << 20;
/// Bytes of one stream not yet folded past which a program whose window has
/// closed is stopped while its output is folded: small, so that a pass over
/// a flood (a hole punched over megabytes can take tens of milliseconds on a
/// busy disk) never runs beside the program writing more.
const PAUSE_AT: u64 = 64 << 10;
/// Bytes of one stream not yet folded past which a server under test is
/// stopped while its output is folded ([`Capture::pause_when_far_behind`]).
const SERVER_PAUSE_AT: u64 = 16 << 20;
/// One read.
const READ_BYTES: usize = 128 << 10;

/// One output file of a program, folded as it grows.
pub struct Sink {
    path: PathBuf,
    /// Read and write: `pread` for the fold, write access for the punch.
    file: File,
    /// Bytes of the file folded (read or skipped).
    offset: u64,
    /// Bytes of the file given back (the hole ends here).
    punched: u64,
    /// The punch's alignment: the file system's block size.
    block: u64,
    punching: bool,
    fold: Fold,
    lines: Option<markers::Watch>,
    buf: Vec<u8>,
}

impl Sink {
    /// Creates (or empties) the file at `path`; returns the sink and the
    /// program's end of the file, an append-only handle.
    pub fn create(path: &Path) -> io::Result<(Sink, File)> {
        use std::os::unix::fs::MetadataExt as _;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        let program = OpenOptions::new().append(true).open(path)?;
        let block = file.metadata()?.blksize().max(1);
        let sink = Sink {
            path: path.to_path_buf(),
            file,
            offset: 0,
            punched: 0,
            block,
            punching: true,
            fold: Fold::default(),
            lines: None,
            buf: vec![0; READ_BYTES],
        };
        Ok((sink, program))
    }

    /// Hands every line of the stream to `watch`: the stream is read whole
    /// for as long as the watch is wanted.
    pub(super) fn watch_lines(mut self, watch: markers::Watch) -> Sink {
        self.lines = Some(watch);
        self
    }

    /// Folds what is new in the file (at most `budget` bytes of a watched
    /// stream), then gives back what was folded; returns whether more was
    /// already there. A read that fails ends the pass: the output is a
    /// diagnostic, and a marker lost with it makes the trial time out,
    /// saying so.
    fn drain(&mut self, budget: u64) -> bool {
        let Ok(size) = self.file.metadata().map(|m| m.len()) else {
            return false;
        };
        if let Some(watch) = &self.lines {
            if !watch.wanted() {
                self.lines = None;
            } else if size - self.offset > MAX_BEHIND {
                watch.fall_behind();
                self.lines = None;
            }
        }
        // Skipping costs nothing: only a watched stream is read in passes.
        let end = match self.lines {
            Some(_) => size.min(self.offset.saturating_add(budget)),
            None => size,
        };
        // Bytes before this, once the head is full, are counted, not kept.
        let keep_from = end.saturating_sub(TAIL_BYTES as u64);
        while self.offset < end {
            let counted = self.fold.head_is_full() && self.offset < keep_from;
            if counted && self.lines.is_none() {
                self.fold.skip(keep_from - self.offset);
                self.offset = keep_from;
                continue;
            }
            let upto = if counted { keep_from } else { end };
            let want = (upto - self.offset).min(READ_BYTES as u64) as usize;
            let n = match self.file.read_at(&mut self.buf[..want], self.offset) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let bytes = &self.buf[..n];
            if let Some(watch) = &mut self.lines {
                watch.feed(bytes);
            }
            if counted {
                self.fold.skip(n as u64);
            } else {
                self.fold.push(bytes);
            }
            self.offset += n as u64;
        }
        self.punch();
        self.offset < size
    }

    /// Bytes written and not yet folded.
    fn unread(&self) -> u64 {
        let size = self.file.metadata().map_or(0, |m| m.len());
        size.saturating_sub(self.offset)
    }

    /// Punches a hole over the whole blocks folded since the last punch.
    fn punch(&mut self) {
        let upto = self.offset - self.offset % self.block;
        if !self.punching || upto <= self.punched {
            return;
        }
        // SAFETY: fallocate(2) on our own open descriptor; the range lies
        // within the file, below what has been read.
        let rc = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                self.punched as libc::off_t,
                (upto - self.punched) as libc::off_t,
            )
        };
        if rc == 0 {
            self.punched = upto;
            return;
        }
        // Interrupted: the next fold punches it.
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            self.punching = false;
            cannot_punch(&self.path, e);
        }
    }
}

/// Says once per run that output is not capped on disk.
fn cannot_punch(path: &Path, e: io::Error) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        crate::stderrln!(
            "benchgate: warning: cannot punch holes in {} ({e}): the output of the programs benchgate runs is not capped on disk; point TMPDIR to a file system that can (ext4, xfs, btrfs, tmpfs)",
            path.parent().unwrap_or(path).display()
        );
    });
}

/// A thread folding `N` output files of one program until [`finish`]ed
/// (or dropped).
///
/// [`finish`]: Capture::finish
pub struct Capture<const N: usize> {
    shared: Arc<Shared<N>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Shared<const N: usize> {
    sinks: Mutex<[Sink; N]>,
    /// The process group to stop while its output is folded, once its window
    /// has closed; locked for a whole pass, so that [`Capture::stop_pausing`]
    /// returns with the group running.
    pause: Mutex<Option<Pause>>,
    /// How many times a pass stopped the group.
    pauses: AtomicU64,
    stop: AtomicBool,
}

/// A program's process group that may be stopped while its output is folded.
struct Pause {
    pgid: u32,
    /// Bytes not yet folded past which a pass stops the group.
    at: u64,
    /// Whether the group runs at nice 19 already: from its first stop on.
    beside: bool,
    /// Processes outside the group found writing its output (escaped from
    /// it), stopped and resumed with it.
    strays: Vec<u32>,
}

impl Pause {
    /// Stops the group; false when it is gone. Stopped, its threads are put
    /// on the folding thread's CPU: there, at nice 19, they cannot run while
    /// the folding thread waits for the CPU, as they could on another.
    fn stop(&mut self) -> bool {
        // SAFETY: kill(2) of our own child's process group.
        if unsafe { libc::kill(-(self.pgid as libc::pid_t), libc::SIGSTOP) } != 0 {
            return false;
        }
        if !self.beside {
            // SAFETY: setpriority(2) on our own child's process group.
            unsafe { libc::setpriority(libc::PRIO_PGRP, self.pgid as libc::id_t, 19) };
            self.beside = true;
        }
        resources::pin_group_beside_me(self.pgid);
        self.stop_strays();
        true
    }

    fn resume(&self) {
        // SAFETY: kill(2) of our own child's process group.
        unsafe { libc::kill(-(self.pgid as libc::pid_t), libc::SIGCONT) };
        for &pid in &self.strays {
            // SAFETY: kill(2) of a process that wrote the program's output.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGCONT) };
        }
    }

    /// Stops the processes outside the group found writing its output.
    fn stop_strays(&self) {
        for &pid in &self.strays {
            // SAFETY: kill(2) of a process that wrote the program's output.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGSTOP) };
        }
    }
}

/// One pass of the folding thread over every stream: returns whether a
/// stream has more than a pass reads.
fn pass<const N: usize>(shared: &Shared<N>) -> bool {
    let mut pause = shared.pause.lock().unwrap_or_else(PoisonError::into_inner);
    let mut sinks = shared.sinks();
    let paused = match pause.as_mut() {
        Some(p) if sinks.iter().any(|s| s.unread() > p.at) => p.stop().then_some(p),
        _ => None,
    };
    if paused.is_some() {
        shared.pauses.fetch_add(1, Ordering::Relaxed);
    }
    // A stopped program writes nothing: fold all it wrote.
    let budget = if paused.is_some() {
        u64::MAX
    } else {
        PASS_BYTES
    };
    let behind = sinks
        .iter_mut()
        .fold(false, |behind, s| s.drain(budget) | behind);
    if let Some(p) = paused {
        // Written to while the group was stopped: by a process that left
        // it, which is stopped with the group from now on, and folded.
        if sinks.iter().any(|s| s.unread() > 0) {
            p.strays = escapees::writers(&sinks.each_ref().map(|s| &s.file));
            p.stop_strays();
            sinks.iter_mut().for_each(|s| {
                s.drain(u64::MAX);
            });
        }
        p.resume();
    }
    behind
}

impl<const N: usize> Shared<N> {
    fn sinks(&self) -> std::sync::MutexGuard<'_, [Sink; N]> {
        self.sinks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<const N: usize> Capture<N> {
    /// Starts folding `sinks` every [`FOLD_EVERY`], or at once while a
    /// stream has more than a pass reads.
    pub fn start(sinks: [Sink; N]) -> io::Result<Capture<N>> {
        let shared = Arc::new(Shared {
            sinks: Mutex::new(sinks),
            pause: Mutex::new(None),
            pauses: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let folding = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("benchgate-capture".into())
            .spawn(move || loop {
                let stopping = folding.stop.load(Ordering::Acquire);
                let behind = pass(&folding);
                if stopping {
                    break;
                }
                if !behind {
                    std::thread::park_timeout(FOLD_EVERY);
                }
            })?;
        Ok(Capture {
            shared,
            thread: Some(thread),
        })
    }

    /// From now on, a pass that finds more than [`PAUSE_AT`] bytes of a
    /// stream not yet folded stops process group `pgid` (the program writing it)
    /// while it folds them. Only once the program's measurement is over: a
    /// stopped program would measure slow.
    pub fn pause_when_behind(&self, pgid: u32) {
        self.pause_past(pgid, PAUSE_AT);
    }

    /// For a program measured all along (a server under test): a pass that
    /// finds more than [`SERVER_PAUSE_AT`] of a stream not yet folded stops
    /// process group `pgid` while it folds, so that the disk holds at most
    /// about that and what it writes while the folding thread waits for the
    /// CPU. A server that writes that much in a few milliseconds measures
    /// slower for it.
    pub fn pause_when_far_behind(&self, pgid: u32) {
        self.pause_past(pgid, SERVER_PAUSE_AT);
    }

    /// Pauses of `pgid` past `at` bytes not yet folded; from the first one
    /// on it runs at nice 19 beside the folding thread ([`Pause::stop`]).
    fn pause_past(&self, pgid: u32, at: u64) {
        self.set_pause(Pause {
            pgid,
            at,
            beside: false,
            strays: Vec::new(),
        });
    }

    fn set_pause(&self, p: Pause) {
        let mut pause = self
            .shared
            .pause
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *pause = Some(p);
    }

    /// How many times a pass stopped the program while it folded.
    #[cfg(test)]
    fn pauses(&self) -> u64 {
        self.shared.pauses.load(Ordering::Relaxed)
    }

    /// No more pauses; returns once no pass holds the group stopped (before
    /// the group is killed, so that a `SIGCONT` never reaches a process
    /// group that took its number since).
    pub fn stop_pausing(&self) {
        *self
            .shared
            .pause
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// What stream `i` has kept so far, everything written until now folded.
    pub fn snapshot(&self, i: usize) -> Output {
        let mut sinks = self.shared.sinks();
        sinks[i].drain(u64::MAX);
        sinks[i].fold.output()
    }

    /// Stops the thread and folds what is left: what each stream kept.
    pub fn finish(mut self) -> [Output; N] {
        self.stop();
        self.shared.sinks().each_mut().map(|s| {
            s.drain(u64::MAX);
            s.fold.output()
        })
    }

    /// Stops the thread. The program is over: a process still writing to
    /// its files escaped its group, and is ended ([`escapees::end_writers`])
    /// before what is left is folded.
    fn stop(&mut self) {
        self.stop_pausing();
        let Some(thread) = self.thread.take() else {
            return;
        };
        // Folded meanwhile: a flood goes on until the writer is gone.
        let files = self.shared.sinks().each_ref().map(|s| s.file.try_clone());
        if let Ok(files) = files.into_iter().collect::<io::Result<Vec<File>>>() {
            escapees::end_writers(&files.iter().collect::<Vec<_>>());
        }
        self.shared.stop.store(true, Ordering::Release);
        thread.thread().unpark();
        let _ = thread.join();
    }
}

impl<const N: usize> Drop for Capture<N> {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests;
