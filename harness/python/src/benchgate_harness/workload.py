"""The workload benchgate hands a client in its ``BENCHGATE_*`` variables.

The variables and their units are documented in docs/external-clients.md
("Environment variables"). :meth:`Workload.from_env` validates every one and
raises :class:`BadWorkload` naming the variable and what it expected.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Mapping, Optional

METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE")
HTTP_VERSIONS = ("1.1", "2")


class BadWorkload(Exception):
    """A ``BENCHGATE_*`` variable is missing or invalid (exit code 2)."""


class Unsupported(Exception):
    """The client cannot run this workload, e.g. HTTP/2 with an HTTP/1.1-only
    library (exit code 3). Raise it from your factory or send function."""


@dataclass(frozen=True)
class Workload:
    """One trial's workload, validated. Durations in ms, sizes in bytes."""

    url: str
    base_url: str
    method: str
    path: str
    body_bytes: int
    concurrency: int
    #: Open loop: requests per second; 0 for a closed loop.
    rate: float
    warmup_ms: int
    #: Length of the measurement; 0 when ``requests`` is set.
    duration_ms: int
    #: Number of measured requests; 0 when ``duration_ms`` is set.
    requests: int
    timeout_ms: int
    #: ``"1.1"`` or ``"2"`` (h2c prior knowledge over plain HTTP, ALPN over TLS).
    http_version: str
    #: HTTPS with a self-signed certificate: accept it.
    tls: bool
    #: Where the result file goes; empty: write none.
    result_path: str
    scenario: str
    client: str
    round: int

    @property
    def timeout_s(self) -> float:
        """The per-request timeout in seconds."""
        return self.timeout_ms / 1000.0

    @property
    def body(self) -> Optional[bytes]:
        """``body_bytes`` bytes of ``x``, or None when there is no body."""
        return b"x" * self.body_bytes if self.body_bytes > 0 else None

    @property
    def open_loop(self) -> bool:
        """True when requests start at ``rate`` per second (open loop)."""
        return self.rate > 0

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None) -> "Workload":
        """Reads and validates the ``BENCHGATE_*`` variables (default: ``os.environ``)."""
        e: Mapping[str, str] = os.environ if env is None else env

        def text(name: str, default: str) -> str:
            value = e.get(name, "")
            return value if value != "" else default

        def count(name: str, default: int) -> int:
            raw = e.get(name, "")
            if raw == "":
                return default
            if not (raw.isascii() and raw.isdigit()):
                raise BadWorkload(f"{name} must be a non-negative integer, got {raw!r}")
            return int(raw)

        url = text("BENCHGATE_URL", "")
        if not url:
            raise BadWorkload("BENCHGATE_URL is not set (e.g. http://127.0.0.1:8080/bytes/22)")
        method = text("BENCHGATE_METHOD", "GET").upper()
        if method not in METHODS:
            raise BadWorkload(f"BENCHGATE_METHOD must be one of {', '.join(METHODS)}, got {method!r}")
        concurrency = count("BENCHGATE_CONCURRENCY", 1)
        if concurrency < 1:
            raise BadWorkload("BENCHGATE_CONCURRENCY must be >= 1, got 0")
        rate_raw = text("BENCHGATE_RATE", "0")
        try:
            rate = float(rate_raw)
        except ValueError:
            rate = math.nan
        if not math.isfinite(rate) or rate < 0:
            raise BadWorkload(f"BENCHGATE_RATE must be a decimal number >= 0 (0 = closed loop), got {rate_raw!r}")
        duration_ms = count("BENCHGATE_DURATION_MS", 0)
        requests = count("BENCHGATE_REQUESTS", 0)
        if (duration_ms == 0) == (requests == 0):
            raise BadWorkload(
                "set exactly one of BENCHGATE_DURATION_MS and BENCHGATE_REQUESTS "
                f"(got {duration_ms} and {requests})"
            )
        http_version = text("BENCHGATE_HTTP_VERSION", "1.1")
        if http_version not in HTTP_VERSIONS:
            raise BadWorkload(f"BENCHGATE_HTTP_VERSION must be 1.1 or 2, got {http_version!r}")
        tls = text("BENCHGATE_TLS", "0")
        if tls not in ("0", "1"):
            raise BadWorkload(f"BENCHGATE_TLS must be 0 or 1, got {tls!r}")
        return cls(
            url=url,
            base_url=text("BENCHGATE_BASE_URL", ""),
            method=method,
            path=text("BENCHGATE_PATH", ""),
            body_bytes=count("BENCHGATE_BODY_BYTES", 0),
            concurrency=concurrency,
            rate=rate,
            warmup_ms=count("BENCHGATE_WARMUP_MS", 0),
            duration_ms=duration_ms,
            requests=requests,
            timeout_ms=max(1, count("BENCHGATE_TIMEOUT_MS", 10_000)),
            http_version=http_version,
            tls=tls == "1",
            result_path=text("BENCHGATE_RESULT_PATH", ""),
            scenario=text("BENCHGATE_SCENARIO", ""),
            client=text("BENCHGATE_CLIENT", ""),
            round=count("BENCHGATE_ROUND", 0),
        )
