"""The harness against a local counting server: windows, loops, errors, exit
codes and the result file."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import pytest
from conftest import CountingServer, env, stdlib_factory
from hdrh.histogram import HdrHistogram

from benchgate_harness import (
    CLOSE_MARKER,
    OPEN_MARKER,
    BadWorkload,
    RequestFailed,
    Unsupported,
    Workload,
    classify,
    main,
    measure,
)


def markers() -> "tuple[List[str], Callable[[str], None]]":
    seen: List[str] = []
    return seen, seen.append


def test_request_count_mode_measures_exactly_that_many(server: CountingServer) -> None:
    seen, marker = markers()
    w = Workload.from_env(env(server.base_url + "/bytes", requests="300", warmup_ms="100"))
    r = measure(w, stdlib_factory, marker)
    assert r.ok == 300 and r.requests == 300
    assert r.latency_us.get_total_count() == 300
    assert server.count >= 300, "the warmup's requests come on top"
    assert seen == [OPEN_MARKER, CLOSE_MARKER]
    assert r.elapsed_s > 0


def test_duration_mode_accounts_for_every_request_the_server_saw(server: CountingServer) -> None:
    w = Workload.from_env(env(server.base_url + "/bytes", duration_ms="400", concurrency="3"))
    marked: List[int] = []
    r = measure(w, stdlib_factory, lambda _: marked.append(time.perf_counter_ns()))
    # No warmup: every request sent is measured or was in flight at the deadline,
    # but for at most one per worker sent before the open marker was printed.
    assert r.ok > 50
    assert 0 <= server.count - (r.requests + r.in_flight_at_deadline + r.sent_after_window) <= 3
    assert r.sent_after_window > 0, "the load goes on in the tail"
    # From the open to the close marker: 400 ms, or more when a loaded machine
    # wakes the closing thread late (the server's window then widens too).
    between_markers = (marked[1] - marked[0]) / 1e9
    assert r.elapsed_s >= 0.4 - 0.005, r.summary()
    assert r.elapsed_s == pytest.approx(between_markers, abs=0.02), r.summary()


def test_open_loop_holds_the_rate(server: CountingServer) -> None:
    w = Workload.from_env(env(server.base_url + "/bytes", rate="200", duration_ms="500", concurrency="4"))
    r = measure(w, stdlib_factory, lambda _: None)
    # The schedule holds 200/s for the window and a 100 ms tail: 120 requests in
    # all. A late wake-up on a loaded machine widens the window (its close marker
    # is printed late, the server's window too): the window's share follows it.
    in_window = r.requests + r.in_flight_at_deadline
    assert 115 <= in_window + r.sent_after_window <= 121, r.summary()
    assert 200 * r.elapsed_s - 5 <= in_window <= 200 * r.elapsed_s + 1, r.summary()


def test_open_loop_latency_runs_from_the_intended_start(server: CountingServer) -> None:
    # One worker, 100 requests/s wanted, 30 ms per response: the schedule falls
    # behind, and the queueing delay must show in the latency, not vanish.
    w = Workload.from_env(env(server.base_url + "/delay/30", rate="100", duration_ms="600", concurrency="1"))
    r = measure(w, stdlib_factory, lambda _: None)
    assert r.ok >= 10
    assert r.latency_us.get_min_value() >= 30_000
    assert r.latency_us.get_max_value() > 200_000, "a closed-loop measure would stay near 30 ms"


def test_error_statuses_are_counted_in_their_class(server: CountingServer) -> None:
    for path, cls in (("/status/404", "status_4xx"), ("/status/503", "status_5xx")):
        w = Workload.from_env(env(server.base_url + path, requests="20"))
        r = measure(w, stdlib_factory, lambda _: None)
        assert (r.ok, r.errors[cls], r.requests) == (0, 20, 20)


def test_exit_codes_and_the_result_file(server: CountingServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "result.json"
    assert main(factory=stdlib_factory, env=env(server.base_url + "/bytes", requests="50", result_path=str(out))) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["benchgate_result"] == 1 and doc["requests"] == 50 and doc["ok"] == 50
    assert set(doc["errors"]) == {"connect", "timeout", "read", "write", "status_4xx", "status_5xx"}
    h = HdrHistogram.decode(doc["latency_histogram"])
    assert h.get_total_count() == 50
    assert f"HDR count=50 min={h.get_min_value()}" in capsys.readouterr().out

    # One shared send function instead of a factory.
    calls: List[int] = []
    assert main(lambda w: calls.append(1) or 204, env=env(server.base_url, requests="7")) == 0
    assert len(calls) >= 7


def test_no_response_exits_1_and_still_writes_the_file(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "result.json"
    code = main(factory=stdlib_factory, env=env(f"http://127.0.0.1:{port}/", requests="5", result_path=str(out)))
    assert code == 1
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["errors"]["connect"] == 5 and doc["ok"] == 0


def test_bad_variables_exit_2_naming_the_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(lambda w: 200, env=env("http://127.0.0.1:1/", requests="1", concurrency="x")) == 2
    assert "BENCHGATE_CONCURRENCY must be a non-negative integer, got 'x'" in capsys.readouterr().err
    for bad, name in (({"rate": "-1"}, "BENCHGATE_RATE"), ({"duration_ms": "5", "requests": "5"}, "exactly one"),
                      ({"http_version": "3"}, "BENCHGATE_HTTP_VERSION"), ({"method": "PATCH"}, "BENCHGATE_METHOD")):
        with pytest.raises(BadWorkload, match=name):
            Workload.from_env({**env("http://x/", requests="1"), **{f"BENCHGATE_{k.upper()}": v for k, v in bad.items()}})
    with pytest.raises(BadWorkload, match="BENCHGATE_URL"):
        Workload.from_env({})


def test_unsupported_workload_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    def h1_only(w: Workload) -> Callable[[], int]:
        if w.http_version == "2":
            raise Unsupported("HTTP/1.1 only")
        return lambda: 200

    assert main(factory=h1_only, env=env("http://127.0.0.1:1/", requests="1", http_version="2")) == 3
    assert "unsupported workload: HTTP/1.1 only" in capsys.readouterr().err


def test_classify_reads_the_exception_chain() -> None:
    def chained(inner: BaseException) -> Exception:
        try:
            raise inner
        except BaseException:
            try:
                raise RuntimeError("wrapped")
            except RuntimeError as outer:
                return outer

    assert classify(RequestFailed("write")) == "write"
    assert classify(chained(socket.timeout("slow"))) == "timeout"
    assert classify(chained(ConnectionRefusedError())) == "connect"
    assert classify(chained(BrokenPipeError())) == "write"
    assert classify(chained(ConnectionResetError())) == "read"
    with pytest.raises(ValueError, match="error class"):
        RequestFailed("boom")


class _LoopDriver:
    """benchgate's side of the window loop, played by a test: commands in, lines out."""

    def __init__(self, w: Workload) -> None:
        import queue
        import threading

        from benchgate_harness.window_loop import run_loop

        self.commands: "queue.Queue[Optional[str]]" = queue.Queue()
        self.lines: "queue.Queue[str]" = queue.Queue()
        self.failed: List[BaseException] = []

        def commands() -> Iterator[str]:
            while (line := self.commands.get()) is not None:
                yield line

        def client() -> None:
            try:
                run_loop(w, stdlib_factory, commands(), self.lines.put, lambda _: None)
            except BaseException as e:  # noqa: BLE001 - reported by exit()
                self.failed.append(e)

        self.thread = threading.Thread(target=client, daemon=True)
        self.thread.start()

    def send(self, line: str) -> None:
        self.commands.put(line + "\n")

    def next(self) -> str:
        return self.lines.get(timeout=10)

    def exit(self) -> None:
        self.send("BENCHGATE-EXIT")
        self.thread.join(10)
        assert not self.thread.is_alive(), "the client exits on BENCHGATE-EXIT"
        assert not self.failed, self.failed


def test_the_window_loop_measures_each_window_benchgate_opens(server: CountingServer) -> None:
    w = Workload.from_env(env(server.base_url + "/bytes", duration_ms="300", warmup_ms="200", concurrency="3"))
    d = _LoopDriver(w)
    try:
        assert d.next() == "BENCHGATE-WINDOWS-LOOP"
        assert d.next() == "BENCHGATE-READY"
        for k in (1, 2, 3):
            before = server.count
            d.send(f"BENCHGATE-WINDOW-OPEN {k}")
            time.sleep(0.3)
            d.send(f"BENCHGATE-WINDOW-CLOSE {k}")
            served = server.count - before
            word, _, text = d.next().partition(" ")
            outer = server.count - before
            assert word == "BENCHGATE-WINDOW-RESULT"
            doc = json.loads(text)
            assert doc["benchgate_result"] == 1 and doc["window"] == k
            assert doc["requests"] == doc["ok"] > 30, doc
            assert HdrHistogram.decode(doc["latency_histogram"]).get_total_count() == doc["ok"]
            # The client counts from its reading of OPEN to that of CLOSE, inside the span
            # from sending OPEN to reading the result: never more than the server answered
            # there, but for the 3 requests in flight as OPEN arrived. A reading may come late
            # on a loaded machine, so the lower bound is loose; counting from the start fails.
            assert served // 2 <= doc["requests"] <= outer + 3, (k, doc["requests"], served, outer)
    finally:
        d.exit()


def test_the_window_loop_pauses_and_resumes_its_workers(server: CountingServer) -> None:
    w = Workload.from_env(env(server.base_url + "/bytes", duration_ms="300", rate="300", concurrency="2"))
    d = _LoopDriver(w)
    try:
        d.next(), d.next()
        d.send("BENCHGATE-PAUSE")
        assert d.next() == "BENCHGATE-PAUSED"
        paused = server.count
        time.sleep(0.2)
        assert server.count == paused, "no request while paused"
        d.send("BENCHGATE-WINDOW-OPEN 1")  # resumes, then counts
        time.sleep(0.3)
        d.send("BENCHGATE-WINDOW-CLOSE 1")
        doc = json.loads(d.next().partition(" ")[2])
        # The schedule starts over at the resume: about 90 at 300/s, no burst of what the pause skipped.
        assert 60 <= doc["requests"] <= 110, doc["requests"]
    finally:
        d.exit()
