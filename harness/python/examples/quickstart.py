# harness/python/examples/quickstart.py
import http.client
from urllib.parse import urlsplit

from benchgate_harness import Unsupported, Workload, run


def make_send(w: Workload):
    """Called once per worker thread: one keep-alive connection each."""
    if w.tls or w.http_version == "2":
        raise Unsupported("this client speaks plain HTTP/1.1 only")
    url = urlsplit(w.url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=w.timeout_s)

    def send() -> int:
        try:
            conn.request(w.method, url.path or "/", body=w.body)
            resp = conn.getresponse()
            resp.read()  # the whole body
            return resp.status
        except Exception:
            conn.close()  # reconnects on the next request
            raise

    return send


run(factory=make_send)
