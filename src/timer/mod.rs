//! A precise timer, for the reference server's `/delay/{ms}` and for the
//! open-loop send schedule.
//!
//! tokio's timer wheel has a 1 ms tick and rounds every sleep up to the next
//! tick, so `sleep(10ms)` answers after 10-11 ms: a +5% bias on average, too
//! much for a reference whose latency is supposed to be known; and an open loop
//! at 2000 requests/s would send in 1 ms bursts and charge the tick to latency. This timer keeps
//! deadlines in a min-heap on one dedicated thread that waits with
//! `Condvar::wait_timeout` (a futex with nanosecond resolution; the thread's
//! timer slack is set to 1 ns instead of the default 50 µs) and completes a
//! oneshot per deadline.
//! The thread sleeps when there is nothing to wait for; the runtime is never
//! blocked or spun.

/// The wall clock as RFC 3339 text.
pub mod clock;
/// The timerfd wake-up of the mio event loops (h1-lean, the lean server).
pub mod wakeup;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

struct Entry {
    at: Instant,
    seq: u64,
    tx: oneshot::Sender<()>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Default)]
struct Queue {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

struct Timer {
    queue: Mutex<Queue>,
    changed: Condvar,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let t: &'static Timer = Box::leak(Box::new(Timer {
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("benchgate-timer".into())
            .spawn(move || {
                // The default 50 µs timer slack would be most of our error budget.
                // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's slack.
                unsafe {
                    libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
                }
                t.run()
            })
            .expect("spawning the timer thread");
        t
    })
}

impl Timer {
    fn run(&self) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            while q.heap.peek().is_some_and(|Reverse(e)| e.at <= now) {
                if let Some(Reverse(e)) = q.heap.pop() {
                    let _ = e.tx.send(());
                }
            }
            q = match q.heap.peek() {
                Some(Reverse(e)) => {
                    let wait = e.at.saturating_duration_since(now);
                    self.changed
                        .wait_timeout(q, wait)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.changed.wait(q).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }
}

/// Waits `wait`, to within the kernel's timer slack and one thread wake-up.
pub async fn sleep_precise(wait: Duration) {
    if !wait.is_zero() {
        sleep_until_precise(Instant::now() + wait).await;
    }
}

/// Waits until `at` (returns at once if it has passed).
pub async fn sleep_until_precise(at: Instant) {
    if at <= Instant::now() {
        return;
    }
    let (tx, rx) = oneshot::channel();
    {
        let t = timer();
        let mut q = t.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.seq += 1;
        let seq = q.seq;
        let earliest = q.heap.peek().is_none_or(|Reverse(e)| at < e.at);
        q.heap.push(Reverse(Entry { at, seq, tx }));
        if earliest {
            t.changed.notify_one();
        }
    }
    // The timer thread never drops a sender without sending; if it did, fall
    // back to tokio's timer rather than answering early.
    if rx.await.is_err() {
        tokio::time::sleep_until(at.into()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn never_early_and_orders_deadlines() {
        let start = Instant::now();
        let (a, b, c) = tokio::join!(
            async {
                sleep_precise(Duration::from_millis(30)).await;
                Instant::now()
            },
            async {
                sleep_precise(Duration::from_millis(10)).await;
                Instant::now()
            },
            async {
                sleep_precise(Duration::ZERO).await;
                Instant::now()
            }
        );
        assert!(b - start >= Duration::from_millis(10));
        assert!(a - start >= Duration::from_millis(30));
        assert!(b < a);
        assert!(c <= b);
    }
}
