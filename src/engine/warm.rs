//! A warm run (the window loop, `orchestrate::window_loop`): the workers
//! start once and keep sending, unmeasured, for the life of the driver
//! process; a window only switches counting on and off, so it costs its
//! length plus the parent's command round trip, never a worker restart.
//!
//! Each window is a phase of its own: a fresh [`Schedule`] opened at the
//! window's open (open loop: its arrivals timed from then, at the rate) and
//! fresh recorder [`Shards`]; between windows a phase that never opens (every
//! completion is warmup). A completion is classified by the phase current
//! when it completes, as in the one-window engine: a request in flight at the
//! open that completes after it is measured (its latency from the open, or
//! from its send if later, [`super::Window::latency_from`]); one in flight at
//! the close is counted as in flight at the deadline, never in a figure. The
//! close waits until no worker still records into the closed phase, then
//! merges its shards.
//!
//! A pause stops the workers from taking a new ticket and returns once none
//! is between a ticket and its completion's record; a resume lets them go.

use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::{Outcome, Schedule, Shards, Slot, Ticket, TrialPlan};
use crate::client::reqwest_driver::BlockingClient;
use crate::client::{AsyncClient, Exchange};
use crate::config::StopRule;
use crate::measure::resources::{self_cpu, CpuTimes};
use crate::measure::ErrorClass;

/// A phase's window never ends on its own: the parent closes it.
const FAR: Duration = Duration::from_secs(86_400);

/// A window, or the unmeasured time between windows.
struct Phase {
    sched: Schedule,
    shards: Shards,
    /// Workers recording a completion into this phase now.
    recording: AtomicU32,
}

impl Phase {
    /// A window opened at `open`, or (`None`) an unmeasured phase from now,
    /// whose planned opening nobody waits for.
    fn new(plan: &TrialPlan, workers: u32, open: Option<Instant>) -> Arc<Phase> {
        let start = open.unwrap_or_else(Instant::now);
        let sched = Schedule::new(plan.load, Duration::ZERO, StopRule::Duration(FAR), start);
        if let Some(at) = open {
            sched.open(at);
        }
        let shards = Shards::new(workers, sched.is_open_loop());
        Arc::new(Phase {
            sched,
            shards,
            recording: AtomicU32::new(0),
        })
    }
}

/// What the workers and the window's owner share.
struct Shared {
    plan: TrialPlan,
    current: Mutex<Arc<Phase>>,
    /// Bumped at each swap: a worker reloads its phase when it changed.
    epoch: AtomicU64,
    /// Per worker: between taking a ticket and recording its completion.
    busy: Box<[AtomicBool]>,
    /// Per worker: a request sent and not completed.
    in_flight: Box<[AtomicBool]>,
    paused: AtomicBool,
    stopped: AtomicBool,
}

/// A worker's phase, reloaded when the epoch moved.
struct Cached {
    epoch: u64,
    phase: Arc<Phase>,
}

enum Begin {
    Go,
    Wait,
    Stop,
}

impl Shared {
    fn load(&self) -> Cached {
        let phase = self.current.lock().unwrap_or_else(|p| p.into_inner());
        Cached {
            epoch: self.epoch.load(SeqCst),
            phase: phase.clone(),
        }
    }

    fn refresh(&self, c: &mut Cached) {
        if self.epoch.load(SeqCst) != c.epoch {
            *c = self.load();
        }
    }

    fn swap(&self, phase: Arc<Phase>) -> Arc<Phase> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let old = std::mem::replace(&mut *current, phase);
        self.epoch.fetch_add(1, SeqCst);
        old
    }

    /// Before a worker takes a ticket: busy, unless paused or stopped.
    fn begin(&self, w: usize) -> Begin {
        self.busy[w].store(true, SeqCst);
        if self.stopped.load(SeqCst) {
            self.busy[w].store(false, SeqCst);
            return Begin::Stop;
        }
        if self.paused.load(SeqCst) {
            self.busy[w].store(false, SeqCst);
            return Begin::Wait;
        }
        Begin::Go
    }

    /// The next intended start in the worker's phase; `None`: the phase's
    /// window has closed (the next phase is about to be swapped in).
    fn ticket(&self, w: usize, c: &mut Cached) -> Option<Instant> {
        self.refresh(c);
        match c.phase.sched.next(Instant::now()) {
            Ticket::Go(t) => Some(t),
            Ticket::Stop => {
                self.busy[w].store(false, SeqCst);
                None
            }
        }
    }

    /// Records a completion in the phase current now.
    fn complete(
        &self,
        w: usize,
        c: &mut Cached,
        (intended, sent, done): (Instant, Instant, Instant),
        result: Result<Exchange, ErrorClass>,
    ) {
        self.in_flight[w].store(false, SeqCst);
        self.refresh(c);
        let p = &c.phase;
        p.recording.fetch_add(1, SeqCst);
        // Pairs with the fence in `Warm::close`: a record the close does not
        // wait for sees the window closed.
        fence(SeqCst);
        let window = p.sched.window();
        let (slot, _) = window.complete(done);
        // Late: counted by the close from the in-flight flags.
        if slot != Slot::Late {
            let from = window.latency_from(intended, sent);
            p.shards.record(w, slot, from, sent, done, result);
        }
        p.recording.fetch_sub(1, SeqCst);
        self.busy[w].store(false, SeqCst);
    }
}

/// The workers of a warm run, and the window they count in.
pub struct Warm {
    shared: Arc<Shared>,
    /// The async driver's runtime (its workers are tasks on it); `None`:
    /// the blocking driver's threads.
    runtime: Option<Runtime>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    opened: Option<(Instant, CpuTimes)>,
    first_response_ns: Option<u64>,
    windows: u32,
}

impl Warm {
    fn shared(plan: TrialPlan) -> Arc<Shared> {
        let workers = plan.load.workers().max(1);
        let flags = || (0..workers).map(|_| AtomicBool::new(false)).collect();
        Arc::new(Shared {
            plan,
            current: Mutex::new(Phase::new(&plan, workers, None)),
            epoch: AtomicU64::new(0),
            busy: flags(),
            in_flight: flags(),
            paused: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
        })
    }

    /// Starts an async driver's workers on `runtime`, unmeasured.
    pub fn start_async(runtime: Runtime, client: Arc<AsyncClient>, plan: TrialPlan) -> Warm {
        let shared = Warm::shared(plan);
        let tasks = (0..shared.busy.len())
            .map(|w| runtime.spawn(async_worker(w, client.clone(), shared.clone())))
            .collect();
        Warm::new(shared, Some(runtime), tasks)
    }

    /// Starts the blocking driver's worker threads, unmeasured.
    pub fn start_blocking(client: Arc<BlockingClient>, plan: TrialPlan) -> Warm {
        let shared = Warm::shared(plan);
        for w in 0..shared.busy.len() {
            let (client, shared) = (client.clone(), shared.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("worker-{w}"))
                .stack_size(256 * 1024)
                .spawn(move || blocking_worker(w, &client, &shared));
            // Out of threads: run with the workers we have.
            if spawned.is_err() {
                break;
            }
        }
        Warm::new(shared, None, Vec::new())
    }

    fn new(
        shared: Arc<Shared>,
        runtime: Option<Runtime>,
        tasks: Vec<tokio::task::JoinHandle<()>>,
    ) -> Warm {
        Warm {
            shared,
            runtime,
            tasks,
            opened: None,
            first_response_ns: None,
            windows: 0,
        }
    }

    fn workers(&self) -> u32 {
        self.shared.busy.len() as u32
    }

    /// The async runtime's context: its clock (paused in tests).
    fn clock(&self) -> Option<tokio::runtime::EnterGuard<'_>> {
        self.runtime.as_ref().map(Runtime::enter)
    }

    /// The next message on `rx`, the workers running meanwhile (an async
    /// driver's current-thread runtime runs them only inside `block_on`).
    pub fn recv<T>(&self, rx: &mut UnboundedReceiver<T>) -> Option<T> {
        match &self.runtime {
            Some(rt) => rt.block_on(rx.recv()),
            None => rx.blocking_recv(),
        }
    }

    /// Sleeps `d`, the workers running.
    pub fn sleep(&self, d: Duration) {
        match &self.runtime {
            Some(rt) => rt.block_on(async { tokio::time::sleep(d).await }),
            None => std::thread::sleep(d),
        }
    }

    /// Opens a window now: counting starts.
    pub fn open(&mut self) {
        let _clock = self.clock();
        let opened = Instant::now();
        let phase = Phase::new(&self.shared.plan, self.workers(), Some(opened));
        let cpu = self_cpu();
        let before = self.shared.swap(phase);
        if self.windows == 0 {
            // The unmeasured phase from the start: its first response ends
            // the client's start-up.
            self.first_response_ns = before
                .shards
                .into_outcome(Duration::ZERO, CpuTimes::default())
                .recorder
                .first_response_ns;
        }
        self.windows += 1;
        self.opened = Some((opened, cpu));
    }

    /// When the client's first response (warmup included) arrived, on the
    /// system-wide monotonic clock; known once a window opened.
    pub fn first_response_ns(&self) -> Option<u64> {
        self.first_response_ns
    }

    /// Closes the open window and returns what it measured (its length and
    /// the process's CPU from its open to its close).
    pub fn close(&mut self) -> Option<Outcome> {
        let (opened, cpu_start) = self.opened.take()?;
        let _clock = self.clock();
        let phase = self.shared.load().phase;
        phase.sched.window().close();
        let elapsed = opened.elapsed();
        let cpu = self_cpu().since(&cpu_start);
        let late: Vec<usize> = (self.shared.in_flight.iter().enumerate())
            .filter(|(_, f)| f.load(SeqCst))
            .map(|(w, _)| w)
            .collect();
        self.shared
            .swap(Phase::new(&self.shared.plan, self.workers(), None));
        fence(SeqCst);
        while phase.recording.load(SeqCst) > 0 {
            std::thread::yield_now();
        }
        for w in late {
            phase.shards.late(w);
        }
        Some(phase.shards.into_outcome(elapsed, cpu))
    }

    /// Stops the workers from starting requests; returns once none is in
    /// flight (each ends within the request timeout).
    pub fn pause(&mut self) {
        self.shared.paused.store(true, SeqCst);
        while self.shared.busy.iter().any(|b| b.load(SeqCst)) {
            self.sleep(Duration::from_millis(1));
        }
    }

    pub fn resume(&mut self) {
        self.shared.paused.store(false, SeqCst);
    }
}

impl Drop for Warm {
    fn drop(&mut self) {
        self.shared.stopped.store(true, SeqCst);
        for t in &self.tasks {
            t.abort();
        }
    }
}

async fn async_worker(w: usize, client: Arc<AsyncClient>, shared: Arc<Shared>) {
    let plan = shared.plan;
    let timeout = tokio::time::sleep(plan.timeout);
    tokio::pin!(timeout);
    let mut c = shared.load();
    loop {
        match shared.begin(w) {
            Begin::Stop => break,
            Begin::Wait => {
                tokio::time::sleep(Duration::from_millis(1)).await;
                continue;
            }
            Begin::Go => {}
        }
        let Some(intended) = shared.ticket(w, &mut c) else {
            tokio::task::yield_now().await;
            continue;
        };
        let sent = if c.phase.sched.is_open_loop() {
            super::wait_until(intended, plan.precise_timer).await;
            Instant::now()
        } else {
            intended
        };
        shared.in_flight[w].store(true, SeqCst);
        let result = super::send_by(&client, w, timeout.as_mut(), sent + plan.timeout).await;
        let done = Instant::now();
        shared.complete(w, &mut c, (intended, sent, done), result);
    }
}

fn blocking_worker(w: usize, client: &BlockingClient, shared: &Shared) {
    let mut c = shared.load();
    loop {
        match shared.begin(w) {
            Begin::Stop => break,
            Begin::Wait => {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            Begin::Go => {}
        }
        let Some(intended) = shared.ticket(w, &mut c) else {
            std::thread::yield_now();
            continue;
        };
        let now = Instant::now();
        if intended > now {
            std::thread::sleep(intended - now);
        }
        let sent = Instant::now();
        shared.in_flight[w].store(true, SeqCst);
        let result = client.send();
        let done = Instant::now();
        shared.complete(w, &mut c, (intended, sent, done), result);
    }
}

#[cfg(test)]
#[path = "warm_tests.rs"]
mod tests;
