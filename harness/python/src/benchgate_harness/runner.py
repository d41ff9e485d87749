"""``run()``: the whole external client around your send function, with the
exit codes of docs/external-clients.md."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Callable, Mapping, NoReturn, Optional

from .loop import Factory, measure, stdin_ack
from .result import write_result
from .window_loop import offered, run_loop
from .workload import BadWorkload, Unsupported, Workload

#: Exit codes (docs/external-clients.md, "Exit code").
EXIT_OK = 0
#: Not a single measured request got an HTTP response, or the client failed.
EXIT_NO_RESPONSE = 1
#: A ``BENCHGATE_*`` variable is missing or invalid, or a dependency is missing.
EXIT_BAD_WORKLOAD = 2
#: The client does not support this workload (:class:`Unsupported`).
EXIT_UNSUPPORTED = 3


def run(
    send: Optional[Callable[[Workload], int]] = None,
    *,
    factory: Optional[Factory] = None,
    name: Optional[str] = None,
) -> NoReturn:
    """Runs one benchgate trial and exits the process with its exit code.

    Pass either ``send(workload) -> status``, one function that sends one request
    and reads its whole body (called from every worker thread: it must be
    thread-safe), or ``factory=make``, where ``make(workload)`` builds one worker's
    client and returns its ``send() -> status`` (called once per worker thread).
    ``name`` prefixes the log lines (default: the script's file name).
    """
    sys.exit(main(send, factory=factory, name=name))


def main(
    send: Optional[Callable[[Workload], int]] = None,
    *,
    factory: Optional[Factory] = None,
    name: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
) -> int:
    """:func:`run` without the exit: returns the exit code (``env`` defaults to
    ``os.environ``)."""
    label = name or os.path.basename(sys.argv[0]) or "benchgate_harness"
    if (send is None) == (factory is None):
        raise TypeError("pass exactly one of send and factory=")
    make: Factory
    if send is not None:
        shared = send
        make = lambda w: (lambda: shared(w))  # noqa: E731 - one send for every worker
    else:
        assert factory is not None
        make = factory

    def say(msg: str) -> None:
        print(f"{label}: {msg}", file=sys.stderr, flush=True)

    try:
        w = Workload.from_env(env)
    except BadWorkload as e:
        say(str(e))
        return EXIT_BAD_WORKLOAD
    def failed(e: Exception) -> int:
        """The exit code of a measurement that raised ``e``, said on stderr."""
        if isinstance(e, Unsupported):
            say(f"unsupported workload: {e}")
            return EXIT_UNSUPPORTED
        say(f"the client failed: {e!r}")
        traceback.print_exc()
        return EXIT_NO_RESPONSE

    if offered(w, os.environ if env is None else env):
        try:
            run_loop(w, make, say=say)  # every window's record on stdout, no result file
        except Exception as e:  # noqa: BLE001 - the client failed: reported, exit 1 (or 3)
            return failed(e)
        return EXIT_OK
    try:
        result = measure(w, make, ack=stdin_ack(env))
    except Exception as e:  # noqa: BLE001 - the client failed: reported, exit 1 (or 3)
        return failed(e)
    if w.result_path:
        try:
            write_result(w.result_path, result)
        except OSError as e:
            say(f"cannot write the result file {w.result_path}: {e}")
            return EXIT_NO_RESPONSE
    h = result.latency_us
    print(
        f"HDR count={h.get_total_count()} min={h.get_min_value()} max={h.get_max_value()} "
        f"p99={h.get_value_at_percentile(99.0)}",
        flush=True,
    )
    say(result.summary())
    if result.answered == 0:
        say(f"not a single measured request got an HTTP response; is the server at {w.url} up?")
        return EXIT_NO_RESPONSE
    return EXIT_OK
