"""The load loop: workers, schedule, warmup and the measured window.

Concurrency is one OS thread per worker (``BENCHGATE_CONCURRENCY`` of them): a
blocking client such as ``requests`` or ``http.client`` releases the GIL while it
waits on the socket, so N threads keep N requests in flight. Each worker calls
your factory once, on its own thread, before the clock starts, so a client that is
not thread-safe (a ``requests.Session``) gets one per worker.

- Closed loop (rate 0): each worker sends its next request as soon as the previous
  one completed; latency runs from the send.
- Open loop (rate > 0): request ``i`` is *intended* to start at ``t0 + i / rate``
  (one global sequence, so the arrival rate holds whatever the responses do); a free
  worker waits for the next intended start and sends. At most
  ``BENCHGATE_CONCURRENCY`` are in flight. Latency runs from the intended start, so
  a stalled server's queueing delay is charged to latency (coordinated omission
  corrected).

Measured requests: those that complete inside the ``duration_ms`` window
(duration mode; the reference server counts the same way), or the first
``requests`` sent after it opened (request-count mode). The window opens once the open marker is printed at
the end of the warmup. Requests in flight at the deadline are counted apart
and in no figure. The window markers ``BENCHGATE-WINDOW-OPEN``/``-CLOSE`` go to
stdout when the warmup ends and when the measurement ends, so benchgate counts the
reference server's requests over the same span.
"""

from __future__ import annotations

import threading
import time
import os
import sys
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from hdrh.histogram import HdrHistogram

from .result import ERROR_CLASSES, HIGHEST_US, Result, classify, error_class_of_status, new_histogram
from .workload import Unsupported, Workload

#: Sends one request, reads the whole response body, returns the HTTP status.
Send = Callable[[], int]
#: Builds one worker's send function (and the client behind it) for a workload.
Factory = Callable[[Workload], Send]
#: Receives the window marker lines.
Marker = Callable[[str], None]
#: Waits for benchgate's acknowledgement of a marker (see :func:`stdin_ack`).
Ack = Callable[[], None]

#: Duration mode: the load goes on this long after the window's end, so the server's
#: window, which closes when benchgate has read the close marker, sees the same steady
#: load at its closing edge as at its opening edge. Requests sent then count nowhere.
TAIL_NS = 100_000_000

OPEN_MARKER = "BENCHGATE-WINDOW-OPEN"
CLOSE_MARKER = "BENCHGATE-WINDOW-CLOSE"


def print_marker(line: str) -> None:
    """Prints a window marker on stdout and flushes, as benchgate reads it."""
    print(line, flush=True)


def stdin_ack(env: Optional[Mapping[str, str]] = None) -> Optional[Ack]:
    """benchgate acknowledges each window marker with a line on stdin once the
    reference server's window has opened (or closed), when
    ``BENCHGATE_WINDOW_ACK=stdin``: waiting for it makes the harness count the
    span the server counts however late benchgate reads stdout. ``None`` when
    benchgate does not say so (an older version, or a run by hand)."""
    if (os.environ if env is None else env).get("BENCHGATE_WINDOW_ACK") != "stdin":
        return None
    return lambda: sys.stdin.readline() and None


def _sleep_until(t_ns: int) -> None:
    while True:
        wait = t_ns - time.perf_counter_ns()
        if wait <= 0:
            return
        time.sleep(wait / 1e9)


class _Schedule:
    """The trial's clock and the tickets all workers share.

    The window opens when the open marker has been printed (``opened_at``), not at
    the scheduled end of the warmup: a main thread that wakes late must not count
    requests the server's window cannot see. In duration mode ``end`` is set with it.
    """

    def __init__(self, w: Workload, t0: int) -> None:
        self.w = w
        self.t0 = t0
        self.warm_end = t0 + w.warmup_ms * 1_000_000
        self.by_duration = w.duration_ms > 0
        self.opened_at: Optional[int] = None
        self.end: Optional[int] = None
        self.stop: Optional[int] = None
        #: Duration mode: when the close marker was printed (at or after ``end``).
        self.closed_at: Optional[int] = None
        self.ns_per_request = 1e9 / w.rate if w.rate > 0 else 0.0
        self._lock = threading.Lock()
        self._next_ticket = 0
        self._measured_sent = 0

    def open(self, now: int) -> None:
        """Called right after the open marker was printed."""
        if self.by_duration:
            self.end = now + self.w.duration_ms * 1_000_000
            self.stop = self.end + TAIL_NS
        self.opened_at = now

    def past_stop(self, t: int) -> bool:
        """True when ``t`` is past the window's end and its tail: no more sends."""
        stop = self.stop
        return stop is not None and t >= stop

    def past_end(self, t: int) -> bool:
        """True when ``t`` is at or past the end of a duration window."""
        end = self.end
        return end is not None and t >= end

    def intended_start(self) -> Optional[int]:
        """Open loop: the next request's intended start, None past the deadline."""
        with self._lock:
            i = self._next_ticket
            self._next_ticket += 1
        t = self.t0 + round(i * self.ns_per_request)
        return None if self.past_stop(t) else t

    def take_measured(self) -> bool:
        """Request-count mode: claims one of the ``requests`` measured sends."""
        with self._lock:
            self._measured_sent += 1
            return self._measured_sent <= self.w.requests


class _WorkerStats:
    """One worker's figures: nothing is shared on the hot path; merged at the end."""

    def __init__(self) -> None:
        self.latency_us = new_histogram()
        self.errors: Dict[str, int] = dict.fromkeys(ERROR_CLASSES, 0)
        self.in_flight_at_deadline = 0
        self.sent_after_window = 0
        self.last_end_ns = 0
        #: Duration mode: (start, done, error class, latency µs) completed after the
        #: scheduled end, sorted into the window or not once it has closed.
        self.after_end: List[Tuple[int, int, Optional[str], int]] = []

    def add(self, done: int, error: Optional[str], latency_us: int) -> None:
        """Records one measured completion."""
        self.last_end_ns = max(self.last_end_ns, done)
        if error is None:
            self.latency_us.record_value(min(latency_us, HIGHEST_US))
        else:
            self.errors[error] += 1


def merged(stats: Iterable[_WorkerStats]) -> Tuple[HdrHistogram, Dict[str, int]]:
    """The workers' figures together: their latency histograms and errors per class."""
    latency: HdrHistogram = new_histogram()
    errors = dict.fromkeys(ERROR_CLASSES, 0)
    for st in stats:
        latency.add(st.latency_us)
        for c in ERROR_CLASSES:
            errors[c] += st.errors[c]
    return latency, errors


def send_once(send: Send) -> Optional[str]:
    """Sends one request: its error class, None for a success. :class:`Unsupported`
    goes through: the client cannot run the workload."""
    try:
        return error_class_of_status(send())
    except Unsupported:
        raise
    except Exception as exc:  # every failed request is counted in its class
        return classify(exc)


def start_workers(
    w: Workload, factory: Factory, work: Callable[[int, Send], None]
) -> Tuple[List[threading.Thread], threading.Event]:
    """Starts one thread per worker, each building its client (``factory`` once per
    worker) and waiting until every one is built; returns the threads and the event
    that lets them run ``work(i, send)``. Raises the first factory's failure, every
    thread joined."""
    ready = threading.Barrier(w.concurrency + 1)
    go = threading.Event()
    failures: List[BaseException] = []

    def worker(i: int) -> None:
        try:
            send = factory(w)
            ready.wait()
        except threading.BrokenBarrierError:
            return  # another worker's factory failed; its failure is reported
        except BaseException as exc:  # noqa: BLE001 - raised by start_workers
            failures.append(exc)
            ready.abort()
            return
        go.wait()
        work(i, send)

    threads = [
        threading.Thread(target=worker, args=(i,), name=f"bench-worker-{i}", daemon=True)
        for i in range(w.concurrency)
    ]
    for t in threads:
        t.start()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        for t in threads:
            t.join()
        raise failures[0] from None
    return threads, go


def _work(s: _Schedule, send: Send, stats: _WorkerStats) -> None:
    open_loop = s.w.rate > 0
    while True:
        if open_loop:
            intended = s.intended_start()
            if intended is None:
                return
            _sleep_until(intended)
            start = time.perf_counter_ns()
            if s.past_stop(start):
                return  # behind schedule: nothing is sent after the tail
        else:
            start = intended = time.perf_counter_ns()
            if s.past_stop(start):
                return
        opened_at = s.opened_at
        sent_in_window = opened_at is not None and start >= opened_at
        if sent_in_window and not s.by_duration and not s.take_measured():
            return
        error = send_once(send)
        done = time.perf_counter_ns()
        if s.by_duration:  # completed in the window, as the server counts
            opened_at = s.opened_at
            if opened_at is None or done < opened_at:
                continue
            if s.past_end(done):
                # Past the scheduled end: whether it is in the window depends on when
                # the close marker was printed; decided after the run (_merge).
                stats.after_end.append((start, done, error, (done - intended) // 1000))
                continue
        elif not sent_in_window:
            continue
        stats.add(done, error, (done - intended) // 1000)


def measure(w: Workload, factory: Factory, marker: Marker = print_marker, ack: Optional[Ack] = None) -> Result:
    """Runs the workload: builds every worker's client, warms up, measures, and
    returns the window's figures. Raises what a factory raised (:class:`Unsupported`
    for a workload the client cannot run). With ``ack``, each marker is followed by
    a wait for its acknowledgement (the workers keep sending meanwhile): the window
    opens after the open marker's and closes after the close marker's."""
    failures: List[BaseException] = []
    stats = [_WorkerStats() for _ in range(w.concurrency)]
    schedule: List[_Schedule] = []

    def work(i: int, send: Send) -> None:
        try:
            _work(schedule[0], send, stats[i])
        except BaseException as exc:  # noqa: BLE001 - reported by measure() after the join
            failures.append(exc)

    threads, go = start_workers(w, factory, work)
    schedule.append(_Schedule(w, time.perf_counter_ns()))
    s = schedule[0]
    go.set()
    _sleep_until(s.warm_end)
    marker(OPEN_MARKER)
    if ack is not None:
        ack()  # the server's window is open from here
    s.open(time.perf_counter_ns())
    if s.end is not None:
        _sleep_until(s.end)
        marker(CLOSE_MARKER)
        if ack is not None:
            ack()  # the server's window is closed from here
        s.closed_at = time.perf_counter_ns()  # a late wake-up widens the window: the server's too
    for t in threads:
        t.join()
    stopped = time.perf_counter_ns()
    if not s.by_duration:
        marker(CLOSE_MARKER)
    if failures:
        raise failures[0]
    return _merge(s, stats, stopped)


def _merge(s: _Schedule, stats: List[_WorkerStats], stopped_ns: int) -> Result:
    if s.closed_at is not None:
        for st in stats:
            for start, done, error, latency_us in st.after_end:
                if done <= s.closed_at:
                    st.add(done, error, latency_us)
                elif start < s.closed_at:
                    st.in_flight_at_deadline += 1
                else:
                    st.sent_after_window += 1  # the tail
    latency, errors = merged(stats)
    opened_at = s.opened_at if s.opened_at is not None else s.warm_end
    if s.closed_at is not None:
        elapsed_ns = s.closed_at - opened_at
    else:
        # Up to the last measured completion; with none, up to when the workers stopped.
        last = max(st.last_end_ns for st in stats) or stopped_ns
        elapsed_ns = max(last - opened_at, 1)
    return Result(
        ok=latency.get_total_count(),
        errors=errors,
        elapsed_s=elapsed_ns / 1e9,
        latency_us=latency,
        in_flight_at_deadline=sum(st.in_flight_at_deadline for st in stats),
        sent_after_window=sum(st.sent_after_window for st in stats),
    )
