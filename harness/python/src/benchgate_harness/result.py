"""What a trial measured, the error classes, and the result file benchgate reads
(docs/external-clients.md, "The result file")."""

from __future__ import annotations

import json
import os
import ssl
from dataclasses import dataclass
from typing import Dict, List

from hdrh.histogram import HdrHistogram

#: benchgate's error classes, in the order the result file lists them.
ERROR_CLASSES = ("connect", "timeout", "read", "write", "status_4xx", "status_5xx")
#: Latency is recorded in microseconds, up to an hour, with 3 significant digits.
HIGHEST_US = 3_600_000_000
SIGNIFICANT_DIGITS = 3


def new_histogram() -> HdrHistogram:
    """An empty latency histogram (µs) with the precision every harness uses."""
    return HdrHistogram(1, HIGHEST_US, SIGNIFICANT_DIGITS)


class RequestFailed(Exception):
    """Raise from a send function to say which error class a failed request is in
    (one of :data:`ERROR_CLASSES`); chain the original with ``raise ... from exc``."""

    def __init__(self, error_class: str, detail: str = "") -> None:
        if error_class not in ERROR_CLASSES:
            raise ValueError(f"error class must be one of {', '.join(ERROR_CLASSES)}, got {error_class!r}")
        super().__init__(f"{error_class}: {detail}" if detail else error_class)
        self.error_class = error_class


def _chain(exc: BaseException) -> List[BaseException]:
    """``exc`` and everything it was caused by (cause, context, exception args)."""
    seen: Dict[int, BaseException] = {}
    todo: List[object] = [exc]
    while todo:
        e = todo.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        seen[id(e)] = e
        todo += [e.__cause__, e.__context__, getattr(e, "reason", None)]
        todo += [a for a in e.args if isinstance(a, BaseException)]
    return list(seen.values())


def classify(exc: BaseException) -> str:
    """Maps a failed request's exception to an error class: an explicit
    :class:`RequestFailed` first, then the standard library's exception types
    anywhere in the chain; anything else is ``read`` (closed or reset mid-response,
    malformed response)."""
    chain = _chain(exc)
    for e in chain:
        if isinstance(e, RequestFailed):
            return e.error_class
    for e in chain:
        if isinstance(e, TimeoutError):  # socket.timeout is TimeoutError since 3.10
            return "timeout"
    for e in chain:
        if isinstance(e, (ConnectionRefusedError, ssl.SSLError)) or type(e).__name__ == "gaierror":
            return "connect"
        if isinstance(e, BrokenPipeError):
            return "write"
    return "read"


def error_class_of_status(status: int) -> str | None:
    """``status_4xx``/``status_5xx`` for an error status, None for success."""
    if 400 <= status < 500:
        return "status_4xx"
    if status >= 500:
        return "status_5xx"
    return None


@dataclass
class Result:
    """The measured window: counts, latency (µs) and the window's length."""

    ok: int
    errors: Dict[str, int]
    elapsed_s: float
    latency_us: HdrHistogram
    #: Requests that completed after the window closed (duration mode): in no figure.
    in_flight_at_deadline: int = 0
    #: Requests sent after the window's end, in the tail that keeps the load on while
    #: the server's window closes: in no figure.
    sent_after_window: int = 0

    @property
    def requests(self) -> int:
        """Requests completed in the window: ``ok`` plus every error."""
        return self.ok + sum(self.errors.values())

    @property
    def answered(self) -> int:
        """Measured requests that got an HTTP response (success or error status)."""
        return self.ok + self.errors["status_4xx"] + self.errors["status_5xx"]

    def document(self) -> Dict[str, object]:
        """The result file's JSON object, latency as ``latency_histogram``."""
        return {
            "benchgate_result": 1,
            "requests": self.requests,
            "ok": self.ok,
            "errors": {c: self.errors[c] for c in ERROR_CLASSES},
            "elapsed_s": self.elapsed_s,
            "latency_histogram": self.latency_us.encode().decode("ascii"),
        }

    def summary(self) -> str:
        """One log line: the counts and the window, for stderr."""
        errs = " ".join(f"{c}={self.errors[c]}" for c in ERROR_CLASSES)
        return (
            f"requests={self.requests} ok={self.ok} errors{{{errs}}} elapsed_s={self.elapsed_s:.3f} "
            f"in_flight_at_deadline={self.in_flight_at_deadline} sent_after_window={self.sent_after_window}"
        )


def write_result(path: str, result: Result) -> None:
    """Writes the result file atomically: a temporary file beside it, then a rename."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result.document(), f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)
