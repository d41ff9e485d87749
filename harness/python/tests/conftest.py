"""A tiny HTTP/1.1 server on 127.0.0.1 that counts what it answers, and a
stdlib client factory, for the harness's tests."""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, Iterator
from urllib.parse import urlsplit

import pytest

from benchgate_harness import Workload


class CountingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.count = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    disable_nagle_algorithm = True  # headers and body leave at once, no delayed-ACK stall

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        server = self.server
        assert isinstance(server, CountingServer)
        with server.lock:
            server.count += 1
        status, body = 200, b"x" * 22
        if self.path.startswith("/status/"):
            status = int(self.path.rsplit("/", 1)[1])
        elif self.path.startswith("/delay/"):
            time.sleep(int(self.path.rsplit("/", 1)[1]) / 1000)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass


@pytest.fixture
def server() -> Iterator[CountingServer]:
    s = CountingServer()
    t = threading.Thread(target=s.serve_forever, daemon=True)
    t.start()
    yield s
    s.shutdown()
    s.server_close()


def env(url: str, **overrides: str) -> Dict[str, str]:
    """A complete BENCHGATE_* environment for ``url``; overrides by variable suffix."""
    e = {
        "BENCHGATE_URL": url,
        "BENCHGATE_METHOD": "GET",
        "BENCHGATE_CONCURRENCY": "2",
        "BENCHGATE_RATE": "0",
        "BENCHGATE_WARMUP_MS": "0",
        "BENCHGATE_DURATION_MS": "0",
        "BENCHGATE_REQUESTS": "0",
        "BENCHGATE_TIMEOUT_MS": "2000",
        "BENCHGATE_HTTP_VERSION": "1.1",
        "BENCHGATE_TLS": "0",
    }
    e.update({f"BENCHGATE_{k.upper()}": v for k, v in overrides.items()})
    return e


def stdlib_factory(w: Workload) -> Callable[[], int]:
    """One keep-alive http.client connection per worker."""
    u = urlsplit(w.url)
    conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=w.timeout_s)
    target = u.path or "/"

    def send() -> int:
        try:
            conn.request(w.method, target)
            resp = conn.getresponse()
            resp.read()
            return resp.status
        except OSError:
            conn.close()  # reconnect on the next send; the harness classifies the error
            raise

    return send
