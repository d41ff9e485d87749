#!/usr/bin/env python3
"""Issue 29's acceptance check: no starved trial counted, the order counterbalanced.

Runs a short-window suite -- a 256-connection delay scenario and a 22-byte GET,
two reqwest clients side by side, ROUNDS (10) rounds of 100 ms warmup + 150 ms
window -- while four busy loops compete for the machine's cores and every third
load generator (`benchgate __drive`) is stopped (SIGSTOP) for 400 ms inside its
window, then checks the results file:

1. no trial that completed 0 requests is recorded as a measurement (a trial with
   metrics, no failure and no validity mark);
2. no trial whose server-side window ran past 1.5 times the planned one is
   recorded as a measurement without a mark;
3. each client of the pair runs first in 30-70% of the rounds (from the
   trials' `started_at`).

It prints what it saw (trials stopped, trials re-run, marks) and exits 0 when
all three hold, 1 when one does not, 2 on an error. Loopback only; bounded: the
busy loops and the run stop after TIMEOUT_S (default 600) at the latest.

Usage: scripts/acceptance-noisy-runner.py [path/to/benchgate]
  env: ROUNDS=10 BUSY=4 STOP_EVERY=3 STOP_MS=400 TIMEOUT_S=600 KEEP=1
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = int(os.environ.get("ROUNDS", "10"))
BUSY = int(os.environ.get("BUSY", "4"))
STOP_EVERY = int(os.environ.get("STOP_EVERY", "3"))
STOP_MS = int(os.environ.get("STOP_MS", "400"))
TIMEOUT_S = int(os.environ.get("TIMEOUT_S", "600"))
WARMUP_MS, WINDOW_MS = 100, 150

CONFIG = f"""
[run]
rounds = {ROUNDS}
warmup = "{WARMUP_MS}ms"
duration = "{WINDOW_MS}ms"
pin = false

[[client]]
name = "reqwest"
kind = "reqwest"

[[client]]
name = "reqwest-twin"
kind = "reqwest"

[[scenario]]
name = "c256-delay"
path = "/delay/10"
concurrency = 256

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 16

[compare]
baseline_client = "reqwest"
"""


def children_drivers(parent):
    """Pids of `benchgate __drive` processes whose parent is `parent`."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = open(f"/proc/{name}/stat").read()
            cmd = open(f"/proc/{name}/cmdline", "rb").read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(parent) and b"__drive" in cmd:
            out.append(int(name))
    return out


def stopper(parent, stopped, done):
    """Every STOP_EVERY-th driver: SIGSTOP for STOP_MS, inside its window."""
    seen = set()
    n = 0
    while not done.is_set():
        for pid in children_drivers(parent):
            if pid in seen:
                continue
            seen.add(pid)
            n += 1
            if n % STOP_EVERY:
                continue
            # The window opens WARMUP_MS after the driver starts (plus its
            # start-up); stop it a third of the way into the window.
            time.sleep((WARMUP_MS + WINDOW_MS / 3) / 1000)
            try:
                os.kill(pid, signal.SIGSTOP)
                time.sleep(STOP_MS / 1000)
                os.kill(pid, signal.SIGCONT)
                stopped.append(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.002)


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/benchgate")
    if not os.access(exe, os.X_OK):
        print(f"acceptance: no benchgate at {exe}; build it (cargo build --release) or pass its path", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="benchgate-acceptance-")
    config = os.path.join(work, "benchgate.toml")
    out = os.path.join(work, "results.json")
    open(config, "w").write(CONFIG)
    busy = [
        subprocess.Popen(["timeout", str(TIMEOUT_S), "sh", "-c", "while :; do :; done"])
        for _ in range(BUSY)
    ]
    stopped, done = [], threading.Event()
    started = time.monotonic()
    try:
        run = subprocess.Popen(
            [exe, "run", "--config", config, "--out", out],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        t = threading.Thread(target=stopper, args=(run.pid, stopped, done), daemon=True)
        t.start()
        try:
            stdout, stderr = run.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            run.kill()
            print(f"acceptance: the run took over {TIMEOUT_S}s; stopped it", file=sys.stderr)
            return 2
        done.set()
        t.join()
    finally:
        for b in busy:
            b.terminate()
        for b in busy:
            b.wait()
    took = time.monotonic() - started
    if run.returncode not in (0, 1) or not os.path.exists(out):
        print(stderr, file=sys.stderr)
        print(f"acceptance: benchgate run failed (exit {run.returncode})", file=sys.stderr)
        return 2
    r = json.load(open(out))
    problems, counted, marked, reruns = [], 0, 0, 0
    first = {}
    by_round = {}
    for cell in r["results"]:
        for t in cell["trials"]:
            reruns += t.get("reruns", 0)
            key = (cell["scenario"], t["round"])
            if t.get("started_at"):
                by_round.setdefault(key, []).append((t["started_at"], cell["client"]))
            if t.get("invalid"):
                marked += 1
                continue
            if t.get("metrics") is None or t.get("failure"):
                continue
            counted += 1
            who = f"{cell['scenario']}/{cell['client']} round {t['round']}"
            if t["metrics"].get("requests", 0) == 0:
                problems.append(f"{who}: 0 requests, recorded as a measurement without a mark")
            planned = t.get("window_planned_s")
            server = (t.get("server") or {}).get("window_secs")
            if planned and server is not None and server > 1.5 * planned:
                problems.append(
                    f"{who}: the server's window lasted {server:.3f}s of {planned:.3f}s planned, recorded without a mark"
                )
    for key, trials in by_round.items():
        trials.sort()
        first.setdefault((key[0], trials[0][1]), 0)
        first[(key[0], trials[0][1])] += 1
    lines = [
        f"acceptance: {exe}, {ROUNDS} rounds of {WARMUP_MS} ms + {WINDOW_MS} ms, {BUSY} busy loops, "
        f"every {STOP_EVERY}rd driver stopped {STOP_MS} ms inside its window; {took:.0f}s",
        f"  drivers stopped: {len(stopped)}; round attempts re-run (sum of reruns): {reruns}; "
        f"trials counted as measurements: {counted}; trials with a validity mark: {marked}",
    ]
    for scenario in sorted({k[0] for k in by_round}):
        rounds = sum(1 for k in by_round if k[0] == scenario)
        for client in ("reqwest", "reqwest-twin"):
            share = first.get((scenario, client), 0) / rounds if rounds else 0
            lines.append(f"  {scenario}: {client} ran first in {first.get((scenario, client), 0)} of {rounds} rounds")
            if not 0.3 <= share <= 0.7:
                problems.append(f"{scenario}: {client} ran first in {share:.0%} of the rounds, outside 30-70%")
    if not stopped:
        problems.append("no driver was stopped: the check did not exercise a stall")
    print("\n".join(lines))
    for p in problems:
        print(f"  FAIL {p}")
    print("acceptance:", "PASS" if not problems else "FAIL")
    if os.environ.get("KEEP") == "1":
        print(f"  kept {work}")
    else:
        subprocess.run(["rm", "-rf", work])
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
