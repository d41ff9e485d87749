#!/usr/bin/env python3
"""Builds the test binaries with cargo, then runs them JOBS at a time.

`cargo test` runs its test binaries one after another; this can run them
JOBS at a time (default 1: on a 2-core machine two at a time failed
load-sensitive tests). What stays as cargo does it: every test of every binary runs, each binary with
its own tests in parallel threads as cargo would, from the package root, with
cargo's environment (CARGO_MANIFEST_DIR, CARGO_PKG_*). What differs: a failing
binary does not stop the others (like `cargo test --no-fail-fast`), each
binary's output is printed whole when it ends (never interleaved), and a
table of every binary's time ends the run.

Usage: scripts/test-binaries.py [--jobs N] [--alone NAME ...] [--] CARGO_ARGS...
  CARGO_ARGS go to `cargo test --no-run --message-format=json-render-diagnostics`
  (e.g. --all-targets --locked). --alone NAME: run that binary by itself, after
  the others (for a test that must not share the machine; none by default).
  JOBS: --jobs, else BENCHGATE_TEST_JOBS, else 1. --timeout S (BENCHGATE_TEST_TIMEOUT,
  default 1200): a binary still running after S seconds is killed with what it
  started and counted failed.
Order: longest first, from the times of the previous run on this checkout
(target/test-binary-times.json); binaries without a time start first.
Exit: 0 every binary passed, 1 one failed, 2 the build failed.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(cargo_args):
    """`cargo test --no-run`: [(name, kind, executable)] of the test binaries."""
    cmd = ["cargo", "test", "--no-run", "--message-format=json-render-diagnostics", *cargo_args]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    bins = []
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["profile"]["test"]:
            target = msg["target"]
            bins.append((target["name"], target["kind"][0], msg["executable"], msg.get("manifest_path")))
    if proc.wait() != 0:
        sys.exit(f"test-binaries: `{' '.join(cmd)}` failed (exit {proc.returncode})")
    return bins


def cargo_env(manifest_path):
    """What cargo sets for a test binary it runs (the ones a test may read)."""
    env = dict(os.environ)
    env["CARGO_MANIFEST_DIR"] = os.path.dirname(manifest_path) if manifest_path else ROOT
    env.setdefault("CARGO", "cargo")
    meta = {}
    try:
        import tomllib

        with open(os.path.join(env["CARGO_MANIFEST_DIR"], "Cargo.toml"), "rb") as f:
            meta = tomllib.load(f).get("package", {})
    except (OSError, ValueError):
        pass
    if "name" in meta:
        env["CARGO_PKG_NAME"] = meta["name"]
    if "version" in meta:
        env["CARGO_PKG_VERSION"] = meta["version"]
    return env


def label(name, kind):
    return f"{name} ({'unit tests' if kind in ('lib', 'bin') else kind})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("BENCHGATE_TEST_JOBS", "1")))
    ap.add_argument("--alone", action="append", default=[], metavar="NAME")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("BENCHGATE_TEST_TIMEOUT", "1200")),
                    help="seconds a binary may run before it is killed and counted failed")
    ap.add_argument("cargo_args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cargo_args = [a for a in args.cargo_args if a != "--"]
    if args.jobs < 1:
        sys.exit("test-binaries: --jobs must be at least 1")

    t0 = time.monotonic()
    bins = build(cargo_args)
    print(f"test-binaries: built {len(bins)} test binaries in {time.monotonic() - t0:.0f}s; "
          f"running them {args.jobs} at a time", flush=True)
    unknown = set(args.alone) - {b[0] for b in bins}
    if unknown:
        sys.exit(f"test-binaries: --alone names no test binary: {', '.join(sorted(unknown))}")

    times_path = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                              "test-binary-times.json")
    try:
        with open(times_path) as f:
            previous = json.load(f)
    except (OSError, ValueError):
        previous = {}
    key = lambda b: f"{b[0]}:{b[1]}"
    # Longest first (no time yet counts as longest): the pool ends together.
    ordered = sorted(bins, key=lambda b: -previous.get(key(b), float("inf")))
    shared = [b for b in ordered if b[0] not in args.alone]
    alone = [b for b in ordered if b[0] in args.alone]

    lock = threading.Lock()
    results = {}

    def run(b):
        name, kind, exe, manifest = b
        start = time.monotonic()
        proc = subprocess.Popen([exe], cwd=ROOT, env=cargo_env(manifest), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace",
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=args.timeout)
            code, status = proc.returncode, f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            # A hung binary: stop it and whatever it started, say so, go on.
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            code, status = -1, f"killed after {args.timeout}s (BENCHGATE_TEST_TIMEOUT)"
        took = time.monotonic() - start
        with lock:
            results[key(b)] = (label(name, kind), code, took)
            status = "ok" if code == 0 else f"FAILED ({status})"
            print(f"\n---- {label(name, kind)}: {status} in {took:.1f}s "
                  f"(load average {os.getloadavg()[0]:.1f})\n{out.rstrip()}", flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(run, shared))
    for b in alone:
        run(b)

    with open(times_path, "w") as f:
        json.dump({k: round(v[2], 1) for k, v in results.items()}, f, indent=1, sort_keys=True)
    failed = sorted(v[0] for v in results.values() if v[1] != 0)
    print(f"\n== test binaries, {len(results)} in {time.monotonic() - t0:.0f}s, {args.jobs} at a time "
          "(time each, longest first):")
    for lbl, code, took in sorted(results.values(), key=lambda v: -v[2]):
        print(f"{took:7.1f}s  {lbl}{'' if code == 0 else '  FAILED'}")
    if failed:
        print(f"\ntest-binaries: {len(failed)} failed: {', '.join(failed)}", flush=True)
        return 1
    print("test-binaries: every test binary passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
