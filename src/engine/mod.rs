//! The load engine: one worker loop for both schedules.
//!
//! Each worker asks the [`Schedule`] for its next request's intended start,
//! waits for it (open loop only), sends, and hands the completion to the
//! [`Window`], which says whether it is warmup, measured or late. Latency is
//! recorded from the intended start (coordinated omission corrected); in an open
//! loop the latency from the actual send is kept too. Recorders are a few
//! mutex-guarded HDR histogram shards, so memory is fixed whatever the run length
//! or worker count.
//!
//! The loop exists twice only in its shell: [`run_async`] (tokio tasks) and
//! [`run_blocking`] (one OS thread per worker); schedule, window and recording
//! are shared. In both (and in [`lean`]), the window opens when the wait for
//! the planned end of the warmup returns, and lasts its duration from there
//! ([`Schedule::open`]): a driver descheduled past the planned opening still
//! measures a whole window.

pub mod lean;
pub mod recorder;
pub mod schedule;
pub mod warm;

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

use crate::client::reqwest_driver::BlockingClient;
use crate::client::{AsyncClient, Exchange};
use crate::config::{Load, Scenario, StopRule};
use crate::measure::resources::{self_cpu, CpuTimes};
use crate::measure::ErrorClass;
pub use recorder::{Outcome, Recorder, Shards};
pub use schedule::{Schedule, Slot, Ticket, Window};

/// What a trial does, independent of the client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialPlan {
    pub load: Load,
    pub warmup: Duration,
    pub stop: StopRule,
    pub timeout: Duration,
    /// Open loop: wait for each intended start with the precise timer
    /// ([`crate::timer`]) rather than tokio's 1 ms wheel. Off only in tests on
    /// tokio's paused clock, which the precise timer does not follow.
    pub precise_timer: bool,
}

impl TrialPlan {
    pub fn of(s: &Scenario) -> TrialPlan {
        TrialPlan {
            load: s.load,
            warmup: s.warmup,
            stop: s.stop,
            timeout: s.timeout,
            precise_timer: true,
        }
    }
}

/// Told when the measurement window opens and closes (the driver process
/// prints markers so the parent can bracket the server's counters).
pub trait WindowHooks: Send {
    /// The driver is about to open its first connection (called by the
    /// driver, before the engine starts).
    fn connecting(&mut self) {}
    /// The window opens now: called before the engine reads its CPU at the
    /// window's start, so what the hook costs (reading the starvation
    /// counters from /proc) is not in the window's CPU.
    fn opening(&mut self) {}
    fn opened(&mut self) {}
    fn closed(&mut self) {}
}

/// Hooks that do nothing.
pub struct NoHooks;
impl WindowHooks for NoHooks {}

/// A trial's shared state, starting now: worker count, schedule, recorders.
fn start(plan: &TrialPlan) -> (u32, Arc<Schedule>, Arc<Shards>) {
    let workers = plan.load.workers().max(1);
    let sched = Schedule::new(plan.load, plan.warmup, plan.stop, Instant::now());
    let shards = Shards::new(workers, sched.is_open_loop());
    (workers, Arc::new(sched), Arc::new(shards))
}

/// Runs one trial with an async driver on the current tokio runtime.
pub async fn run_async(
    client: Arc<AsyncClient>,
    plan: TrialPlan,
    hooks: &mut dyn WindowHooks,
) -> Outcome {
    let (workers, sched, shards) = start(&plan);
    // Only the worker that completes the n-th request (request-count stop)
    // sends on this; only the monitor below waits on it.
    let (close_tx, mut close_rx) = watch::channel(false);
    let close_tx = Arc::new(close_tx);
    // Set while a worker's request is in flight: what is still set when the
    // window closes and the workers are aborted was in flight at the deadline.
    let in_flight: Arc<[AtomicBool]> = (0..workers).map(|_| AtomicBool::new(false)).collect();

    let mut tasks = Vec::with_capacity(workers as usize);
    for w in 0..workers as usize {
        let (client, sched, shards) = (client.clone(), sched.clone(), shards.clone());
        let (close_tx, in_flight) = (close_tx.clone(), in_flight.clone());
        tasks.push(tokio::spawn(async move {
            // One timer per worker, re-armed per request: no timer entry is
            // created and dropped for every request.
            let timeout = tokio::time::sleep(plan.timeout);
            tokio::pin!(timeout);
            loop {
                let now = Instant::now();
                let intended = match sched.next(now) {
                    Ticket::Stop => break,
                    Ticket::Go(t) => t,
                };
                let sent = if sched.is_open_loop() {
                    wait_until(intended, plan.precise_timer).await;
                    Instant::now()
                } else {
                    now
                };
                in_flight[w].store(true, Ordering::Relaxed);
                let result = send_by(&client, w, timeout.as_mut(), sent + plan.timeout).await;
                let done = Instant::now();
                in_flight[w].store(false, Ordering::Relaxed);
                let window = sched.window();
                let (slot, closed_now) = window.complete(done);
                if closed_now {
                    let _ = close_tx.send(true);
                }
                let from = window.latency_from(intended, sent);
                shards.record(w, slot, from, sent, done, result);
            }
        }));
    }

    let window = sched.window();
    wait_until(window.planned_open(), plan.precise_timer).await;
    let cpu_start = open(&sched, hooks);
    match window.deadline() {
        Some(deadline) => {
            wait_until(deadline, plan.precise_timer).await;
            window.close();
        }
        None => {
            let _ = close_rx.wait_for(|closed| *closed).await;
        }
    }
    let cpu = self_cpu().since(&cpu_start);
    hooks.closed();
    // Requests still in flight now are abandoned: abort their workers (a task
    // only stops at an await, never inside `record`), then count them.
    for t in &tasks {
        t.abort();
    }
    for t in tasks {
        let _ = t.await;
    }
    for (w, flag) in in_flight.iter().enumerate() {
        if flag.load(Ordering::Relaxed) {
            shards.late(w);
        }
    }
    shards.into_outcome(window.elapsed(), cpu)
}

/// Opens the window now and reads the CPU at its start, between the hooks.
fn open(sched: &Schedule, hooks: &mut dyn WindowHooks) -> CpuTimes {
    hooks.opening();
    sched.open(Instant::now());
    let cpu_start = self_cpu();
    hooks.opened();
    cpu_start
}

/// Sends worker `w`'s request, timed out at `deadline` by the worker's timer.
async fn send_by(
    client: &AsyncClient,
    w: usize,
    mut timer: Pin<&mut Sleep>,
    deadline: Instant,
) -> Result<Exchange, ErrorClass> {
    timer.as_mut().reset(deadline);
    tokio::select! {
        biased;
        r = client.send(w) => r,
        _ = timer => Err(ErrorClass::Timeout),
    }
}

/// Sleeps until `t`, on the precise timer or on tokio's (paused-clock tests).
async fn wait_until(t: Instant, precise: bool) {
    if precise {
        crate::timer::sleep_until_precise(t.into_std()).await;
    } else {
        tokio::time::sleep_until(t).await;
    }
}

/// Runs one trial with the blocking driver: one OS thread per worker.
pub fn run_blocking(
    client: Arc<BlockingClient>,
    plan: TrialPlan,
    hooks: &mut dyn WindowHooks,
) -> Outcome {
    let (workers, sched, shards) = start(&plan);

    let mut threads = Vec::with_capacity(workers as usize);
    for w in 0..workers as usize {
        let (client, sched, shards) = (client.clone(), sched.clone(), shards.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("worker-{w}"))
            .stack_size(256 * 1024)
            .spawn(move || loop {
                let intended = match sched.next(Instant::now()) {
                    Ticket::Stop => break,
                    Ticket::Go(t) => t,
                };
                let now = Instant::now();
                if intended > now {
                    std::thread::sleep(intended - now);
                }
                let sent = Instant::now();
                let result: Result<Exchange, ErrorClass> = client.send();
                let done = Instant::now();
                let window = sched.window();
                let (slot, _) = window.complete(done);
                if slot == Slot::Late {
                    shards.late(w);
                    break;
                }
                let from = window.latency_from(intended, sent);
                shards.record(w, slot, from, sent, done, result);
            });
        match spawned {
            Ok(h) => threads.push(h),
            // Out of threads: run with the workers we have; the thread count shows it.
            Err(_) => break,
        }
    }

    let window = sched.window();
    sleep_until_blocking(window.planned_open());
    let cpu_start = open(&sched, hooks);
    match window.deadline() {
        Some(deadline) => {
            sleep_until_blocking(deadline);
            window.close();
        }
        None => {
            while !window.is_closed() && threads.iter().any(|t| !t.is_finished()) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
    let cpu = self_cpu().since(&cpu_start);
    hooks.closed();
    for t in threads {
        let _ = t.join();
    }
    shards.into_outcome(window.elapsed(), cpu)
}

fn sleep_until_blocking(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

#[cfg(test)]
mod tests;
