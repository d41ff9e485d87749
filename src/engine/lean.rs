//! `h1-lean`: a load generator at wrk's cost, for servers under test.
//!
//! The name says what it is: HTTP/1.1 only (plain TCP, no TLS, no HTTP/2),
//! keep-alive, and lean: no client library between the schedule and the
//! socket. It stands for no application's HTTP stack (that is what the hyper
//! and reqwest drivers are for); it is the tool that pushes a server hardest
//! per client CPU.
//!
//! How (wrk's design, with the engine's schedule and recording):
//! - One thread, one epoll set (`mio`), one state machine per connection
//!   ([`conn`](crate::client::lean::conn)); sockets registered once, edge-triggered, so a request costs a
//!   `write`, a `read` and a share of an `epoll_wait`.
//! - The request's bytes are built once ([`request`](crate::client::lean::request)); responses are parsed in
//!   place and their bodies counted, never copied ([`response`](crate::client::lean::response): Content-Length,
//!   chunked with extensions and trailers, until-close, HEAD, 1xx).
//! - The engine's [`Schedule`] hands out intended starts (closed loop: now;
//!   open loop: start + i / rate) and its [`Window`](crate::engine::Window)
//!   classifies completions; latency is recorded from the intended start
//!   (coordinated omission corrected, as wrk2 does) into the same
//!   [`Recorder`], so results are those of every other driver.
//! - Workers are the scenario's concurrency (or `max_in_flight`): each holds
//!   one ticket (its next request's intended start) at a time. Connections are
//!   as many, or `pool` if fewer; a due ticket waits for a free connection, and
//!   that wait is part of its latency, as with the other drivers' pools.
//! - Beyond a quarter of the ephemeral port range, connections bind source
//!   addresses 127.0.0.x in turn ([`source`](crate::client::source)).
//! - Timeouts: a request not done `timeout` after it was handed to a
//!   connection fails as `timeout` and its connection is closed. They are found
//!   by a scan of the connections at the earliest deadline (no per-request
//!   timer). Open-loop starts and the window's edges wake the loop through a
//!   timerfd ([`wakeup`](crate::timer::wakeup)), at nanosecond resolution.
//! - Errors fall in the same classes as the hyper driver's
//!   ([`classify_chain`](crate::client::classify_chain)); a malformed response
//!   is a `read` error. A response with `Connection: close` (or that ends
//!   with the connection) closes it, and the next request reconnects.

use std::collections::VecDeque;
use std::time::Duration;

use mio::{Events, Poll, Token};
use tokio::time::Instant;

use super::{Outcome, Recorder, Schedule, Ticket, TrialPlan, WindowHooks};
use crate::client::lean::conn::{Completion, Conn, InFlight};
use crate::client::lean::request::WireRequest;
use crate::client::source::{source_addresses, source_of};
use crate::client::{CpuSpin, RequestTemplate};
use crate::config::ClientSpec;
use crate::measure::resources::{self_cpu, CpuTimes};
use crate::measure::ErrorClass;
use crate::timer::wakeup::Wakeup;

/// The timerfd's token; connections use their index.
const WAKEUP: Token = Token(usize::MAX);
/// Readiness events taken per `epoll_wait`.
const EVENTS: usize = 1024;

/// Runs one trial on this thread and returns what it measured.
pub fn run(
    spec: &ClientSpec,
    template: &RequestTemplate,
    plan: TrialPlan,
    hooks: &mut dyn WindowHooks,
) -> anyhow::Result<Outcome> {
    let request = WireRequest::new(template)?;
    let workers = plan.load.workers().max(1) as usize;
    let connections = spec
        .pool
        .map_or(workers, |p| (p as usize).min(workers))
        .max(1);
    let sources = source_addresses(connections as u64, request.addr.ip());
    let poll = Poll::new()?;
    let wakeup = Wakeup::new(poll.registry(), WAKEUP)?;
    let start = Instant::now();
    let sched = Schedule::new(plan.load, plan.warmup, plan.stop, start);
    let mut generator = Generator {
        conns: (0..connections)
            .map(|i| Conn::new(Token(i), &request, source_of(&sources, i)))
            .collect(),
        free: (0..connections).rev().collect(),
        tickets: VecDeque::with_capacity(workers),
        recorder: Recorder::new(sched.is_open_loop()),
        sched,
        request,
        poll,
        wakeup,
        timeout: plan.timeout,
        next_timeout_scan: start + plan.timeout,
        spin: CpuSpin::new(spec.inject_cpu_ns),
        cpu_start: None,
        cpu: CpuTimes::default(),
        closed: false,
        hooks,
    };
    for _ in 0..workers {
        generator.take_ticket(start);
    }
    generator.run()?;
    Ok(Outcome {
        elapsed: generator.sched.window().elapsed(),
        cpu: generator.cpu,
        recorder: generator.recorder,
    })
}

/// The event loop's state.
struct Generator<'h> {
    poll: Poll,
    wakeup: Wakeup,
    request: WireRequest,
    conns: Vec<Conn>,
    /// Connections without a request; the most recently freed is used first.
    free: Vec<usize>,
    /// Workers' next intended starts, earliest first (the schedule issues
    /// them in order).
    tickets: VecDeque<Instant>,
    sched: Schedule,
    recorder: Recorder,
    timeout: Duration,
    /// No request can time out before this.
    next_timeout_scan: Instant,
    spin: CpuSpin,
    /// This process's CPU when the window opened (`None`: not open yet).
    cpu_start: Option<CpuTimes>,
    /// CPU spent while the window was open.
    cpu: CpuTimes,
    closed: bool,
    hooks: &'h mut dyn WindowHooks,
}

impl Generator<'_> {
    fn run(&mut self) -> std::io::Result<()> {
        let mut events = Events::with_capacity(EVENTS);
        loop {
            let now = Instant::now();
            self.on_time(now);
            if !self.closed {
                self.dispatch();
            }
            if self.closed {
                return Ok(());
            }
            let wait = self.arm(now)?;
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for event in events.iter() {
                if event.token() == WAKEUP {
                    self.wakeup.fired(Instant::now());
                    continue;
                }
                let i = event.token().0;
                if let Some(done) = self.conns[i].on_event(event, &self.request) {
                    self.finish(i, Instant::now(), done);
                    if self.closed {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// What time alone decides: the window opening or reaching its
    /// deadline, and requests timing out.
    fn on_time(&mut self, now: Instant) {
        let window = self.sched.window();
        if self.cpu_start.is_none() && now >= window.planned_open() {
            // However late this wake-up, the window lasts its duration from it.
            self.cpu_start = Some(super::open(&self.sched, self.hooks));
        }
        if window.deadline().is_some_and(|d| now >= d) {
            window.close();
            self.close_window(now);
            return;
        }
        if now >= self.next_timeout_scan {
            self.expire(now);
        }
    }

    /// Fails every request past its deadline; sets when to look again.
    fn expire(&mut self, now: Instant) {
        let mut next = now + self.timeout;
        for i in 0..self.conns.len() {
            let Some(flight) = self.conns[i].flight else {
                continue;
            };
            if flight.deadline <= now {
                self.conns[i].close();
                self.finish(i, now, Err(ErrorClass::Timeout));
                if self.closed {
                    return;
                }
            } else {
                next = next.min(flight.deadline);
            }
        }
        self.next_timeout_scan = next;
    }

    /// Hands due tickets to free connections (as many as were free on entry:
    /// a request that fails at once frees its connection again, and the loop
    /// polls before retrying, so the window's deadline is always seen).
    fn dispatch(&mut self) {
        for _ in 0..self.free.len() {
            let now = Instant::now();
            match self.tickets.front() {
                Some(&intended) if intended <= now => {
                    let Some(i) = self.free.pop() else { return };
                    self.tickets.pop_front();
                    let flight = InFlight {
                        intended,
                        sent: now,
                        deadline: now + self.timeout,
                    };
                    self.spin.burn();
                    let registry = self.poll.registry();
                    if let Some(done) = self.conns[i].send(flight, &self.request, registry) {
                        self.finish(i, Instant::now(), done);
                        if self.closed {
                            return;
                        }
                    }
                }
                _ => return,
            }
        }
    }

    /// A request ended at `done`: records it, frees its connection, and
    /// gives its worker the next ticket.
    fn finish(&mut self, i: usize, done: Instant, result: Completion) {
        let Some(flight) = self.conns[i].flight.take() else {
            return;
        };
        self.free.push(i);
        let window = self.sched.window();
        let (slot, closed_now) = window.complete(done);
        let from = window.latency_from(flight.intended, flight.sent);
        self.recorder.record(slot, from, flight.sent, done, result);
        if closed_now {
            self.close_window(done);
        } else {
            self.take_ticket(done);
        }
    }

    fn take_ticket(&mut self, now: Instant) {
        if let Ticket::Go(intended) = self.sched.next(now) {
            self.tickets.push_back(intended);
        }
    }

    /// The window closed (deadline, or the n-th measured completion): reads
    /// the CPU, tells the hooks, and counts what was in flight.
    fn close_window(&mut self, now: Instant) {
        self.closed = true;
        if let Some(start) = self.cpu_start {
            self.cpu = self_cpu().since(&start);
        }
        self.hooks.closed();
        let on_connections = self.conns.iter().filter(|c| c.busy()).count();
        // Due tickets beyond the free connections wait for a connection:
        // sent, in the other drivers' terms (they wait in the pool).
        let due = self.tickets.iter().take_while(|t| **t <= now).count();
        let waiting = due.saturating_sub(self.free.len());
        self.recorder.counts.in_flight_at_deadline += (on_connections + waiting) as u64;
    }

    /// Sets the precise wake-up to the next instant that matters and returns
    /// how long `epoll_wait` may block (until the next timeout scan; zero when
    /// a due ticket has a free connection to go on).
    fn arm(&mut self, now: Instant) -> std::io::Result<Duration> {
        let window = self.sched.window();
        let opening = self.cpu_start.is_none().then_some(window.planned_open());
        let next_start = self
            .tickets
            .front()
            .copied()
            .filter(|_| !self.free.is_empty());
        if next_start.is_some_and(|t| t <= now) {
            return Ok(Duration::ZERO);
        }
        let precise = [opening, window.deadline(), next_start]
            .into_iter()
            .flatten()
            .min();
        self.wakeup.set(precise)?;
        Ok(self.next_timeout_scan.saturating_duration_since(now))
    }
}
