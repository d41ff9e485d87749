"""benchgate_harness: write one function that sends one HTTP request; this package
turns it into a benchgate external client (docs/external-clients.md).

    from benchgate_harness import run
    run(lambda w: my_client.get(w.url).status)

It reads the ``BENCHGATE_*`` variables, runs the closed or open loop on one thread
per worker, excludes the warmup, prints the window markers, records latency (µs) in
an HdrHistogram, writes the result file and exits 0, 1, 2 or 3 (:mod:`.runner`);
or, when benchgate offers the window loop (``BENCHGATE_WINDOWS=loop``), measures
every window benchgate asks for in one process after one warmup
(:mod:`.window_loop`).
"""

from .loop import CLOSE_MARKER, OPEN_MARKER, Factory, Send, measure
from .result import ERROR_CLASSES, RequestFailed, Result, classify, write_result
from .runner import EXIT_BAD_WORKLOAD, EXIT_NO_RESPONSE, EXIT_OK, EXIT_UNSUPPORTED, main, run
from .workload import BadWorkload, Unsupported, Workload

#: The package's version (pyproject.toml reads it from here).
__version__ = "0.1.0"

__all__ = [
    "BadWorkload",
    "CLOSE_MARKER",
    "ERROR_CLASSES",
    "EXIT_BAD_WORKLOAD",
    "EXIT_NO_RESPONSE",
    "EXIT_OK",
    "EXIT_UNSUPPORTED",
    "Factory",
    "OPEN_MARKER",
    "RequestFailed",
    "Result",
    "Send",
    "Unsupported",
    "Workload",
    "__version__",
    "classify",
    "main",
    "measure",
    "run",
    "write_result",
]
