"""The window loop (docs/external-clients.md, "The window loop"): one process
measures many windows after one warmup.

The workers send from the start to the exit; benchgate opens and closes window k
on stdin, and the harness answers each close with the window's result record on
one stdout line. A request counts in window k when it completes between the
reading of ``BENCHGATE-WINDOW-OPEN k`` and of ``BENCHGATE-WINDOW-CLOSE k``, as the
reference server counts its own window. Open loop: requests are scheduled at the
rate from the start, and again from each resume; latency from the intended start.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Callable, Iterable, Mapping, Optional

from .loop import Factory, Send, _WorkerStats, merged, send_once, start_workers
from .result import Result
from .workload import Workload

DECLARE = "BENCHGATE-WINDOWS-LOOP"
READY = "BENCHGATE-READY"
OPEN = "BENCHGATE-WINDOW-OPEN "
CLOSE = "BENCHGATE-WINDOW-CLOSE "
RESULT = "BENCHGATE-WINDOW-RESULT "
PAUSE = "BENCHGATE-PAUSE"
PAUSED = "BENCHGATE-PAUSED"
RESUME = "BENCHGATE-RESUME"
EXIT = "BENCHGATE-EXIT"


def offered(w: Workload, env: Mapping[str, str]) -> bool:
    """Whether benchgate offers the loop and this workload can take it (a
    duration, acknowledgements on stdin)."""
    return env.get("BENCHGATE_WINDOWS") == "loop" and env.get("BENCHGATE_WINDOW_ACK") == "stdin" and w.duration_ms > 0


class _Window:
    """One window: a slot per worker, each written under its own lock."""

    def __init__(self, workers: int) -> None:
        self.k = 0  # set, with opened_at, before the window is published
        self.opened_at = 0
        self.stats = [_WorkerStats() for _ in range(workers)]
        self.locks = [threading.Lock() for _ in range(workers)]
        self.closed = False
        #: When the close was read: a completion after it counts nowhere.
        self.closed_at: Optional[int] = None

    def close(self, now: int) -> Result:
        for lock in self.locks:
            with lock:  # the slot's writer, if any, is done: it sees closed from here
                self.closed = True
        latency, errors = merged(self.stats)
        return Result(
            ok=latency.get_total_count(), errors=errors, elapsed_s=max(now - self.opened_at, 1) / 1e9, latency_us=latency
        )


class _Loop:
    def __init__(self, w: Workload) -> None:
        self.w = w
        self.ns_per_request = 1e9 / w.rate if w.rate > 0 else 0.0
        self.current: Optional[_Window] = None
        self.gate = threading.Condition()
        self.paused = False
        self.stopping = False
        self.parked = 0
        self.alive = w.concurrency
        self.epoch = 0
        self.schedule_start = time.perf_counter_ns()
        self.next_ticket = 0

    def work(self, slot: int, send: Send) -> None:
        open_loop = self.w.rate > 0
        while True:
            with self.gate:
                if self.paused and not self.stopping:
                    self.parked += 1
                    if self.parked >= self.alive:
                        self.gate.notify_all()  # the last one in: pause() may answer
                    while self.paused and not self.stopping:
                        self.gate.wait()
                    self.parked -= 1
                if self.stopping:
                    return
                epoch = self.epoch
                if open_loop:
                    intended = self.schedule_start + round(self.next_ticket * self.ns_per_request)
                    self.next_ticket += 1
            if open_loop:
                if not self._wait_until(intended, epoch):
                    continue  # paused or stopped meanwhile: that ticket lapses
            else:
                intended = time.perf_counter_ns()
            error = send_once(send)
            done = time.perf_counter_ns()
            win = self.current
            if win is not None and done >= win.opened_at:
                closed_at = win.closed_at
                if closed_at is not None and done > closed_at:
                    continue
                with win.locks[slot]:
                    if not win.closed:
                        win.stats[slot].add(done, error, (done - intended) // 1000)

    def _wait_until(self, t: int, epoch: int) -> bool:
        with self.gate:
            while not self.paused and not self.stopping and self.epoch == epoch:
                wait = t - time.perf_counter_ns()
                if wait <= 0:
                    break
                self.gate.wait(wait / 1e9)
            return not self.paused and not self.stopping and self.epoch == epoch

    def pause(self) -> None:
        with self.gate:
            self.paused = True
            self.gate.notify_all()
            while self.parked < self.alive:
                self.gate.wait()

    def resume(self) -> None:
        with self.gate:
            if not self.paused:
                return
            self.paused = False
            self.epoch += 1
            self.next_ticket = 0
            self.schedule_start = time.perf_counter_ns()
            self.gate.notify_all()

    def stop(self) -> None:
        with self.gate:
            self.stopping = True
            self.gate.notify_all()

    def leave(self) -> None:
        with self.gate:
            self.alive -= 1  # pause() waits for one fewer
            self.gate.notify_all()

    def obey(self, lines: Iterable[str], out: Callable[[str], None], say: Callable[[str], None]) -> None:
        # Built ahead: an opening does nothing slow between reading its line and counting.
        ahead = _Window(self.w.concurrency)
        for line in lines:
            now = time.perf_counter_ns()
            cmd = line.strip()
            if cmd == EXIT:
                return
            if cmd.startswith(OPEN):
                ahead.k, ahead.opened_at = _number(cmd, OPEN), now
                self.resume()
                self.current, ahead = ahead, _Window(self.w.concurrency)
            elif cmd.startswith(CLOSE):
                k = _number(cmd, CLOSE)
                win = self.current
                if win is None or win.k != k:
                    say(f"{cmd} but the open window is {win.k if win else 'none'}; ignored")
                    continue
                win.closed_at = now
                self.current = None
                doc = win.close(now).document()
                doc["window"] = k
                out(RESULT + json.dumps(doc, separators=(",", ":")))
            elif cmd == PAUSE:
                self.pause()
                out(PAUSED)
            elif cmd == RESUME:
                self.resume()
            else:
                say(f"unknown command from benchgate: {cmd}; ignored")


def _number(cmd: str, word: str) -> int:
    try:
        return int(cmd[len(word) :].strip())
    except ValueError:
        return -1


def _print(line: str) -> None:
    print(line, flush=True)


def run_loop(
    w: Workload,
    factory: Factory,
    lines: Optional[Iterable[str]] = None,
    out: Callable[[str], None] = _print,
    say: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True),
) -> None:
    """Runs the loop: builds every worker's client, declares the loop, warms up,
    says ready, then obeys the commands of ``lines`` (default: stdin) until
    ``BENCHGATE-EXIT`` or their end. Raises what a factory raised
    (:class:`Unsupported` included), before the loop is declared."""
    loop = _Loop(w)

    def work(i: int, send: Send) -> None:
        try:
            loop.work(i, send)
        except BaseException as exc:  # noqa: BLE001 - a worker that stops is reported
            say(f"worker {i} stopped: {exc!r}")
        finally:
            loop.leave()

    threads, go = start_workers(w, factory, work)
    out(DECLARE)
    with loop.gate:
        loop.schedule_start = t0 = time.perf_counter_ns()
    go.set()
    time.sleep(w.warmup_ms / 1000)
    while time.perf_counter_ns() < t0 + w.warmup_ms * 1_000_000:
        time.sleep(0.001)
    out(READY)
    loop.obey(sys.stdin if lines is None else lines, out, say)
    loop.stop()
    for t in threads:
        t.join(w.timeout_s + 1)  # a request in flight ends by its timeout
